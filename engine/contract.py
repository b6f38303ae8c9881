"""The `ridge solve --json` contract: one flat JSON object per deployment (see DESIGN.md).

Keys are part of the contract and are only ever added, never renamed. Figures that do not exist
for a deployment that does not fit are null, never NaN or infinity.
"""
from __future__ import annotations

import math

from engine.bands import gain_band
from engine.deployment import deployment_to_dict
from engine.ids import Fidelity
from engine.levers import Solution

CONTRACT_KEYS = (
    "params", "active_params", "weight_bytes", "kv_bytes_per_token", "ridge", "seq_len_avg",
    "usable_kv_bytes", "max_concurrency", "batch", "decode_bytes_per_step", "decode_flops_per_step",
    "decode_memory_seconds", "decode_compute_seconds", "tpot_seconds", "intensity", "prefill_seconds",
    "ttft_seconds", "prefill_share", "throughput_tokens_per_s", "cost_per_million_output_tokens",
)
EXTRA_KEYS = (
    "kv_replication", "peak_flops", "compute_precision", "memory_bytes", "reserve_bytes",
    "decode_weight_bytes_per_step", "decode_kv_bytes_per_step", "step_seconds", "prefill_flops",
    "worst_stall_seconds", "kv_tokens_held", "kv_bytes_per_sequence", "prefill_compute_seconds",
    "prefill_weight_seconds", "prefill_charge_seconds", "prefill_comm_seconds", "step_extra_seconds",
    "step_overhead_seconds", "tensor_parallel", "tp_groups", "draft_weight_bytes",
)
_ALWAYS = ("params", "active_params", "weight_bytes", "kv_bytes_per_token", "ridge", "seq_len_avg",
           "usable_kv_bytes", "kv_replication", "peak_flops", "compute_precision", "memory_bytes",
           "reserve_bytes", "kv_tokens_held", "kv_bytes_per_sequence", "draft_weight_bytes")


def _clean(value):
    """Numbers that are whole become ints; NaN and infinity become null."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    return value


def solution_to_json(solution: Solution) -> dict:
    """The contract object: inputs, every figure, the verdict and the ranked levers."""
    r = solution.report
    dep = r.deployment
    fits = r.fits
    out: dict = {"model": dep.model.id, "gpu": dep.gpu.id, "inputs": deployment_to_dict(dep)}
    for key in CONTRACT_KEYS + EXTRA_KEYS:
        value = getattr(r, key)
        if not fits and key not in _ALWAYS:
            value = None
        out[key] = _clean(value)
    out["fits"] = fits
    out["fit_problem"] = r.fit_problem or None
    out["bottleneck"] = r.bottleneck
    out["objective"] = dep.objective
    out["objective_value"] = _clean(r.objective_value())
    out["verdict_margins"] = {name: _clean(value) for name, value in r.margins}
    out["levers"] = [{k: _clean(v) for k, v in lv.to_json().items()} for lv in solution.levers]
    out["best_lever"] = solution.best_lever
    out["best_gain"] = _clean(solution.best.gain)
    out["gain_band"] = gain_band(solution.best.gain)
    if dep.spec_k:
        out["spec_expected_tokens"] = _clean(r.spec_expected_tokens) if fits else None
    out["fidelity"] = dep.fidelity
    out["objective_bottleneck"] = r.objective_bottleneck
    out["corrections"] = [{"name": name, "changed": changed} for name, changed in r.corrections]
    out["floor"] = floor_json(solution.floor_solution)
    realistic = solution.realistic_solution
    out["realistic"] = floor_json(realistic) if realistic is not None else None
    if dep.fidelity == Fidelity.MEASURED:
        from engine import measured

        out["measured"] = dict(floor_json(solution), backend=measured.backend_label(dep.gpu))
        out["measured_reason"] = None
    else:
        out["measured"] = None
        out["measured_reason"] = MEASURED_NOT_REQUESTED
    return out


MEASURED_NOT_REQUESTED = "not requested: --fidelity measured times the steps with measured kernels"


def floor_json(floor: Solution) -> dict:
    """One fidelity's figures for the objective and each lever's gain (the `floor`, `realistic`
    and `measured` keys share this shape; a lever without a gain says why in `note`)."""
    r = floor.report
    return {
        "objective_value": _clean(r.objective_value()),
        "tpot_seconds": _clean(r.tpot_seconds) if r.fits else None,
        "ttft_seconds": _clean(r.ttft_seconds) if r.fits else None,
        "cost_per_million_output_tokens": _clean(r.cost_per_million_output_tokens) if r.fits else None,
        "bottleneck": r.bottleneck,
        "objective_bottleneck": r.objective_bottleneck,
        "best_lever": floor.best_lever,
        "best_gain": _clean(floor.best.gain),
        "gain_band": gain_band(floor.best.gain),
        "levers": [{"name": lv.name, "gain": _clean(lv.gain), "band": gain_band(lv.gain), "note": lv.note}
                   for lv in floor.levers],
        "fidelity": r.deployment.fidelity,
    }
