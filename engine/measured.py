"""The measured fidelity's step times: NVIDIA's silicon-measured kernel database, answered offline.

`aiconfigurator-core` (pinned to VERSION, an optional extra) holds GEMM, attention, all-reduce
and MoE kernels timed on real GPUs under vLLM, SGLang and TensorRT-LLM; its Rust estimator sums
them for one forward pass. Ridge uses the vLLM data and keeps its own memory accounting (fit,
capacity); this module only answers "how long does this pass take": a prefill of a batch of
prompts, a decode step at (batch, context), and the mixed step of chunked prefill. Everything
here is imported lazily: the floor and realistic paths, and start-up, never load the package.

A model Ridge knows is handed over as a local folder holding a `config.json` written from the
catalog (under the cache folder), so the package never looks a model up online. An engine is
built once per (model, system, tensor-parallel width, precisions) and kept for the process: the
first build costs seconds, every later query microseconds.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from engine.errors import RidgeError

PACKAGE = "aiconfigurator-core"
VERSION = "0.12.0"
BACKEND = "vllm"
ENV_CACHE_DIR = "RIDGE_CACHE_DIR"
NO_KERNELS = "no measured kernels for this accelerator"
# How a speculative verification pass is timed (Kernels.verify), for the reveal.
VERIFY_NOTE = ("a verification pass runs its matrix multiplies, all-reduces and experts over "
               "batch x (k+1) tokens, but reads each sequence's KV cache once for its k+1 queries")
# Ridge's precisions that have measured vLLM GEMM kernels, by the database's names. INT8 and INT4
# weights have none (the vLLM tables hold bfloat16, fp8 and, on Blackwell, nvfp4 only).
_GEMM = {"bf16": "bfloat16", "fp8": "fp8"}
_KV = {"bf16": "bfloat16", "fp8": "fp8"}
# Systems whose vLLM tables lack FP8 (the A100 has no FP8 units; its tables are from vLLM 0.14).
_NO_FP8 = frozenset({"a100_sxm"})
_LOCK = threading.RLock()
_ENGINES: dict = {}
_PROBLEM: list = []          # the reason the package cannot be used here, once found


def unavailable() -> str | None:
    """Why the measured fidelity cannot run in this interpreter (None when it can): the extra is
    not installed, is another version, or has no build for this platform."""
    if _PROBLEM:
        return _PROBLEM[0] or None
    import platform
    import sys
    from importlib import metadata

    reason = ""
    try:
        got = metadata.version(PACKAGE)
        if got != VERSION:
            reason = f"--fidelity measured needs {PACKAGE}=={VERSION}, found {got}"
    except metadata.PackageNotFoundError:
        if sys.version_info >= (3, 14) or sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
            reason = (f"--fidelity measured is not available on this platform ({PACKAGE} ships for Linux x86_64 "
                      f"and Python 3.11-3.13 only)")
        else:
            reason = f"--fidelity measured needs the optional extra: pip install -e '.[measured]' ({PACKAGE}=={VERSION})"
    _PROBLEM.append(reason)
    return reason or None


def system_of(gpu) -> str:
    """The database's system name for an accelerator ('' where it has no measured kernels)."""
    return getattr(gpu, "measured_system", "") or ""


def coverage_problem(model, gpu, weights: str, kv: str) -> str | None:
    """Why these step times cannot be measured (None when they can): an accelerator the database
    does not cover, or a precision it holds no kernels for on that system."""
    system = system_of(gpu)
    if not system:
        return f"{NO_KERNELS} ({gpu.id})"
    if weights not in _GEMM or (weights == "fp8" and system in _NO_FP8):
        return f"no measured {weights} matrix kernels on {gpu.id} (vLLM data: {', '.join(_available_gemm(system))})"
    if kv not in _KV or (kv == "fp8" and system in _NO_FP8):
        return f"no measured {kv} KV-cache attention kernels on {gpu.id}"
    return None


def _available_gemm(system: str) -> list[str]:
    return [p for p in _GEMM if not (p == "fp8" and system in _NO_FP8)]


def backend_label(gpu) -> str:
    """What the measurements are, for the reveal: package, version, framework and system."""
    return f"{PACKAGE} {VERSION}, {BACKEND} kernels measured on {system_of(gpu) or gpu.id}"


# --- the model handed over: a config.json written from the catalog ----------------------------

def hf_config(model) -> dict:
    """A Hugging Face style config.json for a catalog model, in the family the database models it
    as: dense models as Llama (Qwen 2 is Llama-shaped; Mistral and Gemma 2 are timed with full
    attention on every layer), Mixtral-style mixtures of experts, gpt-oss with its banded layers,
    and DeepSeek-V3's latent attention. Some shapes have no measured kernels and are refused when
    an engine is built: 96-wide heads (Phi-3 mini), Gemma 2 9B's 256-wide heads on one GPU, and
    gpt-oss's experts in BF16."""
    m = model
    config = {
        "num_hidden_layers": m.layers, "hidden_size": m.hidden, "num_attention_heads": m.heads,
        "num_key_value_heads": m.kv_heads, "head_dim": m.head_dim, "vocab_size": m.vocab,
        "max_position_embeddings": m.context, "tie_word_embeddings": bool(m.tied_embeddings),
        "intermediate_size": m.intermediate, "torch_dtype": "bfloat16", "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
    }
    if m.is_mla:
        config.update(architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3",
                      q_lora_rank=m.q_lora_rank or None, kv_lora_rank=m.kv_lora_rank,
                      qk_nope_head_dim=m.qk_nope_head_dim, qk_rope_head_dim=m.qk_rope_head_dim,
                      v_head_dim=m.v_head_dim, n_routed_experts=m.experts, num_experts_per_tok=m.experts_per_token,
                      n_shared_experts=m.shared_experts, moe_intermediate_size=m.expert_intermediate,
                      first_k_dense_replace=m.dense_layers, moe_layer_freq=1, num_nextn_predict_layers=0)
    elif m.experts and m.attention_sinks:
        config.update(architectures=["GptOssForCausalLM"], model_type="gpt_oss", num_local_experts=m.experts,
                      num_experts_per_tok=m.experts_per_token, experts_per_token=m.experts_per_token,
                      intermediate_size=m.expert_intermediate, attention_bias=True,
                      sliding_window=m.sliding_window or None,
                      layer_types=[("sliding_attention" if i % 2 == 0 and m.sliding_layers else "full_attention")
                                   for i in range(m.layers)])
    elif m.experts:
        config.update(architectures=["MixtralForCausalLM"], model_type="mixtral", num_local_experts=m.experts,
                      num_experts_per_tok=m.experts_per_token, intermediate_size=m.expert_intermediate)
    else:
        config.update(architectures=["LlamaForCausalLM"], model_type="llama")
    return config


def cache_dir() -> Path:
    """Where the config folders live: $RIDGE_CACHE_DIR, else the user's cache folder for ridge."""
    env = os.environ.get(ENV_CACHE_DIR, "")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("ridge", appauthor=False))


def config_folder(model) -> str:
    """A folder holding `model`'s config.json (written once; named by its content's hash, so a
    changed catalog entry gets a folder of its own)."""
    text = json.dumps(hf_config(model), sort_keys=True, indent=1)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = cache_dir() / "measured-models" / f"{_safe(model.id)}-{digest}"
    path = folder / "config.json"
    if not path.exists():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".config.json.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise RidgeError(f"cannot write the measured fidelity's model config under {folder}: "
                             f"{exc.strerror or exc}") from None
    return str(folder)


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in text)[:48] or "model"


# --- engines ----------------------------------------------------------------------------------

def _quiet() -> None:
    """The package logs every table it loads at INFO/WARNING; Ridge shows none of it."""
    import logging

    for name in ("aiconfigurator_core", "aiconfigurator"):
        log = logging.getLogger(name)
        log.setLevel(logging.CRITICAL)
        log.propagate = False


class _libyaml:
    """While an engine is built, yaml.safe_load parses with libyaml's C loader (same documents,
    same results) instead of the pure-Python one: the package reads its system files with it,
    and that was a third of a first estimate's 2-3 s. Builds hold _LOCK, and nothing else in
    Ridge reads YAML, so the swap is seen by the build alone."""

    def __enter__(self):
        import yaml

        self.saved = yaml.safe_load
        if getattr(yaml, "__with_libyaml__", False):
            yaml.safe_load = lambda stream: yaml.load(stream, Loader=yaml.CSafeLoader)
        return self

    def __exit__(self, *exc):
        import yaml

        yaml.safe_load = self.saved
        return False


class Kernels:
    """One built engine: a model on a system at a tensor-parallel width and precisions. Times are
    in seconds (the database answers in milliseconds); results are memoised per shape."""

    def __init__(self, handle, label: str, moe: bool = False) -> None:
        self._h = handle
        self.label = label
        self._moe = moe
        self._memo: dict = {}

    def _get(self, key, call):
        memo = self._memo
        value = memo.get(key)
        if value is None:
            value = memo[key] = call() * 1e-3
        return value

    def decode(self, batch: int, context: int) -> float:
        """One decode step of `batch` sequences whose KV holds `context` tokens each."""
        batch, context = max(1, int(round(batch))), max(1, int(round(context)))
        return self._get(("d", batch, context), lambda: self._h.decode_step_latency(batch, context, 2))

    def prefill(self, tokens: int, batch: int = 1, prefix: int = 0) -> float:
        """One prefill pass over `batch` prompts of `tokens` tokens, `prefix` of them cached."""
        tokens, batch, prefix = max(1, int(round(tokens))), max(1, int(round(batch))), max(0, int(round(prefix)))
        prefix = min(prefix, tokens - 1)
        return self._get(("p", tokens, batch, prefix), lambda: self._h.predict_prefill_latency(batch, tokens, prefix))

    def mixed(self, chunk: int, decode_batch: int, context: int, prompt: int | None = None, k: int = 0,
              route: float | None = None) -> float:
        """One step that runs a prefill chunk of `chunk` tokens (of a prompt of `prompt` tokens,
        the chunk's attention averaged over the prompt) beside `decode_batch` decode sequences
        whose KV holds `context` tokens. With `k` drafted tokens each to verify, the step is the
        database's mixed step over decode_batch x (k+1) decode tokens less what that charges
        beyond a verification pass (each cache read once, experts at `route` tokens: see
        `verify`)."""
        chunk, n, context = max(1, int(round(chunk))), max(0, int(round(decode_batch))), max(1, int(round(context)))
        prompt = chunk if prompt is None else max(chunk, int(round(prompt)))
        k = int(k) if n else 0
        route = n * (k + 1) if route is None else route

        def call():
            _, shared, chunk_attn, decode_attn = self._h.mixed_step_breakdown(chunk, n * (k + 1), context, 2)
            if prompt != context:
                chunk_attn = self._h.mixed_step_breakdown(chunk, 0, prompt, 2)[2]
            step = shared + chunk_attn + decode_attn
            if k:
                step -= (self.decode(n * (k + 1), context) - self.verify(n, k, context, route)) * 1e3
            return step

        return self._get(("m", chunk, n, context, prompt, k, round(route)), call)

    def verify(self, batch: int, k: int, context: int, route: float) -> float:
        """A verification pass of `batch` sequences, each checking k drafted tokens: the linear
        layers, norms, all-reduces and logits run over batch x (k+1) tokens, but each sequence's
        attention reads its cache once for its k+1 queries (they are one short chunk of the same
        sequence). Timed from the database's per-op breakdown: every op over batch x (k+1) tokens
        at a one-token context (so nothing is charged for reading a cache there), plus the decode
        attention of `batch` sequences over `context` tokens less the same at one token (the cache
        read, once per sequence). The k+1 queries' arithmetic over the cache is taken to hide
        under that read, as it does for grouped-query attention at these draft lengths. In a
        mixture of experts the drafted positions of a sequence mostly route to its own experts,
        so the expert layers are timed at `route` independent tokens. With k = 0 this is exactly
        `decode(batch, context)`: only attention depends on the context."""
        batch, context = max(1, int(round(batch))), max(1, int(round(context)))
        tokens = batch * (int(k) + 1)
        attn_n, experts_n, rest_n = self._ops(tokens, 1)
        if self._moe:
            experts_n = self._ops(max(1, min(tokens, int(round(route)))), 1)[1]
        return rest_n + experts_n + attn_n + self._ops(batch, context)[0] - self._ops(batch, 1)[0]

    def _ops(self, tokens: int, context: int) -> tuple[float, float, float]:
        """One decode step's (attention, routed experts, everything else) in seconds, from the
        database's per-op breakdown. Attention is every op that reads the cache (MLA's block
        holds its projections too, which the one-token difference in `verify` keeps at the
        token count); the experts are the fused MoE op, not its token dispatch."""
        key = ("o", tokens, context)
        found = self._memo.get(key)
        if found is None:
            attn = experts = rest = 0.0
            for name, ms, *_ in self._h.decode_step_per_op(tokens, context, 2):
                if "attention" in name or "mla" in name:
                    attn += ms
                elif name in _EXPERT_OPS:
                    experts += ms
                else:
                    rest += ms
            found = self._memo[key] = (attn * 1e-3, experts * 1e-3, rest * 1e-3)
        return found


# The database's fused expert ops in a decode step (Mixtral-style, and DeepSeek-V3's, which
# overlaps the shared expert with the routed ones).
_EXPERT_OPS = frozenset({"generation_moe", "generation_moe_overlap"})


def kernels(model, gpu, tp: int, weights: str, kv: str) -> Kernels:
    """The engine for this model, accelerator, tensor-parallel width and precisions, built on
    first use and kept (thread-safe: the app builds it from a worker). RidgeError, one line, when
    the extra is missing or the database cannot time this setup."""
    problem = unavailable() or coverage_problem(model, gpu, weights, kv)
    if problem:
        raise RidgeError(problem)
    system = system_of(gpu)
    key = (model, system, int(tp), weights, kv)
    found = _ENGINES.get(key)
    if found is not None:
        return found
    with _LOCK:
        found = _ENGINES.get(key)
        if found is None:
            found = _ENGINES[key] = _build(model, system, int(tp), weights, kv)
    return found


def _build(model, system: str, tp: int, weights: str, kv: str) -> Kernels:
    folder = config_folder(model)
    _quiet()
    try:
        from aiconfigurator_core.sdk.engine import EngineHandle
    except ImportError as exc:   # a broken install: say so in one line
        raise RidgeError(f"--fidelity measured: {PACKAGE} does not import ({exc})") from None
    _quiet()
    options = dict(tp_size=tp, gemm_quant_mode=_GEMM[weights], kvcache_quant_mode=_KV[kv],
                   fmha_quant_mode="bfloat16")
    if model.experts:
        # FP8 experts as block-scaled FP8 (DeepSeek-V3's own checkpoint format): the database's
        # per-tensor FP8 fused-MoE kernels on Hopper run 2-4x slower than BF16, which no serving
        # stack would choose.
        moe = "fp8_block" if weights == "fp8" else _GEMM[weights]
        options.update(moe_quant_mode=moe, moe_tp_size=tp, moe_ep_size=1)
    try:
        with _libyaml():
            handle = EngineHandle.compile(folder, system, BACKEND, **options)
        handle.decode_step_latency(1, 1, 2)     # loads the tables now, not at the first real query
    except Exception as exc:  # the package raises many kinds; each becomes one line
        detail = " ".join(str(exc).split())[:160]
        raise RidgeError(f"no measured kernels for {model.id} on {system} at tensor parallel {tp} "
                         f"({type(exc).__name__}: {detail})") from None
    return Kernels(handle, f"{model.id} on {system}, TP {tp}, {weights} weights, {kv} KV", bool(model.experts))


# --- the passes of one deployment, timed by the database ------------------------------------

def check(dep) -> None:
    """Refuse, in one line, a deployment whose steps the database cannot time."""
    problem = unavailable() or coverage_problem(dep.model, dep.gpu, dep.weights, dep.kv)
    if problem:
        raise RidgeError(problem)
    if dep.draft_model is not None and dep.spec_k:
        problem = coverage_problem(dep.draft_model, dep.gpu, dep.weights, dep.kv)
        if problem:
            raise RidgeError(f"draft {dep.draft_model.id}: {problem}")


def passes_for(dep, n):
    """The measured fidelity's Passes for one deployment (see MeasuredPasses)."""
    global MeasuredPasses
    if MeasuredPasses is None:
        MeasuredPasses = _measured_passes_class()
    return MeasuredPasses(dep, n)


MeasuredPasses = None


def _measured_passes_class():
    from engine.physics import Passes, routing_tokens

    class _MeasuredPasses(Passes):
        """The realistic fidelity's bytes, FLOPs and roofline terms (they name what bounds a
        step), with every pass's time taken from the measured kernels instead: a decode step at
        (sequences per group, KV tokens each), a verification pass over B x (k+1) tokens whose
        caches are each read once and whose MoE layers route only the draws the drafted
        positions add (Kernels.verify), a prefill of a batch of prompts, and the mixed step of
        chunked prefill."""

        def __init__(self, dep, n):
            super().__init__(dep, n)
            self.kern = kernels(dep.model, dep.gpu, int(self.tp), dep.weights, dep.kv)
            self.token_bytes = self.token_kv_bytes
            self.label = backend_label(dep.gpu)

        def _context(self, kv_seq_bytes):
            return kv_seq_bytes / self.token_bytes if self.token_bytes else 1.0

        def _per_group(self, j):
            return max(1, round(max(j, self.groups * min(j, 1.0)) / self.groups))

        def plain_step(self, j, kv_seq_bytes):
            return self.kern.decode(self._per_group(j), self._context(kv_seq_bytes))

        def decode(self, j, kv_seq_bytes, draft_held=None):
            w, kv_read, flops, mem_t, comp_t, _, _, _ = super().decode(j, kv_seq_bytes, draft_held)
            jg, ctx = self._per_group(j), self._context(kv_seq_bytes)
            plain = self.kern.decode(jg, ctx)
            if not self.k:
                return w, kv_read, flops, mem_t, comp_t, max(0.0, plain - max(mem_t, comp_t)), plain, plain
            k = int(self.k)
            route = routing_tokens(jg, k, self.reuse)
            step = self.kern.verify(jg, k, ctx, route)
            named = self.dep.draft_model
            if named is None:
                drafted = self.n["spec_draft_cost"] * plain
            else:
                draft_ctx = draft_held / (named.kv_values_per_token * _kv_bytes(self.dep.kv)) if draft_held else ctx
                drafted = kernels(named, self.dep.gpu, int(self.tp), self.dep.weights, self.dep.kv).decode(jg, draft_ctx)
            tpot = (step + k * drafted) / self.expected
            return w, kv_read, flops, mem_t, comp_t, max(0.0, step - max(mem_t, comp_t)), step, tpot

        def prefill(self, fresh, prompt, prefix, batch=1.0):
            flops, comp, mem, _, _ = super().prefill(fresh, prompt, prefix, batch)
            return flops, comp, mem, 0.0, self.kern.prefill(prompt, batch, prompt - fresh)

        def prefill_charge(self, fresh, prompt, prefix, batch):
            per_pass = min(max(1, int(self.c["prefill_batch_tokens"] // max(fresh, 1))), max(1, int(batch)))
            return self.kern.prefill(prompt, per_pass, prompt - fresh) / per_pass / self.groups

        def mixed(self, chunk, j, kv_seq_bytes, prompt, prefix=0.0, verify=False):
            k, jg = (int(self.k) if verify else 0), self._per_group(j)
            route = routing_tokens(jg, k, self.reuse)
            return self.kern.mixed(chunk, jg, self._context(kv_seq_bytes), prompt, k, route)

    return _MeasuredPasses


def _kv_bytes(precision: str) -> float:
    from engine.catalog import PRECISION_BYTES

    return PRECISION_BYTES[precision]

