"""The realistic decode step at a small batch (issue 21): a GEMM of a few rows is a matrix-vector
product whose time is streaming the weight tiles, so the ramp's whole-tile cost counts on the
memory side (physics.tile_seconds). Such a step is never compute-bound, the step's time is the
ramp's as before (only the split moves), and the claim static_verdict_shares rests on holds: each
decode verdict, once it holds, holds for every larger count."""
import numpy as np
import pytest

from engine import physics
from engine.analysis import VERDICTS, analyze
from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.grid import analyze_grid

CAT = builtin_catalog()
COMPUTE = VERDICTS.index("decode-compute")


def realistic(model, gpu, gpus, weights, **kw):
    return build_deployment(CAT, model, gpu, gpus=gpus, weights=weights, fidelity="realistic", **kw)


def test_a_batch_one_shard_of_a_small_model_waits_on_its_weights():
    # Mistral 7B in 4 bits over eight A100s: each GPU holds 1/8 of the weights, so the GEMMs'
    # tiles are few; their cost used to be charged as FLOPs and named the step compute-bound.
    r = analyze(realistic("mistral-7b", "a100-40gb", 8, "int4", concurrency=1))
    assert r.batch == 1
    assert r.decode_compute_seconds < r.decode_memory_seconds / 10
    assert r.bottleneck == "decode-weights"


@pytest.mark.parametrize("gpu", ["h100-sxm", "a100-40gb", "l4", "mi300x", "rtx-4090"])
@pytest.mark.parametrize("weights", ["bf16", "fp8", "int4"])
@pytest.mark.parametrize("gpus", [1, 8])
def test_no_realistic_step_of_one_to_four_sequences_is_compute_bound(gpu, weights, gpus):
    for model in CAT.models:
        g = analyze_grid(realistic(model, gpu, gpus, weights), concurrency=np.array([1.0, 2.0, 3.0, 4.0]))
        fits = g["fits"]
        assert (g["decode_compute_seconds"] < g["decode_memory_seconds"])[fits].all(), model
        assert (g["verdict_index"] != COMPUTE)[fits].all(), model


@pytest.mark.parametrize("model, gpu, gpus, weights", [
    ("mistral-7b", "a100-40gb", 8, "int4"), ("llama-3-8b", "h100-sxm", 1, "bf16"),
    ("llama-3-70b", "h100-sxm", 4, "fp8")])
def test_the_step_time_is_the_ramps_and_only_the_split_moves(model, gpu, gpus, weights):
    # From the ramp's definition, with no split anywhere: each GEMM's soft corner between its
    # weight read and its ramped FLOP time, then the KV read, elementwise traffic and fixed times.
    dep = realistic(model, gpu, gpus, weights)
    p = physics.Passes(dep, physics.numeric_inputs(dep))
    c, tp, kv_seq = p.c, p.tp, 4.0e6
    assert p.groups == 1.0
    bw = tp * p.bw * c["bandwidth_efficiency"]
    rate = tp * p.peak * p.mfu * c["compute_efficiency"]
    rate16 = tp * p.attn_peak_16 * p.mfu * c["compute_efficiency"]
    half, sharp = c["compute_half_tokens"], c["overlap_sharpness"]
    step = p.step_kernel(kv_seq)
    for j in (1.0, 2.0, 4.0, 16.0, 64.0, 256.0):
        body_c = physics.ramped_seconds(p.body_flops * j, j, half, rate)
        head_c = physics.ramped_seconds(p.head_flops * j, j, half, rate16)
        weights_s = p.body_bytes / bw + p.head_bytes / bw
        kv_s = j * kv_seq / (tp * p.bw * c["kv_bandwidth_efficiency"])
        elementwise = dep.model.layers * j * dep.model.hidden * c["elementwise_bytes_per_value"] / p.bw
        want = (physics.smooth_max(p.body_bytes / bw, body_c, sharp)
                + physics.smooth_max(p.head_bytes / bw, head_c, sharp) + kv_s + elementwise + p.comm(j) + p.overhead)
        for parts in (p._decode(j, kv_seq), step(j), p._realistic(physics.PassShape(j, j, j, j * kv_seq, 0.0))):
            mem_t, comp_t, total = (parts[3], parts[4], parts[6]) if len(parts) == 8 else (parts[2], parts[3], parts[5])
            assert total == pytest.approx(want, rel=1e-12), j
            # The two sides still add up to the ramp's; the compute side is the FLOPs the tokens bring.
            assert mem_t + comp_t == pytest.approx(weights_s + kv_s + body_c + head_c, rel=1e-12), j
            assert comp_t == pytest.approx(p.body_flops * j / rate + p.head_flops * j / rate16, rel=1e-9), j
    for rows in (1.0, 5.0, 300.0):   # the tile's time is the ramp's less the rows' own FLOP time
        tile = physics.tile_seconds(3.0e9, rows, half, 1.0e15)
        assert tile + 3.0e9 * rows / 1.0e15 == pytest.approx(physics.ramped_seconds(3.0e9 * rows, rows, half, 1.0e15),
                                                             rel=1e-12)
    assert physics.tile_seconds(3.0e9, 0.0, half, 1.0e15) == 0.0


@pytest.mark.parametrize("model, gpu, gpus, weights, kv, spec", [
    ("mistral-7b", "a100-40gb", 8, "int4", "bf16", {}), ("llama-3-8b", "l4", 1, "int8", "fp8", {}),
    ("mixtral-8x7b", "h100-sxm", 2, "bf16", "bf16", {}), ("gpt-oss-120b", "h100-sxm", 2, "int4", "bf16", {}),
    ("deepseek-v3", "h200", 8, "fp8", "fp8", {}), ("llama-3-70b", "a100-80gb", 8, "int4", "bf16",
                                                   dict(spec_k=4, spec_alpha=0.7))])
def test_each_decode_verdict_holds_from_some_count_upward(model, gpu, gpus, weights, kv, spec):
    # static_verdict_shares bisects for the first count where a step is compute-bound (and, below
    # it, KV-bound): a condition that held at one sequence and failed at more would be mis-summed.
    dep = realistic(model, gpu, gpus, weights, kv=kv, **spec)
    p = physics.Passes(dep, physics.numeric_inputs(dep))
    counts = np.arange(1.0, 1025.0)
    for kv_seq in (2.0e5, 4.0e6, 6.0e7):
        scalar = [p._decode(j, kv_seq) for j in counts]
        arrays = p._decode(counts, kv_seq)
        for compute in ([s[4] > s[3] for s in scalar], list(arrays[4] > arrays[3])):
            first = compute.index(True) if True in compute else len(compute)
            assert all(compute[first:]), (kv_seq, first)
        kv_bound = [s[1] > s[0] for s in scalar]
        first = kv_bound.index(True) if True in kv_bound else len(kv_bound)
        assert all(kv_bound[first:]), (kv_seq, first)
