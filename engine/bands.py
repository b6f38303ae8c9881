"""Gain bands: the magnitude in which a lever's gain is predicted and graded, in one place.

A gain falls in one of four bands (`engine.ids.GainBand`, split at 1.25x, 2x and 4x). A prediction
names a band, and a gain within 10% of an edge (on a log scale) accepts the bands on both sides of
it, because no napkin estimate is sharper than that. Which gains a key draws its bands from (the
realistic and measured ones, never the floor's alone) is the keys' rule: `puzzles.keys`.
"""
from __future__ import annotations

import math

from engine.ids import GainBand

GAIN_BANDS = tuple(str(b) for b in GainBand)
BAND_EDGES = (1.25, 2.0, 4.0)          # between GAIN_BANDS[i] and GAIN_BANDS[i + 1]
BAND_TOLERANCE = 1.10                  # a gain within 10% of an edge accepts both bands beside it
UNFIT_BAND = str(GainBand.OVER_4)      # a lever that makes an unfit deployment fit


def gain_band(gain: float | None) -> str | None:
    """The band a gain falls in: under 1.25x, 1.25-2x, 2-4x or over 4x (None for no gain)."""
    if gain is None:
        return None
    for band, edge in zip(GAIN_BANDS, BAND_EDGES):
        if gain < edge:
            return band
    return GAIN_BANDS[-1]


def bands_for(gain: float | None, tolerance: float = BAND_TOLERANCE) -> set[str]:
    """The bands one gain accepts: its own, and both bands beside any edge it lies within
    `tolerance` of. Empty for no gain (or a gain that is not a positive finite number)."""
    if gain is None or not math.isfinite(gain) or gain <= 0:
        return set()
    found = {gain_band(gain)}
    for i, edge in enumerate(BAND_EDGES):
        if abs(math.log(gain / edge)) <= math.log(tolerance) + 1e-12:
            found.update((GAIN_BANDS[i], GAIN_BANDS[i + 1]))
    return found


def accepted_bands(gains, fits: bool = True) -> tuple[str, ...]:
    """Every band a prediction may name for these gains (one per fidelity that keys the band),
    in the fixed band order; `over-4x` alone for a deployment that does not fit."""
    if not fits:
        return (UNFIT_BAND,)
    found: set[str] = set()
    for g in gains:
        found |= bands_for(g)
    return tuple(b for b in GAIN_BANDS if b in found) or (GAIN_BANDS[0],)


def band_range(band: str) -> tuple[float, float]:
    """(lowest, highest) gain of a band; the top band has no upper edge."""
    i = GAIN_BANDS.index(band)
    low = BAND_EDGES[i - 1] if i > 0 else 0.0
    high = BAND_EDGES[i] if i < len(BAND_EDGES) else math.inf
    return low, high
