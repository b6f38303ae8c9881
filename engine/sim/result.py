"""One good result of the serving simulator (a valid deployment that fits, with its solved
levers), and two results side by side (pin A, change inputs, compare with B)."""
from __future__ import annotations

from dataclasses import dataclass

from engine.analysis import Report
from engine.compare import measured_placeholder
from engine.deployment import Deployment, deployment_to_dict
from engine.levers import Solution


class Result:
    """A valid deployment that fits, with its solved levers (`puzzles.sim.sim_key` adds the puzzles' answer key)."""

    def __init__(self, deployment: Deployment, solution: Solution) -> None:
        self.deployment = deployment
        self.solution = solution
        self.report: Report = solution.report
        # The measured column: a line (pending, or why there is none) until a worker measures it.
        self.measured = measured_placeholder(deployment)


# --- side by side -----------------------------------------------------------------------------

# (label, report attribute, unit kind, lower is better?)
COMPARED = (
    ("max concurrency", "max_concurrency", "count", False),
    ("batch", "batch", "count", False),
    ("intensity FLOP/B", "intensity", "num", None),
    ("TPOT", "tpot_seconds", "seconds", True),
    ("TTFT", "ttft_seconds", "seconds", True),
    ("prefill share", "prefill_share", "pct", None),
    ("throughput tok/s", "throughput_tokens_per_s", "num", False),
    ("$ per M out tok", "cost_per_million_output_tokens", "dollars", True),
    ("weights GiB", "weight_bytes", "gib", None),
    ("KV B/token", "kv_bytes_per_token", "num", None),
    ("usable KV GiB", "usable_kv_bytes", "gib", False),
)


@dataclass(frozen=True)
class CompareRow:
    label: str
    a: float | None
    b: float | None
    ratio: float | None      # B / A
    better: str              # "better" | "worse" | "same" | "" (no preferred direction)
    kind: str


def compare(a: Result, b: Result) -> list[CompareRow]:
    """Every compared quantity of A and B with the ratio B/A, and whether B is the better one."""
    rows = []
    for label, attr, kind, lower_better in COMPARED:
        va, vb = getattr(a.report, attr), getattr(b.report, attr)
        ratio = vb / va if va not in (None, 0) and vb is not None else None
        better = ""
        if lower_better is not None and ratio is not None:
            if abs(ratio - 1.0) < 1e-9:
                better = "same"
            else:
                better = "better" if (ratio < 1.0) == lower_better else "worse"
        rows.append(CompareRow(label, va, vb, ratio, better, kind))
    return rows


def changed_inputs(a: Result, b: Result) -> list[tuple[str, object, object]]:
    """(field, A's value, B's value) for every input that differs."""
    da, db = deployment_to_dict(a.deployment), deployment_to_dict(b.deployment)
    return [(name, da.get(name), db.get(name)) for name in da if da.get(name) != db.get(name)]

