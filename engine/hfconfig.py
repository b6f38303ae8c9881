"""Read a Hugging Face style `config.json` into a ModelSpec.

Key styles differ by family (Llama, Mistral, Qwen2, Gemma 2, Mixtral, DeepSeek V2/V3, gpt-oss,
Phi-3); each is mapped onto the catalog's schema. A file that is not JSON, lacks a key the
arithmetic needs, or names a family we cannot count gets one RidgeError naming the key.
"""
from __future__ import annotations

import json
from pathlib import Path

from engine.bounds import (MAX_CONFIG_BYTES, MAX_DEPTH, check_model_fields, decode_utf8,
                           json_depth, number, read_capped, shown)
from engine.catalog import ModelSpec
from engine.errors import RidgeError

DENSE_TYPES = {"llama", "mistral", "qwen2", "phi3", "gemma", "gemma2"}
MOE_TYPES = {"mixtral", "deepseek_v3", "deepseek_v2", "gpt_oss"}
SUPPORTED = DENSE_TYPES | MOE_TYPES


def load_config(path: str | Path) -> ModelSpec:
    """Parse the file at `path` and build a ModelSpec whose id is the file's stem or model name.
    Read with a byte cap and a nesting check first, so no file can exhaust memory or the stack."""
    name = shown(path)
    text = decode_utf8(read_capped(path, MAX_CONFIG_BYTES, "config.json"), path)
    if json_depth(text) > MAX_DEPTH:
        raise RidgeError(f"{name}: nested more than {MAX_DEPTH} levels deep; not a model config")
    try:
        config = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise RidgeError(f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except _NotJson as exc:
        raise RidgeError(f"{name}: {exc}") from None
    except (RecursionError, ValueError, MemoryError) as exc:
        raise RidgeError(f"{name}: not valid JSON ({type(exc).__name__})") from None
    if not isinstance(config, dict):
        raise RidgeError(f"{name}: expected a JSON object at the top level")
    return spec_from_config(config, source=str(path))


class _NotJson(Exception):
    pass


def _no_constant(word: str):
    """NaN and Infinity are not JSON, though Python's parser accepts them: refuse them here."""
    raise _NotJson(f"{word} is not valid JSON (numbers must be finite)")


def _get(config: dict, source: str, *keys: str, default=None, required=True):
    for key in keys:
        if key in config and config[key] is not None:
            return number(config[key], f"{source}: key '{key}'", low=0, integer=True)
    if required and default is None:
        raise RidgeError(f"{source}: missing key '{keys[0]}'")
    return default


def spec_from_config(config: dict, source: str = "config.json") -> ModelSpec:
    """Map one config dict onto ModelSpec fields, family by family."""
    source = shown(source)
    model_type = config.get("model_type")
    if model_type is None:
        archs = config.get("architectures") or []
        arch = f" (architectures: {shown(archs[0], 60)})" if isinstance(archs, list) and archs else ""
        raise RidgeError(f"{source}: missing key 'model_type'{arch}")
    if not isinstance(model_type, str):
        raise RidgeError(f"{source}: key 'model_type' must be a string, got {type(model_type).__name__}")
    if model_type not in SUPPORTED:
        raise RidgeError(f"{source}: unsupported model_type '{shown(model_type, 60)}' "
                         f"(supported: {', '.join(sorted(SUPPORTED))})")
    g = lambda *keys, **kw: _get(config, source, *keys, **kw)  # noqa: E731
    hidden = g("hidden_size")
    heads = g("num_attention_heads")
    fields = dict(
        layers=g("num_hidden_layers"),
        hidden=hidden,
        intermediate=g("intermediate_size", default=0, required=False) or 0,
        heads=heads,
        kv_heads=g("num_key_value_heads", default=heads),
        vocab=g("vocab_size"),
        context=g("max_position_embeddings", default=4096),
        tied_embeddings=bool(config.get("tie_word_embeddings", model_type in ("gemma", "gemma2"))),
    )
    if heads == 0 or hidden == 0:
        raise RidgeError(f"{source}: hidden_size and num_attention_heads must be positive")
    fields["head_dim"] = g("head_dim", default=hidden // heads)
    if model_type == "qwen2":
        fields["qkv_bias"] = True
    if config.get("attention_bias"):
        fields["attention_bias"] = True
    if model_type == "gemma2":
        fields["norms_per_layer"] = 4
    if config.get("sliding_window") and config.get("use_sliding_window", True):
        fields["sliding_window"] = g("sliding_window")
        kinds = config.get("layer_types")
        if isinstance(kinds, list) and kinds:
            fields["sliding_layers"] = sum(1 for kind in kinds if kind == "sliding_attention")
            if not fields["sliding_layers"]:
                del fields["sliding_window"], fields["sliding_layers"]   # every layer is global
        elif model_type in ("gemma2", "gpt_oss"):
            fields["sliding_layers"] = fields["layers"] // 2   # local and global layers alternate
    if model_type == "mixtral":
        fields.update(experts=g("num_local_experts"), experts_per_token=g("num_experts_per_tok"),
                      expert_intermediate=fields["intermediate"])
    elif model_type == "gpt_oss":
        fields.update(experts=g("num_local_experts"), experts_per_token=g("num_experts_per_tok", "experts_per_token"),
                      expert_intermediate=fields["intermediate"], attention_bias=True, attention_sinks=True,
                      expert_bias=True)
    elif model_type in ("deepseek_v3", "deepseek_v2"):
        fields.update(
            experts=g("n_routed_experts"), experts_per_token=g("num_experts_per_tok"),
            expert_intermediate=g("moe_intermediate_size"), shared_experts=g("n_shared_experts", default=0),
            dense_layers=g("first_k_dense_replace", default=0), q_lora_rank=g("q_lora_rank", default=0),
            kv_lora_rank=g("kv_lora_rank"), qk_nope_head_dim=g("qk_nope_head_dim"),
            qk_rope_head_dim=g("qk_rope_head_dim"), v_head_dim=g("v_head_dim"),
            router_bias=model_type == "deepseek_v3",
        )
        fields["head_dim"] = fields["v_head_dim"]
    if fields["layers"] <= 0 or fields["vocab"] <= 0 or fields["kv_heads"] <= 0 or fields["head_dim"] <= 0:
        raise RidgeError(f"{source}: layers, vocab_size, num_key_value_heads and head_dim must be positive")
    if not fields.get("experts") and not fields["intermediate"]:
        raise RidgeError(f"{source}: missing key 'intermediate_size'")
    if model_type in MOE_TYPES and not fields.get("experts"):
        key = "n_routed_experts" if model_type.startswith("deepseek") else "num_local_experts"
        raise RidgeError(f"{source}: key '{key}' must be at least 1 for {model_type}")
    keys = {**_KEYS, **(_DEEPSEEK_KEYS if model_type.startswith("deepseek") else {})}
    check_model_fields(fields, f"{source}: ", lambda field: f"key '{keys.get(field, field)}'")
    name = config.get("_name_or_path") or Path(source).stem
    name = shown(name if isinstance(name, str) else Path(source).stem, 120).strip() or "custom"
    model_id = name.rsplit("/", 1)[-1].lower().replace(" ", "-") or "custom"
    return ModelSpec(id=model_id, name=name, source=source, **fields)


# The config key behind each ModelSpec field, for messages (families spell a few differently).
_KEYS = dict(layers="num_hidden_layers", hidden="hidden_size", intermediate="intermediate_size",
             heads="num_attention_heads", kv_heads="num_key_value_heads", vocab="vocab_size",
             context="max_position_embeddings", experts="num_local_experts",
             experts_per_token="num_experts_per_tok", expert_intermediate="moe_intermediate_size",
             shared_experts="n_shared_experts", dense_layers="first_k_dense_replace",
             sliding_layers="layer_types")
_DEEPSEEK_KEYS = dict(experts="n_routed_experts")
