"""The traffic of a load run, drawn once from a seeded numpy Generator: when requests arrive and
how long their prompts and answers are. The same spec and seed always give the same traffic.

Lengths are drawn around the deployment's averages:
- `fixed`: every prompt P tokens, every answer O tokens;
- `exponential`: geometric counts (the whole-token exponential) with means P and O;
- `trace`: a heavy-tailed shape, log-normal with sigma 1 (the 99th percentile about ten times the
  median, the long tail chat logs show), scaled to the same means.
A shared prefix (`shared_prefix`) is the same on every prompt; only the rest of a prompt varies.
Every draw is cut to the model's context (prompt + answer never exceed it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TRACE_SIGMA = 1.0
BURST_CV = 2.0   # coefficient of variation of bursty gaps (Poisson's is 1)


@dataclass(frozen=True)
class Traffic:
    """Per-request arrays in issue order: prompt and output tokens, arrival times (open loop) or
    think times (closed loop: each user's pause before its next request)."""

    prompt: np.ndarray
    output: np.ndarray
    arrival: np.ndarray | None
    think: np.ndarray | None
    users: int = 0


def _lengths(rng, mean: float, n: int, kind: str, low: int) -> np.ndarray:
    if kind == "fixed" or mean <= low:
        return np.full(n, max(int(round(mean)), low), dtype=np.int64)
    if kind == "exponential":
        extra = mean - low + 1.0   # a geometric count from `low` up with the right mean
        return rng.geometric(1.0 / extra, size=n).astype(np.int64) + (low - 1)
    mu = math.log(mean) - TRACE_SIGMA ** 2 / 2
    return np.maximum(low, np.rint(rng.lognormal(mu, TRACE_SIGMA, size=n))).astype(np.int64)


def draw(spec, prompt: int, output: int, context: int, shared_prefix: int = 0) -> Traffic:
    """The requests of one run (`spec` a LoadSpec; lengths are the deployment's averages)."""
    rng = np.random.default_rng(spec.seed)
    n = spec.requests
    own = _lengths(rng, prompt - shared_prefix, n, spec.lengths, 1 if shared_prefix < prompt else 0)
    prompts = np.minimum(own + shared_prefix, context - 1)
    outputs = np.minimum(_lengths(rng, output, n, spec.lengths, 1), context - prompts)
    if spec.arrival == "closed":
        think = rng.exponential(spec.think_seconds, size=n) if spec.think_seconds > 0 else np.zeros(n)
        return Traffic(prompts, outputs, None, think, users=min(spec.users, n))
    mean_gap = 1.0 / spec.qps
    if spec.arrival == "bursty":
        shape = 1.0 / BURST_CV ** 2
        gaps = rng.gamma(shape, mean_gap / shape, size=n)
    else:
        gaps = rng.exponential(mean_gap, size=n)
    return Traffic(prompts, outputs, np.cumsum(gaps), None)
