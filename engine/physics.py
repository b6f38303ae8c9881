"""The physics core: every quantity of the analysis written once, over floats or numpy arrays.

`engine.analysis` calls these with plain floats for one deployment; `engine.grid` calls the very
same functions with numpy arrays for a whole grid of deployments; the generator's estimator calls
them too. Each function is small and says why it has the shape it has. Nothing here imports numpy:
when an argument is an array, numpy is already loaded and is found in `sys.modules`, so a
`ridge solve` process never pays for importing it.

Units are SI: bytes, seconds, FLOP, FLOP/s. GiB = 2**30 bytes.
"""
from __future__ import annotations

import math
import sys
from collections import namedtuple

from engine.catalog import PRECISION_BYTES
from engine.ids import Allocator, Fidelity, Objective, Precision, Scheduler, Verdict

# Enum members bound once: a class attribute lookup on an enum costs ~0.2 us on Python 3.11,
# and an analysis compares these dozens of times (a solve runs a dozen analyses).
_FLOOR, _STATIC, _NONE, _PAGED = Fidelity.FLOOR, Scheduler.STATIC, Scheduler.NONE, Allocator.PAGED
_INT4, _EIGHT_BIT = Precision.INT4, (Precision.FP8, Precision.INT8)

GIB = 2**30
DEFAULT_RESERVE_SHARE = 0.10      # of each GPU's memory, for activations and workspace (DESIGN.md)


# --- helpers that work on floats and arrays alike --------------------------------------------

_PLAIN = frozenset((float, int, bool))   # Python scalars; anything else goes through numpy


def _np():
    return sys.modules["numpy"]


def vmax(a, b):
    """max(a, b) elementwise."""
    if type(a) in _PLAIN and type(b) in _PLAIN:
        return a if a > b else b
    return _np().maximum(a, b)


def vmin(a, b):
    """min(a, b) elementwise."""
    if type(a) in _PLAIN and type(b) in _PLAIN:
        return a if a < b else b
    return _np().minimum(a, b)


def where(cond, a, b):
    """a where cond holds, else b (numpy's where for arrays, a conditional for scalars)."""
    if type(cond) in _PLAIN and type(a) in _PLAIN and type(b) in _PLAIN:
        return a if cond else b
    return _np().where(cond, a, b)


def vfloor(x):
    if type(x) in _PLAIN:
        return float(math.floor(x))
    return _np().floor(x)


def vceil(x):
    if type(x) in _PLAIN:
        return float(math.ceil(x))
    return _np().ceil(x)



# --- memory -----------------------------------------------------------------------------------

def reserve_per_gpu_gib(memory_gib, reserve_gib):
    """The per-GPU reserve: the stated one, else 10% of the GPU's memory (8 GiB on an H100)."""
    return DEFAULT_RESERVE_SHARE * memory_gib if reserve_gib is None else reserve_gib


def usable_kv_bytes(gpus, memory_gib, weight_bytes, reserve_gib, other_bytes=0.0):
    """Memory left for the KV cache: all GPUs' memory less the weights (stored once across the
    GPUs), each GPU's reserve, and anything else resident (a named draft model's weights)."""
    return gpus * memory_gib * GIB - weight_bytes - gpus * reserve_gib * GIB - other_bytes


def kv_replication(gpus, kv_heads, is_mla):
    """Copies of each token's KV the GPUs hold between them. A latent (MLA) cache is split across
    the GPUs, because serving stacks run MLA models with data-parallel attention (each GPU keeps
    the latents of its own sequences); head-split KV is copied once GPUs outnumber KV heads."""
    if is_mla:
        return 1.0 if type(gpus) in _PLAIN else gpus * 0.0 + 1.0
    return vmax(1.0, gpus / kv_heads)


def tokens_held(length, layers, sliding_layers, window):
    """Tokens of KV one sequence of `length` holds, counted in full-attention layer equivalents:
    a sliding-window layer keeps only the last `window` tokens (Gemma 2, gpt-oss)."""
    if not sliding_layers:
        return length
    full = layers - sliding_layers
    return (full * length + sliding_layers * vmin(length, window)) / layers


def in_flight_length(prompt, output, scheduler):
    """Tokens a sequence holds on average while it decodes. Every answer running its average
    length holds P + O/2 (the course's S). A static batch is modelled with exponential answer
    lengths (see static_ladder_sum), and then a sequence still in flight has, averaged over the
    time it runs, one whole average answer behind it (the exponential forgets how long it has
    run), so it holds P + O."""
    return prompt + (output if scheduler == _STATIC else output / 2)


def max_concurrency(usable, per_sequence, shared=0.0):
    """Whole sequences the KV cache holds: after the `shared` (prefix) store, usable over what one
    sequence needs; 0 where nothing fits."""
    room = usable - shared
    return where(room > 0, vfloor(room / per_sequence), 0.0)


# --- weights a pass reads ---------------------------------------------------------------------

def experts_touched(experts, per_token, tokens):
    """Expected distinct experts a pass over `tokens` independent tokens routes to, each picking
    `per_token` of `experts` uniformly: exactly per_token at one token, nearly all at many."""
    if type(tokens) not in _PLAIN:
        np = _np()
        spread = experts * (1.0 - (1.0 - per_token / experts) ** np.maximum(tokens, 1.0))
        return np.where(tokens <= 1, np.where(tokens >= 1, float(per_token), 0.0), spread)
    if tokens <= 1:
        return float(per_token) if tokens >= 1 else 0.0
    return experts * (1.0 - (1.0 - per_token / experts) ** tokens)


def weight_read_bytes(model, tokens, bytes_per_weight):
    """Weight bytes one forward pass over `tokens` tokens reads: all of a dense model; for a
    mixture of experts, the always-on weights plus only the experts those tokens route to."""
    if not model.experts:
        return model.params * bytes_per_weight
    m = model
    routed = m.moe_layers * m.experts * m.expert_params
    touched = experts_touched(m.experts, m.experts_per_token, tokens)
    return (m.params - routed + m.moe_layers * touched * m.expert_params) * bytes_per_weight


def routing_tokens(sequences, k, reuse):
    """Independent routing draws a verification pass of k+1 positions per sequence makes: the
    first position draws afresh, and each drafted position repeats the experts already picked
    for its own sequence with probability `reuse` (consecutive positions of one sequence route
    alike), so it adds only (1 - reuse) of a fresh token's draws."""
    return sequences * (1.0 + k * (1.0 - reuse))


# --- speculation ------------------------------------------------------------------------------

def spec_expected_tokens(k, alpha):
    """E[tokens per verification] = (1 - alpha^(k+1)) / (1 - alpha), the geometric sum."""
    if type(k) not in _PLAIN or type(alpha) not in _PLAIN:
        np = _np()
        safe = np.minimum(alpha, 0.999999999)
        return np.where(alpha >= 1.0, k + 1.0, (1.0 - safe ** (k + 1)) / (1.0 - safe))
    return (k + 1.0) if alpha >= 1.0 else (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


# --- time -------------------------------------------------------------------------------------

def memory_seconds(nbytes, gpus, bandwidth):
    """Time to stream `nbytes` spread evenly over `gpus` GPUs' memory bandwidth."""
    return nbytes / (gpus * bandwidth)


def compute_seconds(flops, gpus, peak, mfu):
    """Time for `flops` at `mfu` of the GPUs' peak."""
    return flops / (gpus * peak * mfu)


def tp_layout(gpus, domain):
    """(tensor-parallel width, groups): GPUs beyond one tensor-parallel domain (the NVLink board,
    a bridged pair, a TPU slice) form more groups, replicas or pipeline stages, each reading its
    own weights, never a wider tensor-parallel group."""
    tp = vmin(gpus, domain)
    return tp, gpus / tp


def allreduce_seconds(tokens, hidden, tp, layers, latency, link_bandwidth, per_layer=2, act_bytes=2.0):
    """Tensor-parallel communication of one forward pass: `per_layer` all-reduces per layer (after
    attention and after the MLP), each a fixed latency plus a ring's 2(tp-1)/tp of the
    activations (tokens x hidden x act_bytes) over the link. Zero on one GPU."""
    ring = 2.0 * (tp - 1.0) / tp
    each = latency + ring * tokens * hidden * act_bytes / link_bandwidth
    return where(tp > 1, layers * per_layer * each, 0.0 * each)


def step_overhead_seconds(layers, per_layer, per_step):
    """Fixed time of one forward pass that no roofline term covers: kernel launches and
    synchronisation per layer, plus scheduling and sampling per step."""
    return layers * per_layer + per_step


def prefill_attention_flops(model, prompt, prefix):
    """Causal attention FLOPs of a prefill over the uncached part of the prompt. A full layer
    costs heads x width x (P^2 - prefix^2); a sliding-window layer attends to at most `window`
    earlier tokens, so its P^2 becomes 2WP - W^2 beyond the window."""
    m = model
    unit = m.heads * m.prefill_attention_dim
    full = m.layers - m.sliding_layers
    out = full * unit * (prompt * prompt - prefix * prefix)
    if m.sliding_layers:
        w = float(m.sliding_window)

        def banded(x):
            return where(x <= w, x * x, 2.0 * w * x - w * w)

        out = out + m.sliding_layers * unit * (banded(prompt) - banded(prefix))
    return out


# --- static batches ---------------------------------------------------------------------------

def _bracket(found, limit, above: int, below: int, lo: float, hi: float):
    """(lo, hi) narrowed by the steps in `found` (a count to its parts): a count at or below
    `limit` where parts[above] does not exceed parts[below] bounds first_count from below
    (rounded down), one where it does from above (rounded up)."""
    floor, ceil = math.floor, math.ceil
    for j, parts in found.items():
        if j > limit:
            continue
        if parts[above] > parts[below]:
            up = float(ceil(j))
            if up < hi:
                hi = up
        else:
            down = float(floor(j))
            if down > lo:
                lo = down
    return lo, hi


def _first_holding(known, probed, step, batch, lo, hi, above: int, below: int):
    """first_count(batch, lambda j: parts(j)[above] > parts(j)[below], lo, hi) for one scalar
    count, over the steps already worked (`known`, full parts) and those the bisection adds to
    `probed` (what step(j, False) gives: all the comparison reads)."""
    floor = math.floor
    while hi - lo > 1:
        mid = float(floor((lo + hi) / 2.0))
        j = mid if mid > 1.0 else 1.0
        parts = known.get(j)
        if parts is None:
            parts = probed.get(j)
            if parts is None:
                parts = probed[j] = step(j, False)
        if parts[above] > parts[below]:
            hi = mid
        else:
            lo = mid
    return hi


_H_SMALL = [0.0]
for _i in range(1, 64):
    _H_SMALL.append(_H_SMALL[-1] + 1.0 / _i)


def harmonic(n):
    """H_n = 1 + 1/2 + ... + 1/n (0 for n < 1): the expected longest of n exponential lengths,
    in means; exact below 64, by its asymptotic expansion above."""
    if type(n) not in _PLAIN:
        np = _np()
        nn = np.maximum(n, 1).astype(float)
        table = np.asarray(_H_SMALL)
        small = table[np.minimum(nn, 63).astype(int)]
        large = np.log(nn) + 0.5772156649015329 + 1.0 / (2 * nn) - 1.0 / (12 * nn * nn)
        return np.where(n >= 1, np.where(nn < 64, small, large), 0.0)
    if n < 1:
        return 0.0
    n = int(n)
    if n < 64:
        return _H_SMALL[n]
    return math.log(n) + 0.5772156649015329 + 1.0 / (2 * n) - 1.0 / (12 * n * n)


def _ladder() -> tuple[int, ...]:
    """Active-sequence counts at which a draining static batch is sampled: every count up to 8,
    then steps of a half, so a batch of 10,000 needs 26 samples."""
    rungs = list(range(1, 9))
    while rungs[-1] < 10**9:
        rungs.append(rungs[-1] * 3 // 2)
    return tuple(rungs)


LADDER = _ladder()


def static_ladder_sum(batch, tpot_at, low=0.0):
    """Decode time of a static batch per average output length, with output lengths taken as
    exponential: the batch runs with all `batch` sequences for 1/batch of a mean length, then
    batch-1 for 1/(batch-1), and so on down to the last straggler, so the time is the sum over j
    of tpot_at(j)/j (with `low`, over the counts above it only). Between two rungs of LADDER the
    sum is taken at the counts' harmonic mean, which is exact wherever the step time is linear
    in j."""
    array = hasattr(batch, "shape")
    if not array:
        total = 0.0
        for count, mid in ladder_rungs(batch, low):
            total += count * tpot_at(mid) / mid
        return total
    top = _np().nanmax(batch) if batch.size else 0
    prev_edge = vmin(low, batch)
    total, prev_h = 0.0, harmonic(prev_edge)
    for rung in LADDER:
        edge = vmin(vmax(float(rung), low), batch)
        h = harmonic(edge)
        count = edge - prev_edge
        if array:
            live = count > 0
            mid = _np().where(live, count / _np().where(live, h - prev_h, 1.0), 1.0)
            total = total + _np().where(live, count * tpot_at(mid) / mid, 0.0)
        elif count > 0:
            mid = count / (h - prev_h)
            total += count * tpot_at(mid) / mid
        prev_edge, prev_h = edge, h
        if rung >= top:
            break
    return total


_RUNGS: dict = {}


def ladder_rungs(batch, low=0.0) -> tuple:
    """(count, harmonic mean) of each stretch of LADDER a scalar static_ladder_sum adds up, from
    `low` to `batch`, worked once per pair: the rungs are plain numbers, so the levers and
    fidelities of one deployment, which drain the same batch, reuse them."""
    key = (batch, low)
    found = _RUNGS.get(key)
    if found is not None:
        return found
    out = []
    prev_edge = vmin(low, batch)
    prev_h = harmonic(prev_edge)
    for rung in LADDER:
        edge = vmin(vmax(float(rung), low), batch)
        h = harmonic(edge)
        count = edge - prev_edge
        if count > 0:
            out.append((count, count / (h - prev_h)))
        prev_edge, prev_h = edge, h
        if rung >= batch:
            break
    if len(_RUNGS) > 4096:
        _RUNGS.clear()
    found = _RUNGS[key] = tuple(out)
    return found


def share_rungs(batch, kv_from, compute_from) -> tuple:
    """(count, harmonic mean, which share) of each stretch static_verdict_shares adds up for a
    scalar batch: LADDER's rungs split at the last weight-bound count `kv_from` and the last
    KV-bound count `compute_from` (0 the weights' share, 1 the KV's, 2 compute's); worked once per
    triple, like ladder_rungs."""
    key = (batch, kv_from, compute_from)
    found = _RUNGS.get(key)
    if found is not None:
        return found
    out = []
    edges = sorted({min(max(float(r), 0.0), batch) for r in LADDER if r < batch} | {batch, kv_from, compute_from})
    prev_edge, prev_h = 0.0, 0.0
    for edge in edges:
        count = edge - prev_edge
        if count > 0:
            h = harmonic(edge)
            out.append((count, count / (h - prev_h), 0 if edge <= kv_from else 1 if edge <= compute_from else 2))
            prev_h = h
        prev_edge = edge
    if len(_RUNGS) > 4096:
        _RUNGS.clear()
    found = _RUNGS[key] = tuple(out)
    return found


def first_count(batch, holds, lo=None, hi=None):
    """The fewest sequences in flight, from 1 to `batch`, at which `holds(j)` is true (batch + 1
    where it never is), for a condition that stays true once it holds as j grows: a bisection,
    elementwise over arrays. `lo` (where it is false, or 0) and `hi` (where it holds, or
    batch + 1) narrow the search when some counts are already known."""
    lo = 0.0 * batch if lo is None else lo
    hi = batch + 1.0 if hi is None else hi
    if type(batch) in _PLAIN and type(lo) in _PLAIN and type(hi) in _PLAIN:   # the same steps, for one count
        while hi - lo > 1:
            mid = float(math.floor((lo + hi) / 2.0))
            if holds(mid if mid > 1.0 else 1.0):
                hi = mid
            else:
                lo = mid
        return hi
    while True:
        gap = hi - lo
        if not (gap.max() > 1 if hasattr(gap, "shape") and gap.size else gap > 1):
            return hi
        mid = vfloor((lo + hi) / 2.0)
        ok = holds(vmax(mid, 1.0))
        wide = gap > 1
        hi = where(wide & ok, mid, hi) if hasattr(gap, "shape") else (mid if ok else hi)
        lo = where(wide & ~ok, mid, lo) if hasattr(gap, "shape") else (lo if ok else mid)


def static_verdict_shares(batch, step_at):
    """(compute, KV, weights): the share of a draining static batch's decode time during which
    each decode verdict holds. With j sequences left a step is compute-bound once its FLOP time
    passes its memory time, and otherwise waits on the KV read once that passes the weight read;
    both hold from some count upward (the FLOPs and the KV read grow as j, the weight read and the
    GEMMs' whole-tile cost counted with it, tile_seconds, at most as j and ever more slowly), so
    two bisections find the counts and the ladder sums the time on each side."""
    def tpot(j):
        return step_at(j)[7]

    def compute_bound(j):
        parts = step_at(j)
        return parts[4] > parts[3]

    def kv_bound(j):
        parts = step_at(j)
        return parts[1] > parts[0]

    j_compute = vmin(first_count(batch, compute_bound), batch + 1.0)
    j_kv = vmin(first_count(batch, kv_bound), j_compute)
    if hasattr(batch, "shape"):
        compute = static_ladder_sum(batch, tpot, j_compute - 1.0)
        kv = static_ladder_sum(j_compute - 1.0, tpot, j_kv - 1.0)
        weights = static_ladder_sum(j_kv - 1.0, tpot)
    else:   # one pass over the ladder, its rungs split at the two counts (the same sums)
        sums = [0.0, 0.0, 0.0]
        for count, mid, which in share_rungs(batch, j_kv - 1.0, j_compute - 1.0):
            sums[which] += count * tpot(mid) / mid
        weights, kv, compute = sums
    total = compute + kv + weights
    return _div(compute, total), _div(kv, total), _div(weights, total)


def static_drain(p, batch, kv_seq_read, draft_held, spec_on):
    """(decode time per average output length, verdict shares) of one scalar static batch: what
    static_decode_per_token and static_verdict_shares give, with each count's step worked once
    (`p.step_kernel`) and kept for the rest of the drain: the time sum's rungs, then the two
    searches (which start from the counts already worked, and probe without the parts only the
    time needs), then the shares' sum, whose rungs are the time sum's split at the two counts."""
    step = p.step_kernel(kv_seq_read, draft_held)
    known, probed = {}, {}
    # The searches start from a bracket of the counts already worked (a count where the condition
    # fails bounds it from below, rounded down, one where it holds from above, rounded up),
    # gathered as the time sum works them; should the two disagree (a condition that did not hold
    # from some count upward, which static_verdict_shares rules out) the search spans every count.
    top = batch + 1.0
    c_lo, c_hi, k_lo, k_hi = 0.0, top, 0.0, top
    if not p.real and not p.m.experts and not spec_on:
        per_token = static_decode_per_token(p, batch, kv_seq_read, draft_held, False, False)
    else:   # static_ladder_sum's scalar sum: the same terms in the same order
        per_token = 0.0
        floor, ceil = math.floor, math.ceil
        for count, mid in ladder_rungs(batch, 0.0):   # every rung is at most the batch
            parts = known.get(mid)
            if parts is None:
                parts = known[mid] = step(mid)
                up, down = float(ceil(mid)), float(floor(mid))
                if parts[4] > parts[3]:   # compute-bound here: j_compute is at most this count
                    c_hi = up if up < c_hi else c_hi
                else:
                    c_lo = down if down > c_lo else c_lo
                if parts[1] > parts[0]:   # KV over weights here: likewise for j_kv
                    k_hi = up if up < k_hi else k_hi
                else:
                    k_lo = down if down > k_lo else k_lo
            per_token += count * parts[7] / mid
    if not known or not c_lo < c_hi:
        c_lo, c_hi = 0.0, top
    j_compute = _first_holding(known, probed, step, batch, c_lo, c_hi, 4, 3)
    j_compute = j_compute if j_compute < top else top
    limit = j_compute - 1.0
    if limit < batch:   # the bracket of the counts below j_compute only
        k_lo, k_hi = _bracket(known, limit, 1, 0, 0.0, limit + 1.0)
    k_lo, k_hi = _bracket(probed, limit, 1, 0, k_lo, k_hi)
    if not (known or probed) or not k_lo < k_hi:
        k_lo, k_hi = 0.0, top
    j_kv = _first_holding(known, probed, step, batch, k_lo, k_hi, 1, 0)
    j_kv = j_kv if j_kv < j_compute else j_compute
    sums = [0.0, 0.0, 0.0]
    for count, mid, which in share_rungs(batch, j_kv - 1.0, j_compute - 1.0):
        parts = known.get(mid)
        if parts is None:
            parts = known[mid] = step(mid)
        sums[which] += count * parts[7] / mid
    weights, kv, compute = sums
    total = compute + kv + weights
    return per_token, (_div(compute, total), _div(kv, total), _div(weights, total))


def static_dense_sum(batch, weight_s, kv_s, flop_s, fixed_s=0.0, per_seq_s=0.0):
    """The same sum for a dense model without speculation, exactly: with j sequences left a step
    takes max(weight_s + j*kv_s, j*flop_s) + fixed_s + j*per_seq_s, so tpot(j)/j is
    memory-bound below j* = weight_s / (flop_s - kv_s) and compute-bound from there on."""
    gap = flop_s - kv_s
    crossover = vceil(weight_s / where(gap > 0, gap, 1.0)) - 1.0
    n_mem = where(gap > 0, vmin(batch, vmax(0.0, crossover)), batch)
    return (weight_s * harmonic(n_mem) + n_mem * kv_s + (batch - n_mem) * flop_s
            + fixed_s * harmonic(batch) + batch * per_seq_s)


# --- steady state -----------------------------------------------------------------------------

def throughput(batch, output, prefill_each, decode_time):
    """Output tokens per second when each of `batch` sequences costs one prefill (charged at its
    batched compute time) and `output` decode tokens taking `decode_time` in all."""
    return batch * output / (batch * prefill_each + decode_time)


def prefill_share(batch, prefill_each, decode_time):
    """The prefill term's part of a sequence's GPU time."""
    return batch * prefill_each / (batch * prefill_each + decode_time)


def cost_per_million(price, gpus, tokens_per_s):
    """Dollars per million output tokens at `price` per GPU-hour."""
    return price * gpus / 3600.0 / tokens_per_s * 1e6


# --- the whole analysis, once, over floats or arrays ------------------------------------------

NUMERIC = ("gpus", "prompt", "output", "concurrency", "reserve_gib", "mfu", "price",
           "shared_prefix", "spec_k", "spec_alpha", "spec_draft_cost", "max_output")
_DEFAULTS = {"moe_route_reuse": 0.5, "allreduces_per_layer": 2, "activation_bytes": 2.0,
             "per_layer_overhead_us": 15.0, "per_step_overhead_us": 100.0, "low_precision_efficiency": 0.8,
             "bandwidth_efficiency": 1.0, "kv_bandwidth_efficiency": 1.0, "moe_efficiency": 1.0,
             "compute_efficiency": 1.0, "compute_half_tokens": 0.0, "overlap_sharpness": 64.0,
             "attention_efficiency": 1.0, "attention_half_tokens": 0.0, "elementwise_bytes_per_value": 0.0,
             "link_efficiency": 1.0, "prefill_batch_tokens": 8192, "kv8_dequant_flops": 0.0}
_CONSTANTS: dict | None = None


def constants() -> dict:
    """The corrections' calibrated values (engine/data/corrections.toml), read once."""
    global _CONSTANTS
    if _CONSTANTS is None:
        from engine.catalog import builtin_catalog

        merged = dict(_DEFAULTS)
        merged.update(builtin_catalog().corrections)
        _CONSTANTS = merged
    return _CONSTANTS


def compute_precision(dep) -> str:
    """The precision the matrix units run at: the weights' where the chip has it natively
    (INT4 never), else BF16 (weights are upcast)."""
    return dep.weights if dep.weights != _INT4 and dep.gpu.native(dep.weights) else "bf16"


def attention_precision(dep) -> str:
    """The precision attention computes in: the KV cache's where the chip has it natively, else
    BF16 (a 16-bit cache is attended in 16 bits whatever the weights are)."""
    return dep.kv if dep.kv in _EIGHT_BIT and dep.gpu.native(dep.kv) else "bf16"


def effective_peak(dep, precision: str, realistic: bool, c: dict) -> float:
    """Dense peak FLOP/s at `precision`; the realistic fidelity takes 8-bit arithmetic at its
    achieved share of the datasheet figure."""
    peak = dep.gpu.peak_flops(precision)
    if realistic and precision in _EIGHT_BIT:
        peak *= c["low_precision_efficiency"]
    return peak


def numeric_inputs(dep) -> dict:
    """A deployment's numeric fields as floats, with the reserve resolved per GPU (kept on the
    immutable deployment after the first call; callers must not change the dict)."""
    cached = dep.__dict__.get("_numeric")
    if cached is None:
        d = dep.__dict__
        cached = {name: d[name] for name in NUMERIC}
        cached["reserve_gib"] = dep.reserve_gib_per_gpu
        d["_numeric"] = cached
    return cached


def embedding_params(model) -> int:
    """Parameters of the token embedding and the output head (one matrix when they are tied)."""
    return model.vocab * model.hidden * (1 if model.tied_embeddings else 2)


def checkpoint_weight_bytes(model, bytes_per_weight: float, realistic: bool) -> float:
    """Bytes the weights occupy. The floor counts every parameter at the stated precision (the
    course's convention); real quantized checkpoints keep the embedding and the output head in
    16 bits, which the realistic fidelity counts."""
    if not realistic or bytes_per_weight >= 2.0:
        return model.params * bytes_per_weight
    emb = embedding_params(model)
    return (model.params - emb) * bytes_per_weight + emb * 2.0


def smooth_max(a, b, sharpness):
    """max(a, b) with a soft corner: a kernel near the ridge is slower than either bound alone,
    since it neither streams memory nor keeps the tensor cores full. A large sharpness is the max."""
    if type(a) in _PLAIN and type(b) in _PLAIN:
        hi, lo = (a, b) if a > b else (b, a)
        return hi * (1.0 + (lo / hi) ** sharpness) ** (1.0 / sharpness) if hi > 0 else 0.0
    np = _np()
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    safe = np.where(hi > 0, hi, 1.0)
    return np.where(hi > 0, hi * (1.0 + (lo / safe) ** sharpness) ** (1.0 / sharpness), 0.0)


def ramped_seconds(flops, rows, half, rate):
    """Time for `flops` of matrix multiplies with `rows` rows (tokens in the step) at `rate`: a
    GEMM computes whole tiles, so it reaches rows / (rows + half) of the rate; small batches run
    far from peak, large ones near it. Zero rows, zero time."""
    if type(rows) in _PLAIN:
        return flops * (rows + half) / (rows * rate) if rows > 0 else 0.0 * flops
    np = _np()
    safe = np.where(rows > 0, rows, 1.0)
    return np.where(rows > 0, flops * (rows + half) / (safe * rate), 0.0 * flops)


def tile_seconds(row_flops, rows, half, rate):
    """The part of ramped_seconds(row_flops * rows, rows, half, rate) that pays for whole tiles
    rather than for the rows: `half` rows' worth of `row_flops` (one row's FLOPs through the GEMM),
    the same at any count of rows, a time set by the weights (per output tile), not by the tokens.
    A pass counts it on the memory side. At a few rows a GEMM is a matrix-vector product
    whose time is streaming the weight tiles; its shortfall from the peak is tile and launch
    granularity, not arithmetic (Frantar et al., MARLIN, arXiv:2408.11743: small-batch GEMMs stay
    memory-bound up to about 16-32 rows). Charged as FLOPs, a 1/8 shard of a small model at batch
    1 reads as compute-bound. Only the split moves: the pass's time is the ramp's as before."""
    return where(rows > 0, row_flops * half / rate, 0.0)


class PassShape:
    """One forward pass, per tensor-parallel group: tokens through the linear layers, rows through
    the output head, independent routing draws (a mixture of experts), KV bytes and attention
    FLOPs. The fields are floats or arrays."""

    __slots__ = ("tokens", "rows", "route", "kv_bytes", "attn_flops", "attn_length")

    def __init__(self, tokens, rows, route, kv_bytes, attn_flops, attn_length=1.0):
        self.tokens, self.rows, self.route, self.kv_bytes, self.attn_flops = tokens, rows, route, kv_bytes, attn_flops
        self.attn_length = attn_length   # tokens each prompt's attention runs over


class SharedPasses:
    """The Passes of one solve's analyses, called as a factory in place of Passes: analyses whose
    deployments differ only in what a Passes never reads (scheduler, allocator, lengths,
    concurrency, prefix, chunking, objective) get the same one, set up once, and with it the
    decode steps already worked (a lever's drain ladder repeats the base's rungs). A solve keeps
    its own, so nothing outlives it."""

    __slots__ = ("found", "memories", "kin")

    def __init__(self) -> None:
        self.found = {}
        self.memories = {}
        self.kin = {}   # the first Passes of each (model, GPU, weights, ...) with any KV precision and speculation

    def memory(self, dep, n):
        """memory_stage(dep, n, False), worked once per distinct input in the solve. The key holds
        everything the stage reads. The fidelity enters only where it moves the figures (a weight
        precision under 16 bits, whose checkpoint keeps 16-bit embeddings and whose 8-bit peak is
        derated, or a named draft model): otherwise the floor's stage is the realistic one, so a
        realistic solve's floor analyses reuse it, as does a lever that leaves memory alone
        (chunked prefill)."""
        real = dep.fidelity != _FLOOR and (PRECISION_BYTES[dep.weights] < 2.0 or dep.draft_model is not None)
        key = (id(dep.model), id(dep.gpu), id(dep.draft_model) if real else 0, real, dep.weights, dep.kv,
               dep.scheduler, dep.allocator, dep.prefix_caching, n["gpus"], n["prompt"], n["output"],
               n["concurrency"], n["spec_k"] > 0, n["shared_prefix"], n["reserve_gib"], n["max_output"])
        found = self.memories.get(key)
        if found is None:
            found = self.memories[key] = memory_stage(dep, n, False)
        return found

    def __call__(self, dep, n, make=None):
        make = Passes if make is None else make
        kin_key = (make, id(dep.model), id(dep.gpu), id(dep.draft_model), dep.weights, dep.fidelity, n["gpus"], n["mfu"])
        key = (kin_key, dep.kv, n["spec_k"], n["spec_alpha"], n["spec_draft_cost"])
        found = self.found.get(key)
        if found is None:
            # The KV-quantization and speculation levers change only what Passes.sibling redoes
            # (realistic only: the floor's set-up is cheaper than the copy).
            derive = make is Passes and dep.fidelity != _FLOOR
            kin = self.kin.get(kin_key) if derive else None
            found = self.found[key] = make(dep, n) if kin is None else kin.sibling(dep, n)
            found._decoded, found._drains = {}, {}
            if kin is None and derive:
                self.kin[kin_key] = found
        return found

    def of(self, make):
        """A factory sharing `make`'s passes (the measured kind) the same way."""
        return lambda dep, n: self(dep, n, make)


class Passes:
    """The time of every forward pass one deployment runs, at its fidelity, written once.

    Floor: the course's roofline, max(bytes / bandwidth, FLOPs / peak) over all GPUs, with perfect
    tensor parallelism and nothing else. Realistic: each correction of DESIGN.md ("Three
    fidelities"), with the constants of corrections.toml: matrix multiplies at an achieved share of
    bandwidth and of a peak that ramps with the tokens in the step, a soft corner between the two
    (the ramp's whole-tile cost counted on the memory side);
    the output head (and embeddings) in 16 bits; attention's own kernel, at 16 bits where the cache
    is; a per-layer and a per-step fixed time; all-reduces over the accelerator's link; GPUs
    beyond the tensor-parallel domain as separate groups. Methods take floats or numpy arrays.
    """

    def __init__(self, dep, n: dict, c: dict | None = None) -> None:
        m, g = dep.model, dep.gpu
        c = constants() if c is None else c
        self.dep, self.m, self.c, self.n = dep, m, c, n
        self.real = real = dep.fidelity != _FLOOR
        gpus = n["gpus"]
        self.gpus, self.mfu = gpus, n["mfu"]
        self.k, self.alpha = n["spec_k"], n["spec_alpha"]
        self.need_spec = type(self.k) not in _PLAIN or self.k > 0
        self.bpw = PRECISION_BYTES[dep.weights]
        self.precision = compute_precision(dep)
        self.peak = effective_peak(dep, self.precision, real, c)
        self.bw = g.bandwidth_tbps * 1e12
        self.fpt = 2.0 * m.active_params
        self.token_kv_bytes = m.kv_values_per_token * PRECISION_BYTES[dep.kv] * kv_replication(gpus, m.kv_heads, m.is_mla)
        self.reuse = c["moe_route_reuse"]
        self.expected = spec_expected_tokens(self.k, self.alpha)
        if real:
            self.tp, self.groups = tp_layout(gpus, float(g.tp_domain))
        else:
            self.tp, self.groups = gpus, 1.0 + 0.0 * gpus
        self.per_pass = c["per_step_overhead_us"] * 1e-6
        self._fast = None
        self._last_attention = None   # (prompt, prefix, attention FLOPs): see _attention
        self._decoded = None   # a memo of scalar decode steps, kept by the Passes a solve shares (SharedPasses)
        self._drains = None    # and of static drains: (batch, KV read, draft KV) -> (decode per token, shares)
        if not real:
            self.overhead = 0.0
            return
        # Realistic: the parameter split a pass reads (worked out once per model and precision),
        # and the fixed times.
        # (kept per precision: a solve's quantization lever alternates with the base's)
        splits = m.__dict__.get("_pass_split")
        if splits is None:
            splits = m.__dict__["_pass_split"] = {}   # a cache on the immutable spec, like numeric_inputs
        split = splits.get(self.bpw)
        if split is None:
            emb = embedding_params(m)
            routed = m.moe_layers * m.experts * m.expert_params
            active_experts = m.moe_layers * m.experts_per_token * m.expert_params
            split = splits[self.bpw] = (self.bpw, m.vocab * m.hidden * max(2.0, self.bpw),
                                        (m.params - emb - routed) * self.bpw, 2.0 * m.vocab * m.hidden,
                                        2.0 * (m.active_params - emb - active_experts), 2.0 * active_experts)
        _, self.head_bytes, self.body_bytes, self.head_flops, self.body_flops, self.expert_flops = split
        self.attn_peak_16 = g.peak_flops("bf16")   # the output head and a low-precision cache's conversion
        self.attn_peak = effective_peak(dep, attention_precision(dep), True, c)
        self.kv8 = PRECISION_BYTES[dep.kv] < 2
        self.kv_value_bytes = PRECISION_BYTES[dep.kv]
        self.overhead = step_overhead_seconds(m.layers, c["per_layer_overhead_us"] * 1e-6, self.per_pass)
        link = g.link_gbps * 1e9 * c["link_efficiency"]
        fixed = allreduce_seconds(0.0, m.hidden, self.tp, m.layers, g.allreduce_latency_us * 1e-6, link,
                                  c["allreduces_per_layer"], c["activation_bytes"])
        ring = 2.0 * (self.tp - 1.0) / self.tp
        per_token = m.layers * c["allreduces_per_layer"] * ring * m.hidden * c["activation_bytes"] / link
        self.comm_coeffs = (fixed, per_token)
        self._draft = None
        if type(gpus) in _PLAIN and type(self.mfu) in _PLAIN:
            # A scalar decode step's terms that do not depend on its batch, worked once (_pass):
            # each is the very expression _realistic evaluates, so the floats are the same.
            tp, bw = self.tp, self.bw
            body_bw = tp * bw * c["bandwidth_efficiency"]
            t_body_m, t_head_m = self.body_bytes / body_bw, self.head_bytes / body_bw
            rate = tp * self.peak * self.mfu * c["compute_efficiency"]
            rate16 = tp * self.attn_peak_16 * self.mfu * c["compute_efficiency"]
            half = c["compute_half_tokens"]
            self._fast = (body_bw, rate, rate16, half, c["overlap_sharpness"], t_body_m, t_head_m, t_body_m + t_head_m,
                          self.body_bytes + self.head_bytes, tp * bw * c["kv_bandwidth_efficiency"],
                          c["elementwise_bytes_per_value"], fixed, per_token, self.overhead,
                          tile_seconds(self.body_flops, 1.0, half, rate),
                          tile_seconds(self.head_flops, 1.0, half, rate16))

    def sibling(self, dep, n: dict) -> "Passes":
        """The Passes of `dep`, whose deployment differs from this one's at most in its KV
        precision and speculation settings (same model, GPU, weights, draft model, fidelity, GPU
        count and MFU: SharedPasses checks): a copy with what those settings feed worked afresh by
        __init__'s own expressions, instead of the whole set-up (a solve's KV-quantization and
        speculation levers would otherwise repeat it). Memos start empty."""
        new = object.__new__(Passes)
        new.__dict__.update(self.__dict__)
        m = self.m
        new.dep, new.n = dep, n
        new.k, new.alpha = n["spec_k"], n["spec_alpha"]
        new.need_spec = type(new.k) not in _PLAIN or new.k > 0
        new.token_kv_bytes = m.kv_values_per_token * PRECISION_BYTES[dep.kv] * kv_replication(n["gpus"], m.kv_heads,
                                                                                              m.is_mla)
        new.expected = spec_expected_tokens(new.k, new.alpha)
        new._last_attention = new._decoded = new._drains = None
        if self.real:
            new.attn_peak = effective_peak(dep, attention_precision(dep), True, self.c)
            new.kv8 = PRECISION_BYTES[dep.kv] < 2
            new.kv_value_bytes = PRECISION_BYTES[dep.kv]
            new._draft = None
        return new

    # -- realistic building blocks (per tensor-parallel group) --------------------------------

    def comm(self, tokens):
        """All-reduces of one pass over `tokens` tokens in a group (zero at the floor)."""
        if not self.real:
            return 0.0 * tokens
        fixed, per_token = self.comm_coeffs
        return fixed + per_token * tokens

    def _realistic(self, s: PassShape):
        """(weight bytes, FLOPs, memory s, compute s, extra s, pass s) of one realistic pass. The
        memory side holds the GEMMs' whole-tile cost (tile_seconds), the compute side the FLOPs the
        tokens bring; the pass's time is the soft corner of each GEMM's two bounds."""
        m, c, tp = self.m, self.c, self.tp
        bw = tp * self.bw * c["bandwidth_efficiency"]
        rate = tp * self.peak * self.mfu * c["compute_efficiency"]
        half, sharp = c["compute_half_tokens"], c["overlap_sharpness"]
        w_body, w_head = self.body_bytes, self.head_bytes
        f_body, f_head = self.body_flops * s.tokens, self.head_flops * s.rows
        t_body_m, t_body_c = w_body / bw, ramped_seconds(f_body, s.tokens, half, rate)
        t_head_m = w_head / bw
        rate16 = tp * self.attn_peak_16 * self.mfu * c["compute_efficiency"]
        t_head_c = ramped_seconds(f_head, s.rows, half, rate16)
        lin = smooth_max(t_body_m, t_body_c, sharp) + smooth_max(t_head_m, t_head_c, sharp)
        tile = tile_seconds(self.body_flops, s.tokens, half, rate) + tile_seconds(self.head_flops, s.rows, half, rate16)
        mem_t, comp_t = t_body_m + t_head_m + tile, t_body_c + t_head_c - tile
        w_bytes = w_body + w_head
        flops = f_body + f_head
        if m.experts:
            touched = experts_touched(m.experts, m.experts_per_token, s.route)
            w_exp = m.moe_layers * touched * m.expert_params * self.bpw
            f_exp = self.expert_flops * s.tokens
            eff = c["moe_efficiency"]
            rows = s.tokens * m.experts_per_token / vmax(touched, 1.0)
            t_exp_m, t_exp_c = w_exp / (bw * eff), ramped_seconds(f_exp, rows, half, rate * eff)
            lin = lin + smooth_max(t_exp_m, t_exp_c, sharp)
            tile = tile_seconds(self.expert_flops * vmax(touched, 1.0) / m.experts_per_token, rows, half, rate * eff)
            mem_t, comp_t = mem_t + t_exp_m + tile, comp_t + t_exp_c - tile
            w_bytes, flops = w_bytes + w_exp, flops + f_exp
        t_kv = s.kv_bytes / (tp * self.bw * c["kv_bandwidth_efficiency"])
        if self.kv8:   # a low-precision cache is dequantized as it streams: a bound of its own, but
            # never slower than reading the same cache at 16 bits
            values = s.kv_bytes / self.kv_value_bytes
            dequant = values * c["kv8_dequant_flops"] / (tp * self.attn_peak_16)
            t_kv = vmin(vmax(t_kv, dequant), t_kv * (2.0 / self.kv_value_bytes))
        t_attn = ramped_seconds(s.attn_flops, s.attn_length, c["attention_half_tokens"],
                                tp * self.attn_peak * self.mfu * c["attention_efficiency"])
        elementwise = m.layers * s.tokens * m.hidden * c["elementwise_bytes_per_value"] / self.bw
        extra = self.comm(s.tokens) + self.overhead
        total = lin + t_kv + t_attn + elementwise + extra
        return w_bytes, flops, mem_t + t_kv, comp_t + t_attn, extra, total

    def _pass(self, tokens, rows, route, kv_bytes, attn_flops=0.0, attn_length=1.0):
        """_realistic for one scalar pass (a decode step, a verification pass, a prefill): the
        same arithmetic in the same order, with the terms that do not depend on the pass taken
        from `_fast`, and no PassShape. A static batch works dozens of steps per analysis, and
        every analysis a prefill alone and batched, so the set-up is not paid again for each.
        Attention of no FLOPs (a decode step's) adds exactly zero, so it is left out."""
        body_bw, rate, rate16, half, sharp, t_body_m, t_head_m, mem_t, w_bytes, kv_bw, elem, fixed, per_token, \
            overhead, tile_body, tile_head = self._fast
        m = self.m
        f_body, f_head = self.body_flops * tokens, self.head_flops * rows
        t_body_c = f_body * (tokens + half) / (tokens * rate) if tokens > 0 else 0.0 * f_body
        t_head_c = f_head * (rows + half) / (rows * rate16) if rows > 0 else 0.0 * f_head
        hi, lo = (t_body_m, t_body_c) if t_body_m > t_body_c else (t_body_c, t_body_m)
        lin = hi * (1.0 + (lo / hi) ** sharp) ** (1.0 / sharp) if hi > 0 else 0.0
        hi, lo = (t_head_m, t_head_c) if t_head_m > t_head_c else (t_head_c, t_head_m)
        lin = lin + (hi * (1.0 + (lo / hi) ** sharp) ** (1.0 / sharp) if hi > 0 else 0.0)
        tile = (tile_body if tokens > 0 else 0.0) + (tile_head if rows > 0 else 0.0)   # tile_seconds, inline
        mem_t, comp_t = mem_t + tile, t_body_c + t_head_c - tile
        flops = f_body + f_head
        if m.experts:   # experts_touched, ramped_seconds, tile_seconds and smooth_max for scalars, inline
            c = self.c
            experts, picks = m.experts, m.experts_per_token
            if route <= 1:
                touched = float(picks) if route >= 1 else 0.0
            else:
                touched = experts * (1.0 - (1.0 - picks / experts) ** route)
            w_exp = m.moe_layers * touched * m.expert_params * self.bpw
            f_exp = self.expert_flops * tokens
            eff = c["moe_efficiency"]
            rows_e = tokens * picks / (touched if touched > 1.0 else 1.0)
            rate_e = rate * eff
            t_exp_m = w_exp / (body_bw * eff)
            t_exp_c = f_exp * (rows_e + half) / (rows_e * rate_e) if rows_e > 0 else 0.0 * f_exp
            hi, lo = (t_exp_m, t_exp_c) if t_exp_m > t_exp_c else (t_exp_c, t_exp_m)
            lin = lin + (hi * (1.0 + (lo / hi) ** sharp) ** (1.0 / sharp) if hi > 0 else 0.0)
            tile = self.expert_flops * (touched if touched > 1.0 else 1.0) / picks * half / rate_e \
                if rows_e > 0 else 0.0
            mem_t, comp_t = mem_t + t_exp_m + tile, comp_t + t_exp_c - tile
            w_bytes, flops = w_bytes + w_exp, flops + f_exp
        t_kv = kv_bytes / kv_bw
        if self.kv8:   # vmin(vmax(t_kv, dequant), the 16-bit read's time), inline
            values = kv_bytes / self.kv_value_bytes
            dequant = values * self.c["kv8_dequant_flops"] / (self.tp * self.attn_peak_16)
            slower = t_kv if t_kv > dequant else dequant
            cap = t_kv * (2.0 / self.kv_value_bytes)
            t_kv = slower if slower < cap else cap
        extra = fixed + per_token * tokens + overhead
        elementwise = m.layers * tokens * m.hidden * elem / self.bw
        if attn_flops:
            c = self.c
            t_attn = ramped_seconds(attn_flops, attn_length, c["attention_half_tokens"],
                                    self.tp * self.attn_peak * self.mfu * c["attention_efficiency"])
            return w_bytes, flops, mem_t + t_kv, comp_t + t_attn, extra, lin + t_kv + t_attn + elementwise + extra
        return w_bytes, flops, mem_t + t_kv, comp_t, extra, lin + t_kv + elementwise + extra

    # -- decode ------------------------------------------------------------------------------

    def plain_step(self, j, kv_seq_bytes):
        """One plain decode step (no speculation) of j sequences, in seconds."""
        if not self.real:
            mem = memory_seconds(weight_read_bytes(self.m, j, self.bpw) + j * kv_seq_bytes, self.gpus, self.bw)
            return vmax(mem, compute_seconds(self.fpt * j, self.gpus, self.peak, self.mfu))
        j = vmax(j, self.groups * vmin(j, 1.0))
        jg = j / self.groups
        if self._fast is not None and type(jg) in _PLAIN and type(kv_seq_bytes) in _PLAIN:
            return self._pass(jg, jg, jg, jg * kv_seq_bytes)[5]
        return self._realistic(PassShape(jg, jg, jg, jg * kv_seq_bytes, 0.0))[5]

    def decode(self, j, kv_seq_bytes, draft_held=None):
        """See _decode; a Passes that analyses share (SharedPasses) works each scalar step once."""
        memo = self._decoded
        if memo is None or type(j) not in _PLAIN or type(kv_seq_bytes) not in _PLAIN:
            return self._decode(j, kv_seq_bytes, draft_held)
        key = (j, kv_seq_bytes, draft_held)
        found = memo.get(key)
        if found is None:
            found = memo[key] = self._decode(j, kv_seq_bytes, draft_held)
        return found

    def _decode(self, j, kv_seq_bytes, draft_held=None):
        """One decode step with j sequences in flight, each reading `kv_seq_bytes` of KV (the
        verification pass when speculating): (weight bytes, KV bytes, FLOPs, memory s, compute s,
        extra s, step s, TPOT s). With several groups, fewer sequences than groups leave groups
        idle: the step lasts as long as the busiest group's, one sequence, so j counts as at
        least one sequence per group."""
        if not self.real:
            return self._floor_decode(j, kv_seq_bytes, draft_held)
        groups = self.groups
        if type(j) in _PLAIN and type(groups) in _PLAIN:   # vmax(j, groups * vmin(j, 1.0)), inline
            least = groups * (j if j < 1.0 else 1.0)
            j = j if j > least else least
        else:
            j = vmax(j, groups * vmin(j, 1.0))
        jg = j / groups
        kv_read = j * kv_seq_bytes
        scalar = self._fast is not None and type(jg) in _PLAIN and type(kv_seq_bytes) in _PLAIN
        if scalar:
            plain = self._pass(jg, jg, jg, jg * kv_seq_bytes)
        else:
            plain = self._realistic(PassShape(jg, jg, jg, jg * kv_seq_bytes, 0.0))
        if not self.need_spec:
            w, flops, mem_t, comp_t, extra, step = plain
            return groups * w, kv_read, groups * flops, mem_t, comp_t, extra, step, step
        k = self.k
        if scalar and type(k) in _PLAIN:
            w, flops, mem_t, comp_t, extra, step = self._pass(jg * (k + 1.0), jg * (k + 1.0),
                                                              routing_tokens(jg, k, self.reuse), jg * kv_seq_bytes)
        else:
            verify = PassShape(jg * (k + 1.0), jg * (k + 1.0), routing_tokens(jg, k, self.reuse), jg * kv_seq_bytes,
                               0.0)
            w, flops, mem_t, comp_t, extra, step = self._realistic(verify)
        tpot = (step + k * self.draft_token_seconds(j, plain[5], draft_held)) / self.expected
        return groups * w, kv_read, groups * flops, mem_t, comp_t, extra, step, tpot

    def step_kernel(self, kv_seq_bytes, draft_held=None):
        """_decode(j, kv_seq_bytes, draft_held) as a function of j alone, for a static batch's
        drain, which works the step at a score of counts with everything else fixed. For one
        count without speculation it is the very arithmetic of _decode and _pass (or
        _floor_decode), in the same order, with what does not depend on j looked up once: the
        same floats, at a third less of the work. With full=False it may return only what the
        verdict rules compare (parts 0, 1, 3 and 4: weight and KV bytes, memory and compute
        time), which a realistic step has without its soft corners (their powers are most of its
        cost). A Passes that times its steps its own way (the measured kind), arrays and
        speculation keep _decode (or their own decode)."""
        if type(self).decode is not Passes.decode:
            decode = self.decode
            return lambda j, full=True: decode(j, kv_seq_bytes, draft_held)
        scalar = type(kv_seq_bytes) in _PLAIN and type(self.gpus) in _PLAIN and type(self.mfu) in _PLAIN \
            and type(self.k) in _PLAIN
        if self.real:
            scalar = scalar and self._fast is not None and type(self.groups) in _PLAIN
        elif self.need_spec:
            scalar = scalar and self.dep.draft_model is None
        if not scalar:
            decode = self._decode
            return lambda j, full=True: decode(j, kv_seq_bytes, draft_held)
        if not self.real:
            return self._floor_kernel(kv_seq_bytes)
        if self.need_spec:
            return self._spec_kernel(kv_seq_bytes, draft_held)
        return self._real_kernel(kv_seq_bytes)

    def _floor_kernel(self, kv):
        """step_kernel at the floor: _floor_decode for one count (speculating only with the stated
        draft cost, not a named draft)."""
        m, bpw, fpt = self.m, self.bpw, self.fpt
        mem_den, comp_den = self.gpus * self.bw, self.gpus * self.peak * self.mfu
        dense_w = None if m.experts else weight_read_bytes(m, 1.0, bpw)   # the same for every count
        if self.need_spec:
            k, expected, cost = self.k, self.expected, self.n["spec_draft_cost"]
            k1, draws = k + 1.0, 1.0 + k * (1.0 - self.reuse)   # routing_tokens(j, k, reuse) = j * draws

            def spec_step(j, full=True):
                plain_w = dense_w if dense_w is not None else weight_read_bytes(m, j, bpw)
                kv_read = j * kv
                plain_mem = (plain_w + kv_read) / mem_den
                plain_comp = fpt * j / comp_den
                plain_step = plain_mem if plain_mem > plain_comp else plain_comp
                w = dense_w if dense_w is not None else weight_read_bytes(m, j * draws, bpw)
                flops = fpt * j * k1
                mem_t = (w + kv_read) / mem_den
                comp_t = flops / comp_den
                s = mem_t if mem_t > comp_t else comp_t
                return w, kv_read, flops, mem_t, comp_t, 0.0 * plain_step, s, (s + k * (cost * plain_step)) / expected

            return spec_step

        def step(j, full=True):
            plain_w = dense_w if dense_w is not None else weight_read_bytes(m, j, bpw)
            kv_read = j * kv
            flops = fpt * j
            plain_mem = (plain_w + kv_read) / mem_den
            plain_comp = flops / comp_den
            s = plain_mem if plain_mem > plain_comp else plain_comp
            return plain_w, kv_read, flops, plain_mem, plain_comp, 0.0 * s, s, s

        return step

    def _real_kernel(self, kv):
        """step_kernel in the realistic fidelity: _decode's idle-group clamp, then _pass over one
        plain decode step (its attention adds nothing), inline."""
        body_bw, rate, rate16, half, sharp, t_body_m, t_head_m, mem0, w0, kv_bw, elem, fixed, per_token, \
            overhead, tile_body, tile_head = self._fast
        tiles = tile_body + tile_head
        m, groups, bw = self.m, self.groups, self.bw
        body_flops, head_flops, expert_flops = self.body_flops, self.head_flops, self.expert_flops
        inv = 1.0 / sharp
        layers, hidden = m.layers, m.hidden
        experts, picks, moe_layers, expert_params, bpw = m.experts, m.experts_per_token, m.moe_layers, \
            m.expert_params, self.bpw
        eff = self.c["moe_efficiency"]
        exp_bw, rate_e = body_bw * eff, rate * eff
        kv8 = self.kv8
        if kv8:
            kvb, dq_flops = self.kv_value_bytes, self.c["kv8_dequant_flops"]
            dq_den, cap_factor = self.tp * self.attn_peak_16, 2.0 / self.kv_value_bytes

        def step(j, full=True):
            least = groups * (j if j < 1.0 else 1.0)
            j = j if j > least else least
            jg = j / groups
            f_body, f_head = body_flops * jg, head_flops * jg
            t_body_c = f_body * (jg + half) / (jg * rate) if jg > 0 else 0.0 * f_body
            t_head_c = f_head * (jg + half) / (jg * rate16) if jg > 0 else 0.0 * f_head
            tile = tiles if jg > 0 else 0.0
            mem_t, comp_t = mem0 + tile, t_body_c + t_head_c - tile
            w_bytes = w0
            if experts:
                if jg <= 1:
                    touched = float(picks) if jg >= 1 else 0.0
                else:
                    touched = experts * (1.0 - (1.0 - picks / experts) ** jg)
                w_exp = moe_layers * touched * expert_params * bpw
                f_exp = expert_flops * jg
                rows_e = jg * picks / (touched if touched > 1.0 else 1.0)
                t_exp_m = w_exp / exp_bw
                t_exp_c = f_exp * (rows_e + half) / (rows_e * rate_e) if rows_e > 0 else 0.0 * f_exp
                tile = expert_flops * (touched if touched > 1.0 else 1.0) / picks * half / rate_e if rows_e > 0 else 0.0
                mem_t, comp_t = mem_t + t_exp_m + tile, comp_t + t_exp_c - tile
                w_bytes = w_bytes + w_exp
            kv_bytes = jg * kv
            t_kv = kv_bytes / kv_bw
            if kv8:
                dequant = kv_bytes / kvb * dq_flops / dq_den
                slower = t_kv if t_kv > dequant else dequant
                cap = t_kv * cap_factor
                t_kv = slower if slower < cap else cap
            if not full:   # what names the verdict only: no soft corners, no fixed times
                return groups * w_bytes, j * kv, None, mem_t + t_kv, comp_t
            hi, lo = (t_body_m, t_body_c) if t_body_m > t_body_c else (t_body_c, t_body_m)
            lin = hi * (1.0 + (lo / hi) ** sharp) ** inv if hi > 0 else 0.0
            hi, lo = (t_head_m, t_head_c) if t_head_m > t_head_c else (t_head_c, t_head_m)
            lin = lin + (hi * (1.0 + (lo / hi) ** sharp) ** inv if hi > 0 else 0.0)
            flops = f_body + f_head
            if experts:
                hi, lo = (t_exp_m, t_exp_c) if t_exp_m > t_exp_c else (t_exp_c, t_exp_m)
                lin = lin + (hi * (1.0 + (lo / hi) ** sharp) ** inv if hi > 0 else 0.0)
                flops = flops + f_exp
            extra = fixed + per_token * jg + overhead
            s = lin + t_kv + layers * jg * hidden * elem / bw + extra
            return groups * w_bytes, j * kv, groups * flops, mem_t + t_kv, comp_t, extra, s, s

        return step

    def _spec_kernel(self, kv, draft_held):
        """step_kernel in the realistic fidelity when speculating: _decode's verification pass
        and drafted tokens for one count. With full=False only the verification pass, whose
        parts name the verdict."""
        passes, groups, k, expected = self._pass, self.groups, self.k, self.expected
        k1, draws = k + 1.0, 1.0 + k * (1.0 - self.reuse)   # routing_tokens(jg, k, reuse) = jg * draws
        cost = self.n["spec_draft_cost"]
        fixed_draft = vmax(0.0, 1.0 - cost) * self.per_pass   # draft_token_seconds' second term
        draft = None if self.dep.draft_model is None else self.draft_passes()

        def step(j, full=True):
            least = groups * (j if j < 1.0 else 1.0)
            j = j if j > least else least
            jg = j / groups
            kv_bytes = jg * kv
            w, flops, mem_t, comp_t, extra, s = passes(jg * k1, jg * k1, jg * draws, kv_bytes)
            if not full:
                return groups * w, j * kv, None, mem_t, comp_t
            if draft is None:
                drafted = cost * passes(jg, jg, jg, kv_bytes)[5] + fixed_draft
            else:
                drafted = draft.decode(j, draft_held)[6]
            return groups * w, j * kv, groups * flops, mem_t, comp_t, extra, s, (s + k * drafted) / expected

        return step

    def _floor_decode(self, j, kv_seq_bytes, draft_held):
        m, gpus, bw = self.m, self.gpus, self.bw
        kv_read = j * kv_seq_bytes
        plain_w = weight_read_bytes(m, j, self.bpw)
        if not self.need_spec and type(kv_read) in _PLAIN and type(gpus) in _PLAIN and type(self.mfu) in _PLAIN:
            # one count (a static batch's ladder works dozens): the same arithmetic, inline
            flops = self.fpt * j
            plain_mem = (plain_w + kv_read) / (gpus * bw)
            plain_comp = flops / (gpus * self.peak * self.mfu)
            step = plain_mem if plain_mem > plain_comp else plain_comp
            return plain_w, kv_read, flops, plain_mem, plain_comp, 0.0 * step, step, step
        plain_mem = memory_seconds(plain_w + kv_read, gpus, bw)
        plain_comp = compute_seconds(self.fpt * j, gpus, self.peak, self.mfu)
        plain_step = vmax(plain_mem, plain_comp)
        zero = 0.0 * plain_step
        if not self.need_spec:
            return plain_w, kv_read, self.fpt * j, plain_mem, plain_comp, zero, plain_step, plain_step
        k = self.k
        w = weight_read_bytes(m, routing_tokens(j, k, self.reuse), self.bpw)
        flops = self.fpt * j * (k + 1.0)
        mem_t = memory_seconds(w + kv_read, gpus, bw)
        comp_t = compute_seconds(flops, gpus, self.peak, self.mfu)
        step = vmax(mem_t, comp_t)
        tpot = (step + k * self.draft_token_seconds(j, plain_step, draft_held)) / self.expected
        return w, kv_read, flops, mem_t, comp_t, zero, step, tpot

    def draft_token_seconds(self, j, plain_step, draft_held=None):
        """One drafted token for j sequences. Realistic: a named draft's own pass (its weights,
        its KV cache, its communication and overhead), else the stated fraction of a realistic
        step plus a pass's scheduling and sampling. Floor: the stated fraction of a step, or a
        named draft's bare weight read if that is less, so the floor stays the optimistic bound."""
        cost = self.n["spec_draft_cost"]
        named = self.dep.draft_model
        if named is None:
            if self.real:
                return cost * plain_step + vmax(0.0, 1.0 - cost) * self.per_pass
            return cost * plain_step
        if not self.real:
            d_bytes = weight_read_bytes(named, j, self.bpw)
            d_core = vmax(memory_seconds(d_bytes, self.gpus, self.bw),
                          compute_seconds(2.0 * named.active_params * j, self.gpus, self.peak, self.mfu))
            return vmin(cost * plain_step, d_core)
        return self.draft_passes().decode(j, draft_held)[6]

    def draft_passes(self) -> "Passes":
        """The named draft model's own passes (same GPUs, precisions and fidelity, no speculation)."""
        if self._draft is None:
            n = dict(self.n)
            n["spec_k"] = 0.0 * self.k
            self._draft = Passes(self.dep.with_(model=self.dep.draft_model, draft_model=None, spec_k=0), n, self.c)
        return self._draft

    # -- prefill -----------------------------------------------------------------------------

    def prefill(self, fresh, prompt, prefix, batch=1.0):
        """A prefill pass of `batch` prompts of `prompt` tokens each, `fresh` of them uncached,
        in one group: (FLOPs of one prompt, compute s, weight-read s, communication s, pass s)."""
        m = self.m
        attn = self._attention(prompt, prefix)
        flops = self.fpt * fresh + attn
        if not self.real:
            comp = compute_seconds(flops * batch, self.tp, self.peak, self.mfu)
            mem = memory_seconds(weight_read_bytes(m, fresh * batch, self.bpw), self.tp, self.bw)
            return flops, comp, mem, 0.0 * comp, vmax(comp, mem)
        tokens = fresh * batch
        if self._fast is not None and type(tokens) in _PLAIN and type(attn) in _PLAIN and type(prompt) in _PLAIN:
            w, _, mem_t, comp_t, extra, total = self._pass(tokens, batch, tokens, 0.0 * tokens, attn * batch, prompt)
        else:
            s = PassShape(tokens, batch, tokens, 0.0 * tokens, attn * batch, prompt)
            w, _, mem_t, comp_t, extra, total = self._realistic(s)
        return flops, comp_t, mem_t, self.comm(tokens), total

    def _attention(self, prompt, prefix):
        """prefill_attention_flops(self.m, prompt, prefix), kept for the last scalar prompt: an
        analysis asks for it for the lone prefill and again for the batched one, with the very
        same numbers (matched by identity, so an int and a float of one value never share)."""
        last = self._last_attention
        if last is not None and last[0] is prompt and last[1] is prefix:
            return last[2]
        attn = prefill_attention_flops(self.m, prompt, prefix)
        if type(prompt) in _PLAIN and type(prefix) in _PLAIN:
            self._last_attention = (prompt, prefix, attn)
        return attn

    def prefill_charge(self, fresh, prompt, prefix, batch):
        """A request's share of the steady state's prefill time. Floor: its compute on all GPUs
        (prompts share their passes, so no weight read of their own). Realistic: one pass over as
        many prompts as the token budget of a batched prefill holds (at most the batch), divided
        among them and across the groups."""
        if not self.real:
            flops = self.fpt * fresh + self._attention(prompt, prefix)
            return compute_seconds(flops, self.gpus, self.peak, self.mfu)
        if type(fresh) in _PLAIN and type(batch) in _PLAIN:   # the same bounds for one count, inline
            fits = float(math.floor(self.c["prefill_batch_tokens"] / (fresh if fresh > 1.0 else 1.0)))
            fits = 1.0 if 1.0 > fits else fits
            most = batch if batch > 1.0 else 1.0
            per_pass = fits if fits < most else most
        else:
            per_pass = vmin(vmax(1.0, vfloor(self.c["prefill_batch_tokens"] / vmax(fresh, 1.0))), vmax(batch, 1.0))
        return self.prefill(fresh, prompt, prefix, per_pass)[4] / per_pass / self.groups

    def mixed(self, chunk, j, kv_seq_bytes, prompt, prefix=0.0, verify=False):
        """A chunked-prefill step: `chunk` tokens of a prompt (with its share of the prompt's
        attention) beside a decode step of j sequences (their verification pass, with `verify`,
        when speculating). Floor: the chunk's share of the prompt's prefill followed by the
        decode step, as the floor's chunked TTFT counts it. Realistic: one pass over both,
        reading the weights once."""
        fresh = prompt - prefix
        chunks = vmax(1.0, vceil(fresh / chunk))
        if not self.real:
            decode = where(j > 0, self.plain_step(vmax(j, 1.0), kv_seq_bytes), 0.0)
            return self.prefill(fresh, prompt, prefix)[4] / chunks + decode
        attn = prefill_attention_flops(self.m, prompt, prefix) / chunks
        jg = vmax(j, self.groups * vmin(j, 1.0)) / self.groups   # as a decode step counts them
        k = self.k if verify else 0.0
        tokens = jg * (k + 1.0)
        route = chunk + routing_tokens(jg, k, self.reuse)
        if self._fast is not None and type(tokens) in _PLAIN and type(route) in _PLAIN and type(attn) in _PLAIN \
                and type(kv_seq_bytes) in _PLAIN and type(prompt) in _PLAIN:   # one scalar pass: _pass
            return self._pass(chunk + tokens, tokens + 1.0, route, jg * kv_seq_bytes, attn, prompt)[5]
        s = PassShape(chunk + tokens, tokens + 1.0, route, jg * kv_seq_bytes, attn, prompt)
        return self._realistic(s)[5]


# --- the stages of one analysis -------------------------------------------------------------
# Each stage returns an immutable named tuple (collections.namedtuple: frozen and as light as a
# tuple; a frozen dataclass would import `dataclasses`, which costs a `ridge solve` process a
# third of its whole run). `evaluate` runs them in order and flattens their fields into the one
# dict of figures that the report, the grid and the verdict rules read.

Memory = namedtuple("Memory", (
    "weight_bytes", "kv_bytes_per_token", "kv_replication", "peak_flops", "compute_precision", "ridge",
    "seq_len_avg", "kv_tokens_held", "memory_bytes", "reserve_bytes", "usable_kv_bytes", "kv_bytes_per_sequence",
    "shared_kv_bytes", "draft_weight_bytes", "fits", "max_concurrency", "batch",
    "kv_seq_read", "prefix", "draft_held"))
Memory.__doc__ = """The memory stage: what is resident, what is left for the KV cache, the sequences it
holds and the batch (None from max_concurrency on where one deployment does not fit), with what the
time stages read from it: each sequence's KV bytes read per step, the cached prefix, and a named
draft's own KV bytes per sequence (None without one)."""

Prefill = namedtuple("Prefill", ("flops", "compute_seconds", "weight_seconds", "comm_seconds", "seconds",
                                 "charge_seconds", "ttft_seconds", "worst_stall_seconds"))
Prefill.__doc__ = """The prefill stage: one prompt alone (its FLOPs and time), its share of the steady
state's batched prefill, and with chunking the time to first token and the longest stall."""

Steady = namedtuple("Steady", ("decode_time_shares", "prefill_share", "throughput_tokens_per_s",
                               "cost_per_million_output_tokens", "capacity_ratio", "capped"))
Steady.__doc__ = """The steady state: a static batch's verdict shares, the prefill's share of a
sequence's GPU time, throughput, cost, and the wanted concurrency over what the cache holds."""


def evaluate(dep, n: dict, array: bool = False, passes=Passes, shared: SharedPasses | None = None) -> dict:
    """Every figure of the analysis for the categorical choices of `dep` (model, GPU, precisions,
    scheduler, allocator, switches, fidelity) and the numeric inputs `n` (floats, or, with
    `array`, numpy arrays that broadcast together), by stages: memory, then (for scalars only
    where it fits) the decode step, the prefill and the steady state. `passes` builds what times
    the forward passes (the measured fidelity hands in its own kind); `shared`, a solve's, lets
    its analyses share their memory stages."""
    mem = memory_stage(dep, n, array) if shared is None or array else shared.memory(dep, n)
    if not array and not mem.fits:
        return figures(array, mem)
    p = passes(dep, n)
    step = p.decode(mem.batch, mem.kv_seq_read, mem.draft_held)
    pre = prefill_stage(dep, n, mem, p, step[6])
    steady = steady_stage(dep, n, mem, p, step, pre.charge_seconds, array)
    return figures(array, mem, p, step, pre, steady)


def figures(array: bool, mem: Memory, p=None, step=None, pre: Prefill | None = None,
            steady: Steady | None = None) -> dict:
    """The stages' results as one dict of figures, by the names of the `ridge solve --json`
    contract and of the Report (`_array` says whether they are arrays)."""
    (weight_bytes, kv_tok, repl, peak, precision, ridge, seq, held, memory, reserve, usable, per_seq, shared, draft_w,
     fits, max_conc, batch, _, _, _) = mem   # unpacked at once: a dozen attribute reads cost more
    out = {"_array": array, "weight_bytes": weight_bytes, "kv_bytes_per_token": kv_tok, "kv_replication": repl,
           "peak_flops": peak, "compute_precision": precision, "ridge": ridge, "seq_len_avg": seq,
           "kv_tokens_held": held, "memory_bytes": memory, "reserve_bytes": reserve, "usable_kv_bytes": usable,
           "kv_bytes_per_sequence": per_seq, "shared_kv_bytes": shared, "draft_weight_bytes": draft_w,
           "fits": fits, "max_concurrency": max_conc}
    if step is None:
        return out
    step_w, kv_read, step_flops, mem_t, comp_t, extra, step_s, tpot = step
    prefill_flops, lone_comp, lone_mem, prefill_comm, prefill, charge, ttft, stall = pre
    shares, share, tput, cost, capacity, capped = steady
    # stored directly: half the cost of a second dict literal merged in
    out["batch"], out["tensor_parallel"], out["tp_groups"] = batch, p.tp, p.groups
    out["decode_weight_bytes_per_step"], out["decode_kv_bytes_per_step"] = step_w, kv_read
    out["decode_bytes_per_step"] = step_w + kv_read
    out["decode_flops_per_step"] = step_flops
    out["decode_memory_seconds"], out["decode_compute_seconds"] = mem_t, comp_t
    out["step_extra_seconds"], out["step_overhead_seconds"], out["step_seconds"] = extra, p.overhead, step_s
    out["tpot_seconds"], out["intensity"] = tpot, step_flops / (step_w + kv_read)
    out["prefill_flops"], out["prefill_compute_seconds"], out["prefill_weight_seconds"] = prefill_flops, lone_comp, lone_mem
    out["prefill_comm_seconds"], out["prefill_seconds"] = prefill_comm, prefill
    out["prefill_charge_seconds"] = charge
    out["ttft_seconds"], out["worst_stall_seconds"] = ttft, stall
    out["prefill_share"], out["throughput_tokens_per_s"], out["cost_per_million_output_tokens"] = share, tput, cost
    out["spec_expected_tokens"] = p.expected
    out["capped"], out["capacity_ratio"], out["decode_time_shares"] = capped, capacity, shares
    return out


def memory_stage(dep, n: dict, array: bool) -> Memory:
    """Weights, KV per token and per sequence, what is left for the cache, the most sequences it
    holds, whether the deployment fits, and the batch."""
    m, g = dep.model, dep.gpu
    real = dep.fidelity != _FLOOR
    gpus, prompt, output, conc = n["gpus"], n["prompt"], n["output"], n["concurrency"]
    k = n["spec_k"]
    bpw, kvb = PRECISION_BYTES[dep.weights], PRECISION_BYTES[dep.kv]
    precision = compute_precision(dep)
    peak = effective_peak(dep, precision, real, constants())
    bw = g.bandwidth_tbps * 1e12
    weight_bytes = checkpoint_weight_bytes(m, bpw, real)
    kv_tok = m.kv_values_per_token * kvb
    repl = kv_replication(gpus, m.kv_heads, m.is_mla)
    stored = kv_tok * repl
    seq = in_flight_length(prompt, output, dep.scheduler)
    held = tokens_held(seq, m.layers, m.sliding_layers, m.sliding_window)
    prefix = n["shared_prefix"] if dep.prefix_caching else 0.0 * prompt
    memory = gpus * g.memory_gib * GIB
    reserve = gpus * n["reserve_gib"] * GIB
    spec_on = k > 0
    draft = dep.draft_model if real else None
    draft_w = 0.0
    draft_tok = 0.0
    if draft is not None:
        draft_w = where(spec_on, checkpoint_weight_bytes(draft, bpw, real), 0.0)
        draft_tok = where(spec_on, draft.kv_values_per_token * kvb * kv_replication(gpus, draft.kv_heads, draft.is_mla), 0.0)
    usable = usable_kv_bytes(gpus, g.memory_gib, weight_bytes, n["reserve_gib"], draft_w)
    if dep.allocator == _PAGED:
        held_prefix = tokens_held(prefix, m.layers, m.sliding_layers, m.sliding_window)
        per_seq = stored * (held - held_prefix)
        if draft is not None:
            per_seq = per_seq + draft_tok * tokens_held(seq, draft.layers, draft.sliding_layers, draft.sliding_window)
        shared = stored * held_prefix
    else:
        longest = where(n["max_output"] > 0, n["max_output"], vmin(4 * output, m.context - prompt))
        length = prompt + vmax(longest, output)
        per_seq = stored * tokens_held(length, m.layers, m.sliding_layers, m.sliding_window)
        if draft is not None:
            per_seq = per_seq + draft_tok * tokens_held(length, draft.layers, draft.sliding_layers, draft.sliding_window)
        shared = 0.0
    if not array and (usable <= 0 or usable <= shared):
        return Memory(weight_bytes, kv_tok, repl, peak, precision, peak / bw, seq, held, memory, reserve, usable,
                      per_seq, shared, draft_w, False, 0.0, None, None, prefix, None)
    max_conc = max_concurrency(usable, per_seq, shared)
    fits = (usable > 0) & (max_conc >= 1) if array else max_conc >= 1
    if not array and not fits:
        return Memory(weight_bytes, kv_tok, repl, peak, precision, peak / bw, seq, held, memory, reserve, usable,
                      per_seq, shared, draft_w, fits, max_conc, None, None, prefix, None)
    if array:
        max_conc = where(fits, max_conc, 0.0)
    batch = (1.0 + 0.0 * conc) if dep.scheduler == _NONE else vmin(conc, max_conc)
    draft_held = None
    if draft is not None:
        draft_held = draft_tok * tokens_held(seq, draft.layers, draft.sliding_layers, draft.sliding_window)
    return Memory(weight_bytes, kv_tok, repl, peak, precision, peak / bw, seq, held, memory, reserve, usable,
                  per_seq, shared, draft_w, fits, max_conc, batch, stored * held, prefix, draft_held)


def prefill_stage(dep, n: dict, mem: Memory, p: Passes, step) -> Prefill:
    """Prefill of one request alone (its TTFT) and as charged in the steady state (batched with
    other prompts, so it never pays a weight read of its own); with chunking, the stall and TTFT
    of a prompt split between decode steps (`step` seconds each)."""
    prompt, prefix, batch = n["prompt"], mem.prefix, mem.batch
    fresh = prompt - prefix
    prefill_flops, lone_comp, lone_mem, prefill_comm, prefill = p.prefill(fresh, prompt, prefix)
    charge = p.prefill_charge(fresh, prompt, prefix, batch)
    if dep.chunked_prefill:
        chunks = vmax(1.0, vceil(fresh / dep.chunk_tokens))
        chunked = fresh > dep.chunk_tokens
        if p.real:
            mixed = p.mixed(float(dep.chunk_tokens), batch, mem.kv_seq_read, prompt, prefix, verify=True)
            stall = where(chunked, vmax(mixed - step, 0.0), prefill)
            ttft = where(chunked, chunks * mixed, prefill)
            # In the steady state a chunked prompt rides on decode steps, which read the weights
            # anyway: it costs what its chunks add to those steps, when that is less than its share
            # of a batched prefill pass (so the capacity stays a ceiling for `ridge load`'s runs).
            riding = fresh / dep.chunk_tokens * vmax(mixed - step, 0.0) / p.groups
            charge = vmin(charge, riding)
        else:
            stall = where(chunked, prefill / chunks, prefill)
            ttft = where(chunked, chunks * (stall + step), prefill)
    else:
        stall, ttft = prefill, prefill
    return Prefill(prefill_flops, lone_comp, lone_mem, prefill_comm, prefill, charge, ttft, stall)


def steady_stage(dep, n: dict, mem: Memory, p: Passes, step, charge, array: bool) -> Steady:
    """The steady state, where each sequence costs one prefill (`charge`) and `output` decode
    tokens (at the TPOT of `step`, the decode step's parts at the batch, or over the ladder of a
    draining static batch)."""
    output, conc, batch, max_conc = n["output"], n["concurrency"], mem.batch, mem.max_concurrency
    if dep.scheduler == _STATIC:
        kv_seq_read, draft_held = mem.kv_seq_read, mem.draft_held
        if array:
            def step_at(j):
                return p.decode(j, kv_seq_read, draft_held)

            per_token = static_decode_per_token(p, batch, kv_seq_read, draft_held, n["spec_k"] > 0, array, step_at)
            shares = static_verdict_shares(batch, step_at)
        else:
            # The drain depends only on the passes, the batch and each sequence's KV read, not on
            # the output length or the prefill: levers that keep all three (chunked prefill, the
            # allocator when the batch stays) reuse the one a solve's shared passes already drained.
            drains = p._drains
            key = (batch, kv_seq_read, draft_held)
            found = drains.get(key) if drains is not None else None
            if found is None:
                found = static_drain(p, batch, kv_seq_read, draft_held, n["spec_k"] > 0)
                if drains is not None:
                    drains[key] = found
            per_token, shares = found
        decode_time = output * per_token
    else:
        decode_time = output * step[7]
        shares = None
    tput = throughput(batch, output, charge, decode_time)
    capacity = _div(conc, max_conc) if dep.scheduler != _NONE else 0.0 * conc
    return Steady(shares, prefill_share(batch, charge, decode_time), tput, cost_per_million(n["price"], n["gpus"], tput),
                  capacity, capacity > 1.0)


def static_decode_per_token(p: Passes, batch, kv_seq_read, draft_held, spec_on, array: bool, step_at=None):
    """Decode time per average output length of a static batch (see static_ladder_sum): the
    floor's dense model without speculation has the exact closed form; everything else is
    summed over the ladder of a draining batch (`step_at(j)`, the decode step's parts at j
    sequences, when the caller already has one)."""
    m = p.m
    if step_at is None:
        def step_at(j):
            return p.decode(j, kv_seq_read, draft_held)
    if not p.real and not m.experts:
        closed = static_dense_sum(batch, weight_read_bytes(m, 1.0, p.bpw) / (p.gpus * p.bw),
                                  kv_seq_read / (p.gpus * p.bw), p.fpt / (p.gpus * p.peak * p.mfu))
        if not array and not spec_on:
            return closed
        if array:
            return where(spec_on, static_ladder_sum(batch, lambda j: step_at(j)[7]), closed)
    return static_ladder_sum(batch, lambda j: step_at(j)[7])


VERDICT_CODES = tuple(str(v) for v in Verdict)   # the fixed option order; grid codes index it


def _div(a, b):
    """a / b for the rules' ratios: a zero denominator reads as far past the threshold (or at
    it, when both are zero), never as a division error."""
    if type(a) in _PLAIN and type(b) in _PLAIN:
        if b > 0:
            return a / b
        return math.inf if a > 0 else 1.0
    np = _np()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.where(a > 0, np.inf, 1.0))


def capacity_ratio(f):
    """Sequences wanted over sequences the KV cache holds (0 when nothing is batched: one
    request at a time is never capped by the cache)."""
    return f["capacity_ratio"]


def prefill_share_ratio(f):
    """The prefill term's share of a sequence's GPU time over one half."""
    return f["prefill_share"] / 0.5


def prefill_flops_ratio(f):
    """One prompt's prefill FLOP time over its weight-read time."""
    return _div(f["prefill_compute_seconds"], f["prefill_weight_seconds"])


def decode_compute_ratio(f):
    """Decode compute time over memory time in one step; for a static batch, whose step changes
    as it drains, the share of decode time that is compute-bound over the larger other share
    (the verdict is the one that holds for most of the decode time)."""
    shares = f.get("decode_time_shares")
    if shares is not None:
        return _div(shares[0], vmax(shares[1], shares[2]))
    return _div(f["decode_compute_seconds"], f["decode_memory_seconds"])


def decode_kv_ratio(f):
    """KV bytes over weight bytes read in one step; for a static batch, the share of decode time
    waiting on the KV read over the share waiting on the weights."""
    shares = f.get("decode_time_shares")
    if shares is not None:
        return _div(shares[1], shares[2])
    return _div(f["decode_kv_bytes_per_step"], f["decode_weight_bytes_per_step"])


# The verdict rules, one ordered table per objective (DESIGN.md, "Engine semantics" and "What the
# bottleneck question asks"): after does-not-fit, the first rule whose ratio exceeds 1 names the
# verdict, else the default. The scalar analysis, the grid, the margins and the keys all read it.
RULES = {
    Objective.COST: (((Verdict.KV_CAPACITY, capacity_ratio), (Verdict.PREFILL_COMPUTE, prefill_share_ratio),
                      (Verdict.DECODE_COMPUTE, decode_compute_ratio), (Verdict.DECODE_KV, decode_kv_ratio)),
                     Verdict.DECODE_WEIGHTS),
    Objective.TPOT: (((Verdict.KV_CAPACITY, capacity_ratio), (Verdict.DECODE_COMPUTE, decode_compute_ratio),
                      (Verdict.DECODE_KV, decode_kv_ratio)), Verdict.DECODE_WEIGHTS),
    Objective.TTFT: (((Verdict.PREFILL_COMPUTE, prefill_flops_ratio),), Verdict.PREFILL_WEIGHTS),
    Objective.STALL: (((Verdict.PREFILL_COMPUTE, prefill_flops_ratio),), Verdict.PREFILL_WEIGHTS),
}


# RULES with each verdict as its plain id, built once for rule_ratios (called by every analysis).
_RULE_IDS = {objective: (tuple((str(verdict), ratio) for verdict, ratio in rules), str(default))
             for objective, (rules, default) in RULES.items()}


def rule_ratios(f: dict, objective: str) -> list[tuple[str, object]]:
    """(verdict, deciding ratio) of each rule that decides `objective`, in order (threshold 1)."""
    return [(verdict, ratio(f)) for verdict, ratio in _RULE_IDS[objective][0]]


def rule_verdict(ratios, objective: str) -> str:
    """The verdict `rule_ratios(f, objective)` names for a deployment that fits: the first rule
    whose ratio exceeds 1, else the objective's default (objective_verdict_code's rule, read off
    ratios already worked)."""
    for verdict, value in ratios:
        if value > 1:
            return verdict
    return _RULE_IDS[objective][1]


def objective_verdict_code(f: dict, objective: str):
    """What bounds `objective` (DESIGN.md, "What the bottleneck question asks"), as an index into
    VERDICT_CODES: does-not-fit, then the first rule of RULES whose ratio exceeds 1."""
    rules, default = RULES[objective]
    fits = f["fits"]
    if not f["_array"]:
        if not fits:
            return 0
        for verdict, ratio in rules:
            if ratio(f) > 1:
                return VERDICT_CODES.index(verdict)
        return VERDICT_CODES.index(default)
    conditions = [~fits if hasattr(fits, "shape") else not fits]
    conditions += [ratio(f) > 1 for _, ratio in rules]
    codes = [0] + [VERDICT_CODES.index(verdict) for verdict, _ in rules]
    return _select(conditions, codes, VERDICT_CODES.index(default))


def verdict_code(f: dict):
    """The six-rule whole-deployment verdict, as an index into VERDICT_CODES."""
    return objective_verdict_code(f, Objective.COST)


def _select(conditions, codes, default):
    if any(hasattr(x, "shape") for x in conditions):
        np = _np()
        return np.select([np.asarray(x, dtype=bool) for x in conditions], codes, default=default)
    for cond, code in zip(conditions, codes):
        if cond:
            return code
    return default
