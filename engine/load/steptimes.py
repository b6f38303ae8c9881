"""Step times for the load loop: the engine's step model (`engine.steps`), remembered.

A run asks for tens of thousands of steps, most of them alike. The step model answers each new
shape once and this cache keeps it: a decode step by (batch, context), context rounded to a 3%
grid (the step's KV read moves by under 1% across a cell); a prefill by (tokens, prompts), tokens
above 256 rounded to a 1% grid and scaled back in proportion; a mixed step by its three counts
on the same grids. Nothing here computes physics.
"""
from __future__ import annotations

import math

_CTX_CELLS = 32.0      # cells per e-fold of context: exp(1/32) - 1 = 3.2% apart
_TOKEN_CELLS = 100.0   # 1% apart
_EXACT_TOKENS = 256


def _ctx_cell(ctx: float) -> int:
    return int(round(math.log1p(max(ctx, 0.0)) * _CTX_CELLS))


def _ctx_at(cell: int) -> float:
    return math.expm1(cell / _CTX_CELLS)


def _token_cell(tokens: int) -> tuple[int, float]:
    """(cell, the token count the cell stands for)."""
    if tokens <= _EXACT_TOKENS:
        return tokens, float(tokens)
    cell = -int(round(math.log(tokens) * _TOKEN_CELLS))
    return cell, round(math.exp(-cell / _TOKEN_CELLS))


class StepTimes:
    """Memoised `prefill`, `decode` and `mixed` step seconds of one instance's step model."""

    def __init__(self, model) -> None:
        self.model = model
        self._decode: dict = {}
        self._prefill: dict = {}
        self._mixed: dict = {}

    def decode(self, batch: int, ctx: float) -> float:
        """One decode step for `batch` sequences holding `ctx` tokens each on average."""
        key = (batch, _ctx_cell(ctx))
        found = self._decode.get(key)
        if found is None:
            found = self._decode[key] = float(self.model.decode_seconds(batch, _ctx_at(key[1])))
        return found

    def prefill(self, tokens: int, prompts: int = 1) -> float:
        """A prefill-only step over `tokens` prompt tokens from `prompts` requests."""
        cell, stands = _token_cell(tokens)
        key = (cell, prompts)
        found = self._prefill.get(key)
        if found is None:
            found = self._prefill[key] = float(self.model.prefill_seconds(int(stands), prompts))
        return found * (tokens / stands if stands else 1.0)

    def mixed(self, tokens: int, batch: int, ctx: float) -> float:
        """A step carrying `tokens` prompt tokens beside `batch` decodes of `ctx` tokens."""
        cell, stands = _token_cell(tokens)
        key = (cell, batch, _ctx_cell(ctx))
        found = self._mixed.get(key)
        if found is None:
            found = self._mixed[key] = float(self.model.mixed_seconds(int(stands), batch, _ctx_at(key[2])))
        if stands and tokens != stands:
            # only the prompt part moves with the token count: scale the part above the decode
            base = self.decode(batch, ctx)
            return base + (found - base) * tokens / stands
        return found
