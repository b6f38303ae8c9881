"""The serving loop, run with either scheduler and either KV allocator.

`naive` is static batching over contiguous reservations: a batch is admitted, runs until its last
answer ends, and only then does the next batch start. `paged` is continuous batching over paged
blocks: a finished sequence leaves at the end of its step and a waiting request takes its place on
the next step; when blocks run out mid-answer, the newest sequence is swapped out of the pool and
comes back, unchanged, once blocks free up. The other two pairings are the ablations.

Every step admits what the scheduler allows, then makes one pass of the model that prefills the
newcomers' prompts (skipping a system prompt whose blocks are already shared) and decodes the next
token of everyone else, so the weights are read once per step, as iteration-level schedulers do.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from engine.errors import RidgeError
from engine.ids import Allocator, Scheduler
from engine.lab.kvcache import ContiguousCache, PagedCache
from engine.lab.model import ToyModel
from engine.lab.workload import Request

SCHEDULERS = tuple(s.value for s in Scheduler if s != Scheduler.NONE)   # the lab always batches
ALLOCATORS = tuple(a.value for a in Allocator)


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


class Server:
    """One server over one request stream, advanced a scheduler step at a time by `step()`.

    `slots` is the KV budget in tokens, the same for both allocators. `batch_wait` is how many steps
    a static batcher waits for its batch to fill. `check` verifies the block bookkeeping each step.
    Stepping lets a caller interleave several servers, so a burst of load from other programs slows
    them all alike instead of landing on whichever happened to be running.
    """

    def __init__(self, model: ToyModel, requests: Sequence[Request], *, scheduler: str, allocator: str,
                 slots: int, block_size: int = 16, max_batch: int = 64, share_prefixes: bool = True,
                 batch_wait: int = 4, check: bool = False) -> None:
        if scheduler not in SCHEDULERS:
            raise RidgeError(f"unknown scheduler {scheduler!r}; choose one of {', '.join(SCHEDULERS)}")
        if allocator not in ALLOCATORS:
            raise RidgeError(f"unknown allocator {allocator!r}; choose one of {', '.join(ALLOCATORS)}")
        if max_batch < 1:
            raise RidgeError(f"max batch must be at least 1, got {max_batch}")
        self.model, self.scheduler, self.allocator = model, scheduler, allocator
        self.max_batch, self.batch_wait, self.check = max_batch, batch_wait, check
        self.cache = (ContiguousCache(model.config, slots) if allocator == Allocator.CONTIGUOUS
                      else PagedCache(model.config, slots, block_size, share_prefixes))
        for r in requests:
            if not (0 <= r.prefix_len < r.prompt_len and 1 <= r.output_len <= r.max_output):
                raise RidgeError(f"request {r.id} needs a prompt past its shared prefix and 1 <= answer <= max")
            if not self.cache.can_ever_admit(r):
                raise RidgeError(f"request {r.id} could need more KV slots than the budget of {slots}")
            if r.prompt_len + r.max_output > model.config.max_positions:
                raise RidgeError(f"request {r.id} could run past the model's {model.config.max_positions} positions")
        self.pending = sorted(requests, key=lambda r: (r.arrival_step, r.id), reverse=True)  # pop() = earliest
        self.running: list[Seq] = []
        self.swapped: list[tuple[Seq, tuple]] = []
        self.finished: list[Seq] = []
        self.total_tokens = sum(r.output_len for r in requests)
        self.produced = self.step_no = self.busy = 0
        self.sums = [0, 0, 0, 0]  # used, reservation, internal, external
        self.conc_sum = self.peak = self.preemptions = 0
        self.wall = 0.0

    @property
    def done(self) -> bool:
        return not (self.pending or self.running or self.swapped)

    def _head(self) -> Request | None:
        """The earliest request that has arrived and waits for admission."""
        return self.pending[-1] if self.pending and self.pending[-1].arrival_step <= self.step_no else None

    def _room(self, seq: Seq, end: int) -> None:
        if not self.cache.prepare(seq, end):
            raise RidgeError("admission promised KV blocks that were not there")  # a bug, never input

    def _open(self, seq: Seq) -> None:
        """Give a newcomer its KV room, computing a system prompt first if it is not shared yet."""
        r, cache = seq.request, self.cache
        seq.kv_len = cache.open(seq)
        if cache.shares_prefixes and seq.kv_len < r.prefix_len:  # compute the system prompt, then share it
            self._room(seq, r.prefix_len)
            self.model.prefill(r.prompt[:r.prefix_len], 0, seq, cache)
            seq.kv_len = r.prefix_len
            cache.publish_prefix(seq)
        self._room(seq, r.prompt_len)

    def _batch_ready(self) -> bool:
        """Static batching starts a batch once it is full, nothing more is coming, or it waited long enough."""
        arrived = [r for r in reversed(self.pending) if r.arrival_step <= self.step_no]
        if not arrived:
            return False
        if len(arrived) == len(self.pending) or len(arrived) >= self.max_batch:
            return True
        return self.step_no - arrived[0].arrival_step >= self.batch_wait or not self.cache.can_admit_all(arrived)

    def _admit(self) -> set[int]:
        cache, running, fresh = self.cache, self.running, set()
        # Preempted sequences return first, oldest admission first.
        if self.swapped and not running and not cache.can_swap_in(self.swapped[0][0]):
            cache.evict_prefixes()  # an idle pool must always take a sequence back
        while self.swapped and len(running) < self.max_batch and cache.can_swap_in(self.swapped[0][0]):
            seq, saved = self.swapped.pop(0)
            cache.swap_in(seq, saved)
            running.append(seq)
        if self.swapped or not (self.scheduler == Scheduler.CONTINUOUS or (not running and self._batch_ready())):
            return fresh
        head = self._head()
        if not running and head is not None and not cache.can_admit(head):
            cache.evict_prefixes()  # an idle pool must always take the next request
        while (head := self._head()) is not None and len(running) < self.max_batch and cache.can_admit(head):
            seq = Seq(self.pending.pop(), admitted_step=self.step_no)
            self._open(seq)
            running.append(seq)
            fresh.add(id(seq))
        if not running and self._head() is not None and (self.scheduler == Scheduler.CONTINUOUS or self._batch_ready()):
            raise RidgeError(f"request {self._head().id} can never be admitted")  # guarded in __init__
        return fresh

    def _forward(self, fresh: set[int]) -> None:
        """One pass of the model: newcomers' prompts and everyone else's next token together."""
        cache, running = self.cache, self.running
        # Room for one more key/value each; when the pool runs dry, the newest sequence that is
        # not a newcomer steps out (a newcomer's keys and values are not computed yet).
        decoding = []
        for seq in [s for s in running if id(s) not in fresh and not s.done]:
            if seq not in running:
                continue  # swapped out a moment ago to make room for an older sequence
            while not cache.prepare(seq, seq.kv_len + 1):
                if cache.evict_prefixes():
                    continue
                victim = max((s for s in running if id(s) not in fresh), key=lambda s: s.admitted_step)
                running.remove(victim)
                self.swapped.append((victim, cache.swap_out(victim)))
                self.swapped.sort(key=lambda item: item[0].admitted_step)
                self.preemptions += 1
                if victim is seq:
                    break
            else:
                decoding.append(seq)
        decoding = [s for s in decoding if s in running]
        newcomers = [s for s in running if id(s) in fresh]
        chunks = [(s.request.prompt[s.kv_len:], s.kv_len, s) for s in newcomers]
        chunks += [([s.tokens[-1]], s.kv_len, s) for s in decoding]
        for seq, tok in zip(newcomers + decoding, self.model.forward(chunks, cache)):
            seq.tokens.append(tok)
            seq.kv_len = seq.request.prompt_len if id(seq) in fresh else seq.kv_len + 1
            self.produced += 1

    def step(self) -> bool:
        """Run one scheduler step (admit, prefill, decode, account, retire); False once all is served."""
        if self.done:
            return False
        t0 = time.perf_counter()
        if not self.running and not self.swapped and self.pending[-1].arrival_step > self.step_no:
            self.step_no = self.pending[-1].arrival_step  # idle until the next arrival
        self._forward(self._admit())
        if self.running:
            occ = self.cache.sample(self.running, self._head())
            for i, value in enumerate((occ.used, occ.reservation, occ.internal, occ.external)):
                self.sums[i] += value
            self.busy += 1
            self.conc_sum += len(self.running)
            self.peak = max(self.peak, len(self.running))
        for seq in [s for s in self.running if s.done]:
            self.cache.release(seq)
            seq.finished_step = self.step_no
            self.finished.append(seq)
        self.running = [s for s in self.running if not s.done]
        if self.check:
            self.cache.check(self.running)
        self.step_no += 1
        if self.done:
            self.cache.evict_prefixes()
            self.cache.check([])  # every block is back in the pool
        self.wall += time.perf_counter() - t0
        return True

    def result(self) -> ServeResult:
        if not self.done:
            raise RidgeError("the server has not finished its requests yet")
        return ServeResult(
            scheduler=self.scheduler, allocator=self.allocator, budget_slots=self.cache.slots,
            outputs={s.request.id: tuple(s.tokens) for s in self.finished},
            admitted_step={s.request.id: s.admitted_step for s in self.finished},
            finished_step={s.request.id: s.finished_step for s in self.finished},
            wall_seconds=self.wall,
            busy_steps=self.busy, used_sum=self.sums[0], reservation_sum=self.sums[1],
            internal_sum=self.sums[2], external_sum=self.sums[3], concurrency_sum=self.conc_sum,
            peak_concurrency=self.peak, preemptions=self.preemptions,
            prefix_hits=self.cache.prefix_hits, cow_copies=self.cache.cow_copies,
        )


def serve(model: ToyModel, requests: Sequence[Request], *, progress: Callable[[int, int], None] | None = None,
          **options) -> ServeResult:
    """Serve every request to completion with one server (options as for `Server`)."""
    server = Server(model, requests, **options)
    while server.step():
        if progress is not None:
            progress(server.produced, server.total_tokens)
    return server.result()
