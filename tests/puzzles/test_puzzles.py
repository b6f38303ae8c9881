"""The puzzle bank: built-in packs hold up against the engine, malformed packs fail clearly, the
command line's JSON contract, and the puzzle layer never loads Textual."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.bands import gain_band
from engine.catalog import builtin_catalog
from engine.errors import RidgeError
from puzzles import bank
from puzzles.check import check_paths
from puzzles.errors import PackError
from puzzles.puzzle import MODULES
from puzzles.schema import load_pack

ROOT = Path(__file__).resolve().parents[2]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    from app.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --- the built-in curriculum -------------------------------------------------------------------

def test_every_module_has_a_chapter_briefing_and_enough_puzzles():
    chapters = {c.id: c for c in bank.chapters()}
    assert set(chapters) == set(MODULES)
    for module in MODULES:
        chapter = chapters[module]
        assert chapter.briefing.count("\n\n") >= 1, f"{module}: the briefing should be a few paragraphs"
        assert chapter.expects.strip()
        count = len(bank.in_module(module))
        assert count >= (12 if module == "clearing-test" else 6), (module, count)


def test_the_packs_use_the_whole_catalog():
    cat = builtin_catalog()
    puzzles = bank.builtin().values()
    assert {p.deployment.model.id for p in puzzles} >= set(cat.models)
    assert {p.deployment.gpu.id for p in puzzles} >= set(cat.gpus)
    kv_and_cost = [p for p in puzzles if p.module in ("kv-cache", "cost-model")]
    assert any(p.deployment.model.is_moe and not p.deployment.model.is_mla for p in kv_and_cost)
    assert any(p.deployment.model.is_mla for p in kv_and_cost)


def test_corrected_claims_each_have_two_puzzles_where_the_popular_belief_fails():
    """'FP8 doubles throughput': quantization is offered, gains well under 2x, and the belief's
    answer (quantization, 2-4x) is graded wrong. 'Speculation is a general speedup': it is offered
    and loses (gain below 1)."""
    from puzzles.grading import Prediction, band_right

    fp8, spec = [], []
    for p in bank.builtin().values():
        key = bank.key(p)
        if "quantization" in p.levers:
            g = key.lever_gain("quantization")
            belief_right = key.best_lever == "quantization" and band_right("2-4x", key)
            if g is not None and g < 1.6 and not belief_right:
                fp8.append(p.id)
        if "speculative-decoding" in p.levers:
            g = key.lever_gain("speculative-decoding")
            if g is not None and g < 1.0 and key.best_lever != "speculative-decoding":
                spec.append(p.id)
    assert len(fp8) >= 2, fp8
    assert len(spec) >= 2, spec
    assert Prediction  # the belief is graded through the same band rule the game uses


def test_keys_are_cached_and_hold_every_offered_lever():
    p = bank.get("kv-cache-01")
    key = bank.key(p)
    assert key is bank.key(p)
    assert [lv.name for lv in key.levers] != [] and {lv.name for lv in key.levers} == set(p.levers)
    gains = [lv.gain for lv in key.levers if lv.gain is not None]
    assert gains == sorted(gains, reverse=True)
    kv_line = next(line for line in key.derivation if line.startswith("KV/token"))   # the KV-per-token step
    assert "80 layers x 8 KV heads x 128 dims" in kv_line and kv_line.endswith("= 327,680 B (320 KiB)")
    assert key.estimates["kv_bytes_per_token"] == 327_680
    assert key.estimates["max_concurrency"] == 125


def test_unknown_puzzle_id_is_one_clear_error():
    with pytest.raises(RidgeError, match="unknown puzzle"):
        bank.get("no-such-puzzle")
    with pytest.raises(RidgeError, match="generated puzzle id"):
        bank.get("gen-s1-d9-0001")


# --- malformed packs -------------------------------------------------------------------------

GOOD_PUZZLE = '''
[[puzzles]]
id = "{pid}"
title = "A test"
difficulty = 2
scenario = "Someone serves a model."
objective = "cost"
reasons = ["kv-cap", "at-ridge", "weight-read"]
hints = ["one", "two"]
deployment = {{ model = "{model}", gpu = "h100-sxm", gpus = 4, prompt = 3072, output = 2048, concurrency = 200 }}
'''

CHAPTER = '''[chapter]
id = "kv-cache"
title = "T"
briefing = "B"
expects = "E"
'''


def write(tmp_path, name, text) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_minimal_pack_loads(tmp_path):
    path = write(tmp_path, "ok.toml", CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b"))
    pack = load_pack(path)
    assert [p.id for p in pack.puzzles] == ["t-01"]
    problems, count, packs = check_paths([path])
    assert (problems, count, packs) == ([], 1, 1)


@pytest.mark.parametrize("case, text, where", [
    ("bad-toml", CHAPTER + "[[puzzles]]\nid = \"x\nbroken", ":7: not valid TOML"),
    ("unknown-key", CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b").replace(
        'objective = "cost"', 'objective = "cost"\ncolour = "red"'), ":13: puzzle t-01: colour: unknown key 'colour'"),
    ("wrong-type", CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b").replace(
        "difficulty = 2", 'difficulty = "hard"'), ":10: puzzle t-01: difficulty: Input should be a valid integer"),
    ("unknown-model", CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="llama-9"),
     ":15: puzzle t-01: deployment.model: unknown model 'llama-9'"),
    ("duplicate-id", CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b")
     + GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b"), ":18: puzzle t-01: id: duplicate id: already used at"),
    ("bad-deployment-field", CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b").replace(
        "concurrency = 200", "concurency = 200"), ":15: puzzle t-01: deployment.concurency: unknown deployment field"),
    ("bad-reason", CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b").replace(
        '"kv-cap", "at-ridge"', '"kv-cap", "vibes"'), ":13: puzzle t-01: reasons.1: must be"),
])
def test_malformed_packs_give_one_line_naming_file_line_id_and_field(tmp_path, capsys, case, text, where):
    path = write(tmp_path, f"{case}.toml", text)
    problems, _, _ = check_paths([path])
    assert problems, case
    line = str(problems[0])
    assert line.startswith(path) and where in line, line
    assert "\n" not in line
    code, out, err = cli(capsys, "puzzles", "check", path)
    assert code == 1 and where in out and "Traceback" not in out + err


def test_an_expect_that_disagrees_with_the_engine_fails_check(tmp_path, capsys):
    text = CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b") + \
        'expect = { best_lever = "paged-kv", reason = "kv-cap" }\n'
    path = write(tmp_path, "expect.toml", text)
    problems, _, _ = check_paths([path])
    assert [p.field for p in problems] == ["expect.best_lever"] and problems[0].line == 16
    assert "the engine says 'quantization'" in str(problems[0])
    code, out, _ = cli(capsys, "puzzles", "check", path, "--json")
    assert code == 1 and json.loads(out)["problems"][0]["field"] == "expect.best_lever"


def test_a_key_reason_missing_from_the_candidates_and_an_ambiguous_deployment_fail_check(tmp_path):
    missing = GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b").replace('"kv-cap", ', '"serial-requests", ')
    # 125 sequences fit; 130 wanted is within 10% of the capacity threshold.
    ambiguous = GOOD_PUZZLE.format(pid="t-02", model="llama-3-70b").replace("concurrency = 200", "concurrency = 130")
    problems, _, _ = check_paths([write(tmp_path, "p.toml", CHAPTER + missing + ambiguous)])
    first = [p for p in problems if p.puzzle == "t-01"]
    assert [p.field for p in first] == ["reasons"] and "kv-cap" in str(first[0]) and first[0].line == 13
    second = " | ".join(str(p) for p in problems if p.puzzle == "t-02")
    assert "ambiguous: rule kv-capacity is borderline" in second


def test_missing_pack_file_is_an_error_not_a_traceback(capsys):
    code, out, err = cli(capsys, "puzzles", "check", "/nonexistent/pack.toml")
    assert code == 1 and "no such file" in out


def test_load_pack_raises_pack_error_without_a_problem_list(tmp_path):
    path = write(tmp_path, "bad.toml", CHAPTER + GOOD_PUZZLE.format(pid="t-01", model="nope"))
    with pytest.raises(PackError) as info:
        load_pack(path)
    assert info.value.puzzle == "t-01" and info.value.field == "deployment.model" and info.value.line == 15


# --- the command line ------------------------------------------------------------------------

def test_list_json(capsys):
    code, out, _ = cli(capsys, "puzzles", "list", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == len(bank.builtin())
    assert set(rows[0]) == {"id", "module", "title", "difficulty"}


def test_show_hides_the_key_unless_asked(capsys):
    code, out, _ = cli(capsys, "puzzles", "show", "kv-cache-01", "--json")
    card = json.loads(out)
    assert code == 0 and "answer" not in card
    for field in ("id", "module", "title", "difficulty", "scenario", "deployment", "objective", "levers",
                  "reasons", "reason_texts", "ask", "hints"):
        assert field in card
    assert card["deployment"]["model"] == "llama-3-70b" and card["ask"]["estimates"] == ["kv_bytes_per_token", "max_concurrency"]
    code, out, _ = cli(capsys, "puzzles", "show", "kv-cache-01", "--json", "--answer")
    answer = json.loads(out)["answer"]
    assert answer["bottleneck"] == "kv-capacity" and answer["best_lever"] == "quantization"
    assert answer["reason"] == "kv-cap"
    # the band is the realistic gain's; the floor's gain is shown beside it as the ceiling
    assert answer["gain_band"] == gain_band(answer["band_gain"]) == gain_band(answer["fidelities"]["realistic"]["gain"])
    assert answer["gain"] == answer["fidelities"]["floor"]["gain"] >= answer["band_gain"]
    assert answer["levers"][0]["name"] == "quantization" and answer["estimates"]["max_concurrency"] == 125
    code, out, _ = cli(capsys, "puzzles", "show", "kv-cache-01", "--answer")
    assert "Why not the other verdicts" in out and "Derivation" in out


def test_generate_and_show_a_generated_id(capsys):
    code, out, _ = cli(capsys, "puzzles", "generate", "--seed", "5", "--count", "3", "--json", "--answer")
    made = json.loads(out)
    assert code == 0 and [p["id"] for p in made] == ["gen-s5-d1-0000", "gen-s5-d2-0001", "gen-s5-d3-0002"]
    code, out, _ = cli(capsys, "puzzles", "show", made[2]["id"], "--json", "--answer")
    assert json.loads(out) == made[2]


def test_answer_grades_headlessly(capsys):
    code, out, _ = cli(capsys, "answer", "kv-cache-01", "--bottleneck", "kv-capacity", "--lever", "quantization",
                       "--gain", "1.25-2x", "--reason", "kv-cap", "--estimate", "kv_bytes_per_token=327680",
                       "--estimate", "max_concurrency=120", "--certainty", "high", "--no-record", "--json")
    result = json.loads(out)
    assert code == 0 and result["outcome"] == "cleared" and result["points"] == 30
    for field in ("answer_right", "reason_right", "key", "feedback", "misconceptions"):
        assert field in result
    assert result["recorded"] is None


@pytest.mark.parametrize("args, message", [
    (["--lever", "routing"], "lever must be one of this puzzle's"),
    (["--reason", "vibes"], "reason must be one of"),
    (["--gain", "huge"], "gain band must be one of"),
    (["--estimate", "max_concurrency=lots"], "is not a finite number"),
])
def test_answer_rejects_bad_input_with_one_line(capsys, args, message):
    base = {"--bottleneck": "kv-capacity", "--lever": "quantization", "--gain": "2-4x", "--reason": "kv-cap",
            "--certainty": "low"}
    argv = ["answer", "kv-cache-01", "--estimate", "kv_bytes_per_token=1"]
    overrides = dict(zip(args[::2], args[1::2]))
    for flag, value in {**base, **overrides}.items():
        if flag != "--estimate":
            argv += [flag, value]
    argv += ["--estimate", overrides.get("--estimate", "max_concurrency=100"), "--no-record"]
    code, out, err = cli(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1


def test_answer_records_the_attempt(capsys, tmp_path):
    pytest.importorskip("saves.store")
    code, out, _ = cli(capsys, "puzzles", "show", "gen-s3-d1-0000", "--json")
    card = json.loads(out)
    code, out, _ = cli(capsys, "answer", "gen-s3-d1-0000", "--bottleneck", card["ask"]["bottleneck"][0],
                       "--lever", card["levers"][0], "--gain", "over-4x", "--reason", card["reasons"][0],
                       "--certainty", "low",
                       "--save-dir", str(tmp_path), "--profile", "tester", "--json")
    result = json.loads(out)
    assert code == 0 and result["recorded"] == {"profile": "tester", "seq": 1}
    from saves.store import SaveStore

    attempt = SaveStore(tmp_path).load("tester").attempts[-1]
    assert (attempt.puzzle_id, attempt.mode, attempt.outcome) == ("gen-s3-d1-0000", "cli", result["outcome"])
    assert attempt.key.best_lever == result["key"]["best_lever"]
    assert (attempt.generator.seed, attempt.generator.difficulty, attempt.generator.index) == (3, 1, 0)


def test_the_puzzle_layer_imports_no_textual_or_numpy():
    code = ("import puzzles.bank, puzzles.generator, puzzles.grading, puzzles.check, puzzles.cards, sys; "
            "puzzles.bank.builtin(); puzzles.generator.make(1, 5, 0); "
            "assert 'textual' not in sys.modules, 'textual'; assert 'numpy' not in sys.modules, 'numpy'")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# --- the grading contract: objective verdicts, fixed order, ruled-out levers, complete cards ---

def _builtin_json(capsys):
    out = []
    for pid in bank.builtin():
        code, text, _ = cli(capsys, "puzzles", "show", pid, "--json", "--answer")
        assert code == 0
        out.append(json.loads(text))
    return out


def test_every_builtin_offers_only_the_verdicts_that_bound_its_objective_in_the_fixed_order(capsys):
    from engine.ids import OBJECTIVE_VERDICTS, Lever

    from puzzles.reasons import REASONS

    for card in _builtin_json(capsys):
        allowed = [str(v) for v in OBJECTIVE_VERDICTS[card["objective"]]]
        assert card["ask"]["bottleneck"] == allowed, card["id"]
        assert card["answer"]["bottleneck"] in allowed, card["id"]
        assert card["levers"] == [str(x) for x in Lever if x in card["levers"]], card["id"]
        assert card["reasons"] == [r for r in REASONS if r in card["reasons"]], card["id"]
        assert card["ask"]["lever"] == card["levers"] and card["ask"]["reason"] == card["reasons"]
        assert card["answer"]["gain_band"] in card["answer"]["gain_bands"], card["id"]
        for lever in card["ruled_out"]:
            assert lever not in card["levers"]
            assert any(row["field"] == "Ruled out" and lever in row["value"] for row in card["card"]), card["id"]


def test_no_unoffered_lever_beats_a_builtin_key_unless_ruled_out():
    from puzzles.keys import unoffered_winners

    for p in bank.builtin().values():
        key = bank.key(p)
        for solution in (key.solution, key.realistic):
            if solution is not None:
                assert not unoffered_winners(solution, p.levers, p.ruled_out), p.id


def test_every_builtin_key_is_the_same_under_both_fidelities():
    for p in bank.builtin().values():
        assert bank.key(p).flips() == [], p.id


def test_a_card_rebuilt_from_what_it_shows_gives_the_same_key():
    """Every input the key depends on is on the card: keep only the fields the card shows (the
    rest at their defaults) and the key is unchanged. Where that gives the very same deployment
    (every field equal: every hidden one was at its default) it is the same puzzle, so its key
    is not solved again (for a load puzzle, a second set of traffic runs); any other is re-keyed
    and compared."""
    from engine.deployment import Deployment, validate

    from puzzles.cards import card_rows, shown_fields
    from puzzles.load_keys import key_of as compute_key   # the bank's dispatch: a load puzzle's key is its run's

    for p in bank.builtin().values():
        dep = p.deployment
        shown = shown_fields(dep, p.levers)
        text = " ".join(value for _, value in card_rows(dep, p.levers, p.ruled_out, p.objective))
        kept = {name: getattr(dep, name) for name in type(dep).FIELDS if name in shown}
        for name in ("prompt", "output", "concurrency", "gpus"):
            assert f"{kept[name]:,}" in text, (p.id, name)
        rebuilt = validate(Deployment(**kept))
        if rebuilt == dep:
            continue
        again = compute_key(type(p)(**{**p.__dict__, "deployment": rebuilt}))
        key = bank.key(p)
        assert (again.bottleneck, again.best_lever, again.bands, again.reason) == \
               (key.bottleneck, key.best_lever, key.bands, key.reason), p.id


def test_ruled_out_levers_load_show_and_are_checked(tmp_path, capsys):
    base = GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b")
    ok = base.replace('objective = "cost"', 'objective = "cost"\nlevers = ["paged-kv", "kv-quantization", '
                      '"batching"]\nruled_out = { quantization = "the weights must stay in BF16 for the audit", '
                      '"speculative-decoding" = "no draft model exists for this language", '
                      '"more-gpus" = "the rack has no free slots" }')
    path = write(tmp_path, "ruled.toml", CHAPTER + ok)
    problems, _, _ = check_paths([path])
    assert problems == [], [str(p) for p in problems]
    unruled = ok.replace('quantization = "the weights must stay in BF16 for the audit", ', '')
    problems, _, _ = check_paths([write(tmp_path, "unruled.toml", CHAPTER + unruled)])
    assert any("quantization is not offered but beats" in str(p) for p in problems)
    both = ok.replace('levers = ["paged-kv"', 'levers = ["quantization", "paged-kv"')
    problems, _, _ = check_paths([write(tmp_path, "both.toml", CHAPTER + both)])
    assert any("ruled_out names quantization, which the puzzle also offers" in str(p) for p in problems)


def test_levers_and_reasons_load_in_the_fixed_order_whatever_the_file_says(tmp_path):
    text = GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b").replace(
        'reasons = ["kv-cap", "at-ridge", "weight-read"]', 'reasons = ["weight-read", "at-ridge", "kv-cap"]')
    text = text.replace('objective = "cost"', 'objective = "cost"\nlevers = ["routing", "quantization", "batching", '
                        '"speculative-decoding", "more-gpus", "kv-quantization", "paged-kv", "prefix-caching", '
                        '"chunked-prefill"]')
    pack = load_pack(write(tmp_path, "order.toml", CHAPTER + text))
    puzzle = pack.puzzles[0]
    assert puzzle.reasons == ("kv-cap", "at-ridge", "weight-read")
    assert puzzle.levers[:3] == ("batching", "paged-kv", "prefix-caching") and puzzle.levers[-1] == "routing"


def test_an_expect_bottleneck_must_bound_the_objective(tmp_path):
    text = GOOD_PUZZLE.format(pid="t-01", model="llama-3-70b").replace('objective = "cost"', 'objective = "ttft"')
    text += 'expect = { bottleneck = "decode-kv" }\n'
    problems, _, _ = check_paths([write(tmp_path, "ttft.toml", CHAPTER + text)])
    assert any("cannot bound the ttft objective" in str(p) for p in problems)


def test_a_puzzle_whose_answer_flips_between_fidelities_is_rejected_naming_both_answers(tmp_path):
    """gpt-oss-120b on one H100 at batch 1: twice the GPUs halves TPOT at the floor, but a real
    tensor-parallel pair pays for its all-reduces and speculation wins instead."""
    text = GOOD_PUZZLE.format(pid="t-01", model="gpt-oss-120b").replace(
        'objective = "cost"', 'objective = "tpot"\nlevers = ["speculative-decoding", "kv-quantization", "more-gpus"]')
    text = text.replace("gpus = 4, prompt = 3072, output = 2048, concurrency = 200",
                        'gpus = 1, prompt = 800, output = 800, concurrency = 1, weights = "int4"')
    problems, _, _ = check_paths([write(tmp_path, "flip.toml", CHAPTER + text)])
    flips = [str(p) for p in problems if "not robust" in str(p)]
    assert flips and "t-01" in flips[0] and "more-gpus at the floor" in flips[0] and "at the realistic" in flips[0]


def test_an_input_the_card_leaves_out_is_caught(monkeypatch):
    """If the card stopped showing the draft's acceptance, a speculation key would depend on an
    input the player cannot see: the check says which."""
    from puzzles import cards
    from puzzles.check import hidden_input_problems

    puzzle = bank.get("two-phases-01")
    real = cards.shown_fields
    monkeypatch.setattr(cards, "shown_fields", lambda dep, levers=(): real(dep, levers) - {"spec_alpha"})
    found = hidden_input_problems(puzzle, bank.key(puzzle))
    assert [field for field, _ in found] == ["deployment.spec_alpha"]
