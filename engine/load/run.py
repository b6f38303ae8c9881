"""A whole load run: the fleet's instances fed their share of the traffic, and the figures.

A fleet is `replicas` identical instances (each the deployment's `gpus` GPUs), requests dealt
round robin, or, disaggregated (DistServe's split), a prefill pool and a decode pool of such
instances: a prompt is prefilled in the first pool, which emits the first token; its KV cache then
crosses the link (KV bytes per token x prompt tokens at the link's bandwidth, added to TTFT) and
the second pool generates the rest. Memory comes from the engine's own accounting
(`engine.analysis.analyze`): the KV tokens an instance holds are its usable KV bytes over the
bytes each token keeps (replicated across GPUs where heads are, in full-attention equivalents for
sliding-window models), less a cached shared prefix held once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.errors import RidgeError
from engine.ids import Verdict
from engine.load import links, metrics
from engine.physics import constants
from engine.load.scheduler import SHED, InstanceConfig, InstanceRequests, run_instance
from engine.load.spec import LoadSpec, validate
from engine.load.steptimes import StepTimes
from engine.load.workload import draw

QUEUE_BINS = 60
REMEMBERED_RUNS = 4   # whole runs (and sizings) a times_cache keeps: a check's probes ask for one base run in a row


@dataclass
class LoadResult:
    """Every figure of one run (seconds, requests, tokens, dollars), JSON-ready via `to_json`,
    plus the per-request arrays the plots and the tail verdicts read."""

    figures: dict
    ttft: np.ndarray = field(repr=False)
    tpot: np.ndarray = field(repr=False)
    e2e: np.ndarray = field(repr=False)
    ttft_parts: dict = field(repr=False)
    tpot_parts: dict = field(repr=False)
    queue: tuple = field(repr=False)
    # the most requests any arrival found waiting (in the instances that queue arrivals): an
    # admission cap above it would have shed nobody, so the capped run is this very run
    peak_queue: int = field(default=0, repr=False)

    def __getitem__(self, name: str):
        return self.figures[name]

    def to_json(self) -> dict:
        return dict(self.figures)


def _instance_capacity(report, dep) -> float:
    """KV tokens one instance holds for its sequences (the shared prefix's store taken out)."""
    per_token = report.kv_bytes_per_token * report.kv_replication * (report.kv_tokens_held / report.seq_len_avg)
    usable = report.usable_kv_bytes
    if dep.prefix_caching and dep.shared_prefix:
        usable -= per_token * dep.shared_prefix
    return usable / per_token


def steady_report(dep, spec: LoadSpec):
    """The steady-state analysis of one instance at the scheduler's cap: the engine's figures for
    fit, capacity and the saturation rate."""
    from engine.analysis import analyze

    chunked = {"chunked_prefill": True, "chunk_tokens": spec.chunk_tokens} if spec.chunk_tokens else {}
    report = analyze(dep.with_(concurrency=spec.max_running, scheduler="continuous", allocator="paged",
                               objective="cost", **chunked))
    if not report.fits:
        raise RidgeError(f"{dep.model.id} does not fit on {dep.gpus} x {dep.gpu.id}: {report.fit_problem}")
    return report


def saturation_qps(dep, spec: LoadSpec, report=None) -> float:
    """Requests per second the fleet serves in the steady state (`ridge solve`'s throughput at the
    scheduler's cap over the output length), the prefill pool's or the decode pool's, whichever
    is less when they are split."""
    report = report or steady_report(dep, spec)
    per_instance = report.throughput_tokens_per_s / dep.output
    if spec.disaggregate is None:
        return spec.replicas * per_instance
    p, d = (x // dep.gpus for x in spec.disaggregate)
    prefill_rate = p / report.prefill_charge_seconds
    decode_rate = d * report.batch / (dep.output * report.tpot_seconds)
    return min(prefill_rate, decode_rate)


def transfer_seconds(dep, spec: LoadSpec, prompt_tokens) -> np.ndarray:
    """KV bytes per token x prompt tokens over the link's bandwidth."""
    return dep.model.kv_values_per_token * _kv_bytes(dep) * np.asarray(prompt_tokens, dtype=float) / links.bytes_per_s(spec)


def _kv_bytes(dep) -> float:
    from engine.catalog import PRECISION_BYTES

    return PRECISION_BYTES[dep.kv]


def step_times(dep) -> StepTimes:
    """The remembered step times of one instance of `dep` at its fidelity, from the engine's one
    step model (`engine.steps`); a run can share them with other runs of the same deployment."""
    from engine.steps import step_model

    return StepTimes(step_model(dep))


def times_cache():
    """A function giving each deployment's remembered step times, made once per shape that
    changes them (a lever's precision or GPUs): runs of one puzzle share it. It also remembers
    each whole run by its (deployment, spec) in `times.runs` (`remembered_run`): a check asks for
    the same base run once per lever it probes, and a run is a pure function of those two. Only
    the last few are kept (`REMEMBERED_RUNS`)."""
    cache: dict = {}

    def times(d):
        key = (d.model.id, d.gpu.id, d.gpus, d.weights, d.kv, d.fidelity, d.mfu)
        if key not in cache:
            cache[key] = step_times(d)
        return cache[key]

    times.runs = {}
    return times


def remembered_run(dep, spec: LoadSpec, times_for) -> LoadResult:
    """`simulate(dep, spec)` with `times_for`'s step times, from its `runs` when asked before
    (the result is shared: nothing downstream changes a LoadResult)."""
    return remembered(times_for, (dep, spec), lambda: simulate(dep, spec, times_for(dep)))


def remembered(times_for, key, make):
    """`make()`, or what it gave when `key` was last asked of `times_for` (its `runs`, the last
    `REMEMBERED_RUNS` kept): `key` must say everything `make`'s answer depends on."""
    runs = getattr(times_for, "runs", None)
    if runs is None:
        return make()
    result = runs.pop(key, None)
    if result is None:
        result = make()
        if len(runs) >= REMEMBERED_RUNS:
            del runs[next(iter(runs))]   # the least recently asked: a run's arrays are large
    runs[key] = result
    return result


def one_group(dep, spec: LoadSpec):
    """(deployment, spec) with each instance one tensor-parallel group: where the fidelity keeps
    tensor parallelism inside an accelerator's domain (realistic, measured), GPUs beyond it are
    more replicas, each reading its own weights, as the steady-state analysis counts them."""
    from engine.physics import tp_layout

    if dep.fidelity == "floor":
        return dep, spec
    tp, groups = tp_layout(dep.gpus, dep.gpu.tp_domain)
    if groups <= 1:
        return dep, spec
    tp = int(tp)
    if dep.gpus % tp:
        raise RidgeError(f"{dep.gpus} GPUs do not split into whole {tp}-GPU tensor-parallel groups on "
                         f"{dep.gpu.id}: give --tp {tp} or a multiple of {tp} GPUs")
    return dep.with_(gpus=tp), spec.with_(replicas=spec.replicas * (dep.gpus // tp))


def _config(dep, spec: LoadSpec, capacity: float) -> InstanceConfig:
    return InstanceConfig(max_running=spec.max_running, kv_tokens=capacity, block_tokens=spec.block_tokens,
                          chunk_tokens=spec.chunk_tokens, max_prefill_tokens=int(constants()["prefill_batch_tokens"]),
                          queue_cap=spec.queue_cap)


def _deal(n: int, ways: int) -> list[np.ndarray]:
    """Request indices dealt round robin to `ways` instances."""
    return [np.arange(k, n, ways) for k in range(ways)]


def simulate(dep, spec: LoadSpec, times=None) -> LoadResult:
    """Run the fleet on the spec's traffic and measure it (deterministic for the spec's seed)."""
    return _run(dep, spec, times, give_up=False)


def run_unless_missed(dep, spec: LoadSpec, times=None) -> LoadResult | None:
    """`simulate(dep, spec, times)`, or None once the fleet certainly misses the spec's TTFT or
    TPOT SLO: a fleet sizing asks of a trial only whether it meets both, so instances whose
    requests cannot change that answer need not run (`_certain_miss`). A split fleet's TTFT is
    judged once its prefill pool has run, where the decode pool cannot drop a request
    (`_decode_pool_keeps_all`); its TPOT as each decode instance ends."""
    return _run(dep, spec, times, give_up=True)


def _misses(spec: LoadSpec, served, out, arrival, first_tok, finish, transfer) -> tuple[int, int]:
    """(served requests over the TTFT SLO, over the TPOT SLO): `_measure`'s arithmetic, on some
    requests whose figures are final."""
    ttft = (first_tok + transfer - arrival)[served]
    tpot = np.where(out >= 2, (finish - (first_tok + transfer)) / np.maximum(out - 1, 1), 0.0)
    return int((ttft > spec.slo_ttft).sum()), int((tpot[served & (out >= 2)] > spec.slo_tpot).sum())


def _decode_pool_keeps_all(own: np.ndarray, output: np.ndarray, cfg: InstanceConfig) -> bool:
    """Whether a decode pool serves every request the prefill pool passes it. A decode instance
    refuses an arrival that can never fit, and drops a waiting one only when nothing runs and it
    still does not fit, or when a lone sequence outgrows the cache; none of these can happen
    when the most any request holds there (its own tokens, the first token and every later one)
    fits with the block rounding, the 1% watermark and the token each step adds, a block to spare."""
    if own.size == 0:
        return True
    most = float((own + output).max())
    return most + cfg.block_tokens * 1.5 + 0.01 * cfg.kv_tokens + 2 <= cfg.kv_tokens


def _certain_miss(n: int, late: int, slow: int) -> bool:
    """Whether P99 TTFT or P99 TPOT certainly exceeds its SLO, with `late` (`slow`) of at most `n`
    requests already over it. numpy's P99 of m values is interpolated between the values at
    ranks floor(0.99 (m - 1)) and the next, so it is above the SLO once the value at the lower
    rank is: when more than m - floor(0.99 (m - 1)) values are over the SLO. That count only
    grows with m, so m = n (every request served) bounds it; one more request covers the
    rounding of numpy's rank."""
    need = n - (99 * (n - 1)) // 100 + 1
    return late >= need or slow >= need


def _run(dep, spec: LoadSpec, times, give_up: bool) -> LoadResult | None:
    validate(spec, dep.gpus)
    dep, spec = one_group(dep, spec)
    if spec.disaggregate is not None and spec.arrival == "closed":
        raise RidgeError("a closed loop of users is not simulated across split pools; give --qps with --disaggregate")
    report = steady_report(dep, spec)
    capacity = _instance_capacity(report, dep)
    times = times or step_times(dep)
    traffic = draw(spec, dep.prompt, dep.output, dep.model.context, dep.shared_prefix)
    cached = dep.shared_prefix if dep.prefix_caching else 0
    prompt = traffic.prompt
    own = prompt - cached
    n = prompt.size
    cfg = _config(dep, spec, capacity)

    arrival = np.full(n, -1.0)
    first_sched = np.full(n, -1.0)
    first_tok = np.full(n, -1.0)
    finish = np.full(n, -1.0)
    dec_entry = np.full(n, -1.0)
    pure = np.zeros(n)
    evicted = np.zeros(n)
    shed = np.zeros(n, dtype=bool)
    transfer = np.zeros(n)
    dec_wait = np.zeros(n)
    preemptions = 0
    prefill_busy = decode_busy = batch_seconds = busy = occupancy = 0.0
    queues = []
    span = 0.0
    peak_queue = 0
    late = slow = 0   # with give_up: served requests so far over the TTFT and the TPOT SLO

    def absorb(trace, idx, queue=True):
        nonlocal preemptions, prefill_busy, decode_busy, batch_seconds, busy, span, occupancy, peak_queue
        preemptions += sum(trace.preemptions)
        occupancy += trace.occupancy
        prefill_busy += trace.prefill_busy
        decode_busy += trace.decode_busy
        batch_seconds += trace.batch_seconds
        busy += trace.prefill_busy + trace.decode_busy
        span = max(span, trace.span)
        if queue:
            queues.append((trace.queue_t, trace.queue_n))
            peak_queue = max(peak_queue, trace.peak_queue)
        return idx

    if spec.disaggregate is None:
        for idx in _deal(n, spec.replicas) if spec.arrival != "closed" else _deal_closed(n, spec):
            req = InstanceRequests(prefill=own[idx].tolist(), own=own[idx].tolist(), context=prompt[idx].tolist(),
                                   output=traffic.output[idx].tolist())
            if traffic.arrival is not None:
                req.arrival = traffic.arrival[idx].tolist()
            else:
                req.think = traffic.think[idx].tolist()
                req.users = _users_of(spec, idx, n)
            trace = run_instance(times, req, cfg)
            absorb(trace, idx)
            arrival[idx] = trace.arrival
            first_sched[idx] = trace.first_scheduled
            first_tok[idx] = trace.first_token
            finish[idx] = trace.finish
            dec_entry[idx] = trace.decode_entry
            pure[idx] = trace.pure_decode
            evicted[idx] = trace.evicted
            shed[idx] = np.asarray(trace.state) == SHED
            if give_up:   # these requests' figures are final
                if shed[idx].any():
                    return None
                more_late, more_slow = _misses(spec, finish[idx] >= 0, traffic.output[idx], arrival[idx],
                                               first_tok[idx], finish[idx], transfer[idx])
                late, slow = late + more_late, slow + more_slow
                if _certain_miss(n, late, slow):
                    return None
    else:
        p_inst, d_inst = (x // dep.gpus for x in spec.disaggregate)
        for idx in _deal(n, p_inst):
            req = InstanceRequests(prefill=own[idx].tolist(), own=own[idx].tolist(), context=prompt[idx].tolist(),
                                   output=[1] * idx.size, arrival=traffic.arrival[idx].tolist())
            trace = run_instance(times, req, cfg)
            absorb(trace, idx)
            arrival[idx] = trace.arrival
            first_sched[idx] = trace.first_scheduled
            first_tok[idx] = trace.first_token
            shed[idx] = np.asarray(trace.state) == SHED
        transfer = np.where(shed, 0.0, transfer_seconds(dep, spec, prompt))
        occupancy += float(transfer.sum())   # in flight between the pools
        ready = first_tok + transfer
        goes_on = (~shed) & (traffic.output > 1)
        done_here = (~shed) & (traffic.output <= 1)
        finish[done_here] = ready[done_here]
        dec_entry[done_here] = ready[done_here]
        order = np.flatnonzero(goes_on)
        order = order[np.argsort(ready[order], kind="stable")]
        decode_cfg = InstanceConfig(**{**cfg.__dict__, "queue_cap": None})
        if give_up:
            # TTFT is final now for every request the decode pool will serve: all but the shed
            # ones, when it can drop none (a shed request misses TTFT whatever else happens)
            if shed.any():
                return None
            if _decode_pool_keeps_all(own, traffic.output, decode_cfg):
                late, _ = _misses(spec, ~shed, traffic.output, arrival, first_tok, finish, transfer)
                if _certain_miss(n, late, 0):
                    return None
        for k in range(d_inst):
            idx = order[k::d_inst]
            req = InstanceRequests(prefill=[0] * idx.size, own=(own[idx] + 1).tolist(), context=(prompt[idx] + 1).tolist(),
                                   output=(traffic.output[idx] - 1).tolist(), arrival=ready[idx].tolist(),
                                   emits_first=False)
            trace = run_instance(times, req, decode_cfg)
            absorb(trace, idx, queue=False)
            finish[idx] = trace.finish
            dec_entry[idx] = trace.decode_entry
            pure[idx] = trace.pure_decode
            evicted[idx] = trace.evicted
            dec_wait[idx] = np.asarray(trace.decode_entry) - ready[idx]
            if give_up:   # these requests' TPOT is final
                _, more_slow = _misses(spec, finish[idx] >= 0, traffic.output[idx], arrival[idx], first_tok[idx],
                                       finish[idx], transfer[idx])
                slow += more_slow
                if _certain_miss(n, 0, slow):
                    return None
    result = _measure(dep, spec, report, times, traffic, cached, arrival, first_sched, first_tok, finish, dec_entry,
                      pure, evicted, shed, transfer, dec_wait, preemptions, prefill_busy, decode_busy, batch_seconds,
                      busy, span, queues, occupancy)
    result.peak_queue = peak_queue
    return result


def _deal_closed(n: int, spec: LoadSpec) -> list[np.ndarray]:
    """Closed loop: each replica serves its own users; requests are issued in order per replica."""
    return _deal(n, spec.replicas)


def _users_of(spec: LoadSpec, idx: np.ndarray, n: int) -> int:
    share = [spec.users // spec.replicas + (1 if k < spec.users % spec.replicas else 0) for k in range(spec.replicas)]
    k = int(idx[0]) % spec.replicas if idx.size else 0
    return max(1, share[k])


def fleet_gpus(dep, spec: LoadSpec) -> int:
    if spec.disaggregate is not None:
        return sum(spec.disaggregate)
    return spec.replicas * dep.gpus


def _measure(dep, spec, report, times, traffic, cached, arrival, first_sched, first_tok, finish, dec_entry, pure,
             evicted, shed, transfer, dec_wait, preemptions, prefill_busy, decode_busy, batch_seconds, busy, span,
             queues, occupancy) -> LoadResult:
    served = (~shed) & (finish >= 0)
    out = traffic.output
    ttft_all = first_tok + transfer - arrival
    e2e_all = finish - arrival
    ttft = ttft_all[served]
    e2e = e2e_all[served]
    multi = served & (out >= 2)
    tpot_all = np.where(out >= 2, (finish - (first_tok + transfer)) / np.maximum(out - 1, 1), 0.0)
    tpot = tpot_all[multi]
    n_served = int(served.sum())
    admitted = int((~shed).sum())

    # TTFT of each served request, in parts: waiting for its first step, its own prompt's compute
    # alone, the rest of its prefill span (other requests' work in its steps), the KV transfer
    # (asked once per distinct prompt length: the same figure for every request of that length)
    lengths, which = np.unique((traffic.prompt - cached)[served], return_inverse=True)
    lone = np.array([times.prefill(int(p), 1) for p in lengths])[which] if n_served else np.zeros(0)
    wait = (first_sched - arrival)[served]
    span_pf = (first_tok - first_sched)[served]
    ttft_parts = {Verdict.QUEUEING: wait, Verdict.PREFILL_COMPUTE: np.minimum(lone, span_pf),
                  Verdict.PREFILL_INTERFERENCE: np.maximum(span_pf - lone, 0.0), Verdict.KV_TRANSFER: transfer[served]}
    # TPOT in parts (per output token): the decode steps' own time, other work sharing or
    # holding those steps, time evicted, and a decode pool's wait for a slot
    steps_after = np.maximum(out - 1, 1)[multi]
    own_dec = pure[multi] / steps_after
    ev = evicted[multi] / steps_after
    dw = dec_wait[multi] / steps_after
    tpot_parts = {"decode": own_dec, Verdict.PREEMPTION: ev, Verdict.QUEUEING: dw,
                  Verdict.PREFILL_INTERFERENCE: np.maximum(tpot - own_dec - ev - dw, 0.0)}

    window = span if span > 0 else 1.0
    # time-averaged from the schedulers' own queue and batch counts, not from the requests' latencies,
    # so that Little's law (mean_in_system = arrival rate x mean time in system) is a real check
    in_system = occupancy / window
    good = (ttft_all <= spec.slo_ttft) & ((out < 2) | (tpot_all <= spec.slo_tpot)) & served
    gpus = fleet_gpus(dep, spec)
    gpu_seconds = gpus * window
    phase_total = prefill_busy + decode_busy
    in_share = prefill_busy / phase_total if phase_total > 0 else 0.5
    input_tokens = float(traffic.prompt[served].sum())
    output_tokens = float(out[served].sum())
    t50, t90, t99 = percentiles_of(ttft)
    p50, p90, p99 = percentiles_of(tpot)
    e50, e90, e99 = percentiles_of(e2e)
    bins_t, bins_q = _queue_series(queues, window)
    figures = {
        "fidelity": dep.fidelity, "requests": int(out.size), "served": n_served, "shed": int(shed.sum()),
        "ttft_p50_seconds": t50, "ttft_p90_seconds": t90, "ttft_p99_seconds": t99,
        "tpot_p50_seconds": p50, "tpot_p90_seconds": p90, "tpot_p99_seconds": p99,
        "e2e_p50_seconds": e50, "e2e_p90_seconds": e90, "e2e_p99_seconds": e99,
        "ttft_mean_seconds": _mean(ttft), "tpot_mean_seconds": _mean(tpot), "e2e_mean_seconds": _mean(e2e),
        "arrival_rate_per_s": admitted / window, "offered_rate_per_s": spec.qps if spec.arrival != "closed" else None,
        "mean_in_system": in_system, "duration_seconds": window,
        "throughput_tokens_per_s": output_tokens / window, "input_tokens_per_s": input_tokens / window,
        "goodput_requests_per_s": float(good.sum()) / window,
        "slo_attainment": float(good.sum()) / out.size, "slo_ttft_seconds": spec.slo_ttft,
        "slo_tpot_seconds": spec.slo_tpot,
        "mean_batch": batch_seconds / busy if busy > 0 else 0.0,
        "mean_queue": float(np.mean(bins_q)) if len(bins_q) else 0.0,
        "preemptions": int(preemptions), "saturation_qps": saturation_qps(dep, spec, report),
        "lone_ttft_seconds": times.prefill(int(dep.prompt - cached), 1) + (
            float(transfer_seconds(dep, spec, [dep.prompt])[0]) if spec.disaggregate else 0.0),
        "gpus": gpus, "gpu_seconds": gpu_seconds, "busy_share": min(1.0, busy / (window * _instances(dep, spec))),
        "prefill_gpu_share": in_share,
        "cost_per_million_input_tokens": metrics.cost_per_million(dep.price, gpu_seconds, in_share, input_tokens),
        "cost_per_million_output_tokens": metrics.cost_per_million(dep.price, gpu_seconds, 1.0 - in_share, output_tokens),
        "kv_transfer_seconds": float(transfer_seconds(dep, spec, [dep.prompt])[0]) if spec.disaggregate else 0.0,
        "queue_over_time": [[round(float(a), 4), round(float(b), 3)] for a, b in zip(bins_t, bins_q)],
    }
    return LoadResult(figures, ttft, tpot, e2e, ttft_parts, tpot_parts, (bins_t, bins_q))


def percentiles_of(values: np.ndarray):
    return metrics.percentiles(values)


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


def _instances(dep, spec) -> int:
    if spec.disaggregate is not None:
        return sum(spec.disaggregate) // dep.gpus
    return spec.replicas


def _queue_series(queues, span):
    """Requests waiting over time, summed over the instances that queue arrivals."""
    total_t, total_q = None, None
    for qt, qn in queues:
        t, q = metrics.timeline(qt, qn, span, QUEUE_BINS)
        total_t = t
        total_q = q if total_q is None else total_q + q
    if total_t is None:
        return np.zeros(0), np.zeros(0)
    return total_t, total_q
