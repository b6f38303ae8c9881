"""The three fidelities side by side: one helper for `ridge solve`, the reveal and the simulator,
so every surface shows the same rows and names the same corrections.

`fidelity_rows(solution, measured)` takes a realistic Solution (it carries its floor) and, when
given, the measured one (or the one line saying why there is none, or that it is on its way), and
returns rows of (label, floor, realistic[, measured]): the objective first, the verdicts and the
best lever, then every lever's gain in the floor's ranking order. `correction_lines(report)` names
each correction and what it moved. The measured solution is solved by `measured_of`, which loads
the optional kernel database: callers that must not wait run it in a worker.
"""
from __future__ import annotations

from engine import units as u
from engine.bands import gain_band
from engine.ids import Fidelity, Lever, Objective
from engine.levers import Solution, solve

OBJECTIVE_LABELS = {Objective.COST: "cost per million output tokens", Objective.TPOT: "TPOT", Objective.TTFT: "TTFT",
                    Objective.STALL: "worst decode stall", Objective.P99_TTFT: "P99 TTFT", Objective.P99_TPOT: "P99 TPOT",
                    Objective.GOODPUT: "goodput per GPU", Objective.GPUS_FOR_SLO: "GPUs for the SLOs"}
PENDING = "measuring..."


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
    floor (a realistic solution is returned as it is; a measured one gives the one it carries)."""
    if solution.fidelity == Fidelity.REALISTIC:
        return solution
    if solution.fidelity == Fidelity.MEASURED and solution.realistic is not None:
        return solution.realistic
    dep = solution.report.deployment
    floor = solution if dep.fidelity == Fidelity.FLOOR else solve(dep.with_(fidelity="floor"), tuple(lv.name for lv in solution.levers))
    return solve(dep.with_(fidelity="realistic"), tuple(lv.name for lv in floor.levers), floor=floor)


def measured_problem(dep) -> str | None:
    """Why the measured column cannot be filled for this deployment, in one line (None when it
    can be tried): the extra is missing, or the accelerator or precision has no measured kernels.
    Cheap: it never loads the database."""
    from engine import measured

    return measured.unavailable() or measured.coverage_problem(dep.model, dep.gpu, dep.weights, dep.kv)


def measured_placeholder(dep) -> str:
    """What a measured column shows before (or instead of) its figures: PENDING when they can be
    measured, else why not in a few words ("no measured kernels for this accelerator")."""
    from engine import measured

    problem = measured_problem(dep)
    if problem is None:
        return PENDING
    return measured.NO_KERNELS if problem.startswith(measured.NO_KERNELS) else problem


def measure(solution: Solution) -> "Solution | str":
    """The measured solution, or the one line saying why there is none (for a worker to fill a
    column with; see measured_of). Never raises: a failure inside the optional package is named
    in the column, and the screen around it carries on."""
    from engine.errors import RidgeError

    try:
        return measured_of(solution)
    except RidgeError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a bug in a third-party estimator must not end a session
        return f"the measured kernels failed ({type(exc).__name__})"


def measured_of(solution: Solution) -> Solution:
    """The measured solution of the same deployment over the same levers, carrying the floor and
    realistic ones. Loads the kernel database (seconds the first time for a model and
    accelerator): run it off the UI thread. RidgeError, one line, when it cannot be timed."""
    if solution.fidelity == Fidelity.MEASURED:
        return solution
    real = realistic_of(solution)
    dep = real.report.deployment
    return solve(dep.with_(fidelity=Fidelity.MEASURED), tuple(lv.name for lv in real.levers), floor=real.floor,
                 realistic=real)


def fidelity_rows(solution: Solution, measured: "Solution | str | None" = None) -> list[tuple[str, ...]]:
    """(label, floor, realistic) rows, or (label, floor, realistic, measured) when `measured` is
    a Solution or a line saying why it is missing (shown in the objective's row, a dash below)."""
    if solution.fidelity == Fidelity.MEASURED:
        measured, solution = solution, realistic_of(solution)
    solution = realistic_of(solution)
    floor = solution.floor_solution
    real_report, floor_report = solution.report, floor.report
    objective = real_report.deployment.objective
    columns = [floor, solution]
    rows = [
        (OBJECTIVE_LABELS[objective], *(objective_text(objective, s.report.objective_value()) for s in columns)),
        ("what bounds it", *(s.report.objective_bottleneck for s in columns)),
        ("bottleneck (six rules)", *(s.report.bottleneck for s in columns)),
        ("best lever", *(s.best_lever for s in columns)),
    ]
    rows += [(lever.name, *(gain_text(s.lever(lever.name).gain) for s in columns)) for lever in floor.levers]
    if measured is None:
        return rows
    if isinstance(measured, str):
        return [row + ((measured if i == 0 else "-"),) for i, row in enumerate(rows)]
    m = measured.report
    cells = [objective_text(objective, m.objective_value()), m.objective_bottleneck, m.bottleneck,
             measured.best_lever if measured.best.gain is not None else "n/a"]
    cells += [gain_text(measured.lever(lever.name).gain) for lever in floor.levers]
    return [row + (cell,) for row, cell in zip(rows, cells)]


def correction_lines(report) -> list[str]:
    """One line per correction: its name and what it moved."""
    return [f"{name}: {changed}" for name, changed in report.corrections]


def measured_lines(measured: "Solution | str | None") -> list[str]:
    """What the measured column rests on: the kernels that timed it and every lever it could not
    time, or why there is no column."""
    if measured is None:
        return []
    if isinstance(measured, str):
        return [f"measured: {measured}"]
    from engine import measured as kernels

    lines = [f"measured: every pass timed by {kernels.backend_label(measured.report.deployment.gpu)}"]
    lines += [f"measured {lv.name}: {lv.note}" for lv in measured.levers if lv.gain is None and "not measured" in lv.note]
    speculates = measured.report.deployment.spec_k or any(
        lv.name == Lever.SPECULATIVE_DECODING and lv.gain is not None for lv in measured.levers)
    if speculates:
        lines.append(f"measured speculation: {kernels.VERIFY_NOTE}")
    return lines


def side_by_side_lines(solution: Solution, indent: str = "  ", measured: "Solution | str | None" = None) -> list[str]:
    """The rows as aligned text, with the corrections and the measured kernels named below."""
    if solution.fidelity == Fidelity.MEASURED:
        measured = solution
    solution = realistic_of(solution)
    rows = fidelity_rows(solution, measured)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    header = ("", "floor", "realistic", "measured")[:len(widths)]
    lines = []
    for row in (header, *rows):
        cells = [f"{cell:<{w}}" for cell, w in zip(row, widths)]
        lines.append((indent + "  ".join(cells)).rstrip())
    corrections = correction_lines(solution.report)
    if corrections:
        lines.append(f"{indent}corrections that moved the realistic figures:")
        lines += [f"{indent}  - {line}" for line in corrections]
    lines += [f"{indent}{line}" for line in measured_lines(measured)]
    return lines
