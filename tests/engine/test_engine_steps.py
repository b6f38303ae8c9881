"""The step-time API a load simulation calls: the same physics core as the analysis, at every fidelity."""
import pytest

from engine.analysis import analyze
from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.steps import step_model
from helpers.measured import needs_measured

CAT = builtin_catalog()


def dep(model="llama-3-70b", gpu="h100-sxm", **kw):
    kw.setdefault("gpus", 4)
    return build_deployment(CAT, model, gpu, **kw)


@pytest.mark.parametrize("fidelity", ["floor", "realistic"])
@pytest.mark.parametrize("model, gpus, batch", [("llama-3-70b", 4, 1), ("llama-3-70b", 4, 48), ("mixtral-8x7b", 2, 8),
                                                 ("gemma-2-9b", 1, 16), ("llama-3-8b", 16, 40)])
def test_a_decode_step_is_the_analysis_own_step(fidelity, model, gpus, batch):
    """Asked at the analysis's batch and average length, the step model answers its TPOT."""
    d = dep(model, gpus=gpus, prompt=900, output=200, concurrency=batch, fidelity=fidelity)
    r = analyze(d)
    sm = step_model(d)
    per_group = r.batch / r.tp_groups
    assert sm.decode_seconds(per_group, r.seq_len_avg) == pytest.approx(r.tpot_seconds, rel=1e-12)


@pytest.mark.parametrize("fidelity", ["floor", "realistic"])
def test_a_lone_prefill_is_the_analysis_ttft(fidelity):
    d = dep(prompt=3000, output=10, concurrency=1, fidelity=fidelity, objective="ttft")
    assert step_model(d).prefill_seconds(3000) == pytest.approx(analyze(d).ttft_seconds, rel=1e-12)


@pytest.mark.parametrize("fidelity", ["floor", "realistic"])
def test_steps_grow_with_their_work(fidelity):
    sm = step_model(dep(), fidelity)
    assert sm.decode_seconds(1, 512) < sm.decode_seconds(64, 512) < sm.decode_seconds(256, 512)
    assert sm.decode_seconds(64, 512) < sm.decode_seconds(64, 8000)
    assert sm.prefill_seconds(128) < sm.prefill_seconds(4096) < sm.prefill_seconds(4096, batch=4)
    # A chunk beside a decode batch costs more than either alone, and less than both one after the other.
    mixed, chunk, step = sm.mixed_seconds(512, 32, 2000), sm.prefill_seconds(512), sm.decode_seconds(32, 2000)
    assert max(chunk, step) < mixed <= (chunk + step) * (1 + 1e-12)


def test_the_floor_step_is_the_course_roofline():
    """8B on one H100 at batch 1: reading 16 GB of weights at 3.35 TB/s, nothing else."""
    d = dep("llama-3-8b", gpus=1)
    weights = analyze(d).weight_bytes
    assert step_model(d, "floor").decode_seconds(1, 1) == pytest.approx((weights + 131072) / 3.35e12, rel=1e-6)


@needs_measured
def test_measured_steps_are_the_database_own_answers():
    from aiconfigurator_core.sdk.engine import EngineHandle

    from engine import measured

    d = dep("llama-3-70b", gpus=4)
    sm = step_model(d, "measured")
    handle = EngineHandle.compile(measured.config_folder(d.model), "h100_sxm", "vllm", tp_size=4,
                                  gemm_quant_mode="bfloat16", kvcache_quant_mode="bfloat16", fmha_quant_mode="bfloat16")
    assert sm.decode_seconds(64, 1024) == pytest.approx(handle.decode_step_latency(64, 1024, 2) / 1e3, rel=1e-9)
    assert sm.prefill_seconds(1024, 2) == pytest.approx(handle.predict_prefill_latency(2, 1024) / 1e3, rel=1e-9)
    assert "aiconfigurator-core 0.12.0" in sm.backend


@needs_measured
def test_measured_steps_are_fast_after_the_first():
    """A simulation asks ~10^5 times: the context is bucketed under 0.4%, so repeats are memo hits."""
    sm = step_model(dep(), "measured")
    first = sm.decode_seconds(17, 1000.0)
    assert sm.decode_seconds(17, 1000.4) == first
    assert sm.decode_seconds(17, 1010.0) == pytest.approx(first, rel=0.01)
