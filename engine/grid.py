"""The analysis vectorised with numpy: a whole grid of deployments in one call.

`analyze_grid(base, **arrays)` takes a Deployment for everything categorical (model, GPU,
precisions, scheduler, allocator, switches, fidelity) and numpy-broadcastable arrays for the
numeric inputs, and returns a dict of arrays with the same names and meaning as the scalar Report.
Both run the same code: `engine.physics.evaluate`, here over arrays. Where a deployment does not
fit, its figures are NaN and `fits` is False.
"""
from __future__ import annotations

import numpy as np

from engine import physics
from engine.analysis import VERDICTS
from engine.deployment import Deployment

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
    unknown = set(arrays) - set(NUMERIC)
    if unknown:
        raise ValueError(f"cannot vary {sorted(unknown)[0]} on a grid (numeric fields: {', '.join(NUMERIC)})")
    defaults = physics.numeric_inputs(base)
    v = {name: np.asarray(arrays[name] if name in arrays else defaults[name], dtype=float) for name in NUMERIC}
    shape = np.broadcast_shapes(*(a.shape for a in v.values()))
    v = {k: np.broadcast_to(a, shape).astype(float) for k, a in v.items()}
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = physics.evaluate(base, v)
        fits = np.asarray(f["fits"], dtype=bool)
        f["fits"] = fits
        f["capped"] = np.asarray(f["capped"], dtype=bool) & fits
        code = physics.verdict_code(f)
        objective_code = physics.objective_verdict_code(f, base.objective)
    out: dict[str, np.ndarray] = {}
    for name, value in f.items():
        if name in ("capped", "compute_precision"):
            continue
        arr = np.broadcast_to(np.asarray(value, dtype=float if name != "fits" else bool), shape)
        out[name] = arr if name in _ALWAYS else np.where(fits, arr, np.nan)
    out["max_concurrency"] = np.where(fits, out["max_concurrency"], 0.0)
    spec = v["spec_k"] > 0
    out["spec_expected_tokens"] = np.where(spec & fits, out["spec_expected_tokens"], np.nan)
    out["verdict_index"] = _SIX[code]
    out["objective_verdict_index"] = np.asarray(objective_code)
    out["fits"] = fits
    return out


def verdict_names(index: np.ndarray) -> np.ndarray:
    """Verdict ids for the integer codes in `verdict_index` (the six-rule verdict)."""
    return np.asarray(VERDICTS)[index]


def objective_verdict_names(index: np.ndarray) -> np.ndarray:
    """Verdict ids for `objective_verdict_index` (what bounds the base's objective)."""
    return np.asarray(ALL_VERDICTS)[index]
