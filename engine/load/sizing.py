"""Fleet sizing: the fewest GPUs that serve a rate with P99 TTFT and P99 TPOT inside their SLOs.

For each tensor-parallel width that fits (1, 2, 4, ... GPUs per instance), the search starts at
the replicas the steady state needs (the rate over one instance's `saturation_qps`: fewer could
only keep up for a while, as a queue grows without end) and adds replicas until a run meets both
SLOs under every one of `SEEDS` arrival seeds, so a re-run of the answer never misses. A split
fleet (DistServe) starts each pool at its own steady-state need and grows whichever pool's SLO
fails (TTFT: the prefill pool; TPOT: the decode pool), then gives back any GPU it can spare. The
answer is the candidate with the fewest GPUs, the cheaper per output token on a tie.

A search reads a trial's run only when it passes, so a trial that need only say whether it passes
stops at its first seed that misses, and its run at the first instance after which a miss is
certain (`run.run_unless_missed`); the answer is the one every trial run to the end gives.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.errors import RidgeError
from engine.load.run import LoadResult, run_unless_missed, saturation_qps, simulate, steady_report
from engine.load.spec import LoadSpec

SEEDS = 3
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
MAX_GPUS = 4096


@dataclass
class Candidate:
    tp: int
    replicas: int | None
    prefill_gpus: int | None
    decode_gpus: int | None
    result: LoadResult = field(repr=False)

    @property
    def gpus(self) -> int:
        if self.replicas is not None:
            return self.replicas * self.tp
        return self.prefill_gpus + self.decode_gpus

    def to_json(self) -> dict:
        f = self.result.figures
        return {"gpus": self.gpus, "replicas": self.replicas, "tp": self.tp, "prefill_gpus": self.prefill_gpus,
                "decode_gpus": self.decode_gpus, "ttft_p99_seconds": f["ttft_p99_seconds"],
                "tpot_p99_seconds": f["tpot_p99_seconds"],
                "cost_per_million_input_tokens": f["cost_per_million_input_tokens"],
                "cost_per_million_output_tokens": f["cost_per_million_output_tokens"]}


@dataclass
class Sizing:
    qps: float
    slo_ttft: float
    slo_tpot: float
    best: Candidate
    candidates: list
    seeds: int = SEEDS

    def to_json(self) -> dict:
        out = {"qps": self.qps, "slo_ttft_seconds": self.slo_ttft, "slo_tpot_seconds": self.slo_tpot}
        out.update(self.best.to_json())
        out["meets_slo"] = True
        out["seeds_checked"] = self.seeds
        out["candidates"] = [c.to_json() for c in self.candidates]
        return out

    def lines(self) -> list[str]:
        b = self.best
        f = b.result.figures
        shape = (f"{b.replicas} replica{'s' if b.replicas != 1 else ''} of {b.tp} GPU{'s' if b.tp != 1 else ''}"
                 if b.replicas is not None else
                 f"{b.prefill_gpus} prefill + {b.decode_gpus} decode GPUs ({b.tp} per instance)")
        out = [f"Fewest GPUs for {self.qps:g} requests/s with P99 TTFT <= {self.slo_ttft:g} s and P99 TPOT <= "
               f"{self.slo_tpot:g} s: {b.gpus} ({shape})",
               f"  P99 TTFT {f['ttft_p99_seconds']:.3g} s, P99 TPOT {f['tpot_p99_seconds'] * 1e3:.3g} ms "
               f"(worst of {self.seeds} arrival seeds)",
               f"  cost ${f['cost_per_million_input_tokens']:.3g} per million input tokens, "
               f"${f['cost_per_million_output_tokens']:.3g} per million output tokens",
               "Candidates:"]
        for c in self.candidates:
            cf = c.result.figures
            layout = (f"{c.replicas} x TP{c.tp}" if c.replicas is not None else f"{c.prefill_gpus}P:{c.decode_gpus}D TP{c.tp}")
            out.append(f"  {layout:<16} {c.gpus:>5} GPUs  P99 TTFT {cf['ttft_p99_seconds']:.3g} s  "
                       f"P99 TPOT {cf['tpot_p99_seconds'] * 1e3:.3g} ms")
        return out


def _met(spec: LoadSpec, f: dict) -> tuple[bool, bool]:
    """(TTFT met, TPOT met) by one run's figures: TTFT counts only when nothing was shed."""
    return (f["ttft_p99_seconds"] is not None and f["ttft_p99_seconds"] <= spec.slo_ttft and f["shed"] == 0,
            f["tpot_p99_seconds"] is None or f["tpot_p99_seconds"] <= spec.slo_tpot)


def _worst(dep, spec: LoadSpec, times, seeds: int) -> tuple[bool, bool, LoadResult]:
    """(TTFT met, TPOT met, the run with the worst P99 TTFT) over `seeds` seeds from spec.seed;
    once both are missed the rest are skipped (the run is then the worst of those run)."""
    ttft_ok = tpot_ok = True
    worst = None
    for k in range(seeds):
        result = simulate(dep, spec.with_(seed=spec.seed + k), times)
        f = result.figures
        ttft_met, tpot_met = _met(spec, f)
        ttft_ok &= ttft_met
        tpot_ok &= tpot_met
        if worst is None or (f["ttft_p99_seconds"] or math.inf) > (worst.figures["ttft_p99_seconds"] or math.inf):
            worst = result
        if not ttft_ok and not tpot_ok:
            # failed both ways: no later seed can change either answer, and the searches read a
            # trial's run only when it passes, so the seeds left need not run
            break
    return ttft_ok, tpot_ok, worst


def _passing(dep, spec: LoadSpec, times, seeds: int) -> LoadResult | None:
    """`_worst`'s run when both SLOs are met under every seed, else None: for a search that asks
    a trial only whether it passes, so it stops at the first seed that misses, and a replicas
    fleet's run at the first replica that makes a miss certain (`run.run_unless_missed`)."""
    worst = None
    for k in range(seeds):
        result = run_unless_missed(dep, spec.with_(seed=spec.seed + k), times)
        if result is None:
            return None
        f = result.figures
        if not all(_met(spec, f)):
            return None
        if worst is None or (f["ttft_p99_seconds"] or math.inf) > (worst.figures["ttft_p99_seconds"] or math.inf):
            worst = result
    return worst


def _aggregated(dep, spec: LoadSpec, times, seeds: int) -> Candidate | None:
    per = saturation_qps(dep, spec.with_(replicas=1, disaggregate=None))
    low = max(1, math.ceil(spec.qps / per * (1 - 1e-9)))   # below this, a queue grows without end

    def trial(replicas: int):
        return _worst(dep, spec.with_(replicas=replicas, disaggregate=None), times, seeds)

    def passing(replicas: int):
        return _passing(dep, spec.with_(replicas=replicas, disaggregate=None), times, seeds)

    failed, replicas = low - 1, low
    while True:
        if replicas * dep.gpus > MAX_GPUS:
            return None
        if spec.qps / replicas < 0.05 * per:
            # here a missed TPOT ends the search, so the trial must say which SLO it missed
            ttft_ok, tpot_ok, result = trial(replicas)
            if ttft_ok and tpot_ok:
                break
            if not tpot_ok:
                return None   # even a nearly idle instance steps too slowly for the TPOT target
        else:
            result = passing(replicas)
            if result is not None:
                break
        failed, replicas = replicas, replicas + max(1, replicas // 2)
    while replicas - failed > 1:   # the fewest that still meets both
        mid = (failed + replicas) // 2
        r = passing(mid)
        if r is not None:
            replicas, result = mid, r
        else:
            failed = mid
    return Candidate(dep.gpus, replicas, None, None, result)


def _split(dep, spec: LoadSpec, times, seeds: int) -> Candidate | None:
    report = steady_report(dep, spec)
    tp = dep.gpus
    p = max(1, math.ceil(spec.qps * report.prefill_charge_seconds))
    d = max(1, math.ceil(spec.qps * dep.output * report.tpot_seconds / report.batch))
    found = None
    while (p + d) * tp <= MAX_GPUS:
        ttft_ok, tpot_ok, result = _worst(dep, spec.with_(replicas=1, disaggregate=(p * tp, d * tp)), times, seeds)
        if ttft_ok and tpot_ok:
            found = (p, d, result)
            break
        if not tpot_ok and spec.qps / d < 0.05 * report.batch / (dep.output * report.tpot_seconds):
            return None
        p += 0 if ttft_ok else 1
        d += 0 if tpot_ok else 1
    if found is None:
        return None
    p, d, result = found
    for pool in ("p", "d"):
        while (p if pool == "p" else d) > 1:
            trial = (p - 1, d) if pool == "p" else (p, d - 1)
            r = _passing(dep, spec.with_(replicas=1, disaggregate=(trial[0] * tp, trial[1] * tp)), times, seeds)
            if r is None:
                break
            p, d, result = trial[0], trial[1], r
    return Candidate(tp, None, p * tp, d * tp, result)


def size_fleet(dep, spec: LoadSpec, tp: int | None = None, split: str | bool = False, seeds: int = SEEDS) -> Sizing:
    """The fewest GPUs meeting `spec.qps` at the spec's SLOs, searching TP widths unless `tp` is
    given; `split` False sizes replicas only, "also" split fleets as well, "only" split fleets."""
    from engine.load.run import step_times

    if spec.qps is None or spec.arrival == "closed":
        raise RidgeError("fleet sizing needs an arrival rate (--qps)")
    widths = (tp,) if tp else TP_CHOICES
    candidates = []
    fitted = 0
    for width in widths:
        d = dep.with_(gpus=width)
        try:
            steady_report(d, spec)
        except RidgeError:
            continue
        fitted += 1
        times = step_times(d)
        if split != "only":
            found = _aggregated(d, spec, times, seeds)
            if found is not None:
                candidates.append(found)
        if split and d.gpus * 2 <= MAX_GPUS:
            found = _split(d, spec, times, seeds)
            if found is not None:
                candidates.append(found)
        if fitted >= 3:
            break
    if not candidates:
        if not fitted:
            raise RidgeError(f"{dep.model.id} does not fit on {tp or 'up to 64'} x {dep.gpu.id}")
        raise RidgeError(f"no fleet of up to {MAX_GPUS} GPUs meets P99 TPOT <= {spec.slo_tpot:g} s and P99 TTFT <= "
                         f"{spec.slo_ttft:g} s: the decode step itself is slower than the TPOT target")
    candidates.sort(key=lambda c: (c.gpus, c.result.figures["cost_per_million_output_tokens"] or math.inf))
    return Sizing(spec.qps, spec.slo_ttft, spec.slo_tpot, candidates[0], candidates, seeds)
