"""The data behind the simulator's plots. Every curve is computed with the vectorised
`engine.grid` path, so a 1,000-point curve costs about a millisecond. Curves against batch vary
the *requested concurrency* and let the engine take the batch as min(concurrency, what the KV
cache holds), which is what a real server would do; the plot labels say so."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine import physics
from engine.analysis import GIB, analyze
from engine.deployment import Deployment
from engine.grid import analyze_grid
from engine.levers import DEFAULT_SPEC_K
from engine.sim.inputs import DEFAULT_TPOT_BUDGET_MS
from engine.sim.result import Result

CURVE_POINTS = 1000
COURSE_LENGTHS = (1024, 4096, 32768, 131072)
# The course's own table, for Llama 3 70B in BF16 on four H100s with 32 GiB held back.
COURSE_CONCURRENCY = {1024: 501, 4096: 125, 32768: 15, 131072: 3}


@dataclass(frozen=True)
class RooflineData:
    """The roof for all the deployment's GPUs together: attainable = min(peak, intensity × bandwidth)."""

    intensity: np.ndarray        # FLOP per byte, log-spaced
    attainable: np.ndarray       # FLOP/s
    peak: float                  # FLOP/s, all GPUs, dense datasheet figure at the compute precision
    bandwidth: float             # bytes/s, all GPUs
    ridge: float                 # FLOP per byte
    mfu: float
    point_intensity: float       # this deployment's decode step
    point_attainable: float
    batch: int
    batch_one_intensity: float   # the same deployment at batch 1
    max_batch: int
    max_batch_intensity: float   # ... and at the largest batch the cache holds


@dataclass(frozen=True)
class SpecData:
    """Speculative decoding's speedup (TPOT without ÷ TPOT with) against requested concurrency."""

    concurrency: np.ndarray
    batch: np.ndarray
    speedup: np.ndarray
    k: int
    alpha: float
    draft_cost: float
    expected_tokens: float       # accepted tokens per verification, (1 - α^(k+1)) / (1 - α)
    first_below_one: int | None  # the smallest concurrency where speculating slows decode down
    compute_bound_from: int | None  # the smallest batch where plain decode turns compute-bound
    max_batch: int
    ridge: float
    current_concurrency: int
    current_speedup: float


@dataclass(frozen=True)
class ConcurrencyData:
    """Max concurrency against average sequence length S = P + O/2, paged cache, no shared prefix:
    floor(usable KV memory / (KV bytes per token × S))."""

    seq_len: np.ndarray
    max_concurrency: np.ndarray
    usable_bytes: float
    kv_bytes_per_token: float    # as stored across the GPUs (replicated KV heads counted)
    context: int
    table: tuple                 # (S, GiB per sequence, max concurrency, beyond context?)
    point_seq_len: float
    point_max_concurrency: int
    demand: int


@dataclass(frozen=True)
class CostTpotData:
    """Cost per million output tokens and TPOT against requested concurrency, and the TPOT budget."""

    concurrency: np.ndarray
    batch: np.ndarray
    cost: np.ndarray             # dollars per million output tokens
    tpot: np.ndarray             # seconds
    budget_seconds: float
    best_concurrency: int | None  # cheapest point whose TPOT is within the budget
    best_cost: float | None
    best_tpot: float | None
    max_batch: int
    current_concurrency: int
    current_cost: float
    current_tpot: float


def concurrency_axis(current: int, points: int = CURVE_POINTS) -> np.ndarray:
    """1, 2, ..., 1000 — or, when the traffic asks for more than 1,000 in flight, `points`
    log-spaced whole numbers up to twice that."""
    if current <= points:
        return np.arange(1, points + 1, dtype=float)
    top = 2 * current
    axis = np.unique(np.round(np.geomspace(1, top, points)))
    return axis.astype(float)


def roofline_data(result: Result, points: int = CURVE_POINTS) -> RooflineData:
    r, dep = result.report, result.deployment
    gpus = dep.gpus
    peak = r.peak_flops * gpus
    bandwidth = dep.gpu.bandwidth_tbps * 1e12 * gpus
    ridge = peak / bandwidth
    one = analyze(dep.with_(concurrency=1))
    top = analyze(dep.with_(concurrency=max(1, r.max_concurrency)))
    lowest = min(one.intensity, r.intensity, ridge)
    highest = max(top.intensity, r.intensity, ridge)
    intensity = np.geomspace(lowest / 4, highest * 8, points)
    attainable = np.minimum(peak, intensity * bandwidth)
    return RooflineData(
        intensity=intensity, attainable=attainable, peak=peak, bandwidth=bandwidth, ridge=ridge, mfu=dep.mfu,
        point_intensity=r.intensity, point_attainable=min(peak, r.intensity * bandwidth), batch=r.batch,
        batch_one_intensity=one.intensity, max_batch=top.batch, max_batch_intensity=top.intensity,
    )


def spec_data(result: Result, points: int = CURVE_POINTS) -> SpecData:
    dep, r = result.deployment, result.report
    k = dep.spec_k or DEFAULT_SPEC_K
    axis = concurrency_axis(dep.concurrency, points)
    plain = analyze_grid(dep.with_(spec_k=0), concurrency=axis)
    spec = analyze_grid(dep.with_(spec_k=k), concurrency=axis)
    speedup = plain["tpot_seconds"] / spec["tpot_seconds"]
    below = np.nonzero(speedup < 1.0)[0]
    bound = np.nonzero(plain["decode_compute_seconds"] > plain["decode_memory_seconds"])[0]
    alpha = dep.spec_alpha
    expected = float(physics.spec_expected_tokens(float(k), alpha))
    now_plain = r if not dep.spec_k else analyze(dep.with_(spec_k=0))
    now_spec = r if dep.spec_k else analyze(dep.with_(spec_k=k))
    return SpecData(
        concurrency=axis, batch=plain["batch"], speedup=speedup, k=k, alpha=alpha,
        draft_cost=dep.spec_draft_cost, expected_tokens=expected,
        first_below_one=int(axis[below[0]]) if below.size else None,
        compute_bound_from=int(plain["batch"][bound[0]]) if bound.size else None,
        max_batch=int(r.max_concurrency), ridge=r.ridge, current_concurrency=dep.concurrency,
        current_speedup=now_plain.tpot_seconds / now_spec.tpot_seconds,
    )


def concurrency_base(dep: Deployment) -> Deployment:
    """The deployment the concurrency curve describes: paged, nothing shared, continuous."""
    return dep.with_(allocator="paged", prefix_caching=False, scheduler="continuous")


def max_concurrency_at(result: Result, seq_len) -> np.ndarray:
    """Max concurrency at average sequence length(s) `seq_len`, through the engine's grid: a
    prompt of S - 0.5 tokens and one output token average exactly S."""
    s = np.asarray(seq_len, dtype=float)
    grid = analyze_grid(concurrency_base(result.deployment), prompt=s - 0.5, output=np.ones_like(s))
    return np.where(grid["fits"], grid["max_concurrency"], 0.0)


def concurrency_data(result: Result, points: int = CURVE_POINTS) -> ConcurrencyData:
    dep, r = result.deployment, result.report
    low, high = 256.0, float(max(131072, 2 ** math.ceil(math.log2(max(dep.model.context, 2)))))
    exact = [float(s) for s in COURSE_LENGTHS if low < s < high]
    seq = np.unique(np.concatenate([np.geomspace(low, high, points - len(exact)), exact]))
    conc = max_concurrency_at(result, seq)
    stored = r.kv_bytes_per_token * r.kv_replication
    table = []
    for s, m in zip(COURSE_LENGTHS, max_concurrency_at(result, np.array(COURSE_LENGTHS, dtype=float))):
        table.append((s, stored * s / GIB, int(m), s > dep.model.context))
    return ConcurrencyData(
        seq_len=seq, max_concurrency=conc, usable_bytes=r.usable_kv_bytes, kv_bytes_per_token=stored,
        context=dep.model.context, table=tuple(table), point_seq_len=r.seq_len_avg,
        point_max_concurrency=int(r.max_concurrency), demand=dep.concurrency,
    )


def cost_tpot_data(result: Result, budget_ms: float = DEFAULT_TPOT_BUDGET_MS,
                   points: int = CURVE_POINTS) -> CostTpotData:
    dep, r = result.deployment, result.report
    axis = concurrency_axis(dep.concurrency, points)
    grid = analyze_grid(dep, concurrency=axis)
    cost, tpot = grid["cost_per_million_output_tokens"], grid["tpot_seconds"]
    budget = budget_ms / 1e3
    ok = np.nonzero(np.isfinite(cost) & (tpot <= budget))[0]
    if ok.size:
        best = ok[np.argmin(cost[ok])]
        best_c, best_cost, best_tpot = int(axis[best]), float(cost[best]), float(tpot[best])
    else:
        best_c = best_cost = best_tpot = None
    return CostTpotData(
        concurrency=axis, batch=grid["batch"], cost=cost, tpot=tpot, budget_seconds=budget,
        best_concurrency=best_c, best_cost=best_cost, best_tpot=best_tpot, max_batch=int(r.max_concurrency),
        current_concurrency=dep.concurrency, current_cost=r.cost_per_million_output_tokens,
        current_tpot=r.tpot_seconds,
    )

