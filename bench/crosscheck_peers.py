"""Cross-check the engine's model arithmetic against three peer calculators.

Run by hand: `.venv/bin/python bench/crosscheck_peers.py`. Not part of the test suite.

Peers (each in its own venv under bench/.peers/, git-ignored, never a project dependency, always
run offline with HF_HUB_OFFLINE=1):
- ridgepoint 0.1.2: its built-in registry, called through `ridgepoint._core.fit_registry`
  (the same JSON `ridgepoint fit ... --json` prints);
- servcalc 0.1.0 (with vramcalc): fed Hugging Face style config.json files that this script writes
  from our catalog's fields into a temporary directory;
- llm-analysis 0.2.2: fed the same config.json files, mapped key by key onto its ModelConfig (its
  own Hub reader goes through transformers 4.31 AutoConfig, which knows only `llama` among our
  model types and drops intermediate_size, so we map the keys ourselves and say which it ignores).

For every model a peer models too it compares parameter counts, weight bytes and KV bytes per
token with ours, then KV pool / maximum concurrency where the peer reports them. Every
difference gets a stated reason, and the reason is *computed*: the script applies the peer's
assumption to our figure and checks that the result equals the peer's (exactly, or to the peer's
printed precision). A difference whose computed adjustment does not land on the peer's figure is
counted as unexplained. The last line counts quantities, exact agreements, explained differences
and unexplained ones.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_engine import PEER_ENV, RIDGEPOINT, ensure_peer  # noqa: E402

from engine.analysis import analyze, weight_bytes_read  # noqa: E402
from engine.catalog import builtin_catalog  # noqa: E402
from engine.deployment import build_deployment  # noqa: E402
from engine.hfconfig import spec_from_config  # noqa: E402

GIB = 2**30
SERVCALC = ("servcalc", "servcalc==0.1.0", "servcalc", "0.1.0")
LLM_ANALYSIS = ("llm-analysis", "llm-analysis==0.2.2", "llm-analysis", "0.2.2")

# ridgepoint's registry ids, read from the string table of ridgepoint/_core.abi3.so (the ids sit
# there as 8-byte immediates: "llama-3-", "ma-3-70b", ...) and each confirmed below by a call.
RIDGEPOINT_REGISTRY = ("llama-2-7b", "llama-3-8b", "llama-3-70b", "mistral-7b", "mixtral-8x7b",
                       "qwen2.5-7b", "deepseek-r1", "deepseek-v2-lite", "deepseek-r1-distill-14b")
# Same architecture under another id: DeepSeek-R1 is post-trained DeepSeek-V3 (identical config.json).
RIDGEPOINT_ALIAS = {"deepseek-v3": "deepseek-r1"}
# ridgepoint accelerator ids for ours, and its dense BF16 peaks (f64 constants in _core.abi3.so).
RIDGEPOINT_GPU = {"h100-sxm": "h100-80gb", "a100-80gb": "a100-80gb", "a100-40gb": "a100-40gb",
                  "h200": "h200-141gb", "b200": "b200-192gb", "l40s": "l40s-48gb",
                  "mi300x": "mi300x-192gb", "rtx-4090": "rtx4090-24gb"}
RIDGEPOINT_PEAK_TFLOPS = {"h100-80gb": 989, "h200-141gb": 989, "a100-80gb": 312, "a100-40gb": 312,
                          "b200-192gb": 2250, "l40s-48gb": 362, "mi300x-192gb": 1300, "rtx4090-24gb": 165}
RIDGEPOINT_UTIL = 0.9            # "engine": {"util": 0.90} in every answer: vLLM gpu_memory_utilization
RIDGEPOINT_CONTEXT_BYTES = 0.8e9  # per GPU, taken off before the 0.9 (fits all 70 configurations probed)

# servcalc's vLLM profile (servcalc/profiles.py) and its GPU table names for ours.
SERVCALC_GPU = {"h100-sxm": "H100 80GB", "b200": "B200"}
LLM_ANALYSIS_GPU = {"h100-sxm": "h100-sxm-80gb"}


# ---------------------------------------------------------------------------------------------
# Writing config.json files from the catalog

MODEL_TYPES = (("llama-", "llama"), ("mistral-", "mistral"), ("mixtral-", "mixtral"), ("qwen2", "qwen2"),
               ("gemma-2", "gemma2"), ("deepseek-v3", "deepseek_v3"), ("gpt-oss", "gpt_oss"), ("phi-3", "phi3"))


def model_type(m) -> str:
    for prefix, kind in MODEL_TYPES:
        if m.id.startswith(prefix):
            return kind
    raise ValueError(f"no Hugging Face model_type known for {m.id}")


def hf_config(m) -> dict:
    """The catalog entry as a Hugging Face config.json (the keys each family's config uses)."""
    kind = model_type(m)
    cfg = {
        "_name_or_path": m.hf_repo or m.id, "model_type": kind, "torch_dtype": "bfloat16",
        "hidden_size": m.hidden, "intermediate_size": m.intermediate,
        "num_attention_heads": m.heads, "num_key_value_heads": m.kv_heads, "head_dim": m.head_dim,
        "num_hidden_layers": m.layers, "vocab_size": m.vocab, "tie_word_embeddings": m.tied_embeddings,
        "max_position_embeddings": m.context,
    }
    if m.attention_bias:
        cfg["attention_bias"] = True
    if m.sliding_window:
        cfg["sliding_window"] = m.sliding_window
    if kind in ("mixtral", "gpt_oss"):
        cfg.update(num_local_experts=m.experts, num_experts_per_tok=m.experts_per_token,
                   intermediate_size=m.expert_intermediate)
    if kind == "deepseek_v3":
        cfg.update(n_routed_experts=m.experts, num_experts_per_tok=m.experts_per_token,
                   moe_intermediate_size=m.expert_intermediate, n_shared_experts=m.shared_experts,
                   first_k_dense_replace=m.dense_layers, q_lora_rank=m.q_lora_rank,
                   kv_lora_rank=m.kv_lora_rank, qk_nope_head_dim=m.qk_nope_head_dim,
                   qk_rope_head_dim=m.qk_rope_head_dim, v_head_dim=m.v_head_dim)
    return cfg


# ---------------------------------------------------------------------------------------------
# Peer-side scripts: each reads a JSON list of jobs on stdin and prints one JSON object.

RIDGEPOINT_SCRIPT = r"""
import json, sys
from ridgepoint import _core
out = {}
for job in json.load(sys.stdin):
    try:
        out[job["key"]] = json.loads(_core.fit_registry(job["model"], job["gpu"], job["count"], "vllm",
                                     job["dtype"], job["kv"], job["ctx"], job["prompt"], True))
    except Exception as exc:
        out[job["key"]] = {"error": str(exc)}
print(json.dumps(out))
"""

SERVCALC_SCRIPT = r"""
import json, sys
from vramcalc import UnsupportedModelError
from vramcalc.loaders import load_arch
from servcalc import Workload, estimate, profiles, work
from servcalc.modes import DoesNotFitError
out = {}
for job in json.load(sys.stdin):
    try:
        arch = load_arch(job["config"])
    except (UnsupportedModelError, ValueError) as exc:
        out[job["key"]] = {"unsupported": str(exc)}
        continue
    prof = profiles.vllm()
    weights = work.weight_bytes(arch, prof.weight_bits)          # what estimate() uses
    res = {"params": arch.param_count(), "weight_bytes": weights.resident,
           "weight_stream_bytes": weights.stream, "kv_bytes_per_token": work.kv_bytes_per_token(arch, prof.kv_bits),
           "profile": {"memory_budget_ratio": prof.memory_budget_ratio, "workspace_ratio": prof.workspace_ratio,
                       "kv_block": prof.kv_block}}
    try:
        e = estimate(job["config"], job["gpu"], workload=Workload(job["prompt"], job["gen"], (1,)), profile=prof)
        assert (e.weight_bytes, e.kv_bytes_per_token) == (weights.resident, res["kv_bytes_per_token"])
        res.update(memory_capacity_seqs=e.memory_capacity_seqs, vram_bytes=e.params.gpu.vram_bytes)
    except DoesNotFitError as exc:
        res["does_not_fit"] = str(exc)
    out[job["key"]] = res
print(json.dumps(out))
"""

LLM_ANALYSIS_SCRIPT = r"""
import json, logging, sys
from llm_analysis.logger import logger
logger.setLevel(logging.ERROR)
from llm_analysis.analysis import LLMAnalysis
from llm_analysis.config import (ModelConfig, ParallelismConfig, get_dtype_config_by_name,
                                 get_gpu_config_by_name)
out = {}
for job in json.load(sys.stdin):
    cfg = json.load(open(job["config"]))
    if cfg.get("kv_lora_rank"):
        out[job["key"]] = {"unsupported": "no latent (MLA) attention: ModelConfig has no kv_lora_rank"}
        continue
    ffn = cfg["intermediate_size"]
    mc = ModelConfig(
        name=cfg["_name_or_path"].replace("/", "_"), num_layers=cfg["num_hidden_layers"],
        n_head=cfg["num_attention_heads"], hidden_dim=cfg["hidden_size"], vocab_size=cfg["vocab_size"],
        max_seq_len=cfg["max_position_embeddings"], num_key_value_heads=cfg.get("num_key_value_heads"),
        ffn_embed_dim=ffn, expansion_ratio=ffn / cfg["hidden_size"], model_type=cfg["model_type"],
        moe_num_experts=cfg.get("num_local_experts") or 1, moe_top_k=cfg.get("num_experts_per_tok") or 1)
    gpu = get_gpu_config_by_name(job["gpu"])
    dtype = get_dtype_config_by_name("w16a16e16")
    one = LLMAnalysis(mc, gpu, dtype, ParallelismConfig(tp_size=1))
    res = {
        "params": one.get_num_params_total(), "active_params": one.get_num_active_params_total(),
        "weight_bytes": one.get_weight_memory_per_layer() * mc.num_layers + one.get_memory_embedding()
                        + one.get_weight_memory_last_layernorm(),
        "kv_bytes_per_token": one.get_memory_kv_cache_per_layer(1, 1, 2) * mc.num_layers,
        "gpu_mem_bytes": gpu.mem_per_GPU_in_GB * 1024**3,
    }
    tp = job["tp"]
    many = LLMAnalysis(mc, gpu, dtype, ParallelismConfig(tp_size=tp))
    try:
        r = many.inference(batch_size_per_gpu=1, seq_len=job["prompt"], num_tokens_to_generate=job["gen"])
        res.update({k: r[k] for k in ("weight_memory_per_gpu", "kv_cache_memory_per_gpu",
                                      "decode_activation_memory_per_gpu", "decode_max_batch_size_per_gpu")})
    except AssertionError as exc:
        res["does_not_fit"] = str(exc)
    out[job["key"]] = res
print(json.dumps(out))
"""


def run_peer(python: Path, script: str, jobs: list) -> dict:
    done = subprocess.run([str(python), "-c", script], input=json.dumps(jobs), capture_output=True,
                          text=True, env=PEER_ENV)
    if done.returncode != 0:
        raise SystemExit(f"peer script failed under {python}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# Rows and formatting

ROWS: list[dict] = []


def n(x) -> str:
    """Whole numbers with separators, others to 5 significant figures."""
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "fits" if x else "no fit"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.5g}" if abs(x) < 1e6 else f"{x:,.0f}"
    return f"{int(x):,}"


def sig5(x: float) -> float:
    """A number as ridgepoint prints it: five significant figures."""
    return float(f"{x:.4e}")


def half_ulp5(x: float) -> float:
    return 0.5 * 10 ** (math.floor(math.log10(abs(x))) - 4) if x else 0.0


def record(peer, model, quantity, ours, theirs, reason="", adjusted=None, same=None) -> None:
    """One compared quantity: exact when `same(ours, theirs)`; explained when the stated reason's
    computed adjustment of ours equals the peer's figure; otherwise unexplained."""
    same = same or (lambda a, b: a == b)
    if same(ours, theirs):
        status = "exact"
    elif adjusted is not None and (theirs in adjusted if isinstance(adjusted, set) else same(adjusted, theirs)):
        status = "explained"
    else:
        status = "UNEXPLAINED"
        if adjusted is not None:
            shown = ", ".join(n(a) for a in sorted(adjusted)) if isinstance(adjusted, set) else n(adjusted)
            reason += f" [adjusted {shown} does not reach the peer's {n(theirs)}]"
    ratio = (ours / theirs) if isinstance(ours, (int, float)) and not isinstance(ours, bool) and theirs else None
    ROWS.append(dict(peer=peer, model=model, quantity=quantity, ours=ours, theirs=theirs, ratio=ratio,
                     status=status, reason=reason))


def print_table(peer: str) -> None:
    rows = [r for r in ROWS if r["peer"] == peer]
    print(f"  {'model':<15} {'quantity':<30} {'ours':>20} {'peer':>20} {'ratio':>9}  status")
    for r in rows:
        ratio = f"{r['ratio']:.4f}" if r["ratio"] is not None else "-"
        print(f"  {r['model']:<15} {r['quantity']:<30} {n(r['ours']):>20} {n(r['theirs']):>20} {ratio:>9}  {r['status']}")
        if r["reason"]:
            print(f"  {'':<15} -> {r['reason']}")
    print()


def floor_range(value: float, tol: float, per: float) -> set[int]:
    """floor(value / per) for every value within +-tol (a figure printed to limited precision)."""
    return {math.floor((value - tol) / per), math.floor(value / per), math.floor((value + tol) / per)}


# ---------------------------------------------------------------------------------------------
# ridgepoint

def check_ridgepoint(cat, py: Path) -> None:
    print("=" * 100)
    print("ridgepoint 0.1.2 (built-in registry; vLLM engine model)")
    ours_ids = {mid: mid for mid in cat.models if mid in RIDGEPOINT_REGISTRY}
    ours_ids.update({mid: peer for mid, peer in RIDGEPOINT_ALIAS.items() if mid in cat.models})
    P, O = 1024, 2048                       # S = P + O/2 = 2048 = the peer's --ctx
    ctx = P + O // 2
    capacity_on = {"llama-2-7b": ("h100-sxm", 1, "bf16"), "llama-3-8b": ("h100-sxm", 1, "bf16"),
                   "mistral-7b": ("h100-sxm", 1, "bf16"), "qwen2.5-7b": ("h100-sxm", 1, "bf16"),
                   "mixtral-8x7b": ("h100-sxm", 2, "bf16"), "llama-3-70b": ("h100-sxm", 4, "bf16"),
                   "deepseek-v3": ("h200", 8, "fp8")}
    jobs = [dict(key=f"probe:{rid}", model=rid, gpu="h100-80gb", count=1, dtype="fp16", kv="fp16", ctx=ctx, prompt=P)
            for rid in RIDGEPOINT_REGISTRY]
    for mid, rid in ours_ids.items():
        jobs.append(dict(key=f"fp8:{mid}", model=rid, gpu="h100-80gb", count=1, dtype="fp8", kv="fp8", ctx=ctx, prompt=P))
        gpu, count, w = capacity_on[mid]
        jobs.append(dict(key=f"cap:{mid}", model=rid, gpu=RIDGEPOINT_GPU[gpu], count=count,
                         dtype="fp16" if w == "bf16" else w, kv="fp16", ctx=ctx, prompt=P))
    for ours_gpu, rgpu in RIDGEPOINT_GPU.items():
        jobs.append(dict(key=f"gpu:{ours_gpu}", model="llama-3-8b", gpu=rgpu, count=1, dtype="fp16", kv="fp16", ctx=ctx, prompt=P))
    res = run_peer(py, RIDGEPOINT_SCRIPT, jobs)
    bad = [rid for rid in RIDGEPOINT_REGISTRY if "error" in res[f"probe:{rid}"]]
    if bad:
        raise SystemExit(f"ridgepoint registry ids did not resolve: {bad}")
    others = [rid for rid in RIDGEPOINT_REGISTRY if rid not in ours_ids.values()]
    print(f"registry ({len(RIDGEPOINT_REGISTRY)} ids, all resolve): {', '.join(RIDGEPOINT_REGISTRY)}")
    print(f"compared: {', '.join(f'{m}' if m == r else f'{m} (peer id {r})' for m, r in ours_ids.items())}; "
          f"not in our catalog: {', '.join(others)}")
    print(f"capacity deployments: prompt {P}, output {O} -> average sequence P + O/2 = {ctx} tokens = "
          f"ridgepoint --ctx {ctx} --prompt {P}; KV at bf16/fp16\n")
    pr = lambda a, b: sig5(a) == b  # noqa: E731  (the peer prints 5 significant figures)

    for mid, rid in ours_ids.items():
        m = cat.model(mid)
        base, fp8 = res[f"probe:{rid}"], res[f"fp8:{mid}"]
        peer_params = base["model"]["params"]
        if mid == "mistral-7b":
            delta = 2 * (m.vocab - 32000) * m.hidden
            why = (f"peer's mistral-7b is v0.1/v0.2 (vocab 32,000), ours v0.3 (vocab {m.vocab:,}): "
                   f"ours - 2 x {m.vocab - 32000} x {m.hidden:,} (embedding + LM-head rows) = {m.params - delta:,}")
            adj = m.params - delta
        elif mid == "deepseek-v3":
            why = (f"peer stores the rounded published total (671B, MTP module excluded) = our catalog's "
                   f"published_params {m.published_params:,}; ours is derived from the config "
                   f"(+{m.params - m.published_params:,}, {100 * (m.params / m.published_params - 1):.4f}%)")
            adj = m.published_params
        else:
            why, adj = "", None
        record("ridgepoint", mid, "params", m.params, peer_params, why, adj)
        adj_params = adj if adj is not None else m.params
        for label, peer_w, bpw in (("weight bytes bf16 (peer fp16)", base["memory"]["weights_bytes"]["best"], 2),
                                   ("weight bytes fp8", fp8["memory"]["weights_bytes"]["best"], 1)):
            ours_w = m.params * bpw
            reason = "at the peer's 5 significant figures"
            if adj is not None:
                reason = f"{bpw} B x the peer's parameter count (see params): {bpw} x {adj_params:,}"
            record("ridgepoint", mid, label, ours_w, peer_w, reason, adj_params * bpw if adj is not None else None, same=pr)
        for label, peer_cap, kvb in (("KV bytes/token bf16", base["capacity"], 2), ("KV bytes/token fp8", fp8["capacity"], 1)):
            per_tok = peer_cap["bytes_per_seq"] / peer_cap["ctx"]
            record("ridgepoint", mid, label, m.kv_values_per_token * kvb, per_tok,
                   f"peer: bytes_per_seq {peer_cap['bytes_per_seq']:,} / ctx {peer_cap['ctx']:,}")

        # KV pool and maximum concurrency on one deployment.
        gpu, count, w = capacity_on[mid]
        g = cat.gpu(gpu)
        rep = analyze(build_deployment(cat, mid, gpu, gpus=count, weights=w, prompt=P, output=O))
        cap = res[f"cap:{mid}"]
        pool = cap["memory"]["kv_pool_bytes"]["best"]
        peer_w = cap["memory"]["weights_bytes"]["best"]
        overhead = cap["memory"]["overhead_bytes"]["best"]
        util = cap["engine"]["util"]
        budget = util * count * (g.memory_gib * GIB - RIDGEPOINT_CONTEXT_BYTES)
        model_pool = budget - peer_w - overhead
        tol = half_ulp5(peer_w) + half_ulp5(overhead) + half_ulp5(pool)
        where = f"{count} x {gpu}"
        record("ridgepoint", mid, f"KV pool B ({where})", rep.usable_kv_bytes, pool,
               f"ours {count} x {g.memory_gib} GiB - weights {n(rep.weight_bytes)} - {count} x 8 GiB reserve; "
               f"peer {util} (vLLM gpu_memory_utilization) x {count} x ({g.memory_gib} GiB - 0.8 GB not itemised in its "
               f"output) - weights {n(peer_w)} - its calibrated overhead {n(overhead)} = {n(model_pool)}",
               model_pool, same=lambda a, b: abs(a - b) <= tol)
        peer_max = cap["capacity"]["max_sequences"]["best"]
        per_seq_ours = rep.kv_bytes_per_token * rep.kv_replication * rep.seq_len_avg
        with_pool = math.floor(pool / per_seq_ours)
        steps = f"ours floor({n(rep.usable_kv_bytes)} / ({n(rep.kv_bytes_per_token)} x {rep.kv_replication:g} copies x {n(rep.seq_len_avg)})) = {rep.max_concurrency}; with the peer's pool: {with_pool}"
        peer_per_seq = rep.kv_bytes_per_token * ctx          # the peer never replicates the cache
        adjusted = floor_range(pool, half_ulp5(pool), peer_per_seq)
        if rep.kv_replication != 1:
            steps += (f"; peer keeps one copy of the {m.attention_kind.upper()} cache for all {count} GPUs "
                      f"(ours one per GPU, vLLM replicates the latent): x{rep.kv_replication:g} -> "
                      f"{math.floor(pool / peer_per_seq)}")
        steps += f"; = the peer's {peer_max}" if peer_max in adjusted else ""
        record("ridgepoint", mid, f"max concurrency ({where})", rep.max_concurrency, peer_max, steps, adjusted)

    # The ridge point per accelerator (model-independent).
    for ours_gpu, rgpu in RIDGEPOINT_GPU.items():
        g = cat.gpu(ours_gpu)
        ridge = g.peak_flops("bf16") / (g.bandwidth_tbps * 1e12)
        peer_ridge = res[f"gpu:{ours_gpu}"]["speed"]["ridge_batch"]
        peer_peak = RIDGEPOINT_PEAK_TFLOPS[rgpu]
        alt = round(peer_peak / g.bandwidth_tbps)          # TFLOP/s over TB/s: FLOP per byte
        why = "peer prints the ridge rounded to a whole batch"
        if round(ridge) != peer_ridge:
            why = (f"peer's BF16 peak for {rgpu} is {peer_peak:,} TFLOPS (ours {g.peak_tflops['bf16']:,}): "
                   f"{peer_peak} TFLOP/s / {g.bandwidth_tbps:g} TB/s = {peer_peak / g.bandwidth_tbps:.2f} -> {alt}")
        record("ridgepoint", ours_gpu, "ridge (FLOP/byte)", ridge, peer_ridge, why, alt,
               same=lambda a, b: round(a) == b)
    print_table("ridgepoint")


# ---------------------------------------------------------------------------------------------
# servcalc

def check_servcalc(cat, py: Path, configs: dict) -> None:
    print("=" * 100)
    print("servcalc 0.1.0 + vramcalc (config.json in, single GPU, vLLM 0.6.3 profile)")
    P, O = 1024, 256
    jobs = []
    for mid in cat.models:
        for ours_gpu, sgpu in SERVCALC_GPU.items():
            jobs.append(dict(key=f"{mid}@{ours_gpu}", config=str(configs[mid]), gpu=sgpu, prompt=P, gen=O))
    res = run_peer(py, SERVCALC_SCRIPT, jobs)
    skipped = {mid: res[f"{mid}@h100-sxm"]["unsupported"] for mid in cat.models if "unsupported" in res[f"{mid}@h100-sxm"]}
    print(f"compared: {', '.join(m for m in cat.models if m not in skipped)}")
    for mid, why in skipped.items():
        print(f"skipped {mid}: peer says: {why.splitlines()[0]}")
    first = next(r for r in res.values() if "profile" in r)["profile"]
    keep = first["memory_budget_ratio"] - first["workspace_ratio"]
    print(f"capacity: prompt {P}, gen {O}, on 1 x H100 80GB when the weights fit its budget, else 1 x B200; "
          f"peer budget = VRAM x ({first['memory_budget_ratio']} utilisation - {first['workspace_ratio']} workspace)"
          f" - weights, each sequence at its peak length P + O rounded up to {first['kv_block']}-token blocks\n")
    for mid, m in cat.models.items():
        if mid in skipped:
            continue
        r = res[f"{mid}@h100-sxm"]
        record("servcalc", mid, "params", m.params, r["params"])
        record("servcalc", mid, "weight bytes bf16", m.params * 2, r["weight_bytes"])
        record("servcalc", mid, "KV bytes/token bf16", m.kv_values_per_token * 2, r["kv_bytes_per_token"])
        dep = build_deployment(cat, mid, "h100-sxm", prompt=P, output=O, concurrency=1)
        ours_read = weight_bytes_read(dep, 1, 2.0)        # one decode token at batch 1
        embed = 0 if m.tied_embeddings else 2 * m.vocab * m.hidden
        record("servcalc", mid, "weight bytes read per step", ours_read, r["weight_stream_bytes"],
               f"peer excludes the input-embedding table from the per-step read (a row lookup, not a scan): "
               f"ours - 2 x {m.vocab:,} x {m.hidden:,} = {n(ours_read - embed)}" if embed else "", ours_read - embed)
        # Capacity on the first GPU the peer fits on.
        for ours_gpu in SERVCALC_GPU:
            r = res[f"{mid}@{ours_gpu}"]
            if "memory_capacity_seqs" in r:
                break
        else:
            rep = analyze(build_deployment(cat, mid, "b200", prompt=P, output=O))
            record("servcalc", mid, "fits on 1 x b200", rep.fits, False,
                   f"peer: {r['does_not_fit']}")
            continue
        g = cat.gpu(ours_gpu)
        rep = analyze(build_deployment(cat, mid, ours_gpu, prompt=P, output=O))
        kv = m.kv_values_per_token * 2
        steps = [f"ours floor(({g.memory_gib} GiB - {n(rep.weight_bytes)} - 8 GiB) / ({kv:,} x {n(rep.seq_len_avg)})) = {rep.max_concurrency}"]
        vram = r["vram_bytes"]
        if vram != g.memory_gib * GIB:
            steps.append(f"peer's {SERVCALC_GPU[ours_gpu]} has {vram / GIB:g} GiB (ours {g.memory_gib} GiB): "
                         f"{math.floor((vram - rep.weight_bytes - 8 * GIB) / (kv * rep.seq_len_avg))}")
        budget = vram * keep - r["weight_bytes"]
        steps.append(f"budget {keep:.2f} x VRAM - weights = {n(budget)} (no 8 GiB reserve): "
                     f"{math.floor(budget / (kv * rep.seq_len_avg))}")
        block = first["kv_block"]
        peak = math.ceil((P + O) / block) * block
        final = math.floor(budget / (kv * peak))
        steps.append(f"each sequence at its peak {peak} tokens, not the average {n(rep.seq_len_avg)}: {final}")
        record("servcalc", mid, f"max concurrency (1 x {ours_gpu})", rep.max_concurrency, r["memory_capacity_seqs"],
               "; ".join(steps), final)
    print_table("servcalc")


# ---------------------------------------------------------------------------------------------
# llm-analysis

def llm_analysis_terms(m, experts_counted: str) -> list[tuple[str, int]]:
    """What our count holds that llm-analysis's does not, term by term (each a whole number).
    `experts_counted` is "total" (all experts) or "active" (experts_per_token)."""
    L, h, V = m.layers, m.hidden, m.vocab
    E = m.experts or 1
    k = (m.experts_per_token or 1) if experts_counted == "active" else E
    I = m.expert_intermediate if m.experts else m.intermediate
    q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
    peer_attn_num = 2 * h * h * m.heads + 2 * h * h * m.kv_heads     # x heads, to stay whole
    terms = []
    if not m.tied_embeddings:
        terms.append(("peer counts one embedding table (its shared_embedding default), ours adds the untied LM head: V x h", V * h))
    terms.append((f"peer's MLP has two matrices, ours gated three: L x {'experts x ' if m.experts else ''}h x I", L * k * h * I))
    attn_delta_x_heads = L * (2 * h * q + 2 * h * kv) * m.heads - L * peer_attn_num
    if attn_delta_x_heads:
        assert attn_delta_x_heads % m.heads == 0
        terms.append((f"peer sizes attention with head_dim = hidden/heads = {h / m.heads:g}, the config says {m.head_dim}",
                      attn_delta_x_heads // m.heads))
    if m.qkv_bias or m.attention_bias:
        terms.append(("q/k/v biases (peer has none)", L * (q + 2 * kv)))
    if m.attention_bias:
        terms.append(("output-projection bias", L * h))
    if m.attention_sinks:
        terms.append(("attention sinks, one per head", L * m.heads))
    if m.expert_bias:
        terms.append(("expert biases", L * k * (2 * m.expert_intermediate + h)))
    if m.experts and (m.expert_bias or m.router_bias):
        terms.append(("router bias", L * m.experts))
    if m.norms_per_layer != 2:
        terms.append((f"{m.norms_per_layer} norms per layer, peer 2", L * (m.norms_per_layer - 2) * h))
    return terms


def explain_terms(terms, ours: int, scale: int = 1) -> tuple[str, int]:
    parts = [f"{text} ({n(value * scale)})" for text, value in terms]
    adjusted = ours - scale * sum(v for _, v in terms)
    return "ours minus: " + "; ".join(parts) + f" = {n(adjusted)}", adjusted


def check_llm_analysis(cat, py: Path, configs: dict) -> None:
    print("=" * 100)
    print("llm-analysis 0.2.2 (config.json mapped onto its ModelConfig; w16a16e16; inference with batch 1)")
    P, O = 1024, 256
    gpus = {}
    for mid in cat.models:
        for count in (1, 2, 4, 8, 16):
            if analyze(build_deployment(cat, mid, "h100-sxm", gpus=count, prompt=P, output=O)).fits:
                gpus[mid] = count
                break
    jobs = [dict(key=mid, config=str(configs[mid]), gpu=LLM_ANALYSIS_GPU["h100-sxm"], tp=gpus.get(mid, 1), prompt=P, gen=O)
            for mid in cat.models]
    res = run_peer(py, LLM_ANALYSIS_SCRIPT, jobs)
    skipped = {mid: r["unsupported"] for mid, r in res.items() if "unsupported" in r}
    print(f"compared: {', '.join(m for m in cat.models if m not in skipped)}")
    for mid, why in skipped.items():
        print(f"skipped {mid}: {why}")
    print("dropped by the mapping (no ModelConfig field): head_dim, tie_word_embeddings, attention_bias / qkv bias, "
          "sliding_window, norms per layer")
    print(f"capacity: prompt {P}, output {O}, on the fewest H100s (tensor parallel) our engine fits the model on; "
          f"peer: 80 GB read as 80 x 1024^3 B, no reserve or utilisation factor, each sequence at P + O tokens "
          f"plus its decode activations\n")
    for mid, m in cat.models.items():
        if mid in skipped:
            continue
        r = res[mid]
        terms = llm_analysis_terms(m, "total")
        why, adj = explain_terms(terms, m.params)
        record("llm-analysis", mid, "params", m.params, r["params"], why, adj)
        if m.experts:
            aterms = llm_analysis_terms(m, "active")
            why, adj = explain_terms(aterms, m.active_params)
            record("llm-analysis", mid, "active params", m.active_params, r["active_params"], why, adj)
        why, adj = explain_terms(terms, m.params * 2, scale=2)
        record("llm-analysis", mid, "weight bytes bf16", m.params * 2, r["weight_bytes"],
               "2 B x the peer's parameter count: " + why, adj)
        kv = m.kv_values_per_token * 2
        peer_hd = m.hidden / m.heads
        record("llm-analysis", mid, "KV bytes/token bf16", kv, r["kv_bytes_per_token"],
               f"peer derives head_dim as hidden/heads = {peer_hd:g}, the config says {m.head_dim}: ours x {peer_hd:g}/{m.head_dim}"
               if peer_hd != m.head_dim else "", kv * peer_hd / m.head_dim)
        if "decode_max_batch_size_per_gpu" not in r or mid not in gpus:
            print(f"  (no capacity for {mid}: peer says {r.get('does_not_fit', '?')[:120]})")
            continue
        count = gpus[mid]
        g = cat.gpu("h100-sxm")
        rep = analyze(build_deployment(cat, mid, "h100-sxm", gpus=count, prompt=P, output=O))
        mem = r["gpu_mem_bytes"]
        repl = rep.kv_replication
        w_peer = r["weight_memory_per_gpu"] * count
        peer_kv = r["kv_bytes_per_token"]
        steps = [f"ours {rep.max_concurrency}"]
        s = math.floor((count * mem - rep.weight_bytes) / (kv * repl * rep.seq_len_avg))
        steps.append(f"no 8 GiB/GPU reserve: {s}")
        if w_peer != rep.weight_bytes:
            s = math.floor((count * mem - w_peer) / (kv * repl * rep.seq_len_avg))
            tp_note = ""
            if w_peer != r["weight_bytes"]:
                tp_note = (f" (at tensor parallel {count} it counts K/V projections for {max(m.kv_heads, count)} heads, "
                           f"one per GPU: +{n(w_peer - r['weight_bytes'])} over its single-GPU {n(r['weight_bytes'])})")
            steps.append(f"peer's weights {n(w_peer)}{tp_note}: {s}")
        s = math.floor((count * mem - w_peer) / (kv * repl * (P + O)))
        steps.append(f"each sequence at P + O = {P + O} tokens, not {n(rep.seq_len_avg)}: {s}")
        if peer_kv != kv:
            s = math.floor((count * mem - w_peer) / (peer_kv * repl * (P + O)))
            steps.append(f"peer's KV/token {n(peer_kv)}: {s}")
        act = r["decode_activation_memory_per_gpu"]
        # The peer's own arithmetic, per GPU: int((memory - weights/GPU) / (activations + KV/GPU)).
        kv_gpu = peer_kv * repl * (P + O) / count
        final = int((mem - r["weight_memory_per_gpu"]) / (act + kv_gpu))
        steps.append(f"plus {n(act)} B of decode activations per sequence per GPU: {final}")
        label = f"max concurrency ({count} x h100-sxm)"
        record("llm-analysis", mid, label, rep.max_concurrency, r["decode_max_batch_size_per_gpu"], "; ".join(steps), final)
    print_table("llm-analysis")


# ---------------------------------------------------------------------------------------------

def main() -> int:
    pythons = {name[0]: ensure_peer(*name) for name in (RIDGEPOINT, SERVCALC, LLM_ANALYSIS)}
    cat = builtin_catalog()
    with tempfile.TemporaryDirectory(prefix="ridge-crosscheck-") as tmp:
        configs = {}
        for mid, m in cat.models.items():
            d = Path(tmp) / mid
            d.mkdir()
            (d / "config.json").write_text(json.dumps(hf_config(m), indent=2))
            configs[mid] = d / "config.json"
        # The files must say what the catalog says: read them back with our own reader.
        mismatched = [mid for mid, m in cat.models.items()
                      if (lambda s: (s.params, s.active_params, s.kv_values_per_token))(
                          spec_from_config(json.loads(configs[mid].read_text()), str(configs[mid])))
                      != (m.params, m.active_params, m.kv_values_per_token)]
        print(f"Cross-check of the engine against peer calculators; {len(configs)} config.json files written to {tmp}")
        print(f"round trip through engine.hfconfig: {len(configs) - len(mismatched)} of {len(configs)} give the catalog's "
              f"params, active params and KV values per token" + (f" (MISMATCH: {', '.join(mismatched)})" if mismatched else ""))
        print("status: exact = equal (to the peer's printed precision); explained = the stated reason, applied to our "
              "figure, lands exactly on the peer's; UNEXPLAINED = otherwise\n")
        check_ridgepoint(cat, pythons["ridgepoint"])
        check_servcalc(cat, pythons["servcalc"], configs)
        check_llm_analysis(cat, pythons["llm-analysis"], configs)

    total = len(ROWS)
    exact = sum(r["status"] == "exact" for r in ROWS)
    explained = sum(r["status"] == "explained" for r in ROWS)
    unexplained = [r for r in ROWS if r["status"] == "UNEXPLAINED"]
    for peer in ("ridgepoint", "servcalc", "llm-analysis"):
        rows = [r for r in ROWS if r["peer"] == peer]
        print(f"{peer:<13} {len(rows):3d} quantities: {sum(r['status'] == 'exact' for r in rows):3d} exact, "
              f"{sum(r['status'] == 'explained' for r in rows):3d} explained, "
              f"{sum(r['status'] == 'UNEXPLAINED' for r in rows):3d} unexplained")
    for r in unexplained:
        print(f"UNEXPLAINED: {r['peer']} {r['model']} {r['quantity']}: ours {n(r['ours'])}, peer {n(r['theirs'])}")
    print(f"\nSUMMARY: {total} quantities compared, {exact} exact, {explained} explained differences, "
          f"{len(unexplained)} unexplained")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
