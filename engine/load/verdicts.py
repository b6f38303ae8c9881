"""What a load run's tail is made of: the verdict a load puzzle's bottleneck question asks for.

Each served request's TTFT splits into its wait for a first step (`queueing`), its own prompt's
compute alone (`prefill-compute`), the rest of its prefill span, spent in steps that carried other
requests' work (`prefill-interference`: head-of-line blocking behind other prompts), and the KV
transfer of a split fleet (`kv-transfer`). Each TPOT splits into its decode steps' own time (what
bounds that step: `decode-compute`, `decode-kv` or `decode-weights`, as the engine's analysis of
the running batch says), the time other requests' prompts added to or froze those steps
(`prefill-interference`), time evicted and recomputed (`preemption`), and a decode pool's wait for
a slot (`queueing`).

The verdict of P99 TTFT or P99 TPOT is the largest part, averaged over the requests at or above
the 98th percentile (the 99th alone rests on a handful of requests and moves with the seed).
Goodput and the fleet an SLO needs are lost to whichever tail misses more: goodput's verdict is
that of the metric with more requests over its SLO, the fleet's that of the metric closer to its
SLO. `margin` is how far the verdict's part is ahead of the runner-up (a ratio).
"""
from __future__ import annotations

from engine.ids import Objective, Verdict
from engine.load import metrics


def _decode_term(dep, result) -> str:
    """What bounds the decode step at the run's mean batch (the engine's own TPOT verdict)."""
    from engine.analysis import analyze

    batch = max(1, int(round(result.figures["mean_batch"])))
    report = analyze(dep.with_(concurrency=batch, scheduler="continuous", allocator="paged", objective="tpot"))
    if not report.fits:
        return Verdict.DECODE_WEIGHTS
    if report.decode_compute_seconds > report.decode_memory_seconds:
        return Verdict.DECODE_COMPUTE
    if report.decode_kv_bytes_per_step > report.decode_weight_bytes_per_step:
        return Verdict.DECODE_KV
    return Verdict.DECODE_WEIGHTS


def ttft_shares(result) -> dict[str, float]:
    return metrics.tail_shares(result.ttft_parts, result.ttft)


def tpot_shares(result) -> dict[str, float]:
    return metrics.tail_shares(result.tpot_parts, result.tpot)


def _ranked(shares: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(shares.items(), key=lambda kv: -kv[1])


def metric_verdict(dep, result, metric: str) -> tuple[str, float, dict]:
    """(verdict, margin over the runner-up part, the parts' shares) of one tail: "ttft" or "tpot"."""
    shares = ttft_shares(result) if metric == "ttft" else tpot_shares(result)
    ranked = _ranked(shares)
    top, share = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    margin = share / second if second > 0 else float("inf")
    if top == "decode":
        return _decode_term(dep, result), margin, shares
    return top, margin, shares


def binding_metric(result, objective: str) -> str:
    """Which tail goodput or the fleet size is lost to: "ttft" or "tpot"."""
    f = result.figures
    if objective == Objective.GOODPUT:
        ttft_miss = int((result.ttft > f["slo_ttft_seconds"]).sum())
        tpot_miss = int((result.tpot > f["slo_tpot_seconds"]).sum())
        return "ttft" if ttft_miss >= tpot_miss else "tpot"
    ttft_ratio = (f["ttft_p99_seconds"] or 0.0) / f["slo_ttft_seconds"]
    tpot_ratio = (f["tpot_p99_seconds"] or 0.0) / f["slo_tpot_seconds"]
    return "ttft" if ttft_ratio >= tpot_ratio else "tpot"


def verdict(dep, result, objective: str) -> tuple[str, float, dict]:
    """(verdict, margin, shares) of the objective's tail for this run."""
    if objective == Objective.P99_TTFT:
        return metric_verdict(dep, result, "ttft")
    if objective == Objective.P99_TPOT:
        return metric_verdict(dep, result, "tpot")
    return metric_verdict(dep, result, binding_metric(result, objective))
