"""The outside grader's checks of issues 11 and 13, through the public commands only.

Every figure here comes from `ridge solve`, `ridge puzzles list|show|generate|check` or `ridge
answer` (run in-process through `app.cli.main`, the same entry point as the `ridge` script), and
the reference numbers (full-attention KV sizes) are computed here from the published configs, not
read back from the engine. Nothing imports the engine's internals: if a check fails, the contract
a user sees is broken.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import re
import subprocess
import sys
import tomllib
from functools import lru_cache
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
GiB = 2**30
EDGES = (1.25, 2.0, 4.0)
BANDS = ("under-1.25x", "1.25-2x", "2-4x", "over-4x")
# engine/ids.py's fixed option orders (DESIGN.md "Grading"), spelled out as an outsider would.
VERDICT_ORDER = ("does-not-fit", "kv-capacity", "prefill-compute", "prefill-weights",
                 "decode-compute", "decode-kv", "decode-weights")
LEVER_ORDER = ("batching", "paged-kv", "prefix-caching", "quantization", "kv-quantization",
               "speculative-decoding", "chunked-prefill", "more-gpus", "routing")
OBJECTIVE_VERDICTS = {
    "cost": ("does-not-fit", "kv-capacity", "prefill-compute", "decode-compute", "decode-kv",
             "decode-weights"),
    "tpot": ("does-not-fit", "kv-capacity", "decode-compute", "decode-kv", "decode-weights"),
    "ttft": ("does-not-fit", "prefill-compute", "prefill-weights"),
    "stall": ("does-not-fit", "prefill-compute", "prefill-weights"),
}
CONTRACT_KEYS = (
    "params active_params weight_bytes kv_bytes_per_token ridge seq_len_avg usable_kv_bytes "
    "max_concurrency batch decode_bytes_per_step decode_flops_per_step decode_memory_seconds "
    "decode_compute_seconds tpot_seconds intensity prefill_seconds ttft_seconds prefill_share "
    "throughput_tokens_per_s cost_per_million_output_tokens bottleneck levers best_lever fits "
    "fidelity corrections objective_bottleneck floor").split()


def ridge(*argv: str) -> tuple[int, str]:
    """Run one `ridge` command in-process; its exit code and stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([str(a) for a in argv])
    return code, out.getvalue()


def ridge_json(*argv: str):
    code, text = ridge(*argv, "--json")
    assert code == 0, (argv, text)
    return json.loads(text, parse_constant=_refuse_constant)


def _refuse_constant(name: str):
    raise AssertionError(f"non-finite JSON constant {name}")


@lru_cache(maxsize=None)
def _solve(args: tuple[str, ...]):
    return ridge_json("solve", *args)


def solve(*args, fidelity: str = "floor", **flags):
    """`ridge solve ... --json` with flags spelled as keyword arguments."""
    argv = [str(a) for a in args]
    for name, value in flags.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    return _solve(tuple(argv + ["--fidelity", fidelity]))


def dep_args(dep: dict) -> list[str]:
    """The `ridge solve` flags that rebuild a puzzle's deployment from its public JSON."""
    argv: list[str] = []
    for name, value in dep.items():
        if name == "fidelity" or value is None:
            continue
        flag = f"--{name.replace('_', '-')}"
        if isinstance(value, bool):
            argv += [flag] if value else []
        else:
            argv += [flag, str(value)]
    return argv


def lever_gains(solution) -> dict[str, float]:
    """Each lever's gain; on a deployment that does not fit (every gain null) a lever that makes
    it fit scores 1 / its objective after (the engine ranks those by that), one that doesn't 0."""
    def score(lv):
        if lv["gain"] is not None:
            return lv["gain"]
        after = lv.get("objective_after")
        return 1 / after if after else 0.0
    return {lv["name"]: score(lv) for lv in solution["levers"]}


def walk_finite(value, where="$"):
    """Every number in a JSON tree is finite (null is allowed, NaN/inf never)."""
    if isinstance(value, float):
        assert math.isfinite(value), where
    elif isinstance(value, dict):
        for key, item in value.items():
            walk_finite(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            walk_finite(item, f"{where}[{i}]")


@lru_cache(maxsize=None)
def builtin_ids() -> tuple[str, ...]:
    return tuple(p["id"] for p in ridge_json("puzzles", "list"))


@lru_cache(maxsize=None)
def shown(puzzle_id: str):
    return ridge_json("puzzles", "show", puzzle_id, "--answer")


@lru_cache(maxsize=None)
def generated() -> tuple[dict, ...]:
    out = []
    for seed in (11, 2024, 77):
        out += ridge_json("puzzles", "generate", "--seed", seed, "--count", 15, "--answer")
    out += ridge_json("puzzles", "generate", "--seed", 5, "--count", 10, "--difficulty", 5,
                      "--answer")
    return tuple(out)


# Puzzles keyed by a request-level load run (issue 23): their deployment is served under traffic
# (`ridge load`), so `ridge solve`'s steady state does not key them; tests/contract/test_load_cli.py and
# tests/puzzles/test_load_puzzles.py check them from outside.
LOAD_OBJECTIVES = ("p99-ttft", "p99-tpot", "goodput", "gpus-for-slo")


def all_puzzles():
    return [p for p in (shown(pid) for pid in builtin_ids()) if p["objective"] not in LOAD_OBJECTIVES] + \
        list(generated())


# ---------------------------------------------------------------- issue 11: the engine


def test_batched_prefill_case_is_decode_compute():
    d = solve(model="llama-3-8b", gpu="h100-sxm", prompt=32, output=64, concurrency=1000, mfu=0.5)
    assert d["bottleneck"] == "decode-compute"
    assert d["prefill_share"] < 0.45


MODELS = ("llama-2-7b", "llama-3-8b", "llama-3-70b", "llama-3.1-405b", "mistral-7b",
          "mixtral-8x7b", "qwen2.5-72b", "gemma-2-9b", "gemma-2-27b", "deepseek-v3",
          "gpt-oss-120b", "phi-3-mini")
GPUS = ("h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "b200", "l4", "l40s",
        "mi300x", "tpu-v5e", "rtx-4090")


@pytest.mark.parametrize("gpu", GPUS)
def test_realistic_never_beats_the_floor(gpu):
    checked = 0
    for model in MODELS:
        for gpus, conc, obj in ((1, 1, "tpot"), (8, 64, "cost"), (8, 1, "ttft"), (4, 256, "cost")):
            common = dict(model=model, gpu=gpu, gpus=gpus, prompt=1024, output=256,
                          concurrency=conc, objective=obj)
            floor = solve(**common)
            real = solve(**common, fidelity="realistic")
            assert real["fits"] == floor["fits"]
            if not floor["fits"]:
                continue
            checked += 1
            for key in ("tpot_seconds", "ttft_seconds", "cost_per_million_output_tokens",
                        "objective_value"):
                assert real[key] >= floor[key] * (1 - 1e-9), (common, key)
                assert real["floor"][key if key != "objective_value" else key] == \
                    pytest.approx(floor[key])
            # every lever's result is a bound too: realistic after >= floor after
            f_after = {lv["name"]: lv.get("objective_after") for lv in floor["levers"]}
            for lv in real["levers"]:
                fa = f_after[lv["name"]]
                if lv.get("objective_after") is not None and fa is not None:
                    assert lv["objective_after"] >= fa * (1 - 1e-9), (common, lv["name"])
    assert checked >= 5


def test_more_gpus_at_batch_one_both_ways():
    common = dict(model="llama-3-70b", gpu="h100-sxm", prompt=1024, output=256, concurrency=1,
                  objective="tpot")
    for fid in ("floor", "realistic"):
        four = solve(**common, gpus=4, fidelity=fid)
        eight = solve(**common, gpus=8, fidelity=fid)
        direct = four["tpot_seconds"] / eight["tpot_seconds"]
        lever = lever_gains(four)["more-gpus"]
        assert lever == pytest.approx(direct, rel=0.01), fid
        if fid == "floor":
            assert direct == pytest.approx(2.0, rel=1e-6)
        else:
            assert 1.15 <= direct <= 1.85


@pytest.mark.parametrize("model,gpus", [("llama-3-8b", 1), ("llama-3-70b", 4), ("llama-3-70b", 8)])
def test_fp8_at_batch_one_both_ways(model, gpus):
    common = dict(model=model, gpu="h100-sxm", gpus=gpus, prompt=1024, output=256,
                  concurrency=1, objective="tpot")
    base = solve(**common, fidelity="realistic")
    fp8 = solve(**common, weights="fp8", kv="fp8", fidelity="realistic")
    direct = base["tpot_seconds"] / fp8["tpot_seconds"]
    lever = lever_gains(base)["quantization"]
    assert 1.2 <= direct < 1.99
    # the lever may pick a deeper precision than fp8, never a worse one
    assert lever >= direct * 0.99


@pytest.mark.parametrize("fid", ["floor", "realistic"])
@pytest.mark.parametrize("flags", [
    dict(model="deepseek-v3", gpu="h200", gpus=8, weights="fp8"),
    dict(model="mixtral-8x7b", gpu="h100-sxm", gpus=2),
])
def test_moe_speculation_gains_at_batch_one(flags, fid):
    common = dict(flags, prompt=1024, output=256, concurrency=1, objective="tpot")
    base = solve(**common, fidelity=fid)
    assert lever_gains(base)["speculative-decoding"] > 1.05
    spec = solve(**common, spec_k=3, spec_alpha=0.8, fidelity=fid)
    assert base["tpot_seconds"] / spec["tpot_seconds"] > 1.05


# Published configs (Hugging Face config.json): layers, KV heads, head dim.
FULL_ATTENTION = {"gpt-oss-120b": (36, 8, 64), "gemma-2-9b": (42, 8, 256)}


@pytest.mark.parametrize("flags,need", [
    (dict(model="gpt-oss-120b", gpus=4, prompt=30000, output=2000), 1.6),
    (dict(model="gpt-oss-120b", gpus=2, weights="int4", prompt=30000, output=2000), 1.6),
    (dict(model="gemma-2-9b", gpus=1, prompt=7680, output=512), 1.2),
])
def test_sliding_windows_fit_more(flags, need):
    for fid in ("floor", "realistic"):
        d = solve(**flags, gpu="h100-sxm", concurrency=100000, fidelity=fid)
        layers, kv_heads, head_dim = FULL_ATTENTION[flags["model"]]
        kv_token = 2 * layers * kv_heads * head_dim * 2
        s = flags["prompt"] + flags["output"] / 2
        mem = 80 * GiB * flags["gpus"]
        usable = mem - d["weight_bytes"] - 0.1 * mem
        full = math.floor(usable / (kv_token * s))
        assert full > 0
        assert d["max_concurrency"] >= need * full, (fid, d["max_concurrency"], full)


def test_latent_cache_is_split():
    d = solve(model="deepseek-v3", gpu="h200", gpus=8, weights="fp8", prompt=1024, output=256,
              concurrency=100000)
    latent = (512 + 64) * 61 * 2  # kv_lora_rank + rope dim, 61 layers, bf16
    assert d["kv_bytes_per_token"] == latent
    mem = 141e9 * 8 if d["memory_bytes"] < 150 * GiB else d["memory_bytes"] * 8
    usable = d["usable_kv_bytes"]
    split = math.floor(usable / (latent * d["seq_len_avg"]))
    assert d["max_concurrency"] >= 0.99 * split  # not split: 8x fewer
    assert mem > 0


def test_l4_default_reserve_is_ten_percent():
    d = solve(model="llama-3-8b", gpu="l4")
    assert d["reserve_bytes"] == pytest.approx(0.1 * d["memory_bytes"])
    assert d["reserve_bytes"] / GiB < 3
    h = solve(model="llama-3-8b", gpu="h100-sxm")
    assert h["reserve_bytes"] == pytest.approx(8 * GiB)


def test_json_contract_keys_and_finite():
    cases = [dict(model="llama-3-70b", gpu="h100-sxm", gpus=4, spec_k=4),
             dict(model="llama-3.1-405b", gpu="l4"),  # does not fit
             dict(model="deepseek-v3", gpu="h200", gpus=8, weights="fp8")]
    for flags in cases:
        for fid in ("floor", "realistic"):
            d = solve(**flags, fidelity=fid)
            walk_finite(d)
            missing = [k for k in CONTRACT_KEYS if k not in d]
            assert not missing, missing
            assert d["fidelity"] == fid
            assert isinstance(d["corrections"], list)
            if fid == "floor" or d["fits"]:  # nothing to correct when nothing fits
                assert (d["corrections"] == []) == (fid == "floor")
            if flags.get("spec_k"):
                assert "spec_expected_tokens" in d
            if not d["fits"]:
                assert d["tpot_seconds"] is None and d["max_concurrency"] is None
            else:
                assert [lv["gain"] for lv in d["levers"]] == sorted(
                    (lv["gain"] for lv in d["levers"]), reverse=True)
                assert d["objective_bottleneck"] in OBJECTIVE_VERDICTS["cost"]
            for key in ("objective_value", "tpot_seconds", "ttft_seconds",
                        "cost_per_million_output_tokens", "levers", "best_lever"):
                assert key in d["floor"]


def test_readable_realistic_shows_both_side_by_side():
    code, text = ridge("solve", "--model", "llama-3-70b", "--gpus", "4", "--fidelity",
                       "realistic")
    assert code == 0
    assert re.search(r"^\s+floor\s+realistic\s*$", text, re.M)
    row = re.search(r"^\s+cost per million output tokens\s+\$([\d.]+)\s+\$([\d.]+)", text, re.M)
    assert row and float(row.group(2)) >= float(row.group(1))
    assert re.search(r"^\s+quantization\s+[\d.]+x .*\s+[\d.]+x ", text, re.M)  # every lever, both
    assert "corrections that moved" in text and "per-step overhead" in text


def test_the_installed_script_agrees():
    """One run through the real `ridge` executable, as a grader would type it."""
    script = Path(sys.executable).with_name("ridge")
    if not script.exists():
        pytest.skip("no ridge script beside this interpreter")
    out = subprocess.run([str(script), "solve", "--model", "llama-3-8b", "--gpu", "h100-sxm",
                          "--prompt", "32", "--output", "64", "--concurrency", "1000", "--mfu",
                          "0.5", "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout, parse_constant=_refuse_constant)
    assert d["bottleneck"] == "decode-compute" and d["prefill_share"] < 0.45


def test_corrections_have_sources():
    data = tomllib.loads((ROOT / "engine/data/corrections.toml").read_text())
    sources = data["sources"]
    assert all(len(text) > 40 for text in sources.values())
    src = (ROOT / "engine/data/corrections.toml").read_text()
    realistic = solve(model="llama-3-70b", gpu="h100-sxm", gpus=4, weights="fp8",
                      fidelity="realistic")
    assert {c["name"] for c in realistic["corrections"]} >= {"tensor-parallel communication",
                                                              "per-step overhead"}
    for line in src.splitlines():
        m = re.match(r"(\w+)\s*=\s*[\d.]+\s*#(.*)", line)
        if m and "[" in m.group(2):
            for tag in re.findall(r"\[([A-Z0-9_; ]+)\]", m.group(2)):
                for name in tag.split(";"):
                    assert name.strip() in sources, (m.group(1), name)
    lines = src.splitlines()
    for key in data["corrections"]:
        at = next(i for i, line in enumerate(lines) if line.startswith(f"{key} "))
        near = lines[at] + lines[at - 1]
        tags = [n.strip() for t in re.findall(r"\[([A-Z0-9_; ]+)\]", near) for n in t.split(";")]
        if key in ("allreduces_per_layer", "activation_bytes"):  # structure, said in words
            assert "#" in lines[at], key
        else:
            assert tags and all(t in sources for t in tags), key


# ---------------------------------------------------------------- robust keys, every puzzle


@pytest.mark.slow
@pytest.mark.parametrize("pack", sorted(p.name for p in (ROOT / "puzzles" / "packs").glob("*.toml")))
def test_puzzles_check_passes(pack):
    """Every built-in pack through `ridge puzzles check`, one pack a test so the two processes
    share the work (the load chapters check 20 arrival seeds at two fidelities): each passes, in
    one line, with no traceback. Ids unique across packs: the bank refuses a repeat on load."""
    code, text = ridge("puzzles", "check", ROOT / "puzzles" / "packs" / pack)
    assert code == 0, text
    assert text.strip().startswith("ok:") and "Traceback" not in text, text


@pytest.mark.parametrize("fid", ["floor", "realistic"])
def test_keys_survive_both_fidelities(fid):
    """Solve every puzzle's deployment ourselves: the key's verdict and offered best hold."""
    bad = []
    for p in all_puzzles():
        a = p["answer"]
        d = solve(*dep_args(p["deployment"]), fidelity=fid)
        gains = lever_gains(d)
        offered = {lv: gains[lv] for lv in p["levers"]}
        best = max(offered.values())
        if d["objective_bottleneck"] != a["bottleneck"]:
            bad.append((p["id"], "verdict", d["objective_bottleneck"], a["bottleneck"]))
        if offered[a["best_lever"]] < best * (1 - 1e-9):
            bad.append((p["id"], "lever", max(offered, key=offered.get), a["best_lever"]))
        if fid == "floor" and a["gain"] is not None:
            assert offered[a["best_lever"]] == pytest.approx(a["gain"], rel=1e-6), p["id"]
        fids = a["fidelities"]
        assert (fids["floor"]["bottleneck"], fids["floor"]["best_lever"]) == \
            (fids["realistic"]["bottleneck"], fids["realistic"]["best_lever"]), p["id"]
    assert not bad


def test_verdicts_bound_the_objective_and_options_in_fixed_order():
    for p in all_puzzles():
        obj = p["objective"]
        ask = p["ask"]
        assert p["answer"]["bottleneck"] in OBJECTIVE_VERDICTS[obj], p["id"]
        assert tuple(ask["bottleneck"]) == OBJECTIVE_VERDICTS[obj], p["id"]
        assert list(ask["lever"]) == [lv for lv in LEVER_ORDER if lv in ask["lever"]], p["id"]
        assert list(ask["gain_band"]) == list(BANDS), p["id"]
        assert set(ask["bottleneck"]) <= set(VERDICT_ORDER)
        walk_finite(p)


@pytest.mark.parametrize("fid", ["floor", "realistic"])
def test_no_unoffered_lever_beats_the_key(fid):
    bad = []
    for p in all_puzzles():
        d = solve(*dep_args(p["deployment"]), fidelity=fid)
        gains = lever_gains(d)
        key = gains[p["answer"]["best_lever"]]
        for lever, gain in gains.items():
            if lever in p["levers"] or lever in p.get("ruled_out", {}):
                continue
            if gain > key * 1.02:
                bad.append((p["id"], lever, round(gain, 3), round(key, 3)))
    assert not bad


def _answer(p, band: str, **over):
    a = p["answer"]
    argv = ["answer", p["id"], "--bottleneck", over.get("bottleneck", a["bottleneck"]),
            "--lever", a["best_lever"], "--gain", band, "--reason", a["reason"],
            "--certainty", "high", "--no-record"]
    for name in p["ask"].get("estimates", []):
        value = over.get(name, a["estimates"][name])
        argv += ["--estimate", f"{name}={value!r}"]
    result = ridge_json(*argv)
    walk_finite(result)
    return result


def test_band_edge_keys_clear_with_either_band():
    """The band is keyed on the realistic gain: within 5% of an edge, both bands clear."""
    near = 0
    for p in all_puzzles():
        gain = p["answer"]["fidelities"]["realistic"]["gain"]
        if gain is None:  # a lever that makes an unfit deployment fit: no band edge
            continue
        for i, edge in enumerate(EDGES):
            if abs(gain / edge - 1) <= 0.05:
                near += 1
                for band in BANDS[i:i + 2]:
                    res = _answer(p, band)
                    assert res["outcome"] == "cleared", (p["id"], gain, band, res["outcome"])
    assert near >= 1


def test_a_floor_gain_is_a_ceiling_not_the_band():
    """A floor gain of exactly 2x beside a realistic gain under 1.9x keys 1.25-2x alone: 2-4x
    does not clear (the FP8 'doubles' myth)."""
    myths = 0
    for p in all_puzzles():
        a = p["answer"]
        floor, real = a["fidelities"]["floor"]["gain"], a["fidelities"]["realistic"]["gain"]
        if floor is not None and real is not None and abs(floor - 2.0) < 1e-6 and real < 1.9:
            myths += 1
            assert "2-4x" not in a["gain_bands"], p["id"]
            assert _answer(p, "2-4x")["outcome"] != "cleared", p["id"]
    assert myths >= 3


def test_wrong_estimate_is_named_in_parts():
    p = shown("two-phases-02")
    name = p["ask"]["estimates"][0]
    res = _answer(p, p["answer"]["gain_band"], **{name: p["answer"]["estimates"][name] * 30})
    wrong = [part for part in res["parts"] if not part["right"]]
    assert [part["name"] for part in wrong] == [f"estimate:{name}"]
    assert res["outcome"] != "cleared"
    assert _answer(p, p["answer"]["gain_band"])["outcome"] == "cleared"


def test_two_phases_02_keys_what_bounds_the_prefill():
    p = shown("two-phases-02")
    assert p["objective"] == "ttft"
    d = solve(*dep_args(p["deployment"]))
    assert p["answer"]["bottleneck"] == d["objective_bottleneck"]
    assert p["answer"]["bottleneck"] in ("prefill-compute", "prefill-weights")
    # compute vs weight read of one prompt, from the public figures
    bound = ("prefill-compute" if d["prefill_compute_seconds"] >= d["prefill_weight_seconds"]
             else "prefill-weights")
    assert p["answer"]["bottleneck"] == bound


def test_prefix_caching_05_keys_restoring_the_prefix():
    if "prefix-caching-05" not in builtin_ids():
        pytest.skip("prefix-caching-05 was removed")
    p = shown("prefix-caching-05")
    assert p["answer"]["best_lever"] == "prefix-caching"
    assert p["answer"]["fidelities"]["realistic"]["best_lever"] == "prefix-caching"
    assert p["answer"]["gain"] >= 2


# Published measurements gathered for this check (not the engine's own fixture): NVIDIA Technical
# Blog, "Boosting Llama 3.1 405B Performance up to 1.44x with NVIDIA TensorRT Model Optimizer on
# NVIDIA H200 GPUs" (Aug 2024), Table 1: maximum throughput, output tokens/s of one 8 x H200 HGX
# node, TensorRT-LLM with the Model Optimizer FP8 recipe (FP8 weights and KV cache).
TRTLLM_405B_H200 = ((2048, 128, 463.1), (32768, 2048, 320.1), (120000, 2048, 71.5))


@pytest.mark.parametrize("prompt,output,measured", TRTLLM_405B_H200)
def test_realistic_aims_at_a_published_measurement(prompt, output, measured):
    """A real stack measured this throughput: the floor (a bound) allows at least it at its best
    concurrency, and the realistic estimate, which aims at measurements, lands within a factor
    of two of it, never above the floor."""
    best_real = best_floor = 0.0
    for conc in (16, 64, 256, 1024, 4096):
        common = dict(model="llama-3.1-405b", gpu="h200", gpus=8, weights="fp8", kv="fp8",
                      prompt=prompt, output=output, concurrency=conc)
        real = solve(**common, fidelity="realistic")
        floor = solve(**common)
        assert real["throughput_tokens_per_s"] <= floor["throughput_tokens_per_s"] * (1 + 1e-9)
        best_real = max(best_real, real["throughput_tokens_per_s"])
        best_floor = max(best_floor, floor["throughput_tokens_per_s"])
    assert best_floor >= measured
    assert measured / 2 <= best_real <= measured * 2, (best_real, measured)


def test_generated_tensor_parallelism_stays_in_the_domain():
    """The generator never draws tensor parallelism beyond the accelerator's domain, as the card
    states it ("tensor-parallel groups of up to N")."""
    for p in generated():
        card = {row["field"]: row["value"] for row in p["card"]}
        domain = re.search(r"groups of up to (\d+)", card["Each GPU"])
        assert domain, p["id"]
        assert p["deployment"]["gpus"] <= int(domain.group(1)), p["id"]


def test_the_realistic_and_measured_bands_clear_and_the_floors_only_beside_them():
    """The realistic band (and the measured one where the accelerator is covered) clears; the
    floor's band clears only where it is one of those (DESIGN.md, "Robust keys"), through
    `ridge answer`. Built-ins: the generator's draws are held to the measured kernels by margins
    only (tests/puzzles/test_robust_keys.py counts how many slip)."""
    differ = 0
    for p in (shown(pid) for pid in builtin_ids()):
        fids = p["answer"]["fidelities"]
        keyed = {fids["realistic"]["gain_band"]}
        measured = fids.get("measured") or {}
        gain = next((lv["gain"] for lv in measured.get("levers", []) if lv["name"] == p["answer"]["best_lever"]), None)
        if gain is not None and p["answer"]["gain"] is not None:   # the key's lever, where the kernels time it
            keyed.add(BANDS[sum(gain >= e for e in EDGES)])
        for band in keyed:
            assert _answer(p, band)["outcome"] == "cleared", (p["id"], band)
        floor = fids["floor"]["gain_band"]
        if floor not in keyed:
            differ += 1
            cleared = _answer(p, floor)["outcome"] == "cleared"
            assert cleared == (floor in p["answer"]["gain_bands"]), (p["id"], floor)
    assert differ >= 1


def test_link_figures_have_sources():
    """Each accelerator's link bandwidth, tensor-parallel domain and all-reduce latency (the
    realistic communication correction's inputs) carry a tag naming one of the file's sources."""
    path = ROOT / "engine/data/hardware.toml"
    sources = tomllib.loads(path.read_text())["sources"]
    seen = 0
    for line in path.read_text().splitlines():
        if re.match(r"(link_gbps|tp_domain|allreduce_latency_us)\s*=", line):
            seen += 1
            tags = re.findall(r"\[([A-Z0-9_]+)\]", line)
            assert tags and all(t in sources for t in tags), line
    assert seen >= 3 * 11
