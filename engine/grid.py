"""The analysis vectorised with numpy: a whole grid of deployments in one call.

`analyze_grid(base, **arrays)` takes a Deployment for everything categorical (model, GPU,
precisions, scheduler, allocator, switches, fidelity) and numpy-broadcastable arrays for the
numeric inputs, and returns a dict of arrays with the same names and meaning as the scalar Report (read-only
views, broadcast to the grid's shape: copy one before writing into it).
Both run the same code: `engine.physics.evaluate`, here over arrays. Where a deployment does not
fit, its figures are NaN and `fits` is False.
"""
from __future__ import annotations

import numpy as np

from engine import physics
from engine.analysis import VERDICTS
from engine.deployment import Deployment
from engine.ids import Fidelity, Objective

NUMERIC = physics.NUMERIC
ALL_VERDICTS = physics.VERDICT_CODES
# Figures that exist whether or not the deployment fits; every other one is NaN where it does not.
_ALWAYS = ("fits", "verdict_index", "objective_verdict_index", "usable_kv_bytes", "seq_len_avg",
           "weight_bytes", "kv_bytes_per_token", "ridge", "peak_flops", "kv_replication", "memory_bytes",
           "reserve_bytes", "kv_tokens_held", "kv_bytes_per_sequence", "draft_weight_bytes", "max_concurrency")
# The six-rule verdict codes of VERDICT_CODES mapped onto the six-verdict VERDICTS order.
_SIX = np.array([VERDICTS.index(v) if v in VERDICTS else -1 for v in ALL_VERDICTS])


def analyze_grid(base: Deployment, **arrays) -> dict[str, np.ndarray]:
    """Evaluate every combination the broadcast of `arrays` describes (see module docstring)."""
    if base.fidelity == Fidelity.MEASURED:
        raise ValueError("the measured fidelity times one deployment at a time; a grid takes floor or realistic")
    unknown = set(arrays) - set(NUMERIC)
    if unknown:
        raise ValueError(f"cannot vary {sorted(unknown)[0]} on a grid (numeric fields: {', '.join(NUMERIC)})")
    # Inputs keep their own shapes (a concurrency column and a prompt row stay 1-D), so every
    # figure that depends on only some of them is computed once per distinct value; numpy
    # broadcasts where they meet. Inputs not varied stay plain floats.
    v = dict(physics.numeric_inputs(base))
    for name, value in arrays.items():
        arr = np.asarray(value, dtype=float)
        v[name] = arr if arr.ndim else float(arr)
    shape = np.broadcast_shapes(*(np.shape(a) for a in v.values()))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = physics.evaluate(base, v, array=True)
        fits = np.asarray(f["fits"], dtype=bool)          # at its own (possibly smaller) shape
        f["fits"] = fits
        f["capped"] = np.asarray(f["capped"], dtype=bool) & fits
        code = physics.verdict_code(f)
        objective_code = code if base.objective == Objective.COST else physics.objective_verdict_code(f, base.objective)
    # Each figure is masked at the smallest shape it and `fits` share, then broadcast (a view).
    out: dict[str, np.ndarray] = {}
    all_fit = bool(fits.all())
    for name, value in f.items():
        if name in ("capped", "compute_precision", "fits", "decode_time_shares") or name.startswith("_"):
            continue
        arr = np.asarray(value, dtype=float)
        if name not in _ALWAYS and not all_fit:
            arr = np.where(fits, arr, np.nan)
        out[name] = np.broadcast_to(arr, shape)
    out["max_concurrency"] = np.broadcast_to(np.where(fits, np.asarray(f["max_concurrency"], dtype=float), 0.0), shape)
    spec = np.asarray(v["spec_k"]) > 0
    out["spec_expected_tokens"] = np.broadcast_to(
        np.where(spec & fits, np.asarray(f["spec_expected_tokens"], dtype=float), np.nan), shape)
    out["verdict_index"] = np.broadcast_to(_SIX[code], shape)
    out["objective_verdict_index"] = np.broadcast_to(np.asarray(objective_code), shape)
    out["fits"] = np.broadcast_to(fits, shape)
    return out


def verdict_names(index: np.ndarray) -> np.ndarray:
    """Verdict ids for the integer codes in `verdict_index` (the six-rule verdict)."""
    return np.asarray(VERDICTS)[index]


def objective_verdict_names(index: np.ndarray) -> np.ndarray:
    """Verdict ids for `objective_verdict_index` (what bounds the base's objective)."""
    return np.asarray(ALL_VERDICTS)[index]
