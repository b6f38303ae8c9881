"""The realistic fidelity aims at measurements; the floor stays below every one of them.

Two references (DESIGN.md, "Three fidelities"): the measured fidelity over the calibration grid
(engine/calibration.py; here a seeded third of its setups, the bench prints all of them:
bench/calibrate_realistic.py), and the published end-to-end measurements of
tests/fixtures/measurements.toml. Run this file directly to print the published table of floor /
realistic / measured side by side: `.venv/bin/python tests/engine/test_engine_calibration.py`.
"""
import statistics
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # run directly: the shared helpers

from engine import calibration  # noqa: E402
from engine.catalog import builtin_catalog, load_catalog  # noqa: E402
from helpers.measured import needs_measured  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
CAT = load_catalog(extra=[FIXTURES / "measurement_models.toml"])
DATA = tomllib.loads((FIXTURES / "measurements.toml").read_text(encoding="utf-8"))
POINTS = DATA["points"]


def ratio(point: dict, fidelity: str) -> float:
    """The engine's time over the measured time (a throughput is taken as time per token)."""
    return calibration.point_seconds(CAT, point, fidelity) / calibration.measured_point_seconds(point)


def test_every_point_names_its_source():
    for p in POINTS:
        assert p["source"] in DATA["sources"] and DATA["sources"][p["source"]].startswith("https://")
        assert p["what"]


@pytest.mark.parametrize("point", POINTS, ids=[p["what"][:60] for p in POINTS])
def test_the_floor_is_never_slower_than_a_measurement(point):
    assert ratio(point, "floor") <= 1.0, "the floor must be a bound"


def test_realistic_aims_at_the_published_measurements():
    """Median realistic/measured within 0.8-1.25, and no point off by 2x either way."""
    ratios = [ratio(p, "realistic") for p in POINTS]
    assert 0.8 <= statistics.median(ratios) <= 1.25, statistics.median(ratios)
    worst = max(ratios, key=lambda r: max(r, 1 / r))
    assert 0.5 <= worst <= 2.0, worst


@pytest.fixture(scope="module")
def grid_sample():
    setups = calibration.grid(builtin_catalog(), share=1 / 3, seed=21)
    return setups, calibration.times(setups, "measured")


@pytest.mark.slow
@needs_measured
def test_realistic_aims_at_the_measured_kernels(grid_sample):
    """Over a seeded third of the grid (all five covered accelerators, batch 1-256, context
    128-32768, prefills 128-32768): median realistic/measured within 0.9-1.1, 90% within 25%."""
    setups, measured = grid_sample
    assert len(measured) > 5000 and {s.deployment.gpu.id for s in setups} == {"h100-sxm", "h200", "b200",
                                                                           "a100-80gb", "l40s"}
    real = calibration.times(setups, "realistic")
    s = calibration.summary([r / m for r, m in zip(real, measured)])
    assert 0.9 <= s["median"] <= 1.1, s
    assert s["within_25"] >= 0.90, s


@needs_measured
def test_the_floor_is_never_slower_than_the_measured_kernels(grid_sample):
    setups, measured = grid_sample
    floor = calibration.times(setups, "floor")
    assert max(f / m for f, m in zip(floor, measured)) <= 1.0


if __name__ == "__main__":
    units = {"tpot_seconds": ("ms", 1e3), "ttft_seconds": ("ms", 1e3), "batch_seconds": ("s", 1.0),
             "throughput_tokens_per_s": ("tok/s", 1.0)}
    print(f"{'point':<72} {'floor':>10} {'realistic':>10} {'measured':>10}  unit   real/meas")
    for p in POINTS:
        unit, scale = units[p["metric"]]
        floor, real = (calibration.point_seconds(CAT, p, f) for f in ("floor", "realistic"))
        meas = calibration.measured_point_seconds(p)
        if p["metric"] == "throughput_tokens_per_s":
            floor, real, meas = 1 / floor, 1 / real, 1 / meas
        r = real / meas if p["metric"] != "throughput_tokens_per_s" else meas / real
        print(f"{p['what'][:72]:<72} {floor * scale:>10.4g} {real * scale:>10.4g} {meas * scale:>10.4g}  {unit:<6} {r:.2f}")


@needs_measured
def test_realistic_aims_at_measured_deployments_end_to_end():
    """The same targets where players meet the figures: TPOT, TTFT and cost of whole deployments
    (seeded draws over covered models, accelerators, widths, precisions, lengths and batch 1-256)."""
    import random

    from engine.analysis import analyze
    from engine.deployment import build_deployment
    from engine.errors import RidgeError

    cat, rng = builtin_catalog(), random.Random(5)
    ratios = {"tpot_seconds": [], "ttft_seconds": [], "cost_per_million_output_tokens": []}
    gpus = [g for g in cat.gpus.values() if g.measured_system]
    while len(ratios["tpot_seconds"]) < 80:
        weights = rng.choice(["bf16", "fp8"])
        try:
            dep = build_deployment(cat, rng.choice(sorted(cat.models)), rng.choice(gpus), gpus=rng.choice([1, 2, 4, 8]),
                                   prompt=rng.choice([128, 512, 2048, 8000]), output=rng.choice([64, 256, 1024]),
                                   concurrency=rng.choice([1, 4, 16, 64, 256]), weights=weights, kv=weights)
            measured, real = analyze(dep.with_(fidelity="measured")), analyze(dep.with_(fidelity="realistic"))
        except RidgeError:
            continue    # a model or precision the database has no kernels for
        if measured.fits and real.fits and measured.batch == real.batch:
            for name, values in ratios.items():
                values.append(getattr(real, name) / getattr(measured, name))
    for name, values in ratios.items():
        s = calibration.summary(values)
        assert 0.9 <= s["median"] <= 1.1 and s["within_25"] >= 0.85, (name, s)
