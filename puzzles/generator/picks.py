"""The seeded picks every recipe draws with: round numbers a person would quote, spread evenly
over orders of magnitude, with only comparisons and IEEE arithmetic so every machine draws alike."""
from __future__ import annotations

import bisect
import random


def lengths(rng: random.Random, model, prompt: tuple, output: tuple) -> tuple[int, int]:
    """A prompt and an output length drawn log-uniformly and rounded, within the context."""
    p = spread(rng, *prompt)
    o = spread(rng, *output)
    limit = model.context
    if p + o > limit:
        p = max(16, min(p, limit // 2))
        o = max(16, min(o, limit - p))
    return p, o


def rounded(x: float) -> int:
    """Two significant figures (exact below 100): the numbers a person would quote. Only
    comparisons and IEEE arithmetic, so every machine rounds alike."""
    if x < 100:
        return max(1, int(round(x)))
    step = 1
    while x >= 100 * step:
        step *= 10
    return int(round(x / step) * step)


def _nice_numbers(limit: int = 10**7) -> tuple[int, ...]:
    """1..99, then every two-significant-figure number up to `limit`: a log-spaced ladder."""
    out = list(range(1, 100))
    step = 1
    while 100 * step <= limit:
        out.extend(range(10 * step * 10, 100 * step * 10, step * 10))
        step *= 10
    return tuple(out)


NICE = _nice_numbers()


def spread(rng: random.Random, low: float, high: float) -> int:
    """A round number between low and high, spread evenly over orders of magnitude: a uniform pick
    on the ladder of two-significant-figure numbers (no exp or log, so no libm differences)."""
    i = bisect.bisect_left(NICE, low)
    j = bisect.bisect_right(NICE, high)
    if j <= i:
        return rounded(low)
    return NICE[i + rng.randrange(j - i)]


def round_count(x: float) -> int:
    return max(1, rounded(x))



def pick(rng, seq):
    return seq[rng.randrange(len(seq))]

