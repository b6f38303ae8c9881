"""A deployment's load curve: its percentiles and goodput as the offered rate rises, and the knee.

The same traffic (one seed) is run at a ladder of rates, as fractions of the steady-state
capacity (`saturation_qps`), so the curve shows where latency leaves its low-load floor. The knee
is the lowest rate at which P99 TTFT reaches `KNEE_FACTOR` times its value at the lowest rate,
read between the two rates either side of it (on a log scale): the rate beyond which a little
more traffic costs the slowest users a lot more time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.load.spec import LoadSpec

FRACTIONS = (0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.05, 1.15)
KNEE_FACTOR = 3.0
CURVE_REQUESTS = 800


@dataclass
class LoadCurve:
    """Percentiles (seconds) and goodput (requests per second) at each offered rate."""

    rates: np.ndarray
    ttft_p50: np.ndarray
    ttft_p99: np.ndarray
    tpot_p50: np.ndarray
    tpot_p99: np.ndarray
    goodput: np.ndarray
    saturation_qps: float
    knee_qps: float | None
    slo_ttft: float
    slo_tpot: float
    run: object = field(repr=False, default=None)   # the LoadResult at the chosen rate
    rate: float | None = None


def knee(rates: np.ndarray, p99: np.ndarray, factor: float = KNEE_FACTOR) -> float | None:
    """The rate where P99 first reaches `factor` times its lowest-rate value (None if never)."""
    if rates.size < 2 or not math.isfinite(p99[0]) or p99[0] <= 0:
        return None
    target = factor * p99[0]
    for i in range(1, rates.size):
        if p99[i] >= target:
            lo, hi = math.log(p99[i - 1]), math.log(p99[i])
            share = (math.log(target) - lo) / (hi - lo) if hi > lo else 1.0
            return float(rates[i - 1] + share * (rates[i] - rates[i - 1]))
    return None


def load_curve(dep, spec: LoadSpec, rate: float | None = None, fractions=FRACTIONS, times=None) -> LoadCurve:
    """Run `spec`'s traffic shape at each fraction of capacity, and once at `rate` (default 90%
    of capacity, where a queue starts to form) with the spec's own request count for its queue
    over time."""
    from engine.load.run import saturation_qps, simulate, step_times

    times = times or step_times(dep)
    capacity = saturation_qps(dep, spec)
    rates = np.array([f * capacity for f in fractions])
    rows = []
    for r in rates:
        f = simulate(dep, spec.with_(qps=float(r), arrival=spec.arrival if spec.arrival != "closed" else "poisson",
                                     requests=min(spec.requests, CURVE_REQUESTS)), times).figures
        rows.append((f["ttft_p50_seconds"], f["ttft_p99_seconds"], f["tpot_p50_seconds"], f["tpot_p99_seconds"],
                     f["goodput_requests_per_s"]))
    cols = np.array([[math.nan if v is None else v for v in row] for row in rows], dtype=float).T
    chosen = rate if rate is not None else 0.9 * capacity
    run = simulate(dep, spec.with_(qps=float(chosen), arrival=spec.arrival if spec.arrival != "closed" else "poisson"),
                   times)
    return LoadCurve(rates, cols[0], cols[1], cols[2], cols[3], cols[4], capacity, knee(rates, cols[1]),
                     spec.slo_ttft, spec.slo_tpot, run, chosen)
