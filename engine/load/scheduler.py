"""One serving instance, step by step: a continuous-batching scheduler as vLLM runs it.

The loop advances a clock from one model step to the next (the step-level discrete-event loop of
Vidur and BLIS). Each step the scheduler decides what runs, the step model says how long it
takes, and the requests it carried move on. The rules, and where each comes from:

1. Arrivals join a first-come-first-served waiting queue; with a queue cap, an arrival that finds
   the queue full is shed (admission control). A request whose prompt could never fit in the KV
   cache is refused on arrival (BLIS does the same).
2. At most `max_running` sequences are in flight (vLLM's `max_num_seqs`); a request is admitted
   only when the KV blocks its next tokens need are free with 1% of the cache to spare (vLLM's
   block manager and its watermark), and never in a step that had to preempt (vLLM's scheduler:
   no waiting request is scheduled after a preemption).
3. Without a chunk budget, a step either prefills whole prompts (as many waiting prompts as fit in
   the engine's batched-prefill budget, `prefill_batch_tokens`, or one longer prompt alone) while
   every running stream waits, or decodes one token of every running sequence: prefill first,
   vLLM's scheduler before chunked prefill.
4. With a chunk budget T, every step carries at most T tokens: one decode token per running
   sequence first, then the next chunk of prompts already started, then chunks of newly admitted
   prompts (Sarathi-Serve's stall-free batching, vLLM's chunked-prefill scheduler).
5. KV memory is paged in blocks of `block_tokens`; each sequence holds its own tokens (a cached
   shared prefix is held once, outside this count) plus half a block of rounding on average. When
   a decode step needs more blocks than are free, the most recently admitted sequence is
   preempted: its blocks are freed and it returns to the front of the queue to recompute its
   prompt and the tokens it had generated (vLLM's recompute preemption).
6. A prefill step emits the request's first token (TTFT ends there); each decode step emits one.

Speed: a run of decode-only steps with nothing to decide in between (no arrival that could be
admitted, no sequence finishing, no block shortage) is advanced in one jump, its step time taken
at the jump's middle context; so a run costs a few microseconds per event, not per sequence. The
loop is the load engine's hot path (a puzzle check runs it millions of times), so it is written
out in one function with no helpers (see `run_instance`), reads the step-time tables inline
(`StepTimes.decoded`, `prefilled` and `mixed_by_cell`, by the same keys as their methods) and
takes open-loop arrivals from a sorted queue rather than a heap.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from functools import partial

WAIT, PREFILL, DECODE, DONE, SHED = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class InstanceConfig:
    """One instance's scheduler settings (token counts; `kv_tokens` the KV cache's capacity in
    tokens after the weights, the reserve and any shared prefix)."""

    max_running: int
    kv_tokens: float
    block_tokens: int
    chunk_tokens: int | None
    max_prefill_tokens: int
    queue_cap: int | None


@dataclass
class InstanceRequests:
    """The requests one instance serves, as lists indexed alike. `prefill` is the tokens it must
    compute before the first token (0 for a request whose cache arrived from a prefill pool);
    `own` the KV tokens it holds once prefilled; `context` the tokens its attention reads then
    (a cached prefix included); `output` the tokens it generates here. Open loop: `arrival`
    times. Closed loop: `think` times and `users`, each user's next request issued a think time
    after its last one ends."""

    prefill: list
    own: list
    context: list
    output: list
    arrival: list | None = None
    think: list | None = None
    users: int = 0
    emits_first: bool = True   # False for a decode pool: the first token came from elsewhere


@dataclass
class InstanceTrace:
    """What happened to every request (times in seconds; -1.0 where it never happened), and the
    instance's totals."""

    arrival: list
    state: list
    first_scheduled: list
    first_token: list
    finish: list
    decode_entry: list          # when the request first entered decode here
    pure_decode: list           # seconds of its decode steps' own decode time
    evicted: list               # seconds spent preempted after its first token
    preemptions: list
    span: float
    prefill_busy: float
    decode_busy: float
    batch_seconds: float        # integral of the sequences in flight over busy time
    queue_t: list
    queue_n: list
    steps: int
    occupancy: float            # request-seconds in the system, counted from the queue and the batch
    peak_queue: int = 0         # the most requests any arrival found waiting: a queue cap above it sheds none


def run_instance(times, req: InstanceRequests, cfg: InstanceConfig) -> InstanceTrace:
    """Simulate one instance until every request has finished or been shed.

    Written as one loop with no helper functions: a puzzle check runs it for millions of steps,
    and a call per admitted, decoding or finished sequence (or a variable shared with a nested
    function, which Python keeps in a cell) cost about a tenth of its time. The steps that recur
    are marked where they are written out: a request's *release* (it leaves the system; in a
    closed loop its user's next request is issued a think time later), its *admission* (the
    queue's head starts its prefill) and its *entry into decode* (the heap learns the decode step
    it finishes at, the batch sums take its context)."""
    n = len(req.output)
    prefill_need = list(req.prefill)
    own0, ctx0, out = req.own, req.context, req.output
    pf_left = list(prefill_need)
    kv_done = [own0[i] - prefill_need[i] for i in range(n)]
    gen = [0] * n
    state = [WAIT] * n
    arrival = [-1.0] * n
    first_sched = [-1.0] * n
    first_tok = [-1.0] * n
    finish = [-1.0] * n
    dec_entry = [-1.0] * n
    pure = [0.0] * n
    evicted = [0.0] * n
    evicted_at = [-1.0] * n
    preempts = [0] * n
    done_at = [0] * n
    base_ctx = [0] * n
    base_own = [0] * n

    decode_t, prefill_t, mixed_t = times.decode, times.prefill, times.mixed
    # the step-time tables, read inline below (a method call per step costs more than the lookup)
    decoded = times.decoded.get             # decode_t by (batch, context cell)
    prefilled = times.prefilled.get         # prefill_t by its arguments
    mixed_by_cell = times.mixed_by_cell.get   # mixed_t by (prompt tokens, batch, context cell)
    heappush, heappop, ceil, inf = heapq.heappush, heapq.heappop, math.ceil, math.inf
    cap = cfg.kv_tokens
    half = cfg.block_tokens / 2.0
    max_running = cfg.max_running
    chunk = cfg.chunk_tokens
    max_pf = cfg.max_prefill_tokens
    watermark = 0.01 * cap
    qcap = cfg.queue_cap
    emits_first = req.emits_first
    think = req.think

    pending = []                # (arrival time, id) of requests not yet arrived, the earliest first
    closed = req.arrival is None
    next_id = 0
    if closed:
        for u in range(min(req.users, n)):
            heapq.heappush(pending, (think[u], u))
        next_id = min(req.users, n)
        next_arrival = partial(heappop, pending)   # a user's next request joins when the last ends
    else:
        # every arrival is known from the start: taken in sorted order, they come in the order a
        # heap of them would give (no ties: ids differ) for one comparison each instead of log n
        pending = deque(sorted(zip(req.arrival, range(n))))
        next_arrival = pending.popleft
    issues = closed and next_id < n   # whether a release still issues a user's next request
    next_at = pending[0][0] if pending else inf   # when the next request arrives
    # whether any request has nothing to prefill (its cache came from elsewhere): a preempted one
    # recomputes its own and generated tokens, so only a request with none of its own joins them
    direct = 0 in prefill_need or 0 in own0

    waiting: deque = deque()
    # admitted sequences, oldest first (the preemption order); finished ones are left in place
    # and dropped when a preemption reaches them from the end, so each costs one pop at most
    order: list = []
    prefilling: list = []       # sequences part-way through their prompt, oldest first
    heap: list = []             # (done_at, id) of decoding sequences
    n_running = n_dec = 0
    sum_ctx = sum_own = 0       # sums of base_ctx / base_own over decoding sequences
    pf_kv = 0.0                 # KV tokens held by sequences still prefilling (with rounding)
    G = 0                       # decode steps taken so far
    t = 0.0
    c_pure = 0.0                # cumulative own-decode seconds of decode-carrying steps
    prefill_busy = decode_busy = batch_seconds = 0.0
    finished = 0
    queue_t: list = [0.0]
    queue_n: list = [0]
    queue_t_append, queue_n_append = queue_t.append, queue_n.append
    steps = 0
    occupancy = 0.0
    peak = 0
    give_way = False            # a prompt that cannot start waits for the newest sequence to be preempted

    total = n
    while finished < total:
        # 1. arrivals up to now join the queue (or are shed, or refused when they could never fit)
        while next_at <= t:
            a, i = next_arrival()
            next_at = pending[0][0] if pending else inf
            arrival[i] = a
            queued = len(waiting)
            if queued > peak:
                peak = queued
            if own0[i] + half > cap or (qcap is not None and queued >= qcap):
                state[i] = SHED
                finished += 1   # release
                if issues:
                    heappush(pending, (a + think[next_id], next_id))
                    next_at = pending[0][0]
                    next_id += 1
                    issues = next_id < n
                continue
            waiting.append(i)
            occupancy += t - a      # it arrived during the step that just ended
        if n_running == 0 and not waiting:
            if not pending:
                break
            t = next_at
            continue

        used = sum_own + n_dec * G + n_dec * half + pf_kv
        # 2. requests whose cache arrived from elsewhere go straight to decoding
        while direct and waiting and pf_left[waiting[0]] == 0 and n_running < max_running \
                and used + own0[waiting[0]] + gen[waiting[0]] + half + n_dec + 1 + watermark <= cap:
            i = waiting.popleft()
            state[i] = DECODE
            n_running += 1
            order.append(i)
            if first_sched[i] < 0:
                first_sched[i] = t
            # entry into decode
            g = gen[i]
            done_at[i] = d_at = G + (out[i] - g)
            base_ctx[i] = b_ctx = ctx0[i] + g - G
            base_own[i] = b_own = own0[i] + g - G
            sum_ctx += b_ctx
            sum_own += b_own
            n_dec += 1
            pure[i] -= c_pure
            if dec_entry[i] < 0:
                dec_entry[i] = t
            if evicted_at[i] >= 0:
                evicted[i] += t - evicted_at[i]
                evicted_at[i] = -1.0
            heappush(heap, (d_at, i))
            used += own0[i] + gen[i] + half
        # 3. the decodes of this step need one more token each: preempt until they fit (and the
        # newest sequence once when the last pass found a prompt it must give way to)
        preempted = False
        while give_way or n_dec and used + n_dec > cap:
            # the most recently admitted sequence's blocks are freed; it waits at the queue's front
            while order and state[order[-1]] not in (PREFILL, DECODE):
                order.pop()
            if not order:
                break
            v = order.pop()
            if state[v] == DECODE:
                gen[v] = out[v] - (done_at[v] - G)
                sum_ctx -= base_ctx[v]
                sum_own -= base_own[v]
                n_dec -= 1
                pure[v] += c_pure
            else:
                prefilling.remove(v)
                pf_kv -= kv_done[v] + half
            if first_tok[v] >= 0 or not emits_first:
                evicted_at[v] = t
            n_running -= 1
            preempts[v] += 1
            state[v] = WAIT
            recompute = own0[v] + gen[v]
            pf_left[v] = recompute
            kv_done[v] = 0
            waiting.appendleft(v)
            if give_way:
                give_way = False    # the queue may admit again in this pass
            else:
                preempted = True
            used = sum_own + n_dec * G + n_dec * half + pf_kv

        chunks = []                 # (sequence, prompt tokens) carried by this step
        pf_tokens = 0
        stall = False
        budget = 0
        if chunk is not None:
            budget = chunk - n_dec
            free = cap - used - n_dec
            for i in prefilling:
                if budget <= 0 or free <= 0:
                    break
                take = pf_left[i]   # min(pf_left[i], budget, int(free)), its comparisons written out
                if budget < take:
                    take = budget
                if int(free) < take:
                    take = int(free)
                if take <= 0:
                    break
                chunks.append((i, take))
                budget -= take
                free -= take
                pf_tokens += take
            while waiting and budget > 0 and n_running < max_running and not preempted:
                i = waiting[0]
                if pf_left[i] == 0:
                    break
                take = pf_left[i]   # min(pf_left[i], budget)
                if budget < take:
                    take = budget
                if take + half + watermark > free:
                    break
                # admission
                waiting.popleft()
                state[i] = PREFILL
                n_running += 1
                order.append(i)
                prefilling.append(i)
                pf_kv += kv_done[i] + half
                if first_sched[i] < 0:
                    first_sched[i] = t
                chunks.append((i, take))
                budget -= take
                free -= take + half
                pf_tokens += take
        elif waiting and n_running < max_running and pf_left[waiting[0]] > 0 and not preempted:
            free = cap - used
            while waiting and n_running < max_running:
                i = waiting[0]
                take = pf_left[i]
                if take == 0 or (chunks and pf_tokens + take > max_pf) or take + half + watermark > free:
                    break
                # admission
                waiting.popleft()
                state[i] = PREFILL
                n_running += 1
                order.append(i)
                prefilling.append(i)
                pf_kv += kv_done[i] + half
                if first_sched[i] < 0:
                    first_sched[i] = t
                chunks.append((i, take))
                free -= take + half
                pf_tokens += take
            stall = bool(chunks)

        if not chunks and n_dec == 0:
            # nothing can run: a prompt too large for the blocks that prefilling sequences leave
            # free waits for them to give way (the next pass preempts the newest: the clock has
            # not moved, so nothing else changes before then); one too large for the whole
            # cache is dropped
            if n_running == 0:
                i = waiting.popleft()
                state[i] = SHED
                finished += 1   # release
                if issues:
                    heappush(pending, (t + think[next_id], next_id))
                    next_at = pending[0][0]
                    next_id += 1
                    issues = next_id < n
            else:
                give_way = True
            continue

        steps += 1
        reps = 1
        if chunk is not None and len(chunks) == 1 and budget <= 0:
            # one prompt takes the whole budget: the steps repeat unchanged (no room for anyone
            # else) until it is nearly done, a decode finishes or the blocks run short
            i, take = chunks[0]
            reps = pf_left[i] // take
            if reps > 1:
                if n_dec:
                    while state[heap[0][1]] != DECODE or done_at[heap[0][1]] != heap[0][0]:
                        heappop(heap)   # left behind by a preemption
                    reps = min(reps, heap[0][0] - G)
                reps = max(1, min(reps, int((cap - used) // (n_dec + take))))
        if stall or (chunks and n_dec == 0):
            each = prefilled((pf_tokens, len(chunks)))   # prefill_t(pf_tokens, len(chunks)), inline
            if each is None:
                each = prefill_t(pf_tokens, len(chunks))
            dt = each * reps
            prefill_busy += dt
            k = 0
        elif chunks:
            ctx = (sum_ctx + n_dec * G) / n_dec + (reps - 1) / 2.0
            c = int(ctx)   # mixed_t(pf_tokens, n_dec, ctx) and decode_t(n_dec, ctx), read inline
            shift = c.bit_length() - 6
            if shift > 0:
                c = (shift << 6) | (c >> shift)
            each = mixed_by_cell((pf_tokens, n_dec, c))
            if each is None:
                each = mixed_t(pf_tokens, n_dec, ctx)
            own_decode = decoded((n_dec, c))
            if own_decode is None:
                own_decode = decode_t(n_dec, ctx)
            if own_decode > each:
                own_decode = each
            dt = each * reps
            c_pure += own_decode * reps
            decode_busy += own_decode * reps
            prefill_busy += dt - own_decode * reps
            k = reps
        else:
            # decode-only: jump to the next step where something changes
            while state[heap[0][1]] != DECODE or done_at[heap[0][1]] != heap[0][0]:
                heappop(heap)   # left behind by a preemption
            k = heap[0][0] - G
            room = cap - used
            k_kv = int(room // n_dec) if n_dec else k
            if k_kv < k:
                k = max(1, k_kv)
            ctx_now = (sum_ctx + n_dec * G) / n_dec
            if pending and n_running < max_running and not waiting:
                gap = next_at - t
                c = int(ctx_now)   # decode_t(n_dec, ctx_now), its table read inline
                shift = c.bit_length() - 6
                d0 = decoded((n_dec, c if shift <= 0 else (shift << 6) | (c >> shift)))
                if d0 is None:
                    d0 = decode_t(n_dec, ctx_now)
                k_arr = ceil(gap / d0) if gap > 0 else 1
                if k_arr < 1:
                    k_arr = 1
                if k_arr < k:
                    k = k_arr
            c = int(ctx_now + (k - 1) / 2.0)   # decode_t at the jump's middle context, inline
            shift = c.bit_length() - 6
            d = decoded((n_dec, c if shift <= 0 else (shift << 6) | (c >> shift)))
            if d is None:
                d = decode_t(n_dec, ctx_now + (k - 1) / 2.0)
            dt = k * d
            c_pure += dt
            decode_busy += dt
        batch_seconds += n_running * dt
        occupancy += (n_running + len(waiting)) * dt
        t += dt
        G += k

        # prompts that finished this step emit their first token
        if chunks:
            for i, take in chunks:
                take *= reps
                pf_left[i] -= take
                kv_done[i] += take
                pf_kv += take
                if pf_left[i] == 0:
                    prefilling.remove(i)
                    pf_kv -= kv_done[i] + half
                    if first_tok[i] < 0 and emits_first:
                        first_tok[i] = t
                    gen[i] = g = gen[i] + 1
                    if g >= out[i]:
                        state[i] = DONE
                        finish[i] = t
                        n_running -= 1
                        if dec_entry[i] < 0:
                            dec_entry[i] = t
                        if evicted_at[i] >= 0:
                            evicted[i] += t - evicted_at[i]
                            evicted_at[i] = -1.0
                        finished += 1   # release
                        if issues:
                            heappush(pending, (t + think[next_id], next_id))
                            next_at = pending[0][0]
                            next_id += 1
                            issues = next_id < n
                    else:
                        # entry into decode
                        state[i] = DECODE
                        done_at[i] = d_at = G + (out[i] - g)
                        base_ctx[i] = b_ctx = ctx0[i] + g - G
                        base_own[i] = b_own = own0[i] + g - G
                        sum_ctx += b_ctx
                        sum_own += b_own
                        n_dec += 1
                        pure[i] -= c_pure
                        if dec_entry[i] < 0:
                            dec_entry[i] = t
                        if evicted_at[i] >= 0:
                            evicted[i] += t - evicted_at[i]
                            evicted_at[i] = -1.0
                        heappush(heap, (d_at, i))
        # sequences that generated their last token leave
        while heap and heap[0][0] <= G:
            g_done, i = heappop(heap)
            if state[i] != DECODE or done_at[i] != g_done:
                continue
            state[i] = DONE
            finish[i] = t
            gen[i] = out[i]
            sum_ctx -= base_ctx[i]
            sum_own -= base_own[i]
            n_dec -= 1
            n_running -= 1
            pure[i] += c_pure
            finished += 1   # release
            if issues:
                heappush(pending, (t + think[next_id], next_id))
                next_at = pending[0][0]
                next_id += 1
                issues = next_id < n
        queue_t_append(t)
        queue_n_append(len(waiting))

    return InstanceTrace(arrival, state, first_sched, first_tok, finish, dec_entry, pure, evicted, preempts,
                         t, prefill_busy, decode_busy, batch_seconds, queue_t, queue_n, steps, occupancy, peak)
