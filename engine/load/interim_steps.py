"""Interim step model for the load loop, until `engine.steps` lands: every figure comes from
`engine.physics.evaluate` (the one physics core), asked about one step shape at a time.

- decode(batch, context): the decode step of `batch` sequences holding `context` tokens each;
- prefill(tokens, prompts): `prompts` prompts of tokens/prompts each in one pass: their FLOPs at
  peak, or one read of the weights when that is longer (the lone-prompt rule of DESIGN.md);
- mixed(tokens, batch, context): a decode step plus the prompt tokens' compute time, the way the
  steady state charges a prompt that shares the GPU with decodes.
"""
from __future__ import annotations

from engine import physics


class InterimStepModel:
    def __init__(self, dep) -> None:
        self.dep = dep.with_(scheduler="continuous", prefix_caching=False, shared_prefix=0,
                             chunked_prefill=False, spec_k=0)
        self.base = dict(physics.numeric_inputs(self.dep))

    def _figures(self, **values) -> dict:
        n = dict(self.base)
        n.update(values)
        return physics.evaluate(self.dep, n)

    def decode_seconds(self, batch: int, context_tokens: float) -> float:
        f = self._figures(concurrency=float(batch), prompt=float(max(context_tokens, 1.0)), output=1e-9)
        if not f["fits"]:
            f = self._figures(concurrency=float(batch), prompt=1.0, output=1e-9)
        return f["step_seconds"]

    def prefill_seconds(self, tokens: int, batch: int = 1) -> float:
        each = max(tokens / max(batch, 1), 1.0)
        f = self._figures(concurrency=1.0, prompt=each, output=1e-9)
        compute = batch * f["prefill_compute_seconds"]
        extra = f["prefill_seconds"] - max(f["prefill_compute_seconds"], f["prefill_weight_seconds"])
        return max(compute, f["prefill_weight_seconds"]) + extra

    def mixed_seconds(self, prefill_tokens: int, decode_batch: int, context_tokens: float) -> float:
        f = self._figures(concurrency=1.0, prompt=float(max(prefill_tokens, 1)), output=1e-9)
        return self.decode_seconds(decode_batch, context_tokens) + f["prefill_charge_seconds"]


def step_model(dep, fidelity: str | None = None) -> InterimStepModel:
    return InterimStepModel(dep if fidelity is None else dep.with_(fidelity=fidelity))
