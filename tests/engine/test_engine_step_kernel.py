"""A static batch's drain works its steps through Passes.step_kernel, an inline copy of _decode's
arithmetic for one count (a drain works a score of them per lever). The copy must stay the rule it
copies: the same floats as _decode for every count, and with full=False the same parts the verdict
rules compare."""
import pytest

from engine import physics
from engine.catalog import builtin_catalog
from engine.deployment import build_deployment

CAT = builtin_catalog()
COUNTS = (1.0, 2.0, 3.0, 7.0, 8.0, 12.5, 24.0, 63.0, 200.0)


@pytest.mark.parametrize("fidelity", ["floor", "realistic"])
@pytest.mark.parametrize("model, gpu, gpus, weights, kv", [
    ("llama-3-8b", "h100-sxm", 1, "bf16", "bf16"), ("llama-3-70b", "h100-sxm", 4, "fp8", "fp8"),
    ("mixtral-8x7b", "h100-sxm", 2, "bf16", "int8"), ("mistral-7b", "a100-40gb", 8, "int4", "bf16"),
    ("llama-3-8b", "l4", 1, "int8", "bf16")])
@pytest.mark.parametrize("spec", [dict(), dict(spec_k=4, spec_alpha=0.7)])
def test_the_step_kernel_is_decode_for_every_count(fidelity, model, gpu, gpus, weights, kv, spec):
    dep = build_deployment(CAT, model, gpu, gpus=gpus, weights=weights, kv=kv, fidelity=fidelity, **spec)
    passes = physics.Passes(dep, physics.numeric_inputs(dep))
    kv_seq, draft_held = 3.0e6, 2.0e5 if spec else None
    step = passes.step_kernel(kv_seq, draft_held)
    for j in COUNTS:
        worked = passes._decode(j, kv_seq, draft_held)
        assert step(j) == worked, (j, step(j), worked)
        if not spec:   # the probes' parts: weight and KV bytes, memory and compute time
            probe = step(j, False)
            assert [probe[i] for i in (0, 1, 3, 4)] == [worked[i] for i in (0, 1, 3, 4)], j
