"""The numpy grid path agrees with the scalar analysis, deployment by deployment."""
import random

import numpy as np
import pytest

from engine.analysis import VERDICTS, analyze
from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.grid import analyze_grid, objective_verdict_names, verdict_names

CAT = builtin_catalog()
FIELDS = ("max_concurrency", "batch", "usable_kv_bytes", "kv_tokens_held", "kv_bytes_per_sequence",
          "kv_replication", "decode_weight_bytes_per_step", "decode_kv_bytes_per_step", "decode_bytes_per_step",
          "decode_flops_per_step", "decode_memory_seconds", "decode_compute_seconds", "step_seconds",
          "step_extra_seconds", "step_overhead_seconds", "tensor_parallel", "tp_groups", "tpot_seconds",
          "intensity", "prefill_flops", "prefill_seconds", "prefill_compute_seconds", "prefill_weight_seconds",
          "prefill_charge_seconds", "prefill_comm_seconds", "ttft_seconds", "worst_stall_seconds",
          "prefill_share", "throughput_tokens_per_s", "cost_per_million_output_tokens", "peak_flops", "ridge",
          "reserve_bytes", "draft_weight_bytes")


def _random_base(rng):
    model = CAT.models[rng.choice(sorted(CAT.models))]
    return build_deployment(
        CAT, model, rng.choice(sorted(CAT.gpus)),
        weights=rng.choice(["bf16", "fp8", "int8", "int4"]), kv=rng.choice(["bf16", "fp8"]),
        scheduler=rng.choice(["none", "static", "continuous"]), allocator=rng.choice(["contiguous", "paged"]),
        prefix_caching=rng.random() < 0.3, chunked_prefill=rng.random() < 0.3,
        prompt=min(1024, model.context // 2), output=min(256, model.context // 4),
        fidelity=rng.choice(["floor", "realistic"]), objective=rng.choice(["cost", "tpot", "ttft", "stall"]),
        draft_model=rng.choice([None, "llama-3-8b", "phi-3-mini"]),
    )


@pytest.mark.parametrize("seed", range(60))
def test_grid_matches_scalar(seed):
    rng = random.Random(seed)
    base = _random_base(rng)
    ctx = base.model.context
    prompts = np.array([rng.randint(1, ctx // 2) for _ in range(6)])
    outputs = np.array([rng.randint(1, ctx // 2) for _ in range(6)])
    spec_k = rng.choice([0, 4])
    mfu = rng.choice([1.0, 0.4])
    alpha = rng.choice([0.7, 0.9])
    max_output = rng.choice([0, 2000])
    gpu_counts = [1, 2, 8, 16]
    grid = analyze_grid(
        base, gpus=np.array(gpu_counts)[:, None, None], prompt=prompts[None, :, None],
        output=outputs[None, :, None], concurrency=np.array([1, 17, 300, 4000])[None, None, :],
        shared_prefix=(prompts // 3)[None, :, None], spec_k=spec_k, mfu=mfu, spec_alpha=alpha,
        max_output=max_output,
    )
    for gi, gpus in enumerate(gpu_counts):
        for pi in range(6):
            for ci, conc in enumerate([1, 17, 300, 4000]):
                dep = base.with_(gpus=gpus, prompt=int(prompts[pi]), output=int(outputs[pi]), concurrency=conc,
                                 shared_prefix=int(prompts[pi] // 3), spec_k=spec_k, mfu=mfu, spec_alpha=alpha,
                                 max_output=max_output)
                r = analyze(dep)
                assert bool(grid["fits"][gi, pi, ci]) == r.fits
                assert verdict_names(grid["verdict_index"])[gi, pi, ci] == r.bottleneck
                assert objective_verdict_names(grid["objective_verdict_index"])[gi, pi, ci] == r.objective_bottleneck
                if r.fits:
                    for name in FIELDS:
                        assert grid[name][gi, pi, ci] == pytest.approx(getattr(r, name), rel=1e-9), name
                    if spec_k:
                        assert grid["spec_expected_tokens"][gi, pi, ci] == pytest.approx(r.spec_expected_tokens, rel=1e-12)


def test_a_million_deployment_grid_agrees_with_the_scalar_analysis():
    """A 1000 x 1000 grid (the simulator's and the benchmark's size) in one call: its shape, its
    verdict codes, and its values at corners and random points against analyze()."""
    base = build_deployment(CAT, "llama-3-70b", "h100-sxm", gpus=4, fidelity="realistic")
    out = analyze_grid(base, concurrency=np.arange(1, 1001)[:, None], prompt=np.arange(1, 1001)[None, :])
    assert out["tpot_seconds"].shape == (1000, 1000)
    assert set(np.unique(out["verdict_index"])) <= set(range(len(VERDICTS)))
    rng = random.Random(7)
    points = [(0, 0), (999, 999), (0, 999), (999, 0)] + [(rng.randrange(1000), rng.randrange(1000)) for _ in range(12)]
    for ci, pi in points:
        r = analyze(base.with_(concurrency=ci + 1, prompt=pi + 1))
        for name in ("tpot_seconds", "ttft_seconds", "worst_stall_seconds", "cost_per_million_output_tokens", "batch"):
            assert out[name][ci, pi] == pytest.approx(getattr(r, name), rel=1e-9), (name, ci, pi)
        assert verdict_names(out["verdict_index"])[ci, pi] == r.bottleneck


@pytest.mark.parametrize("fidelity", ["floor", "realistic"])
@pytest.mark.parametrize("case", [
    dict(model="llama-3-70b", gpu="h100-sxm", scheduler="static", chunked_prefill=True, objective="stall"),
    dict(model="mixtral-8x7b", gpu="a100-80gb", scheduler="static", allocator="contiguous", objective="tpot"),
    dict(model="deepseek-v3", gpu="h200", weights="fp8", objective="ttft", prefix_caching=True),
    dict(model="gemma-2-9b", gpu="l4", weights="int4", kv="fp8", chunked_prefill=True, chunk_tokens=256),
    dict(model="gpt-oss-120b", gpu="mi300x", draft_model="phi-3-mini", objective="tpot"),
    dict(model="llama-3-8b", gpu="rtx-4090", scheduler="none", objective="ttft"),
], ids=lambda c: f"{c['model']}-{c['gpu']}")
def test_grid_matches_scalar_on_every_field(case, fidelity):
    """Each figure, the worst stall included, over MFU, the longest output, acceptance, draft
    length, GPU counts beyond a tensor-parallel domain and both fidelities."""
    case = dict(case)
    base = build_deployment(CAT, case.pop("model"), case.pop("gpu"), prompt=2000, output=300, fidelity=fidelity, **case)
    gpus = np.array([1, 2, 4, 16])[:, None, None, None]
    conc = np.array([1, 64, 3000])[None, :, None, None]
    alpha = np.array([0.6, 0.95])[None, None, :, None]
    k = np.array([0, 3])[None, None, None, :]
    grid = analyze_grid(base, gpus=gpus, concurrency=conc, spec_alpha=alpha, spec_k=k, mfu=0.45, max_output=1200,
                        shared_prefix=500)
    for idx in np.ndindex(grid["fits"].shape):
        dep = base.with_(gpus=int(gpus.flat[idx[0]]), concurrency=int(conc.flat[idx[1]]),
                         spec_alpha=float(alpha.flat[idx[2]]), spec_k=int(k.flat[idx[3]]), mfu=0.45, max_output=1200,
                         shared_prefix=500)
        r = analyze(dep)
        assert bool(grid["fits"][idx]) == r.fits
        assert objective_verdict_names(grid["objective_verdict_index"])[idx] == r.objective_bottleneck
        if r.fits:
            assert verdict_names(grid["verdict_index"])[idx] == r.bottleneck
            for name in FIELDS:
                assert grid[name][idx] == pytest.approx(getattr(r, name), rel=1e-9), name
