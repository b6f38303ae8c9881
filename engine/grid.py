"""The analysis vectorised with numpy: a whole grid of deployments in one call.

`analyze_grid(base, **arrays)` takes a Deployment for everything categorical (model, GPU,
precisions, scheduler, allocator, switches) and numpy-broadcastable arrays for the numeric inputs,
and returns a dict of arrays with the same names and meaning as the scalar Report. Where a
deployment does not fit, its figures are NaN and `fits` is False. The scalar `engine.analysis`
is the reference; tests hold the two in agreement.
"""
from __future__ import annotations

import numpy as np

from engine.analysis import GIB, LADDER, VERDICTS
from engine.catalog import PRECISION_BYTES
from engine.deployment import Deployment

NUMERIC = ("gpus", "prompt", "output", "concurrency", "reserve_gib", "mfu", "price",
           "shared_prefix", "spec_k", "spec_alpha", "spec_draft_cost", "max_output")


def _harmonic(n: np.ndarray) -> np.ndarray:
    """H_n, exact below 64 and by its asymptotic expansion above (as the scalar path does)."""
    n = np.maximum(n, 1).astype(float)
    table = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, 64))])
    small = table[np.minimum(n, 63).astype(int)]
    large = np.log(n) + 0.5772156649015329 + 1.0 / (2 * n) - 1.0 / (12 * n * n)
    return np.where(n < 64, small, large)


def _static_sum(base, batch, spec, weight_s, kv_s, flop_s, tpot_at):
    """engine.analysis's static-batch sums over the grid: the closed form for dense models
    without speculation, the harmonic-mean ladder elsewhere."""
    n_mem = np.where(flop_s > kv_s,
                     np.minimum(batch, np.maximum(0, np.ceil(weight_s / np.where(flop_s > kv_s, flop_s - kv_s, 1.0)) - 1)),
                     batch)
    closed = weight_s * _harmonic_or_zero(n_mem) + n_mem * kv_s + (batch - n_mem) * flop_s
    if not base.model.experts and not spec.any():
        return closed
    total = np.zeros(np.shape(batch))
    prev_edge = np.zeros(np.shape(batch))
    prev_h = np.zeros(np.shape(batch))
    top = np.nanmax(batch) if np.size(batch) else 0
    for rung in LADDER:
        edge = np.minimum(rung, batch)
        h = _harmonic_or_zero(edge)
        count = edge - prev_edge
        live = count > 0
        mid = np.where(live, count / np.where(live, h - prev_h, 1.0), 1.0)
        total = total + np.where(live, count * tpot_at(mid) / mid, 0.0)
        prev_edge, prev_h = edge, h
        if rung >= top:
            break
    ladder = total
    if base.model.experts:
        return ladder
    return np.where(spec, ladder, closed)


def _harmonic_or_zero(n):
    return np.where(n >= 1, _harmonic(n), 0.0)


def _weights_read(base: Deployment, tokens: np.ndarray, bpw: float) -> np.ndarray:
    m = base.model
    if not m.experts:
        return np.full(np.shape(tokens), m.params * bpw)
    routed = m.moe_layers * m.experts * m.expert_params
    tokens = np.asarray(tokens, dtype=float)
    # (1 - k/E) ** tokens, computed as one exp over the grid rather than a power per element
    miss = np.exp(tokens * np.log1p(-m.experts_per_token / m.experts))
    touched = np.where(tokens <= 1, np.where(tokens >= 1, m.experts_per_token, 0.0), m.experts * (1.0 - miss))
    return (m.params - routed + m.moe_layers * touched * m.expert_params) * bpw


def analyze_grid(base: Deployment, **arrays) -> dict[str, np.ndarray]:
    """Evaluate every combination the broadcast of `arrays` describes (see module docstring)."""
    unknown = set(arrays) - set(NUMERIC)
    if unknown:
        raise ValueError(f"cannot vary {sorted(unknown)[0]} on a grid (numeric fields: {', '.join(NUMERIC)})")
    v = {name: np.asarray(arrays.get(name, getattr(base, name))) for name in NUMERIC}
    shape = np.broadcast_shapes(*(a.shape for a in v.values()))
    v = {k: np.broadcast_to(a, shape).astype(float) for k, a in v.items()}
    m, g = base.model, base.gpu
    gpus, prompt, output, conc = v["gpus"], v["prompt"], v["output"], v["concurrency"]
    bpw = PRECISION_BYTES[base.weights]
    kv_b = PRECISION_BYTES[base.kv]
    compute_precision = base.weights if base.weights != "int4" and g.native(base.weights) else "bf16"
    peak = g.peak_flops(compute_precision)
    bw = g.bandwidth_tbps * 1e12
    weight_bytes = m.params * bpw
    kv_tok = m.kv_values_per_token * kv_b
    if m.is_mla:
        repl = gpus
    else:
        repl = np.maximum(1.0, gpus / m.kv_heads)
    stored = kv_tok * repl
    seq = prompt + output / 2
    usable = gpus * g.memory_gib * GIB - weight_bytes - gpus * v["reserve_gib"] * GIB
    prefix = v["shared_prefix"] if base.prefix_caching else np.zeros(shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if base.allocator == "paged":
            max_conc = np.floor((usable - prefix * stored) / (stored * (seq - prefix)))
        else:
            longest = np.where(v["max_output"] > 0, v["max_output"], np.minimum(4 * output, m.context - prompt))
            max_conc = np.floor(usable / (stored * (prompt + np.maximum(longest, output))))
        fits = (usable > 0) & (max_conc >= 1)
        max_conc = np.where(fits, max_conc, 0.0)
        batch = np.ones(shape) if base.scheduler == "none" else np.minimum(conc, max_conc)

        fpt = 2.0 * m.active_params
        k = v["spec_k"]
        spec = k > 0
        kv_seq = seq * stored

        def decode(j):
            """The scalar decode_step over the grid, for j sequences in flight."""
            kv_read = j * kv_seq
            plain_w = _weights_read(base, j, bpw)
            plain_mem = (plain_w + kv_read) / (gpus * bw)
            plain_comp = fpt * j / (gpus * peak * v["mfu"])
            plain_step = np.maximum(plain_mem, plain_comp)
            if not spec.any():
                return plain_w, kv_read, fpt * j, plain_mem, plain_comp, plain_step, plain_step
            alpha = v["spec_alpha"]
            expected = np.where(alpha >= 1.0, k + 1.0, (1.0 - alpha ** (k + 1)) / (1.0 - np.minimum(alpha, 0.999999999)))
            step_w = np.where(spec, _weights_read(base, j * (k + 1), bpw), plain_w)
            flops = fpt * j * np.where(spec, k + 1, 1)
            mem_t = (step_w + kv_read) / (gpus * bw)
            comp_t = flops / (gpus * peak * v["mfu"])
            step = np.maximum(mem_t, comp_t)
            tpot = np.where(spec, (step + k * v["spec_draft_cost"] * plain_step) / np.where(spec, expected, 1.0), step)
            return step_w, kv_read, flops, mem_t, comp_t, step, tpot

        step_w, kv_read, step_flops, mem_t, comp_t, step, tpot = decode(batch)
        alpha = v["spec_alpha"]
        expected = np.where(alpha >= 1.0, k + 1.0, (1.0 - alpha ** (k + 1)) / (1.0 - np.minimum(alpha, 0.999999999)))

        fresh = prompt - prefix
        attn = m.layers * m.heads * m.prefill_attention_dim * (prompt ** 2 - prefix ** 2)
        prefill_flops = fpt * fresh + attn
        prefill = np.maximum(prefill_flops / (gpus * peak * v["mfu"]), _weights_read(base, fresh, bpw) / (gpus * bw))
        if base.chunked_prefill:
            chunks = np.ceil(fresh / base.chunk_tokens)
            chunked = fresh > base.chunk_tokens
            ttft = np.where(chunked, chunks * (prefill / chunks + step), prefill)
        else:
            ttft = prefill
        decode_time = output * tpot
        if base.scheduler == "static":
            decode_time = output * _static_sum(base, batch, spec, weight_bytes / (gpus * bw), kv_seq / (gpus * bw),
                                               fpt / (gpus * peak * v["mfu"]), lambda j: decode(j)[6])
        prefill_time = batch * prefill
        throughput = batch * output / (prefill_time + decode_time)
        share = prefill_time / (prefill_time + decode_time)
        cost = v["price"] * gpus / 3600.0 / throughput * 1e6

        capped = (conc > max_conc) & (base.scheduler != "none")
        verdict = np.select(
            [~fits, capped, share > 0.5, comp_t > mem_t, kv_read > step_w],
            [0, 1, 2, 3, 4], default=5,
        )
    out = {
        "fits": fits, "max_concurrency": max_conc, "batch": batch, "seq_len_avg": seq,
        "usable_kv_bytes": usable, "decode_bytes_per_step": step_w + kv_read,
        "decode_weight_bytes_per_step": step_w, "decode_kv_bytes_per_step": kv_read,
        "decode_flops_per_step": step_flops, "decode_memory_seconds": mem_t,
        "decode_compute_seconds": comp_t, "tpot_seconds": tpot, "intensity": step_flops / (step_w + kv_read),
        "prefill_seconds": prefill, "ttft_seconds": ttft, "prefill_share": share,
        "throughput_tokens_per_s": throughput, "cost_per_million_output_tokens": cost,
        "spec_expected_tokens": np.where(spec, expected, np.nan), "verdict_index": verdict,
    }
    for name, arr in out.items():
        if name not in ("fits", "verdict_index", "usable_kv_bytes", "seq_len_avg"):
            out[name] = np.where(fits, arr, np.nan)
    out["ridge"] = np.full(shape, peak / bw)
    out["kv_bytes_per_token"] = np.full(shape, kv_tok)
    out["weight_bytes"] = np.full(shape, weight_bytes)
    return out


def verdict_names(index: np.ndarray) -> np.ndarray:
    """Verdict ids for the integer codes in `verdict_index`."""
    return np.asarray(VERDICTS)[index]


