"""Fuzzing the command-line flags, in process: whatever the values, `ridge solve` ends with exit 0
and finite figures, or exit 2 and one clean line — never an internal error, a traceback, NaN or
infinity. A property over extreme but accepted deployments checks the engine itself stays finite.

Would have caught: `--price 0` (ZeroDivisionError), `--reserve-gib 1e308` ("-inf GiB"), `--price
1e308 --gpus 4096` ("nanx"), `--price 1e307 --json` (null gains, exit 0), `--gpus ١٢` read as 12,
and echoed values with newlines making two-line errors.
"""
from __future__ import annotations

import contextlib
import io
import json

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hunt import examples

from app.cli import main
from engine.catalog import builtin_catalog
from engine.contract import solution_to_json
from engine.deployment import build_deployment
from engine.errors import RidgeError
from engine.levers import solve
from hostile_inputs import COUNTS, FUZZ, NUMBER_TEXT, ODD_DIGITS, assert_one_line, finite_everywhere, hostile_text

CAT = builtin_catalog()
NUMERIC_FLAGS = ["--gpus", "--prompt", "--output", "--concurrency", "--reserve-gib", "--mfu", "--price",
                 "--shared-prefix", "--spec-k", "--spec-alpha", "--spec-draft-cost", "--chunk-tokens",
                 "--max-output", "--route-fraction"]
CHOICE_FLAGS = {"--weights": ["bf16", "int4"], "--kv": ["fp8"], "--scheduler": ["static", "none"],
                "--allocator": ["contiguous"], "--objective": ["tpot", "ttft", "stall"],
                "--gpu": ["h100-sxm", "l4", "tpu-v5e"], "--route-model": ["phi-3-mini"]}
EXTREME = ["0", "1", "4096", "1e6", "1e-6", "1e308", "1e307", "-1", "0.0", "100000000", "64", "65", "10"]

_plausible = st.one_of(st.sampled_from(EXTREME), st.integers(0, 5000).map(str),
                       st.floats(0, 1).map(repr), st.floats(0, 1e7).map(lambda v: f"{v:g}"))
flag_value = st.one_of(_plausible, _plausible, _plausible,  # mostly accepted, so the engine runs
                       st.sampled_from(NUMBER_TEXT + ODD_DIGITS), hostile_text,
                       st.integers(-10, 10**9).map(str), st.floats(-1e9, 1e9).map(repr))


@st.composite
def solve_argv(draw) -> list[str]:
    argv = ["solve", "--model", draw(st.sampled_from(["llama-3-8b", "llama-3-70b", "mixtral-8x7b", "deepseek-v3"]))]
    for flag in draw(st.lists(st.sampled_from(NUMERIC_FLAGS), max_size=4, unique=True)):
        argv += [flag, draw(flag_value)]
    for flag in draw(st.lists(st.sampled_from(sorted(CHOICE_FLAGS)), max_size=2, unique=True)):
        argv += [flag, draw(st.sampled_from(CHOICE_FLAGS[flag]) | hostile_text)]
    if draw(st.booleans()):
        argv.append("--json")
    return argv


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own exits (its error() is one line)
            code = exc.code
    return int(code or 0), out.getvalue(), err.getvalue()


@settings(max_examples=examples(300), suppress_health_check=list(HealthCheck), **FUZZ)
@given(solve_argv())
def test_solve_flags_end_in_a_finite_answer_or_one_clean_line(argv):
    COUNTS["flags"] += 1
    code, out, err = run(argv)
    event(f"exit {code}")
    assert code in (0, 2), (argv, code, err)
    assert "internal error" not in err and "Traceback" not in err, (argv, err)
    assert "\x1b" not in out + err
    if code == 2:
        assert err.count("\n") == 1, (argv, err)
        assert_one_line(err.rstrip("\n"))
        return
    assert err == ""
    if "--json" in argv:
        data = json.loads(out)
        assert finite_everywhere(data)
        if data["fits"]:
            assert all(data[k] is not None for k in ("tpot_seconds", "cost_per_million_output_tokens",
                                                     "throughput_tokens_per_s")), argv
    else:
        for word in ("nan", "inf ", "-inf", "infx", "nanx"):
            assert word not in out.lower().replace("info", ""), (argv, word)


@settings(max_examples=examples(40), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.sampled_from(["show", "generate", "list"]), st.lists(hostile_text, max_size=3),
       st.sampled_from(["--seed", "--count", "--start", "--difficulty", "--json"]))
def test_puzzles_flags_never_crash(action, values, flag):
    COUNTS["flags"] += 1
    argv = ["puzzles", action]
    if action == "show":
        argv += values[:1] or ["\x1b[2J"]
    elif action == "generate":
        argv += ["--seed", values[0] if values else "١", "--count", values[1] if len(values) > 1 else "1"]
    if flag != "--json" and action != "list":
        argv += [flag, values[-1] if values else "nan"]
    code, out, err = run(argv)
    assert code in (0, 2), (argv, code, err)
    assert "internal error" not in err and "\x1b" not in out + err
    if code == 2:
        assert err.count("\n") == 1, (argv, err)


# -- no result is ever non-finite, over extreme but accepted values ---------------------------------
def _edge(low, high, *middle):
    return st.sampled_from([low, high, *middle])


@st.composite
def extreme_deployments(draw):
    model = CAT.models[draw(st.sampled_from(sorted(CAT.models)))]
    prompt = draw(st.sampled_from([1, 2, max(1, model.context // 2), model.context - 1]))
    output = draw(st.sampled_from([1, max(1, model.context - prompt)]))
    return build_deployment(
        CAT, model, draw(st.sampled_from(sorted(CAT.gpus))),
        gpus=draw(_edge(1, 4096, 3, 64)), prompt=prompt, output=output,
        concurrency=draw(_edge(1, 10**8, 10**4)), weights=draw(st.sampled_from(["bf16", "fp8", "int8", "int4"])),
        kv=draw(st.sampled_from(["bf16", "fp8", "int8", "int4"])),
        reserve_gib=draw(_edge(0.0, 1e6, 5e-324, 79.99)), mfu=draw(_edge(1e-6, 1.0)),
        price=draw(_edge(1e-6, 1e6, 3.0)), shared_prefix=draw(st.sampled_from([0, prompt])),
        prefix_caching=draw(st.booleans()), spec_k=draw(_edge(0, 64, 1)),
        spec_alpha=draw(_edge(0.0, 1.0, 5e-324, 1 - 1e-16)), spec_draft_cost=draw(_edge(0.0, 10.0)),
        scheduler=draw(st.sampled_from(["none", "static", "continuous"])),
        allocator=draw(st.sampled_from(["contiguous", "paged"])), chunked_prefill=draw(st.booleans()),
        chunk_tokens=draw(_edge(1, 10**8)), max_output=draw(_edge(0, 10**8, 1)),
        objective=draw(st.sampled_from(["cost", "tpot", "ttft", "stall"])),
        route_model=draw(st.sampled_from([None, "phi-3-mini", "llama-3.1-405b"])),
        route_fraction=draw(_edge(0.0, 1.0, 5e-324)),
        fidelity=draw(st.sampled_from(["floor", "realistic"])),
        draft_model=draw(st.sampled_from([None, "llama-3.1-8b", "phi-3-mini"])),
    )


@settings(max_examples=examples(300), suppress_health_check=list(HealthCheck), **FUZZ)
@given(extreme_deployments())
def test_no_result_is_ever_non_finite_at_the_edges_of_what_is_accepted(dep):
    COUNTS["flags (extreme accepted values)"] += 1
    try:
        solution = solve(dep)
    except RidgeError as exc:
        assert_one_line(exc)
        return
    report = solution.report
    out = solution_to_json(solution)
    assert finite_everywhere(out)
    if report.fits:
        bad = {k: v for k, v in vars(report).items() if isinstance(v, float) and not finite_everywhere(v)}
        assert not bad, bad
        assert out["objective_value"] is not None and out["best_lever"] is not None


# -- the same rule in the game's own number fields ----------------------------------------------
@settings(max_examples=examples(150), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.sampled_from(["gpus", "prompt", "mfu", "price", "reserve_gib"]), st.one_of(
    st.sampled_from(ODD_DIGITS + NUMBER_TEXT + ["9" * 5000]), hostile_text,
    st.text(alphabet="0123456789.e-+", max_size=8)))
def test_screen_number_fields_take_ascii_digits_only(name, text):
    """The simulator's fields and the napkin calculator read numbers exactly as the flags do."""
    from engine.sim.inputs import FIELD_BY_NAME, parse_value
    from puzzles.napkin import NapkinError, evaluate

    COUNTS["flags (screen fields)"] += 1
    try:
        value = parse_value(FIELD_BY_NAME[name], text)
    except RidgeError as exc:
        assert_one_line(exc)
    else:
        cleaned = str(text).strip().replace(",", "").replace("_", "")
        assert cleaned.isascii(), text
        if value is None:  # left empty: only a field with a stated default (the reserve's 10%)
            assert FIELD_BY_NAME[name].blank and not cleaned, (name, text)
        else:
            assert finite_everywhere(float(value))
    try:
        result = evaluate(text)
    except NapkinError as exc:
        assert_one_line(exc)
    except RidgeError as exc:
        assert_one_line(exc)
    else:
        assert text.isascii() or not any(ch.isdigit() and not ch.isascii() for ch in text), text
        assert finite_everywhere(float(result) if isinstance(result, (int, float)) else 0.0)
