"""What a load run reports, from the per-request times the loop recorded. Pure numpy functions.

- TTFT: arrival to first token (plus the KV transfer when prefill and decode are split);
- TPOT: the time after the first token over the tokens after it, (e2e - TTFT) / (O - 1), vLLM's
  benchmark definition (requests of one token have none);
- percentiles: numpy's linear interpolation, so P50 <= P90 <= P99 always;
- mean requests in the system: the integral of (queued + running) over the run, which is the sum
  of each request's time in the system, over the run's length. With the arrival rate counted over
  the same window, Little's law (L = lambda W) holds by construction; a test checks it.
- cost per million input and output tokens: the fleet's GPU-seconds (every GPU, idle time too) at
  the price per GPU-hour, split between the phases in proportion to the busy time each phase
  used, then divided by the tokens of that phase.
"""
from __future__ import annotations

import numpy as np

PERCENTILES = (50, 90, 99)
TAIL_QUANTILE = 98.0   # the requests a tail verdict is read from: at or above the 98th percentile


def percentiles(values: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """(P50, P90, P99), None when there is nothing to measure."""
    if values.size == 0:
        return None, None, None
    p = np.percentile(values, PERCENTILES)
    return float(p[0]), float(p[1]), float(p[2])


def tail_mask(values: np.ndarray, quantile: float = TAIL_QUANTILE) -> np.ndarray:
    """The requests in the metric's tail (at least one)."""
    if values.size == 0:
        return np.zeros(0, dtype=bool)
    edge = np.percentile(values, quantile)
    mask = values >= edge
    if not mask.any():
        mask[np.argmax(values)] = True
    return mask


def tail_shares(parts: dict[str, np.ndarray], values: np.ndarray) -> dict[str, float]:
    """Each part's mean over the metric's tail, as a share of the tail's mean (summing to 1)."""
    mask = tail_mask(values)
    if not mask.any():
        return {name: 0.0 for name in parts}
    means = {name: float(np.maximum(part[mask], 0.0).mean()) for name, part in parts.items()}
    total = sum(means.values()) or 1.0
    return {name: value / total for name, value in means.items()}


def cost_per_million(price_per_gpu_hour: float, gpu_seconds: float, share: float, tokens: float) -> float | None:
    """Dollars per million tokens of one phase: its share of the fleet's GPU time over its tokens."""
    if tokens <= 0:
        return None
    return price_per_gpu_hour * gpu_seconds / 3600.0 * share / tokens * 1e6


def timeline(times: list, counts: list, span: float, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """A step function (queue length from each time on) averaged over `bins` equal slices of the
    run: (slice midpoints, mean length in each)."""
    edges = np.linspace(0.0, span, bins + 1)
    if span <= 0 or not times:
        return (edges[:-1] + edges[1:]) / 2, np.zeros(bins)
    t = np.asarray(times + [span])
    c = np.asarray(counts, dtype=float)
    # integral of the step function up to each edge
    area = np.concatenate(([0.0], np.cumsum(c * np.diff(t))))
    at_edges = np.interp(edges, t, area)
    width = np.diff(edges)
    return (edges[:-1] + edges[1:]) / 2, np.diff(at_edges) / np.where(width > 0, width, 1.0)
