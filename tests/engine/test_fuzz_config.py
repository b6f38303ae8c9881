"""Fuzzing config.json: any file gives a model that can exist (and finite figures), or one
RidgeError line naming the file and key. Never another exception, never a name with escapes.

Would have caught: NaN, Infinity or 10**400 in a size field, a list as model_type, 100,000-deep
nesting, mixtral with more experts per token than experts, more KV heads than heads,
first_k_dense_replace beyond the layer count, zero experts, 1e30 layers, /dev/zero.
"""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from helpers.hunt import examples

from engine.bounds import has_controls
from engine.catalog import builtin_catalog
from engine.contract import solution_to_json
from engine.deployment import build_deployment
from engine.errors import RidgeError
from engine.hfconfig import load_config, spec_from_config
from engine.levers import solve
from helpers.hostile import COUNTS, FUZZ, assert_one_line, byte_damage, damage, finite_everywhere, hostile_json_value
from helpers.scratch import scratch_dir

BASES = {
    "llama": {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
              "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256,
              "max_position_embeddings": 8192, "_name_or_path": "meta-llama/Meta-Llama-3-8B"},
    "mixtral": {"model_type": "mixtral", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 32000,
                "max_position_embeddings": 32768, "num_local_experts": 8, "num_experts_per_tok": 2},
    "deepseek_v3": {"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128,
                    "num_key_value_heads": 128, "num_hidden_layers": 61, "intermediate_size": 18432,
                    "vocab_size": 129280, "max_position_embeddings": 163840, "n_routed_experts": 256,
                    "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "n_shared_experts": 1,
                    "first_k_dense_replace": 3, "q_lora_rank": 1536, "kv_lora_rank": 512,
                    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128},
}
KEYS = sorted({k for base in BASES.values() for k in base}
              | {"head_dim", "sliding_window", "use_sliding_window", "layer_types", "architectures"})
CAT = builtin_catalog()
GPU = CAT.gpu("h100-sxm")
TMP = Path(scratch_dir("ridge-fuzz-config-"))

edits = st.dictionaries(st.sampled_from(KEYS), hostile_json_value | st.integers(-5, 10**6), max_size=3)


def _check_spec(spec) -> None:
    """A config that loaded describes a model that can exist, and the engine stays finite on it."""
    assert 1 <= spec.kv_heads <= spec.heads or spec.is_mla
    assert not spec.is_moe or 1 <= spec.experts_per_token <= spec.experts
    assert spec.dense_layers <= spec.layers and spec.params > 0
    assert not has_controls(spec.name) and not has_controls(spec.id)
    try:
        dep = build_deployment(CAT, spec, GPU, gpus=8, prompt=min(512, spec.context - 1) or 1, output=1)
    except RidgeError as exc:
        assert_one_line(exc)
        return
    assert finite_everywhere(solution_to_json(solve(dep)))


@settings(max_examples=examples(250), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.sampled_from(sorted(BASES)), edits)
def test_edited_config_values(family, changes):
    COUNTS["config.json"] += 1
    config = {**BASES[family], **changes}
    try:
        spec = spec_from_config(config, source="fuzz.json")
    except RidgeError as exc:
        event("refused")
        assert_one_line(exc)
        assert str(exc).startswith("fuzz.json: ")
        return
    event("loaded")
    _check_spec(spec)


@settings(max_examples=examples(150), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.sampled_from(sorted(BASES)), byte_damage, st.integers(0, 3))
def test_damaged_config_files(family, steps, nesting):
    COUNTS["config.json"] += 1
    text = json.dumps(BASES[family])
    raw = damage(("[" * nesting * 20 + text + "]" * nesting * 20).encode(), steps)
    path = TMP / "config.json"
    path.write_bytes(raw)
    try:
        spec = load_config(path)
    except RidgeError as exc:
        assert_one_line(exc)
        return
    _check_spec(spec)
