"""Refit the realistic fidelity's constants and print the ratios it is judged by.

Run by hand (needs the `measured` extra and scipy, which that extra brings):
    .venv/bin/python bench/calibrate_realistic.py            # ratios of the constants in use
    .venv/bin/python bench/calibrate_realistic.py --fit      # refit, print before / after
    .venv/bin/python bench/calibrate_realistic.py --fit --write   # ... and store them

What is fitted: the constants of engine/data/corrections.toml's [corrections] that shape a pass
(bandwidth, KV-read, MoE and compute efficiencies, the GEMM ramp's half-tokens, the roofline
corner's sharpness, attention's efficiency, elementwise traffic, per-layer and per-step fixed
times, the link's efficiency, the 8-bit rate), by robust least squares on log ratios against
(1) the measured fidelity over the whole grid of engine/calibration.py (every covered model x
accelerator x tensor-parallel width x precision that fits, decode at batch 1-256 x context
128-32768, prefill of 128-32768 tokens) and (2) the published end-to-end measurements of
tests/fixtures/measurements.toml, each half weighted as a whole. Targets (DESIGN.md, "Three
fidelities"): grid median within 0.9-1.1 with at least 90% of points within +-25%; published
median within 0.8-1.25.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import calibration, physics  # noqa: E402
from engine.catalog import builtin_catalog, load_catalog  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
CORRECTIONS = ROOT / "engine" / "data" / "corrections.toml"
FITTED = (("bandwidth_efficiency", 0.3, 1.0), ("kv_bandwidth_efficiency", 0.3, 1.0), ("moe_efficiency", 0.05, 1.0),
          ("compute_efficiency", 0.2, 1.0), ("compute_half_tokens", 0.0, 4000.0), ("overlap_sharpness", 1.0, 32.0),
          ("attention_efficiency", 0.05, 1.0), ("attention_half_tokens", 0.0, 20000.0),
          ("elementwise_bytes_per_value", 0.0, 200.0),
          ("per_layer_overhead_us", 0.0, 200.0), ("per_step_overhead_us", 0.0, 3000.0),
          ("link_efficiency", 0.05, 1.0), ("low_precision_efficiency", 0.2, 1.0),
          ("kv8_dequant_flops", 0.0, 2000.0))
# The constants before this calibration (the release that bounded measurements instead of aiming
# at them), for the "before" column.
BEFORE = {"per_layer_overhead_us": 15.0, "per_step_overhead_us": 100.0, "low_precision_efficiency": 0.8,
          "bandwidth_efficiency": 1.0, "kv_bandwidth_efficiency": 1.0, "moe_efficiency": 1.0, "compute_efficiency": 1.0,
          "compute_half_tokens": 0.0, "overlap_sharpness": 64.0, "attention_efficiency": 1.0, "attention_half_tokens": 0.0,
          "elementwise_bytes_per_value": 0.0, "link_efficiency": 1.0}


def published():
    data = tomllib.loads((FIXTURES / "measurements.toml").read_text(encoding="utf-8"))
    return load_catalog(extra=[FIXTURES / "measurement_models.toml"]), data["points"]


def published_ratios(cat, points, constants: dict) -> list[float]:
    saved = physics._CONSTANTS
    physics._CONSTANTS = constants     # the analysis reads the module's constants
    try:
        return [calibration.point_seconds(cat, p, "realistic") / calibration.measured_point_seconds(p) for p in points]
    finally:
        physics._CONSTANTS = saved


def show(label: str, s: dict) -> None:
    print(f"  {label:<28} n={s['n']:<6} median {s['median']:.3f}  within 25% {s['within_25']:.1%}  "
          f"p5 {s['p5']:.2f}  p95 {s['p95']:.2f}  min {s['min']:.2f}  max {s['max']:.2f}")


def report(title: str, setups, measured, cat, points, constants: dict) -> None:
    real = calibration.times(setups, "realistic", constants)
    ratios = [r / m for r, m in zip(real, measured)]
    print(title)
    show("grid, all", calibration.summary(ratios))
    kinds = [k for s in setups for k in s.kinds()]
    gpus = [s.deployment.gpu.id for s in setups for _ in range(len(s))]
    for kind in ("decode", "verify", "prefill"):
        show(f"grid, {kind}", calibration.summary([r for r, k in zip(ratios, kinds) if k == kind]))
    for gpu in sorted(set(gpus)):
        show(f"grid, {gpu}", calibration.summary([r for r, g in zip(ratios, gpus) if g == gpu]))
    show("published end-to-end", calibration.summary(published_ratios(cat, points, constants)))


def fit(setups, measured, cat, points, start: dict, weight: float) -> dict:
    import numpy as np
    from scipy.optimize import least_squares

    meas = np.array(measured)

    def constants(x):
        c = dict(start)
        c.update({name: float(v) for (name, _, _), v in zip(FITTED, x)})
        return c

    def residuals(x):
        c = constants(x)
        grid = np.log(np.array(calibration.times(setups, "realistic", c)) / meas)
        pub = np.log(np.array(published_ratios(cat, points, c)))
        return np.concatenate([grid / math.sqrt(len(grid)), math.sqrt(weight) * pub / math.sqrt(len(pub))])

    x0 = [min(max(start[name], lo), hi) for name, lo, hi in FITTED]
    sol = least_squares(residuals, x0, bounds=([lo for _, lo, _ in FITTED], [hi for _, _, hi in FITTED]),
                        loss="soft_l1", f_scale=0.02, diff_step=1e-3, max_nfev=300)
    return constants(sol.x)


def write(constants: dict) -> None:
    text = CORRECTIONS.read_text(encoding="utf-8")
    for name, _, _ in FITTED:
        value = constants[name]
        shown = f"{value:.4g}" if abs(value) >= 1e-3 else "0.0"
        if "." not in shown and "e" not in shown:
            shown += ".0"
        text, count = re.subn(rf"^{name} = [^ #\n]+", f"{name} = {shown}", text, flags=re.M)
        if count != 1:
            raise SystemExit(f"{CORRECTIONS}: expected one '{name} = ...' line, found {count}")
    CORRECTIONS.write_text(text, encoding="utf-8")
    print(f"wrote the fitted values into {CORRECTIONS.relative_to(ROOT)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", action="store_true", help="refit the constants (scipy) and print before / after")
    ap.add_argument("--write", action="store_true", help="with --fit: store the fitted values in corrections.toml")
    ap.add_argument("--published-weight", type=float, default=0.3,
                    help="weight of the published half against the grid half (default 0.3)")
    args = ap.parse_args()
    from engine import measured as meas_mod

    problem = meas_mod.unavailable()
    if problem:
        print(problem)
        return 2
    t0 = time.perf_counter()
    cat = builtin_catalog()
    setups = calibration.grid(cat)
    measured = calibration.times(setups, "measured")
    print(f"grid: {len(setups)} setups, {len(measured)} step times from {meas_mod.PACKAGE} {meas_mod.VERSION} "
          f"({meas_mod.BACKEND} data) in {time.perf_counter() - t0:.1f} s")
    pub_cat, points = published()
    current = dict(physics.constants())
    if not args.fit:
        report("realistic / measured, constants in use:", setups, measured, pub_cat, points, current)
        floor = calibration.times(setups, "floor")
        print(f"  floor / measured: max {max(f / m for f, m in zip(floor, measured)):.3f} (the floor is a bound: <= 1)")
        return 0
    before = dict(current)
    before.update(BEFORE)
    report("before (the bounding constants):", setups, measured, pub_cat, points, before)
    t1 = time.perf_counter()
    fitted = fit(setups, measured, pub_cat, points, current, args.published_weight)
    print(f"fitted in {time.perf_counter() - t1:.0f} s:")
    for name, _, _ in FITTED:
        print(f"  {name} = {fitted[name]:.4g}   (was {current[name]:.4g})")
    report("after:", setups, measured, pub_cat, points, fitted)
    if args.write:
        write(fitted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
