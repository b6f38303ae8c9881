"""The realistic fidelity against published measurements (tests/fixtures/measurements.toml).

For every point: the floor is never slower than the realistic figure, and the realistic figure is
never slower than what a real stack measured. Run this file directly to print the table of floor /
realistic / measured side by side: `.venv/bin/python tests/test_engine_calibration.py`.
"""
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.analysis import analyze  # noqa: E402
from engine.catalog import load_catalog  # noqa: E402
from engine.deployment import build_deployment  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
CAT = load_catalog(extra=[FIXTURES / "measurement_models.toml"])
DATA = tomllib.loads((FIXTURES / "measurements.toml").read_text(encoding="utf-8"))
POINTS = DATA["points"]
SETUP = ("model", "gpu", "gpus", "weights", "kv", "prompt", "output", "concurrency")


def deployment(point: dict, fidelity: str):
    values = {k: point[k] for k in SETUP if k in point and k not in ("model", "gpu")}
    values.setdefault("concurrency", 1)
    return build_deployment(CAT, point["model"], point["gpu"], fidelity=fidelity, **values)


def figure(point: dict, fidelity: str) -> float:
    """The engine's figure for the point's metric, as a time (seconds) so smaller is faster."""
    r = analyze(deployment(point, fidelity))
    assert r.fits, point["what"]
    metric = point["metric"]
    if metric == "throughput_tokens_per_s":
        return 1.0 / r.throughput_tokens_per_s
    if metric == "batch_seconds":
        return r.batch * r.deployment.output / r.throughput_tokens_per_s
    return getattr(r, metric)


def measured_time(point: dict) -> float:
    return 1.0 / point["measured"] if point["metric"] == "throughput_tokens_per_s" else point["measured"]


def rows():
    """(what, metric, floor, realistic, measured), in the metric's own unit."""
    out = []
    for p in POINTS:
        floor, real, meas = figure(p, "floor"), figure(p, "realistic"), measured_time(p)
        if p["metric"] == "throughput_tokens_per_s":
            floor, real, meas = 1 / floor, 1 / real, 1 / meas
        out.append((p["what"], p["metric"], floor, real, meas))
    return out


def test_every_point_names_its_source():
    for p in POINTS:
        assert p["source"] in DATA["sources"] and DATA["sources"][p["source"]].startswith("https://")
        assert p["what"]


@pytest.mark.parametrize("point", POINTS, ids=[p["what"][:60] for p in POINTS])
def test_floor_then_realistic_then_measured(point):
    floor, real, meas = figure(point, "floor"), figure(point, "realistic"), measured_time(point)
    assert floor <= real * (1 + 1e-12), "the floor must never be slower than the realistic figure"
    assert real <= meas, f"realistic {real:.4g} s is slower than the measured {meas:.4g} s"


if __name__ == "__main__":
    units = {"tpot_seconds": ("ms", 1e3), "ttft_seconds": ("ms", 1e3), "batch_seconds": ("s", 1.0),
             "throughput_tokens_per_s": ("tok/s", 1.0)}
    print(f"{'point':<72} {'floor':>10} {'realistic':>10} {'measured':>10}  unit   real/meas")
    for what, metric, floor, real, meas in rows():
        unit, scale = units[metric]
        ratio = real / meas if metric != "throughput_tokens_per_s" else meas / real
        print(f"{what[:72]:<72} {floor * scale:>10.4g} {real * scale:>10.4g} {meas * scale:>10.4g}  {unit:<6} {ratio:.2f}")
