"""The worked derivation of one deployment, with its own numbers, as plain-text lines.

It follows the order a person would work the problem on a napkin: the weights, the KV cache per
token, the memory left for it, how many sequences fit, the batch, one decode step's bytes and
FLOPs against the ridge, prefill, throughput and cost, then the verdict and the levers. Every
simplification that flatters a result is said on the line where it matters.
"""
from __future__ import annotations

from engine import units as u
from engine.analysis import experts_touched, harmonic
from engine.bands import gain_band
from engine.catalog import PRECISION_BYTES
from engine.ids import Allocator, Fidelity, Objective, Scheduler, Verdict
from engine.levers import Solution
from engine.physics import constants, routing_tokens

VERDICT_TEXT = {
    Verdict.DOES_NOT_FIT: "does not fit: the weights and reserve exceed the memory",
    Verdict.KV_CAPACITY: "KV capacity: the cache caps the batch below what the traffic wants",
    Verdict.PREFILL_COMPUTE: "prefill compute: prompt processing takes most of the GPU time",
    Verdict.DECODE_COMPUTE: "decode compute: the step's FLOPs outlast its memory traffic",
    Verdict.DECODE_KV: "decode, KV read: the step reads more cache bytes than weight bytes",
    Verdict.DECODE_WEIGHTS: "decode, weight read: the step waits on reading the weights",
    Verdict.PREFILL_WEIGHTS: "prefill, weight read: one prompt's pass waits on reading the weights, not on its FLOPs",
}


# What bounds one prompt's prefill (the TTFT and the stall), worded for that question.
OBJECTIVE_TEXT = {
    Verdict.PREFILL_COMPUTE: "prefill compute: one prompt's pass waits on its FLOPs, not on reading the weights",
    Verdict.PREFILL_WEIGHTS: "prefill, weight read: one short prompt's pass waits on reading the weights, not on its FLOPs",
}


def _kv_line(r) -> str:
    m, dep = r.deployment.model, r.deployment
    b = PRECISION_BYTES[dep.kv]
    if m.is_mla:
        return (f"KV/token     {m.layers} layers x ({m.kv_lora_rank} latent + {m.qk_rope_head_dim} rope) "
                f"x {b:g} B = {u.small_bytes(r.kv_bytes_per_token)}  (MLA caches one latent, not K and V per head)")
    return (f"KV/token     2 (K and V) x {m.layers} layers x {m.kv_heads} KV heads x {m.head_dim} dims x {b:g} B "
            f"= {u.small_bytes(r.kv_bytes_per_token)}")


def derivation_lines(solution: Solution) -> list[str]:
    """Every step of the analysis with this deployment's numbers and units."""
    r = solution.report
    dep = r.deployment
    m, g = dep.model, dep.gpu
    bpw = PRECISION_BYTES[dep.weights]
    lines = [
        f"{m.name} on {dep.gpus} x {g.name}; prompt {u.count(dep.prompt)} + output {u.count(dep.output)} "
        f"tokens; {u.count(dep.concurrency)} sequence{'' if dep.concurrency == 1 else 's'} wanted; "
        f"weights {dep.weights}, KV {dep.kv}",
        f"Weights      {u.params(m.params)} params x {bpw:g} B = {u.gb(r.weight_bytes)} ({u.gib(r.weight_bytes)})",
        _kv_line(r),
    ]
    if r.kv_replication > 1:
        lines.append(f"Replication  {dep.gpus} GPUs outnumber {m.kv_heads} KV heads: the GPUs hold "
                     f"{r.kv_replication:g} copies of each token's KV")
    elif m.is_mla and dep.gpus > 1:
        lines.append(f"Latent split data-parallel attention: each of the {dep.gpus} GPUs keeps the latents of its own "
                     f"sequences, so the cache is stored once, not once per GPU")
    if m.sliding_layers:
        lines.append(f"Sliding      {m.sliding_layers} of {m.layers} layers keep only the last {u.count(m.sliding_window)} "
                     f"tokens: a sequence of {u.count(r.seq_len_avg)} holds {u.count(r.kv_tokens_held)} full-layer tokens of KV")
    default = " (10% of each GPU)" if dep.reserve_gib is None else ""
    lines.append(
        f"Memory       {dep.gpus} x {g.memory_gib:g} GiB = {u.gib(r.memory_bytes)}; minus weights "
        f"{u.gib(r.weight_bytes)} and reserve {dep.gpus} x {dep.reserve_gib_per_gpu:g} GiB{default} leaves "
        f"{u.gib(r.usable_kv_bytes)} for the KV cache")
    if not r.fits:
        lines.append(f"Verdict      does-not-fit: {r.fit_problem}")
        return lines + _lever_lines(solution)

    per_seq = r.kv_bytes_per_token * r.kv_replication * r.kv_tokens_held
    if dep.scheduler == Scheduler.STATIC:
        lines.append(f"Avg length   S = {u.count(dep.prompt)} + {u.count(dep.output)} = {u.count(r.seq_len_avg)} tokens "
                     f"(exponential answers: a sequence in flight has on average one whole answer behind it), "
                     f"{u.gib(per_seq)} of KV per sequence")
    else:
        lines.append(f"Avg length   S = {u.count(dep.prompt)} + {u.count(dep.output)}/2 = {u.count(r.seq_len_avg)} tokens, "
                     f"{u.gib(per_seq)} of KV per sequence")
    if dep.allocator == Allocator.PAGED:
        shared = " (the shared prefix is stored once)" if dep.prefix_caching and dep.shared_prefix else ""
        lines.append(f"Max batch    {u.gib(r.usable_kv_bytes)} / {u.gib(per_seq)} = {u.count(r.max_concurrency)} "
                     f"sequences with paged blocks{shared} (partial last blocks ignored)")
    else:
        lines.append(f"Max batch    contiguous regions reserve {u.count(dep.reserve_length)} tokens each: "
                     f"{u.count(r.max_concurrency)} sequences, though only {u.count(r.seq_len_avg)} tokens are used on average")
    if dep.scheduler == Scheduler.NONE:
        lines.append("Batch        1: no batching, one sequence at a time")
    else:
        capped = "  <- the KV cache caps it" if dep.concurrency > r.max_concurrency else ""
        lines.append(f"Batch        min({u.count(dep.concurrency)} wanted, {u.count(r.max_concurrency)} fit) = {u.count(r.batch)}{capped}")
    reuse = constants()["moe_route_reuse"]
    tokens = routing_tokens(r.batch, dep.spec_k, reuse)
    if m.is_moe:
        touched = r.decode_weight_bytes_per_step / bpw
        spec_note = (f"; the {dep.spec_k} drafted positions of a sequence reuse its experts {reuse:.0%} of the time, "
                     f"so they count as {u.count(tokens)} independent tokens") if dep.spec_k else ""
        lines.append(f"MoE read     all {m.experts} experts resident; {u.count(tokens)} tokens per step touch about "
                     f"{_touched(m, tokens):.1f} of them per layer: {u.params(touched)} of {u.params(m.params)} params read "
                     f"(routing assumed uniform across sequences{spec_note})")
    lines.append(f"Step bytes   weights {u.gb(r.decode_weight_bytes_per_step)} + KV {u.count(r.batch)} x "
                 f"{u.count(r.kv_tokens_held)} x {u.count(r.kv_bytes_per_token * r.kv_replication)} B = "
                 f"{u.gb(r.decode_kv_bytes_per_step)} -> {u.gb(r.decode_bytes_per_step)}")
    spec = f" x {dep.spec_k + 1} verified positions" if dep.spec_k else ""
    lines.append(f"Step FLOPs   2 x {u.params(m.active_params)} active x {u.count(r.batch)}{spec} = {u.flops(r.decode_flops_per_step)}")
    lines.append(f"Intensity    {u.flops(r.decode_flops_per_step)} / {u.flops(r.decode_bytes_per_step)} B = "
                 f"{r.intensity:,.1f} FLOP/B; ridge {r.peak_flops / 1e12:,.1f} TFLOP/s ({r.compute_precision}) / "
                 f"{g.bandwidth_tbps:g} TB/s = {r.ridge:,.0f}")
    if dep.fidelity == Fidelity.FLOOR:
        tail = "(perfect tensor-parallel scaling, no communication cost, no per-step overhead)"
    elif dep.fidelity == Fidelity.MEASURED:
        tail = "(timed by the measured kernels; the two terms are the realistic ones, which name the bound)"
    else:
        tail = (f"at achieved rates (the GEMMs' whole-tile time counted as memory), plus "
                f"{u.seconds(r.step_extra_seconds)} of communication and per-step overhead (realistic)")
    lines.append(f"Step time    memory {u.gb(r.decode_bytes_per_step)} / ({dep.gpus} x {g.bandwidth_tbps:g} TB/s) = "
                 f"{u.seconds(r.decode_memory_seconds)}; compute at MFU {dep.mfu:g} = {u.seconds(r.decode_compute_seconds)} "
                 f"-> {u.seconds(r.step_seconds)} {tail}")
    if dep.spec_k:
        if dep.fidelity != Fidelity.FLOOR and dep.draft_model is not None:
            draft = (f"plus {dep.spec_k} passes of the draft {dep.draft_model.id} (its own weights, KV cache and "
                     f"overhead)")
        else:
            draft = (f"plus the draft's {dep.spec_k} x {dep.spec_draft_cost:g} of a step (its own weights and KV cache "
                     f"are not counted)")
        lines.append(f"Speculation  E[tokens] = (1 - {dep.spec_alpha:g}^{dep.spec_k + 1}) / (1 - {dep.spec_alpha:g}) = "
                     f"{r.spec_expected_tokens:.2f} per verification; {draft} -> TPOT {u.seconds(r.tpot_seconds)}")
    else:
        lines.append(f"TPOT         {u.seconds(r.tpot_seconds)} per output token for each user")
    fresh = dep.prompt - (dep.shared_prefix if dep.prefix_caching else 0)
    cached = f" ({u.count(dep.shared_prefix)} cached prefix tokens skipped)" if fresh != dep.prompt else ""
    lone = "compute" if r.prefill_compute_seconds >= r.prefill_weight_seconds else "the weight read"
    lines.append(f"Prefill      2 x {u.params(m.active_params)} x {u.count(fresh)} tokens + attention = "
                 f"{u.flops(r.prefill_flops)} FLOPs -> {u.seconds(r.prefill_compute_seconds)} of compute; reading the "
                 f"weights takes {u.seconds(r.prefill_weight_seconds)}, so one prompt alone waits "
                 f"{u.seconds(r.prefill_seconds)} (bound by {lone}){cached}")
    comm = " plus its share of the all-reduces" if r.prefill_comm_seconds else ""
    lines.append(f"Batched      in the steady state prompts share passes (and decode steps), so each is charged its "
                 f"compute{comm}, {u.seconds(r.prefill_charge_seconds)}, not a weight read of its own")
    if dep.chunked_prefill:
        lines.append(f"Chunked      worst decode stall {u.seconds(r.worst_stall_seconds)} instead of "
                     f"{u.seconds(r.prefill_seconds)}; TTFT {u.seconds(r.ttft_seconds)}")
    else:
        lines.append(f"TTFT         at least {u.seconds(r.ttft_seconds)} (no queueing modelled); a prefill stalls "
                     f"the decode batch for {u.seconds(r.worst_stall_seconds)}")
    decode = f"{u.count(dep.output)} x {u.seconds(r.tpot_seconds)}"
    if dep.scheduler == Scheduler.STATIC:
        per_output = (1.0 / r.throughput_tokens_per_s * r.batch * dep.output - r.batch * r.prefill_charge_seconds) / dep.output
        decode = f"{u.count(dep.output)} x {u.seconds(per_output)}"
        lines.append(f"Static batch runs until its longest member is done: H({r.batch}) = {harmonic(r.batch):.2f} average "
                     f"output lengths (exponential lengths), reading the weights every step while fewer and fewer "
                     f"sequences remain, so decoding takes {decode} instead of {u.count(dep.output)} x "
                     f"{u.seconds(r.tpot_seconds)} with continuous refill")
    lines.append(f"Throughput   {u.count(r.batch)} x {u.count(dep.output)} / ({u.count(r.batch)} x {u.seconds(r.prefill_charge_seconds)} + "
                 f"{decode}) = {r.throughput_tokens_per_s:,.0f} tokens/s; "
                 f"prefill share {r.prefill_share:.0%}")
    lines.append(f"Cost         ${dep.price:g}/GPU-hour x {dep.gpus} / 3600 / {r.throughput_tokens_per_s:,.0f} tokens/s x 1e6 = "
                 f"{u.dollars(r.cost_per_million_output_tokens)} per million output tokens (no idle time, no queueing)")
    lines.append(f"Verdict      {VERDICT_TEXT[r.bottleneck]} ({_verdict_numbers(r)})")
    if dep.objective != Objective.COST:
        lines.append(f"Objective    what bounds the {dep.objective.upper() if dep.objective != Objective.STALL else 'stall'}: "
                     f"{OBJECTIVE_TEXT.get(r.objective_bottleneck, VERDICT_TEXT[r.objective_bottleneck])}")
    lines += _lever_lines(solution)
    if solution.floor is not None:
        from engine.compare import side_by_side_lines

        three = " and the measured kernels" if dep.fidelity == Fidelity.MEASURED else ""
        lines.append(f"Fidelities   the course's floor beside the realistic figure{three}:")
        lines += side_by_side_lines(solution)
    return lines


def _touched(m, tokens: float) -> float:
    return experts_touched(m.experts, m.experts_per_token, tokens)


def _verdict_numbers(r) -> str:
    dep = r.deployment
    if r.bottleneck == Verdict.KV_CAPACITY:
        return f"{u.count(dep.concurrency)} wanted > {u.count(r.max_concurrency)} fit"
    if r.bottleneck == Verdict.PREFILL_COMPUTE:
        return f"prefill share {r.prefill_share:.0%} > 50%"
    if r.decode_time_shares is not None and r.bottleneck in (Verdict.DECODE_COMPUTE, Verdict.DECODE_KV,
                                                             Verdict.DECODE_WEIGHTS):
        compute, kv, weights = r.decode_time_shares
        return (f"the one that holds for most of the draining batch's decode time: compute-bound {compute:.0%}, "
                f"waiting on the KV read {kv:.0%}, on the weights {weights:.0%}")
    if r.bottleneck == Verdict.DECODE_COMPUTE:
        return f"compute {u.seconds(r.decode_compute_seconds)} > memory {u.seconds(r.decode_memory_seconds)}"
    if r.bottleneck == Verdict.DECODE_KV:
        return f"KV {u.gb(r.decode_kv_bytes_per_step)} > weights {u.gb(r.decode_weight_bytes_per_step)} per step"
    return f"weights {u.gb(r.decode_weight_bytes_per_step)} >= KV {u.gb(r.decode_kv_bytes_per_step)} per step"


def _lever_lines(solution: Solution) -> list[str]:
    objective = {"cost": "cost per million output tokens", "tpot": "TPOT", "ttft": "TTFT",
                 "stall": "the worst decode stall"}[solution.report.deployment.objective]
    lines = [f"Levers       gain on {objective} (before / after), best first:"]
    for lv in solution.levers:
        gain = "  n/a " if lv.gain is None else f"{lv.gain:6.2f}x"
        band = gain_band(lv.gain) or ""
        lines.append(f"  {lv.name:<21} {gain}  {band:<11} {lv.note}")
    return lines
