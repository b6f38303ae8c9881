"""`ridge load` from outside: every check of issue 23 through `--json`, and one-line errors.

The figures are the floor's (the default fidelity); each check states the deployment it uses.
"""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import pytest

from app.cli import main

KEYS = ["ttft_p50_seconds", "ttft_p90_seconds", "ttft_p99_seconds", "tpot_p50_seconds", "tpot_p90_seconds",
        "tpot_p99_seconds", "e2e_p50_seconds", "e2e_p90_seconds", "e2e_p99_seconds", "e2e_mean_seconds",
        "arrival_rate_per_s", "mean_in_system", "throughput_tokens_per_s", "goodput_requests_per_s",
        "slo_attainment", "mean_batch", "preemptions", "shed", "saturation_qps", "cost_per_million_input_tokens",
        "cost_per_million_output_tokens"]
SIZE_KEYS = ["gpus", "replicas", "tp", "prefill_gpus", "decode_gpus"]


def load(*args) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["load", *args, "--json"])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def load_error(*args) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["load", *args])
        except SystemExit as exc:   # argparse's own refusal, one line through app.cli's parser
            code = exc.code
    assert code == 2, (code, out.getvalue())
    return err.getvalue()


def solve(*args) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["solve", *args, "--json"]) == 0
    return json.loads(out.getvalue())


EIGHT_B = ("--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "1024", "--output", "256")


def test_the_json_has_every_key_of_the_contract_and_no_nan():
    out = subprocess.run([sys.executable, "-m", "app", "load", *EIGHT_B, "--qps", "10", "--requests", "300", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for key in KEYS:
        assert key in data, key
        assert data[key] is not None, key


@pytest.mark.parametrize("extra", [(), ("--chunk-tokens", "512"), ("--lengths", "exponential"),
                                   ("--arrival", "bursty"), ("--users", "64", "--think", "1")])
def test_littles_law_holds(extra):
    rate = () if "--users" in extra else ("--qps", "20")
    d = load(*EIGHT_B, *rate, *extra)
    assert d["mean_in_system"] == pytest.approx(d["arrival_rate_per_s"] * d["e2e_mean_seconds"], rel=0.03)


def test_percentiles_are_ordered_for_every_metric():
    for extra in [("--qps", "25"), ("--qps", "40", "--lengths", "trace"), ("--users", "300", "--lengths", "exponential"),
                  ("--qps", "30", "--chunk-tokens", "512", "--arrival", "bursty")]:
        d = load(*EIGHT_B, *extra)
        for metric in ("ttft", "tpot", "e2e"):
            assert d[f"{metric}_p99_seconds"] >= d[f"{metric}_p90_seconds"] >= d[f"{metric}_p50_seconds"] > 0, (extra, metric)


def test_at_five_percent_of_saturation_ttft_is_a_lone_requests():
    for model in (EIGHT_B, ("--model", "llama-3.1-70b", "--gpus", "4", "--prompt", "2048", "--output", "256")):
        sat = load(*model, "--qps", "1", "--requests", "50")["saturation_qps"]
        lone = solve(*model)["ttft_seconds"]
        d = load(*model, "--qps", str(0.05 * sat))
        assert d["ttft_p50_seconds"] <= 1.15 * lone
        assert d["ttft_p99_seconds"] <= 2.5 * lone


def test_ttft_p99_rises_with_the_rate_and_tenfold_from_half_to_98_percent():
    sat = load(*EIGHT_B, "--qps", "1", "--requests", "50")["saturation_qps"]
    p99 = [load(*EIGHT_B, "--qps", str(frac * sat))["ttft_p99_seconds"]
           for frac in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98)]
    assert p99 == sorted(p99) and len(set(p99)) == len(p99)
    assert p99[-1] >= 10 * p99[0]


@pytest.mark.parametrize("model", [EIGHT_B, ("--model", "llama-3.1-70b", "--gpus", "4", "--prompt", "4096", "--output", "512"),
                                   ("--model", "mixtral-8x7b", "--gpus", "2", "--prompt", "512", "--output", "1024")])
def test_throughput_never_exceeds_the_steady_state_capacity(model):
    for extra in [("--qps", "1000"), ("--users", "512"), ("--qps", "1000", "--chunk-tokens", "2048"),
                  ("--qps", "1000", "--lengths", "exponential")]:
        same = ("--chunked-prefill", "--chunk-tokens", "2048") if "--chunk-tokens" in extra else ()
        capacity = solve(*model, "--concurrency", "256", *same)["throughput_tokens_per_s"]
        d = load(*model, *extra, "--requests", "1500")
        assert d["throughput_tokens_per_s"] <= capacity, extra
        assert d["saturation_qps"] == pytest.approx(capacity / float(model[model.index("--output") + 1]))


def test_the_same_seed_gives_the_same_json_and_another_seed_another():
    args = (*EIGHT_B, "--qps", "25", "--lengths", "exponential", "--seed", "7")
    assert load(*args) == load(*args)
    assert load(*EIGHT_B, "--qps", "25", "--lengths", "exponential", "--seed", "8") != load(*args)


def test_a_tighter_chunk_budget_lowers_p99_tpot_and_raises_ttft_on_long_prompts():
    long_mix = ("--model", "llama-3.1-8b", "--prompt", "8192", "--output", "256", "--qps", "2")
    wide, tight = load(*long_mix, "--chunk-tokens", "2048"), load(*long_mix, "--chunk-tokens", "512")
    assert tight["tpot_p99_seconds"] < wide["tpot_p99_seconds"]
    assert tight["ttft_p50_seconds"] > wide["ttft_p50_seconds"]
    assert tight["ttft_p99_seconds"] > wide["ttft_p99_seconds"]


def _goodput_per_gpu(d):
    return d["goodput_requests_per_s"] / (d["gpus"])


def test_disaggregation_loses_small_and_wins_long_prompts_under_a_strict_tpot():
    small = ("--model", "llama-3.1-8b", "--prompt", "256", "--output", "512", "--qps", "60",
             "--slo-ttft", "0.5", "--slo-tpot", "0.02")
    together = load(*small, "--gpus", "2", "--tp", "1")
    split = load(*small, "--disaggregate", "1:1")
    assert _goodput_per_gpu(split) < _goodput_per_gpu(together)
    long_strict = ("--model", "llama-3.1-8b", "--prompt", "8192", "--output", "256", "--qps", "12",
                   "--slo-ttft", "2", "--slo-tpot", "0.011")
    together = load(*long_strict, "--gpus", "4", "--tp", "1")
    split = load(*long_strict, "--disaggregate", "2:2", "--link", "nvlink")
    assert _goodput_per_gpu(split) > 2 * _goodput_per_gpu(together)
    assert split["tpot_p99_seconds"] < together["tpot_p99_seconds"]


def test_the_kv_transfer_is_bytes_over_the_link_and_lands_in_ttft():
    args = ("--model", "llama-3.1-8b", "--prompt", "4096", "--output", "64", "--qps", "0.5", "--disaggregate", "1:1")
    fast, slow = load(*args, "--link", "nvlink"), load(*args, "--link", "12.5")
    kv_per_token = solve("--model", "llama-3.1-8b")["kv_bytes_per_token"]
    assert slow["ttft_p50_seconds"] - fast["ttft_p50_seconds"] == pytest.approx(
        kv_per_token * 4096 * (1 / 12.5e9 - 1 / 450e9), rel=0.02)


def test_fleet_size_grows_with_the_rate_and_meets_its_slo_when_rerun():
    target = ("--model", "llama-3.1-8b", "--prompt", "2048", "--output", "256", "--slo-ttft", "0.5", "--slo-tpot", "0.03")
    sizes = []
    for qps in (5, 20, 60, 120):
        s = load(*target, "--size", "--qps", str(qps), "--tp", "1")
        for key in SIZE_KEYS:
            assert key in s
        sizes.append(s["gpus"])
        rerun = load(*target, "--qps", str(qps), "--gpus", str(s["gpus"]), "--tp", str(s["tp"]))
        assert rerun["ttft_p99_seconds"] <= 0.5 and rerun["tpot_p99_seconds"] <= 0.03
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]


def test_a_split_fleet_is_sized_and_rerun_within_its_slo():
    target = ("--model", "llama-3.1-8b", "--prompt", "8192", "--output", "256", "--slo-ttft", "2", "--slo-tpot", "0.011")
    s = load(*target, "--size", "--qps", "12", "--tp", "1", "--disaggregate", "auto")
    assert s["prefill_gpus"] and s["decode_gpus"] and s["replicas"] is None
    rerun = load(*target, "--qps", "12", "--disaggregate", f"{s['prefill_gpus']}:{s['decode_gpus']}", "--tp", "1")
    assert rerun["ttft_p99_seconds"] <= 2 and rerun["tpot_p99_seconds"] <= 0.011


def test_input_tokens_cost_less_than_output_tokens_on_a_decode_heavy_mix():
    for qps in ("2", "10", "30"):
        d = load("--model", "llama-3.1-8b", "--prompt", "256", "--output", "1024", "--qps", qps)
        assert d["cost_per_million_input_tokens"] < d["cost_per_million_output_tokens"], qps


def test_admission_control_sheds_and_keeps_the_served_tail_short():
    over = (*EIGHT_B, "--qps", "45")
    open_queue, capped = load(*over), load(*over, "--queue-cap", "32")
    assert open_queue["shed"] == 0 and capped["shed"] > 0
    assert capped["ttft_p99_seconds"] < open_queue["ttft_p99_seconds"] / 4


def test_preemption_happens_when_the_cache_runs_out():
    d = load("--model", "llama-3.1-70b", "--gpus", "2", "--prompt", "2048", "--output", "2048", "--qps", "5",
             "--lengths", "exponential")
    assert d["preemptions"] > 0


@pytest.mark.parametrize("args,words", [
    ((), "--model"),
    (("--model", "llama-3.1-8b"), "--qps"),
    (("--model", "llama-3.1-8b", "--qps", "1", "--users", "3"), "not both"),
    (("--model", "llama-3.1-8b", "--qps", "-1"), "qps"),
    (("--model", "llama-3.1-8b", "--qps", "nan"), "finite number"),
    (("--model", "llama-3.1-8b", "--qps", "1", "--disaggregate", "3"), "P:D"),
    (("--model", "llama-3.1-8b", "--qps", "1", "--disaggregate", "0:2"), "at least one GPU"),
    (("--model", "llama-3.1-8b", "--qps", "1", "--link", "carrier-pigeon"), "link"),
    (("--model", "llama-3.1-8b", "--qps", "1", "--gpus", "3", "--tp", "2"), "--tp"),
    (("--model", "llama-3.1-8b", "--qps", "1", "--chunk-tokens", "16"), "max-running"),
    (("--model", "llama-3.1-405b", "--qps", "1"), "does not fit"),
    (("--model", "llama-3.1-8b", "--users", "4", "--disaggregate", "1:1"), "closed loop"),
    (("--model", "llama-3.1-8b", "--size"), "--qps"),
    (("--model", "nope", "--qps", "1"), "nope"),
])
def test_bad_input_is_one_line_and_exit_2(args, words):
    err = load_error(*args)
    assert err.count("\n") == 1 and len(err) <= 300, err
    assert words in err, err


@pytest.mark.parametrize("fidelity", ["realistic", "measured"])
def test_every_fidelity_runs_and_stays_under_its_own_steady_state(fidelity):
    model = ("--model", "llama-3.1-70b", "--gpus", "4", "--prompt", "4096", "--output", "512", "--fidelity", fidelity)
    capacity = solve(*model, "--concurrency", "256")["throughput_tokens_per_s"]
    overloaded = load(*model, "--qps", "1000", "--requests", "1500")
    assert overloaded["fidelity"] == fidelity
    assert overloaded["throughput_tokens_per_s"] <= capacity
    low = load(*model, "--qps", str(0.05 * overloaded["saturation_qps"]), "--requests", "400")
    assert low["ttft_p50_seconds"] <= 1.15 * solve(*model)["ttft_seconds"]


def test_measured_refuses_an_accelerator_it_has_no_kernels_for():
    err = load_error("--model", "llama-3.1-8b", "--gpu", "l4", "--qps", "1", "--fidelity", "measured")
    assert "no measured kernels" in err and err.count("\n") == 1


# -- fuzzing the flags: exit 0 with finite figures, or exit 2 with one line ---------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from helpers.hostile import FUZZ, assert_one_line, finite_everywhere, hostile_text  # noqa: E402

LOAD_NUMERIC = ["--qps", "--users", "--think", "--requests", "--seed", "--slo-ttft", "--slo-tpot", "--chunk-tokens",
                "--max-running", "--queue-cap", "--gpus", "--tp", "--prompt", "--output", "--price", "--shared-prefix"]
_VALUES = st.sampled_from(["0", "1", "2", "-1", "1e-6", "1e6", "1e308", "nan", "3.5", "64", "256", "100000000",
                           "١٢", "1_000", " 7"]) | hostile_text


@st.composite
def load_argv(draw) -> list[str]:
    argv = ["load", "--model", draw(st.sampled_from(["llama-3.1-8b", "mixtral-8x7b", "llama-3.1-70b"])),
            "--requests", "60"]
    argv += draw(st.sampled_from([["--qps", "5"], ["--users", "8"], []]))
    for flag in draw(st.lists(st.sampled_from(LOAD_NUMERIC), max_size=3, unique=True)):
        argv += [flag, draw(_VALUES)]
    for flag, choices in draw(st.lists(st.sampled_from([("--lengths", ["trace", "exponential"]),
                                                        ("--arrival", ["bursty"]),
                                                        ("--disaggregate", ["1:1", "2:6", "x", "0:1"]),
                                                        ("--link", ["nvlink", "0", "12.5", "fast"])]),
                                       max_size=2, unique_by=lambda fc: fc[0])):
        argv += [flag, draw(st.sampled_from(choices) | hostile_text)]
    if draw(st.booleans()):
        argv.append("--json")
    return argv


@settings(max_examples=120, suppress_health_check=list(HealthCheck), **FUZZ)
@given(load_argv())
def test_load_flags_end_in_finite_figures_or_one_clean_line(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    code, out, err = int(code or 0), out.getvalue(), err.getvalue()
    assert code in (0, 2), (argv, code, err)
    assert "internal error" not in err and "Traceback" not in err and "\x1b" not in out + err, (argv, err)
    if code == 2:
        assert err.count("\n") == 1 and len(err) <= 300, (argv, err)
        assert_one_line(err.rstrip("\n"))
        return
    if "--json" in argv:
        assert finite_everywhere(json.loads(out)), argv
    else:
        assert " nan" not in out.lower() and " inf" not in out.lower(), argv


@pytest.mark.parametrize("model", [EIGHT_B, ("--model", "llama-3.1-70b", "--gpus", "4", "--prompt", "4096", "--output", "512")])
def test_realistic_chunked_runs_stay_under_the_same_deployments_capacity(model):
    """A realistic mixed step reads the weights once, so a chunk riding on decode costs less than
    its share of a batched prefill pass; the steady state prices it so (it ran 0.3-2.1% over)."""
    realistic = ("--fidelity", "realistic")
    capacity = solve(*model, *realistic, "--concurrency", "256", "--chunked-prefill", "--chunk-tokens", "2048")
    d = load(*model, *realistic, "--qps", "1000", "--chunk-tokens", "2048", "--requests", "1500")
    assert d["throughput_tokens_per_s"] <= capacity["throughput_tokens_per_s"]
    assert d["saturation_qps"] == pytest.approx(capacity["throughput_tokens_per_s"] / float(model[model.index("--output") + 1]))
