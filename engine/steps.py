"""Step times for a request-level simulation: one forward pass at a time, at any fidelity.

A load simulator asks, step by step, how long the engine takes to prefill a batch of prompts, to
run one decode step for the sequences in flight, or to run a chunked-prefill step that does both.
`step_model(dep, fidelity)` answers from the same physics core as the steady-state analysis
(`engine.physics.Passes`: the course's floor or the realistic corrections) or, for `measured`,
from the measured kernels (`engine.measured`). Times are for one tensor-parallel group, the unit
that runs a batch: a deployment with more GPUs than one group spans runs `groups` of them side by
side. Measured answers are memoised with the context rounded to 1/256 of its power of two (under
0.4%), so a simulation's ~10^5 steps cost a few thousand database queries.
"""
from __future__ import annotations

from engine import physics
from engine.ids import Fidelity


class StepModel:
    """Seconds per pass for one deployment at one fidelity (see the module docstring)."""

    def __init__(self, dep, passes: physics.Passes) -> None:
        self.deployment = dep
        self.fidelity = dep.fidelity
        self._p = passes
        self.tensor_parallel = passes.tp
        self.groups = passes.groups
        m = dep.model
        self._token_bytes = passes.token_kv_bytes
        self._window = (m.layers, m.sliding_layers, m.sliding_window)
        self._measured = dep.fidelity == Fidelity.MEASURED
        self.backend = getattr(passes, "label", "")
        self._memo: dict = {}

    def _kv_bytes(self, context_tokens):
        layers, sliding, window = self._window
        return self._token_bytes * physics.tokens_held(float(context_tokens), layers, sliding, window)

    def prefill_seconds(self, tokens: int, batch: int = 1) -> float:
        """One prefill pass over `batch` prompts of `tokens` tokens each (nothing cached)."""
        tokens, batch = float(tokens), float(batch)
        return self._p.prefill(tokens, tokens, 0.0, batch)[4]

    def decode_seconds(self, batch: int, context_tokens: float) -> float:
        """One decode step of `batch` sequences whose KV holds `context_tokens` tokens each."""
        if self._measured:
            key = ("d", int(batch), _bucket(context_tokens))
            found = self._memo.get(key)
            if found is None:
                found = self._memo[key] = self._p.plain_step(float(batch) * self.groups, self._kv_bytes(key[2]))
            return found
        return self._p.plain_step(float(batch) * self.groups, self._kv_bytes(context_tokens))

    def mixed_seconds(self, prefill_tokens: int, decode_batch: int, context_tokens: float) -> float:
        """One chunked-prefill step: `prefill_tokens` fresh prompt tokens beside a decode step of
        `decode_batch` sequences whose KV holds `context_tokens` tokens each."""
        chunk = float(prefill_tokens)
        if self._measured:
            key = ("m", int(prefill_tokens), int(decode_batch), _bucket(context_tokens))
            found = self._memo.get(key)
            if found is None:
                found = self._memo[key] = self._p.mixed(chunk, float(decode_batch) * self.groups,
                                                        self._kv_bytes(key[3]), chunk)
            return found
        return self._p.mixed(chunk, float(decode_batch) * self.groups, self._kv_bytes(context_tokens), chunk)


def _bucket(context_tokens: float) -> int:
    """The context rounded to 1/256 of its power of two (exact below 256 tokens)."""
    c = max(1, int(round(context_tokens)))
    step = max(1, 1 << max(0, c.bit_length() - 9))
    return (c + step // 2) // step * step


def step_model(dep, fidelity: str | None = None) -> StepModel:
    """The step times of `dep` at `fidelity` (its own when None). RidgeError, one line, where the
    measured fidelity cannot time this deployment."""
    if fidelity is not None and fidelity != dep.fidelity:
        dep = dep.with_(fidelity=fidelity)
    n = physics.numeric_inputs(dep)
    if dep.fidelity == Fidelity.MEASURED:
        from engine import measured

        measured.check(dep)
        return StepModel(dep, measured.passes_for(dep, n))
    return StepModel(dep, physics.Passes(dep, n))
