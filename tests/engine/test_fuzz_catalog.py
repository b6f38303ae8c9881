"""Fuzzing catalog files: a user catalog loads into models and accelerators that can exist (and
the engine stays finite on them), or gives one RidgeError line naming the file and field.

Would have caught: a catalog that is not UTF-8, `models = 5`, a folder given as a catalog,
`memory_gib = nan`, `bandwidth_tbps = inf`, more KV heads than heads, names with escapes.
"""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from helpers.hunt import examples

from engine.bounds import has_controls
from engine.catalog import load_catalog
from engine.contract import solution_to_json
from engine.deployment import build_deployment
from engine.errors import RidgeError
from engine.levers import solve
from helpers.hostile import (COUNTS, FUZZ, assert_one_line, byte_damage, damage, edit_values, finite_everywhere,
                            toml_literal, value_slots)
from helpers.scratch import scratch_dir

TEMPLATE = """\
[models.tiny]
name = "Tiny"
layers = 4
hidden = 256
intermediate = 1024
heads = 8
kv_heads = 2
head_dim = 32
vocab = 32000
context = 4096

[models.tiny-moe]
name = "Tiny MoE"
layers = 4
hidden = 256
intermediate = 1024
heads = 8
kv_heads = 8
head_dim = 32
vocab = 32000
context = 4096
experts = 8
experts_per_token = 2
expert_intermediate = 512
dense_layers = 1

[gpus.card]
name = "Card"
memory_gib = 24
bandwidth_tbps = 1.0
peak_tflops = { bf16 = 165, fp8 = 330 }
"""
SLOTS = value_slots(TEMPLATE)
TMP = Path(scratch_dir("ridge-fuzz-catalog-"))
plausible = st.integers(1, 64).map(str) | st.sampled_from(['"A \\u001b[31mname"', '"plain"', "0.5", "1e3"])
extra_line = st.just("") | st.sampled_from(["models = 5", "gpus = []", "[sources]", "[models.\"\\u001b[2J\"]",
                              "[other]", "x = 1", "[models.tiny.sub]", "dense_layers = 99", "kv_heads = 3"])


def _check(cat) -> None:
    for spec in (cat.models.get("tiny"), cat.models.get("tiny-moe")):
        if spec is None:
            continue
        assert spec.is_mla or 1 <= spec.kv_heads <= spec.heads and spec.heads % spec.kv_heads == 0
        assert not spec.is_moe or 1 <= spec.experts_per_token <= spec.experts
        assert spec.dense_layers <= spec.layers and not has_controls(spec.name)
        gpu = cat.gpus.get("card") or cat.gpu("h100-sxm")
        assert not has_controls(gpu.name)
        try:
            dep = build_deployment(cat, spec, gpu, gpus=2, prompt=256, output=64)
        except RidgeError as exc:
            assert_one_line(exc)
            continue
        assert finite_everywhere(solution_to_json(solve(dep)))


def _load(raw: bytes):
    path = TMP / "catalog.toml"
    path.write_bytes(raw)
    try:
        cat = load_catalog([path])
    except RidgeError as exc:
        event("refused")
        assert_one_line(exc)
        return
    event("loaded")
    _check(cat)


@settings(max_examples=examples(250), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.lists(st.tuples(st.sampled_from(range(len(SLOTS))), plausible | toml_literal), min_size=1, max_size=2),
       extra_line)
def test_edited_catalog_values(edits, line):
    COUNTS["catalog"] += 1
    text = edit_values(TEMPLATE, SLOTS, edits)
    _load((text + line + "\n").encode("utf-8", "surrogatepass"))


@settings(max_examples=examples(150), suppress_health_check=list(HealthCheck), **FUZZ)
@given(byte_damage)
def test_damaged_catalog_files(steps):
    COUNTS["catalog"] += 1
    _load(damage(TEMPLATE.encode(), steps))
