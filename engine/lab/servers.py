"""The serving loop, run with either scheduler and either KV allocator.

`naive` is static batching over contiguous reservations: a batch is admitted, runs until its last
answer ends, and only then does the next batch start. `paged` is continuous batching over paged
blocks: a finished sequence leaves at the end of its step and a waiting request takes its place on
the next step; when blocks run out mid-answer, the newest sequence is swapped out of the pool and
comes back, unchanged, once blocks free up. The other two pairings are the ablations.

Every step admits what the scheduler allows, prefills each newcomer (in two chunks when it has a
system prompt, so a shared prefix is computed by the same operations whether or not it is reused),
then runs one batched decode step for everyone else.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from engine.errors import RidgeError
from engine.lab.kvcache import ContiguousCache, PagedCache
from engine.lab.model import ToyModel
from engine.lab.workload import Request

SCHEDULERS = ("static", "continuous")
ALLOCATORS = ("contiguous", "paged")


@dataclass(slots=True, eq=False)
class Seq:
    """A request being served: its answer so far and how many keys and values it holds."""

    request: Request
    tokens: list[int] = field(default_factory=list)
    kv_len: int = 0
    admitted_step: int = -1
    finished_step: int = -1

    @property
    def done(self) -> bool:
        return len(self.tokens) >= self.request.output_len


@dataclass(frozen=True, slots=True)
class ServeResult:
    """What one server did. Occupancy sums are token slots added up over the busy steps."""

    scheduler: str
    allocator: str
    budget_slots: int
    outputs: dict[int, tuple[int, ...]]
    admitted_step: dict[int, int]
    finished_step: dict[int, int]
    wall_seconds: float
    prefill_seconds: float
    decode_seconds: float
    busy_steps: int
    used_sum: int
    reservation_sum: int
    internal_sum: int
    external_sum: int
    concurrency_sum: int
    peak_concurrency: int
    preemptions: int
    prefix_hits: int
    cow_copies: int

    @property
    def output_tokens(self) -> int:
        return sum(len(t) for t in self.outputs.values())

    @property
    def tokens_per_s(self) -> float:
        return self.output_tokens / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def allocated_sum(self) -> int:
        return self.used_sum + self.reservation_sum + self.internal_sum

    @property
    def utilization(self) -> float:
        """Slots holding real tokens over slots allocated, both summed over every busy step."""
        return self.used_sum / self.allocated_sum if self.allocated_sum else 0.0

    def share(self, total: int) -> float:
        """A summed quantity as a fraction of the whole pool over the busy steps."""
        denom = self.budget_slots * self.busy_steps
        return total / denom if denom else 0.0

    def summary(self) -> dict:
        return {
            "scheduler": self.scheduler,
            "allocator": self.allocator,
            "output_tokens": self.output_tokens,
            "wall_seconds": self.wall_seconds,
            "prefill_seconds": self.prefill_seconds,
            "decode_seconds": self.decode_seconds,
            "tokens_per_s": self.tokens_per_s,
            "steps": self.busy_steps,
            "utilization": self.utilization,
            "mean_concurrency": self.concurrency_sum / self.busy_steps if self.busy_steps else 0.0,
            "peak_concurrency": self.peak_concurrency,
            "pool_share": {  # of all KV slots, averaged over busy steps; the five add up to 1
                "used": self.share(self.used_sum),
                "reservation": self.share(self.reservation_sum),
                "internal_fragmentation": self.share(self.internal_sum),
                "external_fragmentation": self.share(self.external_sum),
                "free": self.share(self.budget_slots * self.busy_steps - self.allocated_sum - self.external_sum),
            },
            "preemptions": self.preemptions,
            "prefix_hits": self.prefix_hits,
            "copy_on_write": self.cow_copies,
        }


def serve(model: ToyModel, requests: Sequence[Request], *, scheduler: str, allocator: str,
          slots: int, block_size: int = 16, max_batch: int = 64, share_prefixes: bool = True,
          batch_wait: int = 4, check: bool = False,
          progress: Callable[[int, int], None] | None = None) -> ServeResult:
    """Serve every request to completion and report tokens, timings and KV occupancy.

    `slots` is the KV budget in tokens, the same for both allocators. `batch_wait` is how many steps
    a static batcher waits for its batch to fill. `check` verifies the block bookkeeping each step.
    """
    if scheduler not in SCHEDULERS:
        raise RidgeError(f"unknown scheduler {scheduler!r}; choose one of {', '.join(SCHEDULERS)}")
    if allocator not in ALLOCATORS:
        raise RidgeError(f"unknown allocator {allocator!r}; choose one of {', '.join(ALLOCATORS)}")
    if max_batch < 1:
        raise RidgeError(f"max batch must be at least 1, got {max_batch}")
    cache = (ContiguousCache(model.config, slots) if allocator == "contiguous"
             else PagedCache(model.config, slots, block_size, share_prefixes))
    for r in requests:
        if not cache.can_ever_admit(r):
            raise RidgeError(f"request {r.id} could need more KV slots than the budget of {slots}")
        if r.prompt_len + r.max_output > model.config.max_positions:
            raise RidgeError(f"request {r.id} could run past the model's {model.config.max_positions} positions")

    pending = sorted(requests, key=lambda r: (r.arrival_step, r.id))
    pending.reverse()  # pop() from the end takes the earliest
    running: list[Seq] = []
    swapped: list[tuple[Seq, tuple]] = []
    finished: list[Seq] = []
    total = sum(r.output_len for r in requests)
    produced = step = busy = 0
    sums = [0, 0, 0, 0]
    conc_sum = peak = preemptions = 0
    prefill_s = decode_s = 0.0

    def prefill(seq: Seq) -> None:
        r = seq.request
        seq.kv_len = cache.open(seq)
        if seq.kv_len < r.prefix_len:  # compute the system prompt on its own, then offer it for sharing
            cache.prepare(seq, r.prefix_len)
            model.prefill(r.prompt[:r.prefix_len], 0, seq, cache)
            seq.kv_len = r.prefix_len
            cache.publish_prefix(seq)
        if not cache.prepare(seq, r.prompt_len):
            raise RidgeError("admission promised blocks that were not there")  # a bug, never input
        seq.tokens.append(model.prefill(r.prompt[seq.kv_len:], seq.kv_len, seq, cache))
        seq.kv_len = r.prompt_len

    def batch_ready() -> bool:
        arrived = [r for r in reversed(pending) if r.arrival_step <= step]
        if not arrived:
            return False
        if len(arrived) == len(pending) and not any(r.arrival_step > step for r in pending):
            return True  # nothing else is coming
        if len(arrived) >= max_batch or step - arrived[0].arrival_step >= batch_wait:
            return True
        return not cache.can_admit_all(arrived)

    start = time.perf_counter()
    while pending or running or swapped:
        if not running and not swapped and pending[-1].arrival_step > step:
            step = pending[-1].arrival_step  # idle until the next arrival
        fresh: set[int] = set()
        t0 = time.perf_counter()
        # Preempted sequences return first, oldest admission first.
        while swapped and len(running) < max_batch and cache.can_swap_in(swapped[0][0]):
            seq, saved = swapped.pop(0)
            cache.swap_in(seq, saved)
            running.append(seq)
        if not swapped and (scheduler == "continuous" or (not running and batch_ready())):
            while (pending and pending[-1].arrival_step <= step and len(running) < max_batch
                   and cache.can_admit(pending[-1])):
                seq = Seq(pending.pop(), admitted_step=step)
                prefill(seq)
                produced += 1
                running.append(seq)
                fresh.add(id(seq))
        t1 = time.perf_counter()
        prefill_s += t1 - t0

        decoding = []
        for seq in [s for s in running if id(s) not in fresh and not s.done]:
            if not any(s is seq for s in running):
                continue  # preempted a moment ago to make room for an older sequence
            while not cache.prepare(seq, seq.kv_len + 1):
                if cache.evict_prefixes():
                    continue
                victim = max(running, key=lambda s: s.admitted_step)
                running.remove(victim)
                swapped.append((victim, cache.swap_out(victim)))
                swapped.sort(key=lambda item: item[0].admitted_step)
                preemptions += 1
                if victim is seq:
                    break
            else:
                decoding.append(seq)
        decoding = [s for s in decoding if any(s is r for r in running)]
        if decoding:
            nxt = model.decode([s.tokens[-1] for s in decoding], [s.kv_len for s in decoding], decoding, cache)
            for seq, tok in zip(decoding, nxt.tolist()):
                seq.tokens.append(tok)
                seq.kv_len += 1
            produced += len(decoding)
        decode_s += time.perf_counter() - t1

        if running:
            waiting = pending[-1] if pending and pending[-1].arrival_step <= step else None
            occ = cache.sample(running, waiting)
            sums[0] += occ.used
            sums[1] += occ.reservation
            sums[2] += occ.internal
            sums[3] += occ.external
            busy += 1
            conc_sum += len(running)
            peak = max(peak, len(running))
        elif not swapped and pending and pending[-1].arrival_step <= step and not fresh:
            if scheduler == "continuous" or batch_ready():
                raise RidgeError(f"request {pending[-1].id} can never be admitted")  # guarded above
        for seq in [s for s in running if s.done]:
            cache.release(seq)
            seq.finished_step = step
            finished.append(seq)
        running = [s for s in running if not s.done]
        if check:
            cache.check(running)
        if progress is not None:
            progress(produced, total)
        step += 1

    wall = time.perf_counter() - start
    cache.evict_prefixes()
    cache.check([])
    return ServeResult(
        scheduler=scheduler, allocator=allocator, budget_slots=cache.slots,
        outputs={s.request.id: tuple(s.tokens) for s in finished},
        admitted_step={s.request.id: s.admitted_step for s in finished},
        finished_step={s.request.id: s.finished_step for s in finished},
        wall_seconds=wall, prefill_seconds=prefill_s, decode_seconds=decode_s, busy_steps=busy,
        used_sum=sums[0], reservation_sum=sums[1], internal_sum=sums[2], external_sum=sums[3],
        concurrency_sum=conc_sum, peak_concurrency=peak, preemptions=preemptions,
        prefix_hits=cache.prefix_hits, cow_copies=cache.cow_copies,
    )
