"""Two published load measurements, reproduced in shape by the load simulation (floor step times).

The sources, their setups and figures, and the ratios checked are data in
tests/fixtures/load_measurements.toml: both are closed-loop concurrency sweeps of vLLM, which a
closed loop of users with no think time models.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.load.run import simulate
from engine.load.spec import LoadSpec

DATA = tomllib.loads((Path(__file__).parents[1] / "fixtures" / "load_measurements.toml").read_text())


def _sweep(source: dict) -> dict:
    dep = build_deployment(builtin_catalog(), source["model"], source["gpu"], prompt=source["prompt"],
                           output=source["output"])
    out = {}
    for users in source["concurrency"]:
        requests = source.get("requests", 20 * users)
        f = simulate(dep, LoadSpec(arrival="closed", users=users, requests=requests)).figures
        out[users] = {"requests_per_s": f["throughput_tokens_per_s"] / source["output"],
                      "throughput": f["throughput_tokens_per_s"], "ttft_median": f["ttft_p50_seconds"],
                      "tpot_median": f["tpot_p50_seconds"]}
    return out


_SWEEPS: dict = {}


def _value(source_id: str, term: str) -> float:
    name, users = term.strip().rstrip("]").split("[")
    if source_id not in _SWEEPS:
        _SWEEPS[source_id] = _sweep(DATA["sources"][source_id])
    return _SWEEPS[source_id][int(users)][name]


@pytest.mark.parametrize("shape", DATA["shape"], ids=lambda s: f"{s['source']}: {s['ratio']}")
def test_the_simulation_reproduces_the_published_shape(shape):
    top, bottom = shape["ratio"].split("/")
    ratio = _value(shape["source"], top) / _value(shape["source"], bottom)
    assert shape["low"] <= ratio <= shape["high"], (shape["what"], ratio)


def test_every_shape_names_a_source_with_its_url_and_a_measured_or_printed_figure():
    for shape in DATA["shape"]:
        source = DATA["sources"][shape["source"]]
        assert source["url"].startswith("https://") and source["title"] and source["setup"]
        assert "measured" in shape or "printed" in shape
        if "measured" in shape:
            assert shape["low"] <= shape["measured"] <= shape["high"], shape["what"]


def test_the_floor_is_never_slower_than_the_published_single_request_speed():
    source = DATA["sources"]["LLAMA8B_A100"]
    tpot = _value("LLAMA8B_A100", "tpot_median[1]")
    assert 1 / tpot >= source["decode_tokens_per_s_at_1"]
