"""The floor and the realistic figure side by side: one helper for `ridge solve`, the reveal and
the simulator, so every surface shows the same rows and names the same corrections.

`fidelity_rows(solution)` takes a realistic Solution (it carries its floor) and returns rows of
(label, floor text, realistic text): the objective first, then every lever's gain in the floor's
ranking order. `correction_lines(report)` names each correction and what it moved.
"""
from __future__ import annotations

from engine import units as u
from engine.bands import gain_band
from engine.ids import Fidelity, Objective
from engine.levers import Solution, solve

OBJECTIVE_LABELS = {"cost": "cost per million output tokens", "tpot": "TPOT", "ttft": "TTFT",
                    "stall": "worst decode stall"}


def objective_text(objective: str, value: float | None) -> str:
    if value is None:
        return "does not fit"
    if objective == Objective.COST:
        return u.dollars(value)
    return u.seconds(value)


def gain_text(gain: float | None) -> str:
    return "n/a" if gain is None else f"{gain:.2f}x ({gain_band(gain)})"


def realistic_of(solution: Solution) -> Solution:
    """The realistic solution of the same deployment over the same levers, carrying `solution`'s
    floor (a realistic solution is returned as it is)."""
    if solution.floor is not None:
        return solution
    dep = solution.report.deployment
    floor = solution if dep.fidelity == Fidelity.FLOOR else solve(dep.with_(fidelity="floor"), tuple(lv.name for lv in solution.levers))
    return solve(dep.with_(fidelity="realistic"), tuple(lv.name for lv in floor.levers), floor=floor)


def fidelity_rows(solution: Solution) -> list[tuple[str, str, str]]:
    """(label, floor, realistic) rows: the objective, the verdicts, then each lever's gain."""
    solution = realistic_of(solution)
    floor = solution.floor_solution
    real_report, floor_report = solution.report, floor.report
    objective = real_report.deployment.objective
    rows = [
        (OBJECTIVE_LABELS[objective], objective_text(objective, floor_report.objective_value()),
         objective_text(objective, real_report.objective_value())),
        ("what bounds it", floor_report.objective_bottleneck, real_report.objective_bottleneck),
        ("bottleneck (six rules)", floor_report.bottleneck, real_report.bottleneck),
        ("best lever", floor.best_lever, solution.best_lever),
    ]
    for lever in floor.levers:
        rows.append((lever.name, gain_text(lever.gain), gain_text(solution.lever(lever.name).gain)))
    return rows


def correction_lines(report) -> list[str]:
    """One line per correction: its name and what it moved."""
    return [f"{name}: {changed}" for name, changed in report.corrections]


def side_by_side_lines(solution: Solution, indent: str = "  ") -> list[str]:
    """The rows as aligned text, with the corrections named below them."""
    solution = realistic_of(solution)
    rows = fidelity_rows(solution)
    width = max(len(label) for label, _, _ in rows)
    left = max(len(a) for _, a, _ in rows)
    lines = [f"{indent}{'':<{width}}  {'floor':<{left}}  realistic"]
    lines += [f"{indent}{label:<{width}}  {a:<{left}}  {b}" for label, a, b in rows]
    corrections = correction_lines(solution.report)
    if corrections:
        lines.append(f"{indent}corrections that moved the realistic figures:")
        lines += [f"{indent}  - {line}" for line in corrections]
    return lines
