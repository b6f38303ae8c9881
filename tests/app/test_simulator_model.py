"""The simulator without its screen: inputs, last good result, grading, saving, and the plots' data."""
import contextlib
import io
import json
import math

import numpy as np
import pytest

from engine.sim.curves import CURVE_POINTS
from engine.sim.result import changed_inputs
from engine.sim.state import Simulator
from puzzles.sim import grade_prediction, sim_key
from saves import own_pack
from engine.analysis import analyze
from engine.deployment import build_deployment
from engine.errors import RidgeError
from puzzles.grading import objective_bottleneck


@pytest.fixture
def sim():
    return Simulator()


def short_context_8b(**raw):
    """The course's default draft settings on a small model at short context, on one H100."""
    values = dict(model="llama-3-8b", gpu="h100-sxm", gpus="1", prompt="128", output="128", concurrency="8",
                  spec_k="0", spec_alpha="0.7", spec_draft_cost="0.05")
    values.update(raw)
    return Simulator(**values)


# --- inputs and the last good result ----------------------------------------------------------

def test_default_deployment_is_good_and_matches_the_engine(sim):
    assert sim.errors == {}
    dep = sim.result.deployment
    assert (dep.model.id, dep.gpu.id, dep.gpus) == ("llama-3.1-70b", "h100-sxm", 4)
    assert sim.result.report == analyze(dep)


def test_editing_an_input_changes_the_result(sim):
    before = sim.result
    assert sim.edit("concurrency", "100") is True
    assert sim.result is not before
    assert sim.result.deployment.concurrency == 100
    assert sim.version == 2


def test_same_value_is_not_a_change(sim):
    assert sim.edit("concurrency", "400") is False
    assert sim.edit("concurrency", "4_00") is False
    assert sim.version == 1


@pytest.mark.parametrize("field,text,words", [
    ("prompt", "-5", "prompt must be at least 1, got -5"),
    ("prompt", "", "prompt is empty"),
    ("output", "lots", "output must be a whole number"),
    ("gpus", "2.5", "gpus must be a whole number"),
    ("mfu", "1.5", "mfu must be between"),
    ("spec_alpha", "nan", "spec_alpha must be a"),
    ("shared_prefix", "5000", "shared_prefix (5000) cannot exceed the prompt"),
])
def test_invalid_input_gets_a_message_on_its_field_and_keeps_the_last_good_result(sim, field, text, words):
    good = sim.result
    assert sim.edit(field, text) is False
    assert words in sim.errors[field]
    assert sim.result is good and sim.stale


def test_a_model_that_does_not_fit_is_reported_on_the_model_field(sim):
    good = sim.result
    sim.edit("model", "llama-3.1-405b")
    assert sim.errors["model"].startswith("does not fit: weights")
    assert sim.result is good
    sim.edit("gpus", "16")
    assert sim.errors == {} and sim.result.deployment.model.id == "llama-3.1-405b"


def test_prompt_plus_output_past_the_context_blames_the_field_edited(sim):
    sim.edit("output", "200000")
    assert "exceeds" in sim.errors["output"]
    sim.edit("output", "512")
    assert sim.errors == {}


def test_fixing_one_field_clears_its_message(sim):
    sim.edit("prompt", "-1")
    sim.edit("prompt", "2048")
    assert sim.errors == {} and sim.result.deployment.prompt == 2048


def test_a_config_json_adds_its_model(tmp_path, sim):
    config = {"model_type": "llama", "_name_or_path": "acme/tiny-llama", "hidden_size": 2048,
              "num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 16,
              "intermediate_size": 5632, "vocab_size": 32000, "max_position_embeddings": 8192}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    sim.edit("config", str(path))
    assert sim.errors == {}
    assert sim.result.deployment.model.id == "tiny-llama"
    assert "tiny-llama" in sim.choices("model")


def test_a_bad_config_file_is_an_inline_message(tmp_path, sim):
    good = sim.result
    path = tmp_path / "config.json"
    path.write_text("{not json")
    sim.edit("config", str(path))
    assert "not valid JSON" in sim.errors["config"]
    assert sim.result is good
    sim.edit("config", "")
    assert sim.errors == {}


def test_a_catalog_toml_adds_a_gpu(tmp_path, sim):
    path = tmp_path / "extra.toml"
    path.write_text('[gpus.big-gpu]\nname = "Big GPU"\nmemory_gib = 400\nbandwidth_tbps = 10\n'
                    'peak_tflops = { bf16 = 2000 }\n')
    sim.edit("config", str(path))
    assert "big-gpu" in sim.choices("gpu")
    sim.edit("gpu", "big-gpu")
    assert sim.errors == {} and sim.result.deployment.gpu.id == "big-gpu"


# --- predict first ----------------------------------------------------------------------------

def test_the_engines_own_answer_is_cleared(sim):
    key = sim_key(sim.result)
    grade = grade_prediction(sim.result, objective_bottleneck(key), key.best_lever, key.gain_band)
    assert grade.outcome == "cleared" and all(grade.marks.values())


def test_a_wrong_part_is_missed(sim):
    key = sim_key(sim.result)
    wrong = "decode-compute" if key.bottleneck != "decode-compute" else "decode-kv"
    grade = grade_prediction(sim.result, wrong, key.best_lever, key.gain_band)
    assert grade.outcome == "missed"
    assert grade.marks == {"bottleneck": False, "lever": True, "gain_band": True}


def test_neighbouring_band_counts_only_near_the_edge():
    """The band is keyed on the realistic gain: near an edge both bands count, and the floor's
    flattering band (8-bit weights 'double' at the floor) does not."""
    near = Simulator(concurrency="64")
    key = sim_key(near.result)
    assert key.best_lever == "quantization" and abs(key.band_gain / 1.25 - 1) < 0.1
    assert grade_prediction(near.result, objective_bottleneck(key), key.best_lever, "under-1.25x").outcome == "cleared"
    assert grade_prediction(near.result, objective_bottleneck(key), key.best_lever, "1.25-2x").outcome == "cleared"
    far = Simulator(prompt="3584", output="1024", concurrency="256")
    k = sim_key(far.result)
    assert k.gain > 2.2 and k.band_gain < 1.9
    assert grade_prediction(far.result, objective_bottleneck(k), k.best_lever, "1.25-2x").outcome == "cleared"
    assert grade_prediction(far.result, objective_bottleneck(k), k.best_lever, "2-4x").outcome == "missed"


def test_grading_rejects_unknown_ids(sim):
    with pytest.raises(RidgeError):
        grade_prediction(sim.result, "slow", "batching", "2-4x")


# --- the plots' data --------------------------------------------------------------------------

def test_roofline_is_min_of_peak_and_bandwidth_slope_with_the_knee_at_the_ridge(sim):
    d = sim.roofline()
    assert len(d.intensity) == CURVE_POINTS
    assert np.allclose(d.attainable, np.minimum(d.peak, d.intensity * d.bandwidth))
    assert d.ridge == pytest.approx(d.peak / d.bandwidth) and d.ridge == pytest.approx(295.4, abs=0.1)
    logs_i, logs_a = np.log(d.intensity), np.log(d.attainable)
    slope = np.diff(logs_a) / np.diff(logs_i)
    below, above = d.intensity[1:] < d.ridge, d.intensity[:-1] > d.ridge
    assert np.allclose(slope[below], 1.0) and np.allclose(slope[above], 0.0)
    knee = d.intensity[np.argmax(d.attainable >= d.peak)]
    step = d.intensity[1] / d.intensity[0]
    assert d.ridge <= knee <= d.ridge * step
    # This deployment's point sits on the roof at its own intensity, below the ridge.
    assert d.point_intensity == pytest.approx(sim.result.report.intensity)
    assert d.point_attainable == pytest.approx(d.point_intensity * d.bandwidth)
    assert d.batch_one_intensity < d.point_intensity <= d.max_batch_intensity


def test_roofline_point_moves_with_batch(sim):
    before = sim.roofline().point_intensity
    sim.edit("concurrency", "16")
    assert sim.roofline().point_intensity < before


def test_spec_speedup_is_above_one_at_batch_one_and_below_one_near_the_ridge():
    d = short_context_8b().spec()
    assert (d.k, d.alpha, d.draft_cost) == (4, 0.7, 0.05)
    assert len(d.concurrency) == CURVE_POINTS
    assert d.expected_tokens == pytest.approx(2.77, abs=0.01)
    assert d.speedup[0] > 2.0  # batch 1: about 2.3x
    ridge_batch = int(round(d.ridge))
    assert d.batch[ridge_batch - 1] == ridge_batch
    assert d.speedup[ridge_batch - 1] < 1.0
    assert d.first_below_one is not None and d.ridge / 2 < d.first_below_one < d.ridge
    assert np.all(np.diff(d.speedup) <= 1e-12)  # it only ever falls as the batch grows


def test_spec_curve_uses_the_deployments_own_draft_settings():
    d = short_context_8b(spec_k="2", spec_alpha="0.9").spec()
    assert (d.k, d.alpha) == (2, 0.9)
    assert d.current_speedup == pytest.approx(d.speedup[7])


@pytest.mark.parametrize("seq_len,course", [(1024, 501), (4096, 125), (32768, 15), (131072, 3)])
def test_concurrency_curve_matches_the_engine_and_the_course(catalog, seq_len, course):
    sim = Simulator(model="llama-3.1-70b", gpu="h100-sxm", gpus="4")
    d = sim.concurrency_curve()
    i = int(np.nonzero(d.seq_len == seq_len)[0][0])
    curve = int(d.max_concurrency[i])
    formula = math.floor(d.usable_bytes / (d.kv_bytes_per_token * seq_len))
    if seq_len < 131072:
        prompt, output = seq_len - 1, 2
    else:  # an average of exactly 131,072 cannot fit the context with any output: 131,071.5 can
        prompt, output = 131071, 1
    dep = build_deployment(catalog, "llama-3.1-70b", "h100-sxm", gpus=4, prompt=prompt, output=output)
    assert curve == formula == analyze(dep).max_concurrency == course
    row = next(r for r in d.table if r[0] == seq_len)
    assert row[2] == course


def test_concurrency_curve_falls_as_sequences_lengthen(sim):
    d = sim.concurrency_curve()
    assert len(d.seq_len) == CURVE_POINTS
    assert np.all(np.diff(d.max_concurrency) <= 0)
    assert d.point_max_concurrency == sim.result.report.max_concurrency


def test_cost_and_tpot_curves_and_the_budget(sim):
    d = sim.cost_tpot()
    assert len(d.concurrency) == CURVE_POINTS
    assert np.all(np.diff(d.cost) <= 1e-12) and np.all(np.diff(d.tpot) >= -1e-15)
    assert d.best_tpot <= d.budget_seconds
    assert d.current_cost == pytest.approx(sim.result.report.cost_per_million_output_tokens)
    sim.set_budget("5")
    tight = sim.cost_tpot()
    # no concurrency on the curve reaches a 5 ms step here, so the budget is reported as unmet (None)
    assert sim.result.report.tpot_seconds > 0.005
    assert tight.best_concurrency is None and d.best_concurrency is not None
    assert sim.set_budget("-3") is not None and sim.tpot_budget_ms == 5


def test_curves_follow_an_edit(sim):
    before = [sim.spec().speedup.copy(), sim.cost_tpot().cost.copy(), sim.concurrency_curve().max_concurrency.copy()]
    sim.edit("gpus", "8")
    after = [sim.spec().speedup, sim.cost_tpot().cost, sim.concurrency_curve().max_concurrency]
    for old, new in zip(before, after):
        assert not np.allclose(old, new, equal_nan=True)


def test_more_than_a_thousand_in_flight_widens_the_axis(sim):
    sim.edit("concurrency", "5000")
    d = sim.cost_tpot()
    assert len(d.concurrency) <= CURVE_POINTS and d.concurrency[-1] >= 5000


# --- side by side -----------------------------------------------------------------------------

def test_compare_gives_both_values_and_the_ratio(sim):
    sim.pin()
    sim.edit("gpus", "8")
    rows = {r.label: r for r in sim.comparison()}
    conc = rows["max concurrency"]
    assert conc.ratio == pytest.approx(conc.b / conc.a) and conc.better == "better"
    assert rows["weights GiB"].ratio == pytest.approx(1.0)
    assert changed_inputs(sim.pinned, sim.result) == [("gpus", 4, 8)]


# --- saving as a puzzle -----------------------------------------------------------------------

def test_saved_puzzle_passes_the_pack_check(tmp_path, sim):
    from puzzles.check import check_paths

    path = tmp_path / "packs" / "my-puzzles.toml"
    puzzle_id, written = own_pack.save_puzzle(sim.result, path)
    assert written == path and puzzle_id.startswith("my-")
    sim.edit("prompt", "3072")
    own_pack.save_puzzle(sim.result, path)
    problems, count, packs = check_paths([path])
    assert problems == [] and (count, packs) == (2, 1)
    text = path.read_text()
    assert text.count("[chapter]") == 1 and text.count("[[puzzles]]") == 2
    import tomllib   # written by tomli-w now, so the layout is its own: check what it says

    saved = tomllib.loads(text)["puzzles"][0]["deployment"]
    assert (saved["model"], saved["gpu"], saved["gpus"]) == ("llama-3.1-70b", "h100-sxm", 4)


def test_ridge_puzzles_check_accepts_the_saved_pack(tmp_path, sim):
    pytest.importorskip("app.commands.puzzles", reason="`ridge puzzles` has not landed in this build")
    path = tmp_path / "my-puzzles.toml"
    own_pack.save_puzzle(sim.result, path)
    from app.cli import main

    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["puzzles", "check", str(path)])   # in this process: its kernel engines are kept
    assert code == 0, out.getvalue() + err.getvalue()


def test_saving_twice_or_an_ambiguous_deployment_is_refused(tmp_path, sim):
    path = tmp_path / "my-puzzles.toml"
    own_pack.save_puzzle(sim.result, path)
    with pytest.raises(RidgeError, match="already in your pack"):
        own_pack.save_puzzle(sim.result, path)
    before = path.read_text()
    close = short_context_8b(concurrency="4")   # speculation only a few percent ahead of FP8
    with pytest.raises(RidgeError, match="puzzle check would reject it"):
        own_pack.save_puzzle(close.result, path)
    assert path.read_text() == before


def test_the_default_pack_lives_in_the_data_folder(tmp_path):
    assert own_pack.pack_path(tmp_path) == tmp_path / "packs" / "my-puzzles.toml"


def test_a_model_from_a_file_cannot_go_in_a_pack(tmp_path, sim):
    config = {"model_type": "llama", "_name_or_path": "odd", "hidden_size": 1024, "num_attention_heads": 8,
              "num_hidden_layers": 4, "intermediate_size": 2048, "vocab_size": 1000}
    (tmp_path / "config.json").write_text(json.dumps(config))
    sim.edit("config", str(tmp_path / "config.json"))
    with pytest.raises(RidgeError, match="only catalog models"):
        own_pack.save_puzzle(sim.result, tmp_path / "p.toml")


def test_simulator_reserve_default_is_the_engines():
    """An empty reserve is the engine's default, 10% of each GPU's memory, and follows the GPU."""
    from engine.sim.inputs import DEFAULT_RAW, FIELD_BY_NAME

    assert DEFAULT_RAW["reserve_gib"] == ""
    assert "10%" in FIELD_BY_NAME["reserve_gib"].blank
    sim = Simulator(model="llama-3-8b", gpu="l4", gpus="1", concurrency="4")
    assert not sim.errors
    assert sim.result.deployment.reserve_gib is None
    assert sim.result.deployment.reserve_gib_per_gpu == pytest.approx(2.4)
    assert sim.result.report.reserve_bytes == pytest.approx(0.1 * 24 * 2**30)
    sim.edit("gpu", "h100-sxm")
    assert sim.result.deployment.reserve_gib_per_gpu == pytest.approx(8.0)
    sim.edit("reserve_gib", "6")
    assert sim.result.deployment.reserve_gib == 6
    sim.edit("reserve_gib", "  ")
    assert not sim.errors and sim.result.deployment.reserve_gib is None
    sim.edit("mfu", "")  # only a field with a stated default may be left empty
    assert "mfu" in sim.errors


def test_messages_grades_and_the_knee_in_the_simulators_words(sim):
    """What the simulator's screen shows, without it: engine messages with the fields' own
    labels, a locked prediction's verdict lines, and the player's knee against the engine's."""
    import types

    from engine.sim.inputs import FIELD_BY_NAME, player_words
    from puzzles.sim import grade_lines, knee_lines

    assert player_words("gpus must be >= 1") == f"{FIELD_BY_NAME['gpus'].label} must be >= 1"
    assert player_words("") == ""
    r = sim.result
    key = sim_key(r)
    right = grade_prediction(r, objective_bottleneck(key), key.best_lever, key.gain_band)
    lines = grade_lines(right, lambda kind, identifier: f"<{identifier}>")
    assert lines[0].startswith("✓ Cleared. ") and len(lines) == 1 + len(right.parts)
    other = next(lv.name for lv in key.levers if lv.name != key.best_lever)
    wrong = grade_prediction(r, objective_bottleneck(key), other, key.gain_band)
    assert grade_lines(wrong, lambda kind, identifier: identifier)[0].startswith("✗ Missed. ")
    curve = types.SimpleNamespace(knee_qps=None, saturation_qps=10.0)
    assert knee_lines(14.0, curve, str)[0].startswith("✓ right: your knee 14.0 req/s, the engine's 10.0 req/s")
    assert knee_lines(16.0, curve, str)[0].startswith("✗ off")
