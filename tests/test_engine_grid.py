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


def test_grid_is_fast_enough_for_a_million_deployments():
    base = build_deployment(CAT, "llama-3-70b", "h100-sxm", gpus=4)
    out = analyze_grid(base, concurrency=np.arange(1, 1001)[:, None], prompt=np.arange(1, 1001)[None, :])
    assert out["tpot_seconds"].shape == (1000, 1000)
    assert set(np.unique(out["verdict_index"])) <= set(range(len(VERDICTS)))
