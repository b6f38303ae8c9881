"""Model and accelerator catalogs: TOML data in, frozen specs out, with derived parameter counts.

The built-in catalogs live in `engine/data/*.toml`; a user adds models or accelerators with a TOML
file of the same shape (`[models.<id>]`, `[gpus.<id>]`), passed to `load_catalog(extra=[...])`.
Parameter counts are derived here from the architecture, never typed, so a wrong config field shows
up as a wrong total against the published one.
"""
from __future__ import annotations

import os

from engine import bounds
from engine.errors import RidgeError
from engine.record import REQUIRED, Record

DATA = os.path.join(os.path.dirname(__file__), "data")
PRECISION_BYTES = {"bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


class ModelSpec(Record):
    """One transformer's architecture; the parameter counts are derived when it is built."""

    FIELDS = dict(
        id=REQUIRED, name=REQUIRED, layers=REQUIRED, hidden=REQUIRED, intermediate=REQUIRED,
        heads=REQUIRED, kv_heads=REQUIRED, head_dim=REQUIRED, vocab=REQUIRED, context=REQUIRED,
        tied_embeddings=False, norms_per_layer=2, qkv_bias=False, attention_bias=False,
        attention_sinks=False, sliding_window=0, sliding_layers=0,
        # mixture of experts
        experts=0, experts_per_token=0, expert_intermediate=0, shared_experts=0, dense_layers=0,
        expert_bias=False, router_bias=False,
        # multi-head latent attention
        q_lora_rank=0, kv_lora_rank=0, qk_nope_head_dim=0, qk_rope_head_dim=0, v_head_dim=0,
        hf_repo="", published_params=0, published_active=0, source="",
    )
    BOOL_FIELDS = frozenset(k for k, v in FIELDS.items() if v is False)
    TEXT_FIELDS = frozenset(("id", "name", "hf_repo", "source"))

    def _derive(self) -> None:
        if self.sliding_window and not self.sliding_layers:
            self._set("sliding_layers", self.layers)   # a window with no layer count: every layer
        if not self.sliding_window:
            self._set("sliding_layers", 0)
        total, active, expert, moe_layers = _count_params(self)
        self._set("params", total)
        self._set("active_params", active)
        self._set("expert_params", expert)
        self._set("moe_layers", moe_layers)
        if self.is_mla:
            kv_values = self.layers * (self.kv_lora_rank + self.qk_rope_head_dim)
        else:
            kv_values = 2 * self.layers * self.kv_heads * self.head_dim
        self._set("kv_values_per_token", kv_values)

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def attention_kind(self) -> str:
        """`mla`, `mha` (one KV head per query head) or `gqa` (query heads share KV heads)."""
        if self.is_mla:
            return "mla"
        return "mha" if self.kv_heads == self.heads else "gqa"

    @property
    def prefill_attention_dim(self) -> int:
        """Per-head width that the QK^T and AV products multiply through, summed."""
        if self.is_mla:
            return self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim
        return 2 * self.head_dim


def _count_params(m: ModelSpec) -> tuple[int, int, int, int]:
    """(total, active per token, params of one routed expert, MoE layer count) from the config."""
    h = m.hidden
    if m.kv_lora_rank:
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = (h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.heads * qk) if m.q_lora_rank else h * m.heads * qk
        kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
        kv += m.kv_lora_rank * m.heads * (m.qk_nope_head_dim + m.v_head_dim)
        attn = q + kv + m.heads * m.v_head_dim * h
    else:
        q_width, kv_width = m.heads * m.head_dim, m.kv_heads * m.head_dim
        attn = 2 * h * q_width + 2 * h * kv_width
        if m.qkv_bias or m.attention_bias:
            attn += q_width + 2 * kv_width
        if m.attention_bias:
            attn += h
        if m.attention_sinks:
            attn += m.heads
    norms = m.norms_per_layer * h
    dense_mlp = 3 * h * m.intermediate
    expert = 3 * h * m.expert_intermediate + (2 * m.expert_intermediate + h if m.expert_bias else 0)
    moe_layers = (m.layers - m.dense_layers) if m.experts else 0
    router = h * m.experts + (m.experts if m.expert_bias or m.router_bias else 0)
    moe_mlp = router + m.experts * expert + m.shared_experts * 3 * h * m.expert_intermediate
    body = m.layers * (attn + norms) + (m.layers - moe_layers) * dense_mlp + moe_layers * moe_mlp
    embed = m.vocab * h * (1 if m.tied_embeddings else 2)
    total = body + embed + h
    active = total - moe_layers * (m.experts - m.experts_per_token) * expert
    return total, active, expert, moe_layers


class Accelerator(Record):
    """One accelerator's datasheet: memory in GiB, bandwidth in TB/s, dense peaks in TFLOP/s."""

    FIELDS = dict(id=REQUIRED, name=REQUIRED, memory_gib=REQUIRED, bandwidth_tbps=REQUIRED,
                  peak_tflops=REQUIRED, interconnect="", source="",
                  link_gbps=32.0, tp_domain=2, allreduce_latency_us=25.0, measured_system="")
    # link_gbps: GB/s per direction per GPU that a tensor-parallel all-reduce moves data at;
    # tp_domain: the most GPUs one tensor-parallel group spans (NVLink board 8, bridged pair 2);
    # allreduce_latency_us: a small all-reduce's fixed cost. The defaults are a PCIe Gen4 card's.
    # measured_system: the system whose kernels the measured fidelity's database holds ('' none).

    @property
    def memory_bytes(self) -> float:
        return self.memory_gib * 2**30

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.bandwidth_tbps * 1e12

    def peak_flops(self, precision: str) -> float:
        """Dense FLOP/s for compute in `precision`, falling back to BF16 where not native."""
        tflops = self.peak_tflops.get(precision) or self.peak_tflops["bf16"]
        return tflops * 1e12

    def native(self, precision: str) -> bool:
        return precision in self.peak_tflops


_MODEL_FIELDS = set(ModelSpec.FIELDS) - {"id"}
_GPU_FIELDS = set(Accelerator.FIELDS) - {"id"}
_MODEL_REQUIRED = {"name", "layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab", "context"}
_GPU_REQUIRED = {"name", "memory_gib", "bandwidth_tbps", "peak_tflops"}


class Catalog:
    """Models and accelerators by id, with lookups that fail with the list of known ids."""

    def __init__(self, models: dict[str, ModelSpec], gpus: dict[str, Accelerator], corrections: dict | None = None) -> None:
        self.models = models
        self.gpus = gpus
        self.corrections = corrections if corrections is not None else {}

    def model(self, model_id: str) -> ModelSpec:
        try:
            return self.models[model_id]
        except KeyError:
            raise RidgeError(f"unknown model '{model_id}' (known: {', '.join(sorted(self.models))})") from None

    def gpu(self, gpu_id: str) -> Accelerator:
        try:
            return self.gpus[gpu_id]
        except KeyError:
            raise RidgeError(f"unknown accelerator '{gpu_id}' (known: {', '.join(sorted(self.gpus))})") from None


def _read_toml(path) -> dict:
    """A catalog file parsed, read with a byte cap and its nesting bounded (see engine.bounds)."""
    text = bounds.decode_utf8(bounds.read_capped(path, bounds.MAX_CATALOG_BYTES, "catalog"), path)
    return bounds.load_toml_text(text, path)


def _check_number(path, where: str, key: str, value, integer: bool) -> None:
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not value >= 0:  # `not >=` also refuses NaN
        kind = "a non-negative integer" if integer else "a non-negative number"
        raise RidgeError(f"{path}: {where}.{key} must be {kind}, got {bounds.shown(repr(value), 60)}")
    bounds.number(value, f"{path}: {where}.{key}", low=0, integer=integer)  # finite, not 10**400


def _check_keys(path, where: str, table: dict, allowed: set, required: set) -> None:
    """Strict tables: the first unknown or missing key, by name."""
    if not isinstance(table, dict):
        raise RidgeError(f"{path}: {where} must be a table")
    unknown = set(table) - allowed
    if unknown:
        raise RidgeError(f"{path}: {where}: unknown key '{sorted(unknown)[0]}'")
    missing = required - set(table)
    if missing:
        raise RidgeError(f"{path}: {where}: missing key '{sorted(missing)[0]}'")


def model_from_table(model_id: str, table: dict, path: str = "<catalog>") -> ModelSpec:
    """Validate one `[models.<id>]` table and build its ModelSpec."""
    where = f"models.{model_id}"
    _check_keys(path, where, table, _MODEL_FIELDS, _MODEL_REQUIRED)
    for key, value in table.items():
        if key in ModelSpec.BOOL_FIELDS:
            if not isinstance(value, bool):
                raise RidgeError(f"{path}: {where}.{key} must be true or false, got {value!r}")
        elif key in ModelSpec.TEXT_FIELDS:
            if not isinstance(value, str):
                raise RidgeError(f"{path}: {where}.{key} must be a string, got {value!r}")
        else:
            _check_number(path, where, key, value, integer=True)
    for key in ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "context"):
        if table[key] <= 0:
            raise RidgeError(f"{path}: {where}.{key} must be positive, got {table[key]}")
    if table.get("experts", 0) and not (0 < table.get("experts_per_token", 0) <= table["experts"]):
        raise RidgeError(f"{path}: {where}.experts_per_token must be between 1 and experts")
    bounds.check_model_fields(dict(table), f"{path}: ", lambda key: f"{where}.{key}")
    return _model_spec(model_id, table)


def _model_spec(model_id: str, table: dict) -> ModelSpec:
    """The spec of a model table that passed model_from_table's checks (or was kept after them)."""
    return ModelSpec(id=model_id, **_clean_texts(table, ModelSpec.TEXT_FIELDS))


def gpu_from_table(gpu_id: str, table: dict, path: str = "<catalog>") -> Accelerator:
    """Validate one `[gpus.<id>]` table and build its Accelerator."""
    where = f"gpus.{gpu_id}"
    _check_keys(path, where, table, _GPU_FIELDS, _GPU_REQUIRED)
    for key in ("memory_gib", "bandwidth_tbps"):
        _check_number(path, where, key, table[key], integer=False)
        if table[key] <= 0:
            raise RidgeError(f"{path}: {where}.{key} must be positive")
    peaks = table["peak_tflops"]
    if not isinstance(peaks, dict) or "bf16" not in peaks:
        raise RidgeError(f"{path}: {where}.peak_tflops must be a table with at least bf16")
    for precision, value in peaks.items():
        if precision not in PRECISION_BYTES:
            raise RidgeError(f"{path}: {where}.peak_tflops: unknown precision '{precision}'")
        _check_number(path, where, f"peak_tflops.{precision}", value, integer=False)
        if value <= 0:
            raise RidgeError(f"{path}: {where}.peak_tflops.{precision} must be positive")
    for key in ("name", "interconnect", "source", "measured_system"):
        if key in table and not isinstance(table[key], str):
            raise RidgeError(f"{path}: {where}.{key} must be a string, got {bounds.shown(repr(table[key]), 60)}")
    for key, (low, high) in bounds.GPU_LIMITS.items():
        for sub, value in (peaks.items() if key == "peak_tflops" else [(None, table[key])]):
            label = f"{where}.{key}" + (f".{sub}" if sub else "")
            bounds.number(value, f"{path}: {label}", low=low, high=high, low_open=True)
    for key, (low, high) in _LINK_LIMITS.items():
        if key in table:
            bounds.number(table[key], f"{path}: {where}.{key}", low=low, high=high, low_open=key != "allreduce_latency_us",
                          integer=key == "tp_domain")
    return _gpu_spec(gpu_id, table)


def _gpu_spec(gpu_id: str, table: dict) -> Accelerator:
    """The spec of an accelerator table that passed gpu_from_table's checks (or was kept after them)."""
    return Accelerator(id=gpu_id, **_clean_texts(table, _GPU_TEXT_FIELDS))


_GPU_TEXT_FIELDS = frozenset(("name", "interconnect", "source", "measured_system"))


# The realistic fidelity's per-accelerator link figures: GB/s each way, GPUs per tensor-parallel
# domain, microseconds per small all-reduce.
_LINK_LIMITS = {"link_gbps": (0.0, 1e5), "tp_domain": (0, 100_000), "allreduce_latency_us": (0.0, 1e6)}


def _clean_texts(table: dict, text_fields) -> dict:
    """The table with its text fields stripped of control characters, so a name never carries a
    terminal escape to the screen."""
    return {k: bounds.clean_text(v) if k in text_fields and isinstance(v, str) else v for k, v in table.items()}


def _check_id(path, section: str, entry_id) -> None:
    if not entry_id or len(entry_id) > 64 or bounds.has_controls(entry_id) or entry_id != entry_id.strip():
        raise RidgeError(f"{path}: [{section}.{bounds.shown(repr(entry_id), 60)}]: an id must be 1 to 64 "
                         "printable characters")


def _merge(catalog: Catalog, data: dict, path) -> None:
    path = bounds.shown(path)
    for section in set(data) - {"models", "gpus", "sources", "corrections"}:
        raise RidgeError(f"{path}: unknown section '[{bounds.shown(section, 60)}]' "
                         "(expected [models.<id>] or [gpus.<id>])")
    if "corrections" in data:
        if not isinstance(data["corrections"], dict):
            raise RidgeError(f"{path}: 'corrections' must be a table")
        catalog.corrections.update(data["corrections"])
    for section in ("models", "gpus"):
        if not isinstance(data.get(section, {}), dict):
            raise RidgeError(f"{path}: '{section}' must be a table of [{section}.<id>] entries, "
                             f"got {type(data[section]).__name__}")
        for entry_id in data.get(section, {}):
            _check_id(path, section, entry_id)
    for model_id, table in data.get("models", {}).items():
        catalog.models[model_id] = model_from_table(model_id, table, str(path))
    for gpu_id, table in data.get("gpus", {}).items():
        catalog.gpus[gpu_id] = gpu_from_table(gpu_id, table, str(path))


_BUILTIN: Catalog | None = None
_BUILTIN_FILES = ("models.toml", "hardware.toml", "corrections.toml")
_CACHE = os.path.join(DATA, ".parsed-cache.json")


def _builtin_tables() -> tuple[list[tuple[str, dict]], list | None]:
    """The built-in TOML files, parsed, and (when they still have to be checked) the key under
    which to keep them once they pass. A JSON copy keyed by each file's size and modification
    time is kept beside them once the files have passed every check of _merge, because importing
    tomllib, parsing and checking cost a short-lived `ridge solve` process about a quarter of its
    run time; any edit to a TOML file invalidates it, and the edited file is parsed and checked
    afresh. None: the tables come from that copy, checked already."""
    import json

    paths = [os.path.join(DATA, name) for name in _BUILTIN_FILES]
    key = ["checked"] + [[os.stat(p).st_size, os.stat(p).st_mtime_ns] for p in paths]
    try:
        with open(_CACHE, encoding="utf-8") as fh:
            cached = json.load(fh)
        if cached.get("key") == key:
            return list(zip(paths, cached["tables"])), None
    except (OSError, ValueError, AttributeError):
        pass
    return [(p, _read_toml(p)) for p in paths], key


def _save_checked(key: list, tables: list[tuple[str, dict]]) -> None:
    """Keep the checked tables for the next process under `key`, the files' sizes and times from
    before they were read (see _builtin_tables); a read-only install simply parses and checks the
    TOML every time."""
    import json

    try:
        tmp = f"{_CACHE}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"key": key, "tables": [t for _, t in tables]}, fh)
        os.replace(tmp, _CACHE)
    except OSError:
        pass


def _add_checked(catalog: Catalog, data: dict) -> None:
    """_merge for tables that already passed its checks: the same specs, built directly."""
    catalog.corrections.update(data.get("corrections", {}))
    for model_id, table in data.get("models", {}).items():
        catalog.models[model_id] = _model_spec(model_id, table)
    for gpu_id, table in data.get("gpus", {}).items():
        catalog.gpus[gpu_id] = _gpu_spec(gpu_id, table)


def builtin_catalog() -> Catalog:
    """The shipped catalogs, parsed once per process."""
    global _BUILTIN
    if _BUILTIN is None:
        cat = Catalog({}, {})
        tables, key = _builtin_tables()
        for path, table in tables:
            if key is None:
                _add_checked(cat, table)
            else:
                _merge(cat, table, path)
        if key is not None:
            _save_checked(key, tables)
        _BUILTIN = cat
    return _BUILTIN


def load_catalog(extra=()) -> Catalog:
    """Built-in catalogs plus the user's TOML files (later files add or replace entries)."""
    base = builtin_catalog()
    if not extra:
        return base
    cat = Catalog(dict(base.models), dict(base.gpus), dict(base.corrections))
    for path in extra:
        _merge(cat, _read_toml(os.fspath(path)), path)
    return cat
