"""Step times for the load loop: the engine's step model (`engine.steps`), remembered.

A run asks for tens of thousands of steps, most of them alike. The step model answers each new
shape once and this cache keeps it. Token counts are put in cells by their top six bits (exact up
to 64, then 64 cells per doubling: neighbours 1.6-3% apart) and a cell is priced at its middle: a
decode step by (batch, context cell) (the step's KV read moves by under 1% across a cell); a
prefill by (token cell, prompts), scaled back in proportion to the exact tokens; a mixed step by
coarse cells of its tokens, batch and context (eight per doubling): what the prompt tokens add to
the decode step, per token, hardly moves within such a cell; it is added to the decode step at
the exact cell. Nothing here computes physics.
"""
from __future__ import annotations


def cell(tokens, bits: int = 6) -> int:
    """The cell of a token count: itself below 2**bits, else its top `bits` bits and its
    magnitude."""
    c = int(tokens)
    shift = c.bit_length() - bits
    return c if shift <= 0 else (shift << bits) | (c >> shift)


def middle(key: int, bits: int = 6) -> float:
    """The token count a cell stands for (the middle of its range)."""
    shift = key >> bits
    return float(key) if shift == 0 else ((key & ((1 << bits) - 1)) + 0.5) * (1 << shift)


class StepTimes:
    """Memoised `prefill`, `decode` and `mixed` step seconds of one instance's step model."""

    def __init__(self, model) -> None:
        self.model = model
        # decode seconds by (batch, context cell): public because the scheduler's inner loop reads
        # it inline (a method call per step costs more than the lookup), falling back to `decode`
        self.decoded: dict = {}
        self._prefill: dict = {}
        self._mixed: dict = {}
        # whole answers, remembered: a run repeats the same prefill and mixed steps (one prompt
        # length, one batch) thousands of times, and working out the cells costs more than the
        # lookup. Prefill steps by their exact arguments; mixed steps by (prompt tokens, batch,
        # context cell), since a mixed step reads its context only through `int(ctx)`'s cell (the
        # coarse cell of `_mixed_cells` is a function of it), so no figure moves. Public because
        # the scheduler reads them inline too, falling back to `prefill` and `mixed`.
        self.prefilled: dict = {}
        self.mixed_by_cell: dict = {}

    def decode(self, batch: int, ctx: float) -> float:
        """One decode step for `batch` sequences holding `ctx` tokens each on average."""
        c = int(ctx)   # cell(ctx), inlined: a run asks this for every step it jumps over
        shift = c.bit_length() - 6
        key = (batch, c if shift <= 0 else (shift << 6) | (c >> shift))
        found = self.decoded.get(key)
        if found is None:
            found = self.decoded[key] = float(self.model.decode_seconds(batch, middle(key[1])))
        return found

    def prefill(self, tokens: int, prompts: int = 1) -> float:
        """A prefill-only step over `tokens` prompt tokens from `prompts` requests."""
        exact = self.prefilled.get((tokens, prompts))
        if exact is not None:
            return exact
        exact = self.prefilled[(tokens, prompts)] = self._prefill_cells(tokens, prompts)
        return exact

    def _prefill_cells(self, tokens: int, prompts: int) -> float:
        c = int(tokens)   # cell(tokens), inlined as in `decode`
        shift = c.bit_length() - 6
        if shift > 0:
            c = (shift << 6) | (c >> shift)
        key = (c, prompts)
        found = self._prefill.get(key)
        if found is None:
            each = max(1, int(round(middle(c) / prompts)))
            found = self._prefill[key] = float(self.model.prefill_seconds(each, prompts)) * middle(c) / (each * prompts)
        # middle(c), inlined: a cell of 64 tokens or more always has a shift
        return found if c < 64 else found * tokens / (((c & 63) + 0.5) * (1 << (c >> 6)))

    def mixed(self, tokens: int, batch: int, ctx: float) -> float:
        """A step carrying `tokens` prompt tokens beside `batch` decodes of `ctx` tokens."""
        key = (tokens, batch, cell(ctx))   # the scheduler reads the table inline; this is its miss
        exact = self.mixed_by_cell.get(key)
        if exact is not None:
            return exact
        exact = self.mixed_by_cell[key] = self._mixed_cells(tokens, batch, ctx)
        return exact

    def _mixed_cells(self, tokens: int, batch: int, ctx: float) -> float:
        # cell(tokens, 3), cell(batch, 3) and cell(ctx, 3), inlined: a run asks this every mixed step
        c = int(tokens)
        shift = c.bit_length() - 3
        if shift > 0:
            c = (shift << 3) | (c >> shift)
        b = int(batch)
        shift = b.bit_length() - 3
        if shift > 0:
            b = (shift << 3) | (b >> shift)
        x = int(ctx)
        shift = x.bit_length() - 3
        coarse = x if shift <= 0 else (shift << 3) | (x >> shift)
        key = (c, b, coarse)
        extra = self._mixed.get(key)
        if extra is None:
            at, size, n = middle(coarse, 3), max(int(middle(c, 3)), 1), max(int(middle(b, 3)), 1)
            extra = self._mixed[key] = (float(self.model.mixed_seconds(size, n, at))
                                        - float(self.model.decode_seconds(n, at))) / size
        shift = x.bit_length() - 6   # the decode step at the exact cell, as `decode` looks it up
        found = self.decoded.get((batch, x if shift <= 0 else (shift << 6) | (x >> shift)))
        if found is None:
            found = self.decode(batch, ctx)
        return found + extra * tokens
