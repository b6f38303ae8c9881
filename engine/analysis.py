"""The analysis of one deployment, exactly as DESIGN.md defines it, as one pure function.

Units are SI throughout: bytes, seconds, FLOP and FLOP/s; GiB = 2**30 bytes. `analyze` returns an
immutable Report holding every quantity of the `ridge solve --json` contract except the levers
(see `engine.levers`). It is deliberately plain arithmetic with no imports beyond the catalog, so
that thousands of deployments can be analysed while a player waits.
"""
from __future__ import annotations

import math

from engine.catalog import PRECISION_BYTES
from engine.deployment import Deployment
from engine.record import REQUIRED, Record

GIB = 2**30
VERDICTS = ("does-not-fit", "kv-capacity", "prefill-compute", "decode-compute", "decode-kv", "decode-weights")


class Report(Record):
    """Every figure of one deployment. When `fits` is false the figures from max_concurrency on
    are None. Units: bytes, seconds, FLOP, FLOP/s; `margins` pairs each verdict rule with its
    deciding ratio (1.0 is the rule's threshold)."""

    FIELDS = dict(
        deployment=REQUIRED, params=REQUIRED, active_params=REQUIRED, weight_bytes=REQUIRED,
        kv_bytes_per_token=REQUIRED, kv_replication=REQUIRED, ridge=REQUIRED, peak_flops=REQUIRED,
        compute_precision=REQUIRED, seq_len_avg=REQUIRED, memory_bytes=REQUIRED,
        reserve_bytes=REQUIRED, usable_kv_bytes=REQUIRED, fits=REQUIRED, fit_problem=REQUIRED,
        max_concurrency=None, batch=None, decode_weight_bytes_per_step=None,
        decode_kv_bytes_per_step=None, decode_bytes_per_step=None, decode_flops_per_step=None,
        decode_memory_seconds=None, decode_compute_seconds=None, step_seconds=None,
        tpot_seconds=None, intensity=None, prefill_flops=None, prefill_seconds=None,
        ttft_seconds=None, worst_stall_seconds=None, prefill_share=None,
        throughput_tokens_per_s=None, cost_per_million_output_tokens=None,
        spec_expected_tokens=None, bottleneck="does-not-fit", margins=(),
    )

    def objective_value(self, objective: str | None = None) -> float | None:
        """The figure a puzzle's objective asks to lower: cost, TPOT, TTFT, or the stall (the
        longest pause a streaming user sees while another request's prefill holds the GPU)."""
        objective = objective or self.deployment.objective
        if not self.fits:
            return None
        if objective == "cost":
            return self.cost_per_million_output_tokens
        if objective == "tpot":
            return self.tpot_seconds
        if objective == "stall":
            return self.worst_stall_seconds
        return self.ttft_seconds


_H_SMALL = [0.0]
for _i in range(1, 64):
    _H_SMALL.append(_H_SMALL[-1] + 1.0 / _i)


def harmonic(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n: the expected longest of n exponential lengths, in means."""
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


def static_tpot_sum(batch: int, tpot_at) -> float:
    """Decode time of a static batch per average output length, with output lengths taken as
    exponential: the batch runs with all `batch` sequences for 1/batch of a mean length, then
    batch-1 for 1/(batch-1), and so on down to the last straggler, so the time is the sum over
    j of tpot_at(j)/j. Between two rungs of LADDER the sum is taken at the counts' harmonic mean,
    which is exact wherever the step time is linear in j."""
    total, prev_edge, prev_h = 0.0, 0, 0.0
    for rung in LADDER:
        edge = rung if rung < batch else batch
        h = harmonic(edge)
        count = edge - prev_edge
        mid = count / (h - prev_h)
        total += count * tpot_at(mid) / mid
        prev_edge, prev_h = edge, h
        if edge == batch:
            break
    return total


def static_dense_sum(batch: int, weight_s: float, kv_s: float, flop_s: float) -> float:
    """The same sum for a dense model without speculation, exactly: with j sequences left a
    step takes max(weight_s + j*kv_s, j*flop_s), so tpot(j)/j is memory-bound below
    j* = weight_s / (flop_s - kv_s) and compute-bound from there on."""
    if flop_s > kv_s:
        crossover = weight_s / (flop_s - kv_s)
        n_mem = min(batch, max(0, math.ceil(crossover) - 1))
    else:
        n_mem = batch
    return weight_s * harmonic(n_mem) + n_mem * kv_s + (batch - n_mem) * flop_s


def experts_touched(experts: int, per_token: int, tokens: float) -> float:
    """Expected distinct experts a step's tokens route to, if each picks per_token of experts
    uniformly: at one token exactly per_token, approaching all experts as tokens grow."""
    if tokens <= 1:
        return float(per_token) if tokens >= 1 else 0.0
    return experts * (1.0 - (1.0 - per_token / experts) ** tokens)


def weight_bytes_read(dep: Deployment, tokens: float, bytes_per_weight: float) -> float:
    """Weight bytes one forward pass over `tokens` tokens reads: all of a dense model; for a
    mixture of experts, the always-on weights plus only the experts those tokens route to."""
    m = dep.model
    if not m.experts:
        return m.params * bytes_per_weight
    routed = m.moe_layers * m.experts * m.expert_params
    touched = experts_touched(m.experts, m.experts_per_token, tokens)
    return (m.params - routed + m.moe_layers * touched * m.expert_params) * bytes_per_weight


def kv_replication(dep: Deployment) -> float:
    """How many copies of each token's KV the GPUs hold between them under tensor parallelism:
    one while every GPU has its own KV heads; gpus/kv_heads once GPUs outnumber KV heads; and one
    per GPU for a latent (MLA) cache, which is not split by head."""
    m = dep.model
    if m.is_mla:
        return float(dep.gpus)
    return max(1.0, dep.gpus / m.kv_heads)


def decode_step(dep: Deployment, batch: int, kv_per_sequence: float, bpw: float, peak: float, bandwidth: float):
    """One decode step with `batch` sequences in flight (the verification pass when
    speculating): (weight bytes, KV bytes, FLOPs, memory s, compute s, step s, TPOT s, E[tokens])."""
    m = dep.model
    gpus = dep.gpus
    flops_per_token = 2.0 * m.active_params
    kv_read = batch * kv_per_sequence
    plain_weights = weight_bytes_read(dep, batch, bpw)
    plain_mem = (plain_weights + kv_read) / (gpus * bandwidth)
    plain_comp = flops_per_token * batch / (gpus * peak * dep.mfu)
    plain_step = plain_mem if plain_mem > plain_comp else plain_comp
    if not dep.spec_k:
        return plain_weights, kv_read, flops_per_token * batch, plain_mem, plain_comp, plain_step, plain_step, None
    k = dep.spec_k
    alpha = dep.spec_alpha
    expected = (k + 1.0) if alpha >= 1.0 else (1.0 - alpha ** (k + 1)) / (1.0 - alpha)
    weights = weight_bytes_read(dep, batch * (k + 1), bpw)
    flops = flops_per_token * batch * (k + 1)
    mem_t = (weights + kv_read) / (gpus * bandwidth)
    comp_t = flops / (gpus * peak * dep.mfu)
    step = mem_t if mem_t > comp_t else comp_t
    tpot = (step + k * dep.spec_draft_cost * plain_step) / expected
    return weights, kv_read, flops, mem_t, comp_t, step, tpot, expected


def analyze(dep: Deployment) -> Report:
    """Analyse one deployment: memory budget, batch, decode step, prefill, throughput, verdict."""
    m, g = dep.model, dep.gpu
    gpus = dep.gpus
    bpw = PRECISION_BYTES[dep.weights]
    kv_bytes = PRECISION_BYTES[dep.kv]
    compute_precision = dep.weights if dep.weights != "int4" and g.native(dep.weights) else "bf16"
    peak = g.peak_flops(compute_precision)
    bandwidth = g.bandwidth_tbps * 1e12
    ridge = peak / bandwidth
    weight_bytes = m.params * bpw
    kv_per_token = m.kv_values_per_token * kv_bytes
    replication = kv_replication(dep)
    stored_per_token = kv_per_token * replication
    seq = dep.prompt + dep.output / 2
    memory = gpus * g.memory_gib * GIB
    reserve = gpus * dep.reserve_gib * GIB
    usable = memory - weight_bytes - reserve
    common = dict(
        deployment=dep, params=m.params, active_params=m.active_params, weight_bytes=weight_bytes,
        kv_bytes_per_token=kv_per_token, kv_replication=replication, ridge=ridge, peak_flops=peak,
        compute_precision=compute_precision, seq_len_avg=seq, memory_bytes=memory,
        reserve_bytes=reserve, usable_kv_bytes=usable,
    )
    if usable <= 0:
        need = (weight_bytes + reserve) / GIB
        problem = (f"weights ({weight_bytes / GIB:.1f} GiB) plus reserve ({reserve / GIB:.1f} GiB) need "
                   f"{need:.1f} GiB but {gpus} x {g.id} hold {memory / GIB:.1f} GiB")
        return Report(**common, fits=False, fit_problem=problem, margins=(("does-not-fit", (weight_bytes + reserve) / memory),))

    # How many sequences the KV cache holds.
    prefix = dep.shared_prefix if dep.prefix_caching else 0
    if dep.allocator == "paged":
        shared_store = prefix * stored_per_token
        max_conc = int((usable - shared_store) // (stored_per_token * (seq - prefix))) if usable > shared_store else 0
    else:
        max_conc = int(usable // (stored_per_token * dep.reserve_length))
    if max_conc < 1:
        per_seq = stored_per_token * (seq if dep.allocator == "paged" else dep.reserve_length) / GIB
        problem = (f"after weights and reserve, {usable / GIB:.2f} GiB is left for the KV cache, less than "
                   f"the {per_seq:.2f} GiB one sequence needs")
        return Report(**common, fits=False, fit_problem=problem, max_concurrency=0,
                      margins=(("does-not-fit", per_seq * GIB / usable),))

    batch = 1 if dep.scheduler == "none" else min(dep.concurrency, max_conc)

    # One decode step of the target model (the verification pass when speculating).
    flops_per_token = 2.0 * m.active_params
    step_weights, kv_read, step_flops, mem_t, comp_t, step, tpot, expected = decode_step(
        dep, batch, seq * stored_per_token, bpw, peak, bandwidth)
    step_bytes = step_weights + kv_read

    # Prefill of one request: linear FLOPs plus causal attention over the uncached tokens.
    fresh = dep.prompt - prefix
    attn_flops = m.layers * m.heads * m.prefill_attention_dim * (dep.prompt ** 2 - prefix ** 2)
    prefill_flops = flops_per_token * fresh + attn_flops
    prefill_comp = prefill_flops / (gpus * peak * dep.mfu)
    prefill_mem = weight_bytes_read(dep, fresh, bpw) / (gpus * bandwidth)
    prefill = prefill_comp if prefill_comp > prefill_mem else prefill_mem
    if dep.chunked_prefill and fresh > dep.chunk_tokens:
        chunks = -(-fresh // dep.chunk_tokens)
        stall = prefill / chunks
        ttft = chunks * (stall + step)
    else:
        stall = prefill
        ttft = prefill

    # Steady state: each sequence costs one prefill and `output` decode tokens.
    if dep.scheduler == "static" and not (m.experts or dep.spec_k):
        # Dense, no speculation: the sum over the draining batch has a closed form.
        per_seq_kv = seq * stored_per_token / (gpus * bandwidth)
        per_seq_flops = flops_per_token / (gpus * peak * dep.mfu)
        decode_time = dep.output * static_dense_sum(batch, weight_bytes / (gpus * bandwidth), per_seq_kv, per_seq_flops)
    elif dep.scheduler == "static":
        decode_time = dep.output * static_tpot_sum(
            batch, lambda j: decode_step(dep, j, seq * stored_per_token, bpw, peak, bandwidth)[6])
    else:
        decode_time = dep.output * tpot
    prefill_time = batch * prefill
    throughput = batch * dep.output / (prefill_time + decode_time)
    share = prefill_time / (prefill_time + decode_time)
    cost = dep.price * gpus / 3600.0 / throughput * 1e6

    margins = (
        ("kv-capacity", dep.concurrency / max_conc),
        ("prefill-compute", share / 0.5),
        ("decode-compute", comp_t / mem_t),
        ("decode-kv", kv_read / step_weights),
    )
    if dep.concurrency > max_conc and dep.scheduler != "none":
        verdict = "kv-capacity"
    elif share > 0.5:
        verdict = "prefill-compute"
    elif comp_t > mem_t:
        verdict = "decode-compute"
    elif kv_read > step_weights:
        verdict = "decode-kv"
    else:
        verdict = "decode-weights"

    return Report(
        **common, fits=True, fit_problem="", max_concurrency=max_conc, batch=batch,
        decode_weight_bytes_per_step=step_weights, decode_kv_bytes_per_step=kv_read,
        decode_bytes_per_step=step_bytes, decode_flops_per_step=step_flops,
        decode_memory_seconds=mem_t, decode_compute_seconds=comp_t, step_seconds=step,
        tpot_seconds=tpot, intensity=step_flops / step_bytes, prefill_flops=prefill_flops,
        prefill_seconds=prefill, ttft_seconds=ttft, worst_stall_seconds=stall, prefill_share=share,
        throughput_tokens_per_s=throughput, cost_per_million_output_tokens=cost,
        spec_expected_tokens=expected, bottleneck=verdict, margins=margins,
    )
