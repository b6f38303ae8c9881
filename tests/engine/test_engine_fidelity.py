"""The semantic fixes of issue 11 and the realistic fidelity, checked from outside where it counts."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.analysis import analyze
from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.ids import OBJECTIVE_VERDICTS
from engine.levers import solve, solve_both

CAT = builtin_catalog()
ROOT = Path(__file__).resolve().parents[2]


def dep(model, gpu="h100-sxm", **kw):
    return build_deployment(CAT, model, gpu, **kw)


def solve_json(*args):
    out = subprocess.run([sys.executable, "-m", "app", "solve", "--json", *args], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return json.loads(out.stdout)


def test_batched_prompts_are_charged_their_compute_not_a_weight_read():
    j = solve_json("--model", "llama-3-8b", "--gpu", "h100-sxm", "--prompt", "32", "--output", "64",
                   "--concurrency", "1000", "--mfu", "0.5")
    assert j["bottleneck"] == "decode-compute" and j["prefill_share"] < 0.45
    assert j["fidelity"] == "floor" and j["corrections"] == []
    # One short prompt alone still waits on the weight read: its TTFT is bound by it.
    one = analyze(dep("llama-3-8b", prompt=32, output=64, concurrency=1, objective="ttft"))
    assert one.prefill_weight_seconds > one.prefill_compute_seconds
    assert one.ttft_seconds == pytest.approx(one.prefill_weight_seconds)
    assert one.objective_bottleneck == "prefill-weights"


def test_realistic_json_carries_the_floor_and_its_corrections():
    j = solve_json("--model", "llama-3-70b", "--gpu", "h100-sxm", "--gpus", "4", "--concurrency", "1",
                   "--objective", "tpot", "--fidelity", "realistic")
    assert j["fidelity"] == "realistic"
    names = {c["name"] for c in j["corrections"]}
    assert {"tensor-parallel communication", "per-step overhead"} <= names
    assert all(c["changed"] for c in j["corrections"])
    assert j["floor"]["objective_value"] < j["objective_value"]
    assert {lv["name"] for lv in j["floor"]["levers"]} == {lv["name"] for lv in j["levers"]}
    assert j["objective_bottleneck"] in OBJECTIVE_VERDICTS["tpot"]


def test_more_gpus_at_batch_one_halves_the_floor_and_gains_less_realistically():
    floor, real = solve_both(dep("llama-3-70b", gpus=4, prompt=512, output=256, concurrency=1, objective="tpot"))
    assert floor.lever("more-gpus").gain == pytest.approx(2.0, rel=1e-3)
    assert 1.15 <= real.lever("more-gpus").gain <= 1.85


def test_fp8_at_batch_one_gains_less_than_twice_realistically():
    floor, real = solve_both(dep("llama-3-70b", gpus=4, prompt=512, output=256, concurrency=1, objective="tpot"))
    assert floor.lever("quantization").gain == pytest.approx(2.0, rel=1e-2)
    assert 1.2 <= real.lever("quantization").gain < 1.99


@pytest.mark.parametrize("model, gpu, gpus, weights", [("deepseek-v3", "h200", 8, "fp8"),
                                                        ("mixtral-8x7b", "h100-sxm", 2, "bf16")])
def test_speculation_helps_a_mixture_of_experts_at_batch_one(model, gpu, gpus, weights):
    for fidelity in ("floor", "realistic"):
        d = dep(model, gpu, gpus=gpus, weights=weights, prompt=512, output=256, concurrency=1, objective="tpot",
                fidelity=fidelity)
        assert solve(d).lever("speculative-decoding").gain > 1.0


@pytest.mark.parametrize("model, gpus, prompt, output, factor", [("gpt-oss-120b", 4, 30000, 4096, 1.6),
                                                                 ("gemma-2-9b", 1, 7168, 1024, 1.2)])
def test_sliding_window_layers_hold_only_their_window(model, gpus, prompt, output, factor):
    d = dep(model, gpus=gpus, prompt=prompt, output=output, concurrency=10000)
    full = d.with_(model=d.model.replace(sliding_window=0, sliding_layers=0))
    assert analyze(d).max_concurrency >= factor * analyze(full).max_concurrency


def test_a_latent_cache_is_split_across_the_gpus():
    j = solve_json("--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8", "--weights", "fp8")
    assert j["kv_replication"] == 1


def test_the_default_reserve_is_a_tenth_of_each_gpu():
    assert analyze(dep("llama-3-8b", "l4")).reserve_bytes == pytest.approx(0.1 * 24 * 2**30)
    assert analyze(dep("llama-3-70b", gpus=4)).reserve_bytes == 32 * 2**30
    assert analyze(dep("llama-3-8b", "l4", reserve_gib=8)).reserve_bytes == 8 * 2**30


@pytest.mark.parametrize("model, gpu, gpus, weights", [
    ("llama-3-8b", "h100-sxm", 1, "bf16"), ("llama-3-70b", "h100-sxm", 8, "fp8"), ("llama-3-70b", "a100-80gb", 4, "bf16"),
    ("mixtral-8x7b", "h100-sxm", 2, "bf16"), ("deepseek-v3", "h200", 8, "fp8"), ("qwen2.5-7b", "l4", 1, "fp8"),
    ("llama-3.1-70b", "mi300x", 2, "bf16"), ("gemma-2-9b", "rtx-4090", 2, "int4"), ("llama-3-8b", "tpu-v5e", 4, "bf16"),
    ("llama-3.1-405b", "h100-sxm", 16, "fp8"), ("phi-3-mini", "l40s", 1, "bf16"), ("gpt-oss-120b", "b200", 2, "bf16"),
])
@pytest.mark.parametrize("concurrency", [1, 64, 5000])
def test_realistic_is_never_faster_or_cheaper_than_the_floor(model, gpu, gpus, weights, concurrency):
    d = dep(model, gpu, gpus=gpus, weights=weights, prompt=1024, output=256, concurrency=concurrency)
    floor, real = analyze(d), analyze(d.with_(fidelity="realistic"))
    assert floor.fits and real.fits
    assert real.cost_per_million_output_tokens >= floor.cost_per_million_output_tokens * (1 - 1e-12)
    assert real.throughput_tokens_per_s <= floor.throughput_tokens_per_s * (1 + 1e-12)
    assert real.ttft_seconds >= floor.ttft_seconds * (1 - 1e-12)
    if real.batch == floor.batch:
        assert real.tpot_seconds >= floor.tpot_seconds * (1 - 1e-12)


@pytest.mark.parametrize("target, draft, gpu, gpus", [("llama-3.1-405b", "phi-3-mini", "h100-sxm", 16),
                                                     ("llama-3-70b", "llama-3-8b", "a100-80gb", 4),
                                                     ("deepseek-v3", "llama-3-8b", "h200", 8)])
@pytest.mark.parametrize("k", [1, 4, 16, 64])
def test_a_named_draft_never_makes_realistic_faster_than_the_floor(target, draft, gpu, gpus, k):
    d = dep(target, gpu, gpus=gpus, weights="fp8" if gpu != "a100-80gb" else "int8", prompt=512, output=256,
            concurrency=1, spec_k=k, draft_model=draft, objective="tpot")
    floor, real = analyze(d), analyze(d.with_(fidelity="realistic"))
    assert real.batch == floor.batch == 1
    assert real.tpot_seconds >= floor.tpot_seconds
    assert {"draft model cost"} <= {name for name, _ in real.corrections}
