"""A solve's shared passes: a realistic Passes derived for a lever's deployment (Passes.sibling) is
the one that deployment gets built afresh, field for field."""
import pytest

from engine import physics
from engine.catalog import builtin_catalog
from engine.deployment import build_deployment

CAT = builtin_catalog()
_MEMOS = ("_decoded", "_drains", "_last_attention", "_draft")


def _fields(p):
    return {k: v for k, v in p.__dict__.items() if k not in _MEMOS}


@pytest.mark.parametrize("model, gpu, gpus, weights, draft", [
    ("llama-3-70b", "h100-sxm", 4, "bf16", None), ("mixtral-8x7b", "h100-sxm", 2, "fp8", None),
    ("llama-3-8b", "l4", 1, "bf16", None), ("llama-3-70b", "h100-sxm", 8, "bf16", "llama-3-8b")])
@pytest.mark.parametrize("change", [dict(kv="fp8"), dict(kv="int8"), dict(spec_k=4), dict(spec_k=4, kv="fp8"),
                                    dict(spec_alpha=0.5, spec_k=2)])
def test_a_sibling_is_the_passes_built_afresh(model, gpu, gpus, weights, draft, change):
    base = build_deployment(CAT, model, gpu, gpus=gpus, weights=weights, draft_model=draft, fidelity="realistic")
    other = base.with_(**change)
    shared = physics.SharedPasses()
    first = shared(base, physics.numeric_inputs(base))
    derived = shared(other, physics.numeric_inputs(other))
    assert derived is not first
    fresh = physics.Passes(other, physics.numeric_inputs(other))
    assert _fields(derived) == _fields(fresh)
    assert derived._decoded == {} and derived._drains == {} and derived._last_attention is None
    j = 24.0
    assert derived.decode(j, 3e6, 2e5) == fresh.decode(j, 3e6, 2e5)
