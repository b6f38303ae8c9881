"""The reasons, facts and stories of load puzzles: why a tail is what it is, with the run's numbers.

The key's reason follows the same two rules as a steady-state key's (`puzzles.reasons`):

1. when the best lever works through one mechanism, that mechanism decides: chunked-prefill ->
   `prefill-stall` (or `small-chunks`, where the lever widens a budget that was too tight);
   disaggregation -> `phase-interference`; admission-control ->
   `unbounded-queue`; batching (a higher cap on sequences in flight) -> `running-cap`;
   prefix-caching -> `recomputed-prefix` (more GPUs, quantization and KV quantization act on
   whatever the tail is made of, so rule 2 decides for them);
2. otherwise the quantity behind the tail's verdict decides: queueing -> `near-capacity` (or
   `bursty-arrivals` where bursts queue requests below 80% of capacity); prefill-compute ->
   `prefill-flops`; prefill-interference -> `prompts-ahead` for a TTFT tail, `prefill-stall` for a
   TPOT tail; preemption -> `kv-exhausted`; kv-transfer -> `slow-link`; decode-compute,
   decode-kv, decode-weights -> `at-ridge`, `kv-read`, `weight-read`.

A reason "holds" (so it is never offered as a distractor) when its quantity is true of the run,
whether or not it decides: utilisation at least 80% (near-capacity) or above 100% (unbounded
queue); bursty arrivals; a part at least a quarter of a tail (prompts ahead, a stall, a
transfer, prefill compute); at least one preemption per hundred requests; a cap on sequences in
flight below what memory allows that the run fills; a shared prefix left uncached.
"""
from __future__ import annotations

from engine.ids import Lever, Objective, Verdict

from puzzles import fmt
from puzzles.reasons import REASONS, Reason
from puzzles.reasons import candidate_reasons as steady

SHARE = 0.25        # a part of a tail this large is a true fact about it
NEAR = 0.80         # utilisation from which arrivals are close to capacity

_BY_LEVER = {Lever.CHUNKED_PREFILL: Reason.PREFILL_STALL, Lever.DISAGGREGATION: Reason.PHASE_INTERFERENCE,
             Lever.ADMISSION_CONTROL: Reason.UNBOUNDED_QUEUE,
             Lever.BATCHING: Reason.RUNNING_CAP, Lever.PREFIX_CACHING: Reason.RECOMPUTED_PREFIX}
_DECODE = {Verdict.DECODE_COMPUTE: Reason.AT_RIDGE, Verdict.DECODE_KV: Reason.KV_READ,
           Verdict.DECODE_WEIGHTS: Reason.WEIGHT_READ}



def _tail_metric(view) -> str:
    """Which tail the verdict was read from: "ttft" or "tpot"."""
    from engine.load.verdicts import binding_metric

    objective = view.load.objective
    if objective == Objective.P99_TTFT:
        return "ttft"
    if objective == Objective.P99_TPOT:
        return "tpot"
    return binding_metric(view.run, objective)


def _shares(view, metric: str) -> dict:
    from engine.load.verdicts import tpot_shares, ttft_shares

    return ttft_shares(view.run) if metric == "ttft" else tpot_shares(view.run)


def mechanism_reason(view) -> str | None:
    if view.best_lever == Lever.CHUNKED_PREFILL and view.spec.chunk_tokens is not None:
        return Reason.SMALL_CHUNKS if view.spec.lever_chunk_tokens > view.spec.chunk_tokens else Reason.PREFILL_STALL
    return _BY_LEVER.get(view.best_lever)


def verdict_reason(view, verdict: str | None = None) -> str:
    verdict = verdict or view.load.verdict
    if verdict == Verdict.QUEUEING:
        bursty = view.spec.arrival == "bursty" and view.utilisation < NEAR
        return Reason.BURSTY_ARRIVALS if bursty else Reason.NEAR_CAPACITY
    if verdict == Verdict.PREFILL_COMPUTE:
        return Reason.PREFILL_FLOPS
    if verdict == Verdict.PREFILL_INTERFERENCE:
        return Reason.PROMPTS_AHEAD if _tail_metric(view) == "ttft" else Reason.PREFILL_STALL
    if verdict == Verdict.PREEMPTION:
        return Reason.KV_EXHAUSTED
    if verdict == Verdict.KV_TRANSFER:
        return Reason.SLOW_LINK
    return _DECODE.get(verdict, Reason.WEIGHT_READ)


def key_reason(view) -> str:
    return str(mechanism_reason(view) or verdict_reason(view))


def accepted_reasons(view, verdict: str | None = None) -> frozenset[str]:
    """The key's reason, the verdict's own quantity and the best lever's mechanism."""
    found = {key_reason(view), verdict_reason(view, verdict), mechanism_reason(view)}
    return frozenset(str(x) for x in found if x)


def _decode_term(view) -> str:
    from engine.load.verdicts import _decode_term as decode_term

    return decode_term(view.report.deployment, view.run)


def reason_holds(reason: str, view) -> bool:
    """Whether `reason`'s quantity is true of this load run (not whether it decides)."""
    f = view.run.figures
    spec = view.spec
    dep = view.report.deployment
    if reason == Reason.NEAR_CAPACITY:
        return view.utilisation >= NEAR
    if reason == Reason.UNBOUNDED_QUEUE:
        return view.utilisation > 1.0
    if reason == Reason.BURSTY_ARRIVALS:
        return spec.arrival == "bursty"
    if reason == Reason.PROMPTS_AHEAD:
        return _shares(view, "ttft").get(Verdict.PREFILL_INTERFERENCE, 0.0) >= SHARE
    if reason == Reason.PREFILL_STALL:
        return _shares(view, "tpot").get(Verdict.PREFILL_INTERFERENCE, 0.0) >= SHARE
    if reason == Reason.PREFILL_FLOPS:
        return _shares(view, "ttft").get(Verdict.PREFILL_COMPUTE, 0.0) >= SHARE
    if reason == Reason.SLOW_LINK:
        return spec.disaggregate is not None and _shares(view, "ttft").get(Verdict.KV_TRANSFER, 0.0) >= SHARE
    if reason == Reason.KV_EXHAUSTED:
        return f["preemptions"] >= 0.01 * f["requests"]
    if reason == Reason.RUNNING_CAP:
        report = view.report
        return (spec.max_running < 256 and report.fits and report.max_concurrency > spec.max_running
                and f["mean_batch"] >= 0.8 * spec.max_running)
    if reason == Reason.PHASE_INTERFERENCE:
        if spec.disaggregate is not None:
            return False
        return (_shares(view, "ttft").get(Verdict.PREFILL_INTERFERENCE, 0.0) >= SHARE
                or _shares(view, "tpot").get(Verdict.PREFILL_INTERFERENCE, 0.0) >= SHARE)
    if reason == Reason.RECOMPUTED_PREFIX:
        return bool(dep.shared_prefix) and not dep.prefix_caching
    if reason == Reason.SMALL_CHUNKS:
        return spec.chunk_tokens is not None and spec.chunk_tokens * 4 <= dep.prompt
    if reason in (Reason.AT_RIDGE, Reason.KV_READ, Reason.WEIGHT_READ):
        return _DECODE.get(_decode_term(view)) == reason and _shares(view, "tpot").get("decode", 0.0) >= SHARE
    return False


def _share_text(view, metric: str, part: str) -> str:
    return fmt.pct(_shares(view, metric).get(part, 0.0))


def reason_fact(reason: str, view) -> str:
    """What the quantity behind `reason` is in this run, in numbers."""
    f = view.run.figures
    spec = view.spec
    dep = view.report.deployment
    if reason in (Reason.NEAR_CAPACITY, Reason.UNBOUNDED_QUEUE):
        return (f"requests arrive at {view.utilisation * f['saturation_qps']:.3g}/s against a steady-state capacity "
                f"of {f['saturation_qps']:.3g}/s ({fmt.pct(view.utilisation)} utilisation)")
    if reason == Reason.BURSTY_ARRIVALS:
        kind = "in bursts (gaps twice as spread as Poisson's)" if spec.arrival == "bursty" else f"as a {spec.arrival} stream"
        return f"requests arrive {kind}"
    if reason == Reason.PROMPTS_AHEAD:
        share = _share_text(view, 'ttft', Verdict.PREFILL_INTERFERENCE)
        return (f"in the slowest 2% of first tokens, {share} of the time "
                f"goes to steps that carry other requests' prompts")
    if reason == Reason.PREFILL_STALL:
        share = _share_text(view, 'tpot', Verdict.PREFILL_INTERFERENCE)
        return (f"in the slowest 2% of streams, {share} of each token's "
                f"time goes to other requests' prompts holding or sharing the steps")
    if reason == Reason.PREFILL_FLOPS:
        return (f"in the slowest 2% of first tokens, {_share_text(view, 'ttft', Verdict.PREFILL_COMPUTE)} of the time is the "
                f"request's own {fmt.num(dep.prompt)}-token prefill ({fmt.secs(f['lone_ttft_seconds'])} alone)")
    if reason == Reason.SLOW_LINK:
        if spec.disaggregate is None:
            return "prefill and decode run on the same GPUs, so no KV cache crosses a link"
        return (f"each {fmt.num(dep.prompt)}-token prompt's KV cache takes {fmt.secs(f['kv_transfer_seconds'])} to "
                f"cross the link, {_share_text(view, 'ttft', Verdict.KV_TRANSFER)} of the slowest first tokens")
    if reason == Reason.KV_EXHAUSTED:
        return f"{f['preemptions']:,} preemptions in {f['requests']:,} requests"
    if reason == Reason.RUNNING_CAP:
        report = view.report
        return (f"at most {spec.max_running} sequences run at once (on average {f['mean_batch']:.3g}) while the "
                f"cache holds {fmt.num(report.max_concurrency)}")
    if reason == Reason.PHASE_INTERFERENCE:
        if spec.disaggregate is not None:
            return "prefill and decode already run in separate pools"
        ttft = _share_text(view, 'ttft', Verdict.PREFILL_INTERFERENCE)
        tpot = _share_text(view, 'tpot', Verdict.PREFILL_INTERFERENCE)
        return (f"prompts take {ttft} of the slowest first tokens and "
                f"{tpot} of the slowest streams' token time")
    if reason == Reason.SMALL_CHUNKS:
        if spec.chunk_tokens is None:
            return "prompts are prefilled whole, not in chunks"
        steps = -(-dep.prompt // spec.chunk_tokens)
        return (f"a {fmt.num(dep.prompt)}-token prompt takes at least {steps} steps of {spec.chunk_tokens} tokens, and "
                f"each of them also carries every running decode")
    if reason == Reason.RECOMPUTED_PREFIX:
        if dep.shared_prefix and not dep.prefix_caching:
            return f"{fmt.num(dep.shared_prefix)} of every {fmt.num(dep.prompt)}-token prompt are the same and prefilled each time"
        return "no shared prefix is recomputed"
    if reason in (Reason.AT_RIDGE, Reason.KV_READ, Reason.WEIGHT_READ):
        term = _decode_term(view)
        return (f"the decode steps' own time is {_share_text(view, 'tpot', 'decode')} of the slowest streams' token "
                f"time, and at the run's mean batch of {f['mean_batch']:.3g} a step is {_verdict_words(term)}")
    return REASONS.get(reason, reason)


def _verdict_words(verdict: str) -> str:
    return {Verdict.DECODE_COMPUTE: "bound by its arithmetic", Verdict.DECODE_KV: "bound by reading the KV cache",
            Verdict.DECODE_WEIGHTS: "bound by reading the weights"}.get(verdict, verdict)


def deciding_text(reason: str, view) -> str:
    return f"{REASONS[reason]}: {reason_fact(reason, view)}"


def candidate_reasons(reason: str, view, count: int = 3, pick=None, also=()) -> tuple[str, ...]:

    return steady(reason, view, count, pick, also)


# --- verdicts and levers, in words -----------------------------------------------------------------

_PART_WORDS = {
    Verdict.QUEUEING: "waiting for a first step (or, split, for a decode slot)",
    Verdict.PREFILL_COMPUTE: "the request's own prompt computed alone",
    Verdict.PREFILL_INTERFERENCE: "other requests' prompts in the same steps",
    Verdict.KV_TRANSFER: "the KV cache crossing the link",
    "decode": "the decode steps' own time",
    Verdict.PREEMPTION: "time evicted and recomputed",
}


def verdict_fact(verdict: str, view) -> str:
    """The share of the objective's tail behind one verdict, in this run."""
    metric = _tail_metric(view)
    shares = _shares(view, metric)
    label = "first tokens" if metric == "ttft" else "streams' time per token"
    part = "decode" if verdict in _DECODE else str(verdict)
    if part not in shares:
        return f"no part of the slowest {label} is {verdict}"
    text = f"{fmt.pct(shares[part])} of the slowest 2% of {label} is {_PART_WORDS.get(part, part)}"
    if part == "decode":
        text += f", a step {_verdict_words(_decode_term(view))}"
    return text


def why_not_verdict(guess: str, key, truth: str | None = None) -> str:
    view = key.solution
    truth = truth or key.bottleneck
    if guess == truth:
        return f"{guess}: right: {verdict_fact(guess, view)}"
    if guess in _DECODE and truth in _DECODE:
        return f"{guess}: no: the decode step is {_verdict_words(truth)} at the run's mean batch"
    return f"{guess}: a smaller part: {verdict_fact(guess, view)}; the largest is {truth}: {verdict_fact(truth, view)}"


def value_text(objective: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if objective == Objective.GOODPUT:
        return f"{value:.3g} requests/s per GPU"
    if objective == Objective.GPUS_FOR_SLO:
        return f"{value:.0f} GPUs"
    return fmt.secs(value)


def fidelity_rows(key) -> list[tuple[str, ...]]:
    """(label, floor, realistic) rows of a load puzzle's runs at each fidelity its key judges,
    laid out as `engine.compare.fidelity_rows` lays out a steady-state solution: the objective
    under this traffic, what its tail is made of, the best lever, and each offered lever's gain."""
    from engine.compare import OBJECTIVE_LABELS, gain_text

    views = [view for _, view in key.judged()]
    objective = views[0].load.objective
    rows = [(OBJECTIVE_LABELS[objective], *(value_text(objective, v.load.value) for v in views)),
            ("what bounds it", *(v.load.verdict for v in views)),
            ("best lever", *(v.best_lever for v in views))]
    for lever in views[0].levers:
        rows.append((lever.name, *(gain_text(next((lv.gain for lv in v.levers if lv.name == lever.name), None))
                                   for v in views)))
    return rows


def lever_story(name: str, key) -> str:
    view = key.solution
    lv = next((x for x in view.levers if x.name == name), None)
    if lv is None:
        return f"{name}: not offered in this puzzle"
    if lv.value is None:
        return f"{name}: does not apply here ({lv.note})"
    objective = view.load.objective
    return (f"{name}: {lv.note}; {objective} {value_text(objective, view.load.value)} -> "
            f"{value_text(objective, lv.value)} ({fmt.gain(lv.gain)})")


def reveal_lines(puzzle, key) -> list[str]:
    from puzzles.puzzle import OBJECTIVE_TEXT

    view = key.solution
    real = key.realistic_gain
    gains = f"{fmt.gain(real)} realistic, {fmt.gain(view.best.gain)} at the floor" if real is not None else fmt.gain(view.best.gain)
    lines = [f"Bottleneck   {key.bottleneck}: {verdict_fact(key.bottleneck, view)}",
             f"Best lever   {key.best_lever} ({gains}; accepted: {' or '.join(key.bands)})",
             f"Reason       {key.deciding}", "", "Why not the other verdicts:"]
    lines += [f"  {why_not_verdict(v, key)}" for v in puzzle.verdicts if v != key.bottleneck and v != Verdict.DOES_NOT_FIT]
    lines.append(f"Levers, on the {OBJECTIVE_TEXT[puzzle.objective]}, best first:")
    lines += [f"  {lever_story(lv.name, key)}" for lv in view.levers]
    others = [x for x in puzzle.reasons if x != key.reason]
    if others:
        lines.append("The other reasons on offer:")
        lines += [f"  '{REASONS[x]}': {reason_fact(x, view)}" for x in others]
    return lines


def derivation_lines(view, realistic=None) -> list[str]:
    """The run worked through: traffic against capacity, the tail and its parts, each lever."""
    from engine.load.report import fleet_line

    f = view.run.figures
    dep = view.report.deployment
    metric = _tail_metric(view)
    shares = _shares(view, metric)
    lines = [fleet_line(dep, view.spec),
             f"steady-state capacity {f['saturation_qps']:.3g} requests/s; arrivals "
             f"{view.utilisation * f['saturation_qps']:.3g}/s ({fmt.pct(view.utilisation)}); "
             f"{f['mean_in_system']:.3g} requests in the system on average "
             f"(Little's law)",
             f"TTFT P50 {fmt.secs(f['ttft_p50_seconds'])}, P99 {fmt.secs(f['ttft_p99_seconds'])} (alone "
             f"{fmt.secs(f['lone_ttft_seconds'])}); TPOT P50 {fmt.secs(f['tpot_p50_seconds'])}, P99 "
             f"{fmt.secs(f['tpot_p99_seconds'])}; goodput {f['goodput_requests_per_s']:.3g}/s "
             f"({fmt.pct(f['slo_attainment'])} within TTFT {f['slo_ttft_seconds']:g} s and TPOT {f['slo_tpot_seconds']:g} s)",
             f"the slowest 2% of {'first tokens' if metric == 'ttft' else 'streams'}: "
             + ", ".join(f"{_PART_WORDS.get(k, k)} {fmt.pct(v)}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1])),
             f"verdict {view.load.verdict}; levers on {view.load.objective}:"]
    lines += [f"  {lv.name}: {fmt.gain(lv.gain)} ({lv.note})" for lv in view.levers]
    if realistic is not None:
        lines.append(f"realistic step times: verdict {realistic.load.verdict}, best {realistic.best_lever} "
                     f"{fmt.gain(realistic.best.gain)}")
    return lines
