"""The vocabulary of reasons: the deciding quantities a player can name, and how a key picks one.

A reason is the quantity that decides a puzzle, said in a few plain words. Puzzles offer three to
five of them as candidates; the key's reason is never typed by an author. `key_reason` computes
it from the engine's solution alone, by this rule:

1. The deployment does not fit: `weights-overflow` when weights plus reserve exceed memory,
   otherwise `kv-overflow` (not even one sequence's cache fits beside them).
2. Otherwise, when the best lever works through one specific mechanism, that mechanism decides:
   routing -> `easy-traffic`; prefix caching -> `recomputed-prefix`; paged KV -> `reserved-slots`;
   batching -> `straggler-slots` (a static batch) or `serial-requests` (no batching);
   speculative decoding -> `idle-flops`; chunked prefill -> `prefill-stall`.
3. Otherwise the quantity behind what bounds the objective decides (`Report.objective_bottleneck`):
   kv-capacity -> `kv-cap`; prefill-compute -> `prefill-flops`; prefill-weights ->
   `prefill-weight-read`; decode-compute -> `at-ridge`; decode-kv -> `kv-read`; decode-weights ->
   `weight-read`. (Quantization, KV quantization and more GPUs act on whatever the verdict names:
   they shrink or spread the bytes or the FLOPs that bind.)

`reason_holds` says whether a candidate's quantity is true of a deployment at all: a puzzle offers
the key's reason and distractors that are false for it, so a true reason is never graded wrong.

`deciding_text` states the key's quantity with this deployment's numbers; `reason_fact` states
any candidate's quantity for this deployment, so feedback can show why a wrong pick misleads.

More than one reason can hold and decide: the verdict's own quantity (rule 3) decides the
bottleneck even where the best lever's mechanism (rule 2) is the key's reason. `accepted_reasons`
is that set, and the grader takes any of them as right: a true, deciding reason is never wrong.
`MEASURES` says which numeric estimates quantify each reason: such an estimate is part of the
reason when it quantifies one the grader accepts (see `puzzles.grading`).
"""
from __future__ import annotations

from enum import StrEnum

from engine import physics
from engine.analysis import harmonic
from engine.ids import Allocator, Lever, Objective, Scheduler, Verdict
from engine.levers import Solution

from puzzles import fmt


class Reason(StrEnum):
    """The deciding quantities a player can name, in the one fixed order options are listed."""

    WEIGHTS_OVERFLOW = "weights-overflow"
    KV_OVERFLOW = "kv-overflow"
    KV_CAP = "kv-cap"
    PREFILL_FLOPS = "prefill-flops"
    PREFILL_WEIGHT_READ = "prefill-weight-read"
    AT_RIDGE = "at-ridge"
    KV_READ = "kv-read"
    WEIGHT_READ = "weight-read"
    IDLE_FLOPS = "idle-flops"
    SERIAL_REQUESTS = "serial-requests"
    STRAGGLER_SLOTS = "straggler-slots"
    RESERVED_SLOTS = "reserved-slots"
    RECOMPUTED_PREFIX = "recomputed-prefix"
    EASY_TRAFFIC = "easy-traffic"
    PREFILL_STALL = "prefill-stall"
    # the quantities that decide a load run's tail (puzzles.load_reasons)
    NEAR_CAPACITY = "near-capacity"
    BURSTY_ARRIVALS = "bursty-arrivals"
    UNBOUNDED_QUEUE = "unbounded-queue"
    PROMPTS_AHEAD = "prompts-ahead"
    KV_EXHAUSTED = "kv-exhausted"
    RUNNING_CAP = "running-cap"
    PHASE_INTERFERENCE = "phase-interference"
    SLOW_LINK = "slow-link"
    SMALL_CHUNKS = "small-chunks"


REASONS: dict[str, str] = {
    "weights-overflow": "the weights and the reserve alone overflow the GPUs' memory",
    "kv-overflow": "not even one sequence's KV cache fits beside the weights",
    "kv-cap": "the KV cache caps the batch below the demand",
    "prefill-flops": "prefill FLOPs dominate the request",
    "prefill-weight-read": "the prompt is too short to keep the arithmetic busy, so reading the weights sets the prefill",
    "at-ridge": "the batch already sits at the ridge, so the FLOPs have no slack",
    "kv-read": "the KV cache read per step dominates",
    "weight-read": "the weight read per step dominates",
    "idle-flops": "the batch is far below the ridge, so FLOPs sit idle",
    "serial-requests": "requests run one at a time, so each weight read yields one token",
    "straggler-slots": "slots idle while a static batch waits for its longest member",
    "reserved-slots": "reserved-but-unused KV slots",
    "recomputed-prefix": "the shared prefix is recomputed for every request",
    "easy-traffic": "an easy share of traffic could run on a far cheaper model",
    "prefill-stall": "one long prefill holds the GPU, freezing every stream in the batch",
    "near-capacity": "arrivals come close to what the servers can finish, so requests wait for room",
    "bursty-arrivals": "arrivals come in bursts, so queues form even below capacity",
    "unbounded-queue": "more arrives than the servers can finish, so the queue grows without end",
    "prompts-ahead": "other requests' prompts fill the steps ahead of each new one",
    "kv-exhausted": "the KV cache runs out mid-answer, so sequences are evicted and recomputed",
    "running-cap": "the cap on sequences in flight holds the batch below what memory allows",
    "phase-interference": "prefill and decode share the same GPUs, so each holds up the other",
    "slow-link": "each prompt's KV cache crosses a slow link before decoding starts",
    "small-chunks": "a small token budget spreads each prompt over many steps, each paying for a decode step",
}

_BY_LEVER = {Lever.ROUTING: Reason.EASY_TRAFFIC, Lever.PREFIX_CACHING: Reason.RECOMPUTED_PREFIX,
             Lever.CHUNKED_PREFILL: Reason.PREFILL_STALL, Lever.PAGED_KV: Reason.RESERVED_SLOTS,
             Lever.SPECULATIVE_DECODING: Reason.IDLE_FLOPS}
_BY_VERDICT = {Verdict.KV_CAPACITY: Reason.KV_CAP, Verdict.PREFILL_COMPUTE: Reason.PREFILL_FLOPS,
               Verdict.PREFILL_WEIGHTS: Reason.PREFILL_WEIGHT_READ,
               Verdict.DECODE_COMPUTE: Reason.AT_RIDGE, Verdict.DECODE_KV: Reason.KV_READ,
               Verdict.DECODE_WEIGHTS: Reason.WEIGHT_READ}

# The numeric estimates that quantify each reason (an estimate of one of these IS that reason, in numbers).
MEASURES: dict[str, tuple[str, ...]] = {
    Reason.WEIGHTS_OVERFLOW: ("weight_bytes",),
    Reason.KV_OVERFLOW: ("kv_bytes_per_token", "max_concurrency"),
    Reason.KV_CAP: ("max_concurrency", "kv_bytes_per_token"),
    Reason.PREFILL_FLOPS: ("ttft_seconds",),
    Reason.PREFILL_WEIGHT_READ: ("ttft_seconds", "weight_bytes"),
    Reason.AT_RIDGE: ("intensity", "ridge"),
    Reason.KV_READ: ("kv_bytes_per_token",),
    Reason.WEIGHT_READ: ("weight_bytes",),
    Reason.IDLE_FLOPS: ("intensity", "ridge", "spec_expected_tokens"),
    Reason.SERIAL_REQUESTS: (),
    Reason.STRAGGLER_SLOTS: (),
    Reason.RESERVED_SLOTS: ("max_concurrency",),
    Reason.RECOMPUTED_PREFIX: ("ttft_seconds",),
    Reason.EASY_TRAFFIC: ("cost_per_million_output_tokens",),
    Reason.PREFILL_STALL: ("ttft_seconds",),
    Reason.NEAR_CAPACITY: ("utilisation", "saturation_qps", "mean_in_system"),
    Reason.BURSTY_ARRIVALS: (),
    Reason.UNBOUNDED_QUEUE: ("utilisation", "saturation_qps"),
    Reason.PROMPTS_AHEAD: (),
    Reason.KV_EXHAUSTED: ("max_concurrency",),
    Reason.RUNNING_CAP: ("max_concurrency",),
    Reason.PHASE_INTERFERENCE: (),
    Reason.SLOW_LINK: (),
    Reason.SMALL_CHUNKS: (),
}

# Plausible wrong picks for each key reason: what a half-right diagnosis would reach for.
CONFUSABLE: dict[str, tuple[str, ...]] = {
    "weights-overflow": ("kv-overflow", "kv-cap", "weight-read", "reserved-slots"),
    "kv-overflow": ("weights-overflow", "reserved-slots", "kv-cap", "kv-read"),
    "kv-cap": ("kv-read", "reserved-slots", "weight-read", "idle-flops"),
    "prefill-flops": ("recomputed-prefix", "at-ridge", "weight-read", "kv-read"),
    "prefill-weight-read": ("prefill-flops", "kv-read", "at-ridge", "recomputed-prefix"),
    "at-ridge": ("idle-flops", "weight-read", "prefill-flops", "kv-read"),
    "kv-read": ("weight-read", "kv-cap", "idle-flops", "at-ridge"),
    "weight-read": ("kv-read", "idle-flops", "at-ridge", "kv-cap"),
    "idle-flops": ("weight-read", "at-ridge", "kv-read", "serial-requests"),
    "serial-requests": ("idle-flops", "weight-read", "straggler-slots", "kv-cap"),
    "straggler-slots": ("serial-requests", "reserved-slots", "kv-cap", "weight-read"),
    "reserved-slots": ("kv-cap", "straggler-slots", "kv-read", "weights-overflow"),
    "recomputed-prefix": ("prefill-flops", "kv-cap", "weight-read", "reserved-slots"),
    "easy-traffic": ("weight-read", "at-ridge", "prefill-flops", "kv-read"),
    "prefill-stall": ("prefill-flops", "recomputed-prefix", "weight-read", "kv-read"),
    "near-capacity": ("bursty-arrivals", "prompts-ahead", "kv-exhausted", "weight-read"),
    "bursty-arrivals": ("near-capacity", "unbounded-queue", "prompts-ahead", "weight-read"),
    "unbounded-queue": ("near-capacity", "bursty-arrivals", "kv-exhausted", "prompts-ahead"),
    "prompts-ahead": ("near-capacity", "prefill-flops", "bursty-arrivals", "slow-link"),
    "kv-exhausted": ("near-capacity", "running-cap", "kv-read", "prompts-ahead"),
    "running-cap": ("kv-exhausted", "near-capacity", "weight-read", "kv-read"),
    "phase-interference": ("slow-link", "near-capacity", "prefill-flops", "weight-read"),
    "slow-link": ("phase-interference", "prefill-flops", "near-capacity", "prompts-ahead"),
    "small-chunks": ("prefill-stall", "near-capacity", "prompts-ahead", "prefill-flops"),
}


def is_load(solution) -> bool:
    """A load puzzle's solution (`puzzles.load_keys.LoadView`: a request-level run under traffic),
    not a steady-state Solution. It judges its own reasons (`puzzles.load_reasons`), so this
    module imports none of that; the one test every module asks."""
    return hasattr(solution, "load") and hasattr(solution, "spec")


def key_reason(solution: Solution) -> str:
    """The deciding quantity's id for a solved deployment (rule in the module docstring)."""
    if is_load(solution):
        return solution.key_reason()
    r = solution.report
    if not r.fits:
        return "weights-overflow" if r.weight_bytes + r.reserve_bytes > r.memory_bytes else "kv-overflow"
    return str(mechanism_reason(solution) or _BY_VERDICT[r.objective_bottleneck])


def mechanism_reason(solution: Solution) -> str | None:
    """The best lever's own mechanism (rule 2), when it has one."""
    if is_load(solution):
        return solution.mechanism_reason()
    best = solution.best_lever
    if best == Lever.BATCHING:
        return Reason.STRAGGLER_SLOTS if solution.report.deployment.scheduler == Scheduler.STATIC else Reason.SERIAL_REQUESTS
    return _BY_LEVER.get(best)


def accepted_reasons(solution: Solution, verdict: str | None = None) -> frozenset[str]:
    """Every reason that holds and decides here: the key's, the quantity of `verdict` (the
    bottleneck the puzzle's objective is judged on; the six-rule verdict when None), and the
    best lever's mechanism. A deployment that does not fit has only its key reason."""
    if is_load(solution):
        return solution.accepted_reasons(verdict)
    key = key_reason(solution)
    r = solution.report
    if not r.fits:
        return frozenset({key})
    found = {key, _BY_VERDICT.get(verdict or r.objective_bottleneck), mechanism_reason(solution)}
    return frozenset(str(x) for x in found if x)


def reason_holds(reason: str, solution: Solution) -> bool:
    """Whether `reason`'s quantity is true of this deployment (not whether it decides): the test
    a distractor must fail, so that no candidate a player can defend is graded wrong."""
    if is_load(solution):
        return solution.reason_holds(reason)
    r = solution.report
    dep = r.deployment
    if reason == Reason.WEIGHTS_OVERFLOW:
        return not r.fits and r.weight_bytes + r.reserve_bytes > r.memory_bytes
    if reason == Reason.KV_OVERFLOW:
        return not r.fits and r.weight_bytes + r.reserve_bytes <= r.memory_bytes
    if not r.fits:
        return False
    # The decode rules of the engine's one table: for a static batch they read the share of its
    # draining decode time, so a first step past the ridge does not make the batch compute-bound.
    memory_bound = not physics.decode_compute_ratio(r.__dict__) > 1
    kv_over_weights = physics.decode_kv_ratio(r.__dict__) > 1
    verdict = r.objective_bottleneck
    if reason == Reason.KV_CAP:
        return dep.scheduler != Scheduler.NONE and dep.concurrency > r.max_concurrency
    if reason == Reason.PREFILL_FLOPS:
        return verdict == Verdict.PREFILL_COMPUTE or (dep.objective == Objective.COST and r.prefill_share > 0.5)
    if reason == Reason.PREFILL_WEIGHT_READ:
        return verdict == Verdict.PREFILL_WEIGHTS
    if reason == Reason.AT_RIDGE:
        return not memory_bound
    if reason == Reason.IDLE_FLOPS:
        return r.decode_compute_seconds < 0.5 * r.decode_memory_seconds
    if reason == Reason.KV_READ:
        return memory_bound and kv_over_weights
    if reason == Reason.WEIGHT_READ:
        return memory_bound and not kv_over_weights
    if reason == Reason.SERIAL_REQUESTS:
        return dep.scheduler == Scheduler.NONE and dep.concurrency > 1
    if reason == Reason.STRAGGLER_SLOTS:
        return dep.scheduler == Scheduler.STATIC and r.batch > 1
    if reason == Reason.RESERVED_SLOTS:
        return dep.allocator == Allocator.CONTIGUOUS and dep.reserve_length > 1.25 * r.seq_len_avg
    if reason == Reason.RECOMPUTED_PREFIX:
        return bool(dep.shared_prefix) and not dep.prefix_caching
    if reason == Reason.EASY_TRAFFIC:
        return dep.route_model is not None and dep.route_fraction > 0
    if reason == Reason.PREFILL_STALL:
        return r.batch > 1 and not dep.chunked_prefill and r.worst_stall_seconds > 2 * r.step_seconds
    return False


_DISTRACTOR_ORDER = ("at-ridge", "kv-read", "weight-read", "prefill-flops", "kv-cap", "reserved-slots",
                     "straggler-slots", "serial-requests", "idle-flops", "recomputed-prefix", "easy-traffic",
                     "prefill-stall", "prefill-weight-read", "kv-overflow", "weights-overflow")


def candidate_reasons(reason: str, solution: Solution, count: int = 3, pick=None, also=()) -> tuple[str, ...]:
    """The key's `reason` and up to `count` distractors that are false for this deployment (so a
    true reason is never graded wrong), at the floor and in every solution of `also` (the
    realistic one): plausible ones first (CONFUSABLE), then any false one, in the one fixed order.
    `pick(pool)` chooses one from a list (a seeded rng's choice, say); without it the first is
    taken."""
    choose = pick or (lambda pool: pool[0])
    solutions = (solution, *also)

    def false(r: str) -> bool:
        return r != reason and not any(reason_holds(r, s) for s in solutions)

    order = _DISTRACTOR_ORDER
    if is_load(solution):   # a load puzzle offers only reasons about its run
        order = solution.distractor_order
    plausible = [r for r in CONFUSABLE[reason] if r in order and false(r)]
    spare = [r for r in order if r not in plausible and false(r)]
    picked = [reason]
    for pool in (plausible, spare):
        while pool and len(picked) < count + 1:
            name = choose(pool)
            pool.remove(name)
            picked.append(name)
    wanted = set(picked)
    return tuple(r for r in REASONS if r in wanted)


def reason_fact(reason: str, solution: Solution) -> str:
    """What the quantity behind `reason` is for this deployment, in numbers."""
    if is_load(solution):
        return solution.reason_fact(reason)
    r = solution.report
    dep = r.deployment
    if reason == Reason.WEIGHTS_OVERFLOW:
        return (f"weights {fmt.gib(r.weight_bytes)} + reserve {fmt.gib(r.reserve_bytes)} = "
                f"{fmt.gib(r.weight_bytes + r.reserve_bytes)} against {fmt.gib(r.memory_bytes)} of memory")
    if reason == Reason.KV_OVERFLOW:
        per_seq = _per_sequence_bytes(r)
        left = max(0.0, r.usable_kv_bytes)
        return f"one sequence needs {fmt.gib(per_seq)} of KV cache and {fmt.gib(left)} is left for it"
    if not r.fits:
        return "the deployment does not fit, so there is no step to measure"
    if reason == Reason.KV_CAP:
        return (f"the cache holds {fmt.num(r.max_concurrency)} sequences of {fmt.num(r.seq_len_avg)} tokens "
                f"and the traffic wants {fmt.num(dep.concurrency)}")
    if reason == Reason.PREFILL_FLOPS and dep.objective in (Objective.TTFT, Objective.STALL):
        return (f"one {fmt.num(dep.prompt)}-token prompt computes for {fmt.secs(r.prefill_compute_seconds)} against "
                f"{fmt.secs(r.prefill_weight_seconds)} to read the weights it uses")
    if reason == Reason.PREFILL_FLOPS:
        return (f"prefill takes {fmt.pct(r.prefill_share)} of the GPU time "
                f"({fmt.secs(r.prefill_seconds)} per request against {fmt.num(dep.output)} steps of {fmt.secs(r.tpot_seconds)})")
    if r.decode_time_shares is not None and reason in (Reason.AT_RIDGE, Reason.KV_READ, Reason.WEIGHT_READ):
        return static_shares_text(r)
    if reason in (Reason.AT_RIDGE, Reason.IDLE_FLOPS):
        return (f"intensity {fmt.num(r.intensity)} FLOP/B against a ridge of {fmt.num(r.ridge)}: "
                f"the step's arithmetic takes {fmt.secs(r.decode_compute_seconds)} against "
                f"{fmt.secs(r.decode_memory_seconds)} of memory traffic")
    if reason in (Reason.KV_READ, Reason.WEIGHT_READ):
        return (f"each step reads {fmt.gb(r.decode_kv_bytes_per_step)} of KV cache and "
                f"{fmt.gb(r.decode_weight_bytes_per_step)} of weights")
    if reason == Reason.SERIAL_REQUESTS:
        if dep.scheduler == Scheduler.NONE:
            return f"batch 1 while the traffic has {fmt.num(dep.concurrency)} sequences waiting"
        return f"requests are already batched ({dep.scheduler}, batch {fmt.num(r.batch)})"
    if reason == Reason.STRAGGLER_SLOTS:
        if dep.scheduler == Scheduler.STATIC:
            return (f"a static batch of {fmt.num(r.batch)} runs for about {harmonic(r.batch):.1f}x the average "
                    f"output while finished slots sit empty")
        return f"the scheduler is {dep.scheduler}, so no slot waits on a straggler"
    if reason == Reason.RESERVED_SLOTS:
        if dep.allocator == Allocator.CONTIGUOUS:
            used = r.seq_len_avg / dep.reserve_length
            return (f"each request reserves {fmt.num(dep.reserve_length)} tokens of cache but holds "
                    f"{fmt.num(r.seq_len_avg)} on average ({fmt.pct(used)} used)")
        return "the cache is already paged, so nothing is reserved ahead of use"
    if reason == Reason.RECOMPUTED_PREFIX:
        if dep.shared_prefix and not dep.prefix_caching:
            return (f"{fmt.num(dep.shared_prefix)} of the {fmt.num(dep.prompt)} prompt tokens are the same on "
                    f"every request and are prefilled every time")
        if dep.prefix_caching:
            return "the shared prefix is already cached"
        return "the prompts share no prefix"
    if reason == Reason.PREFILL_WEIGHT_READ:
        return (f"one {fmt.num(dep.prompt)}-token prompt computes for {fmt.secs(r.prefill_compute_seconds)} but "
                f"needs {fmt.secs(r.prefill_weight_seconds)} to read the weights it uses")
    if reason == Reason.PREFILL_STALL:
        return (f"each {fmt.num(r.deployment.prompt)}-token prefill holds the GPU for {fmt.secs(r.prefill_seconds)}, "
                f"and every running stream waits that long for its next token")
    if reason == Reason.EASY_TRAFFIC:
        if dep.route_model is not None and dep.route_fraction > 0:
            return f"{fmt.pct(dep.route_fraction)} of requests could be answered by {dep.route_model.id}"
        return "no cheaper model is on the table for this traffic"
    return REASONS.get(reason, reason)


def static_shares_text(r) -> str:
    """How a draining static batch splits its decode time between the three decode verdicts."""
    compute, kv, weights = r.decode_time_shares
    return (f"as the static batch drains, its steps are compute-bound for {fmt.pct(compute)} of the decode time, "
            f"wait on the KV read for {fmt.pct(kv)} and on the weight read for {fmt.pct(weights)} (its first step, "
            f"all {fmt.num(r.batch)} sequences: {fmt.secs(r.decode_compute_seconds)} of arithmetic against "
            f"{fmt.secs(r.decode_memory_seconds)} of memory traffic)")


def deciding_text(reason: str, solution: Solution) -> str:
    """The key's deciding quantity, in words and this deployment's numbers."""
    return f"{REASONS[reason]}: {reason_fact(reason, solution)}"


def _per_sequence_bytes(r) -> float:
    dep = r.deployment
    length = r.seq_len_avg if dep.allocator == Allocator.PAGED else dep.reserve_length
    return r.kv_bytes_per_token * r.kv_replication * length
