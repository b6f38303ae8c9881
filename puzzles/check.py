"""`ridge puzzles check`: validate packs and hold every puzzle to the engine and the grading contract.

For each pack: the file parses, the schema is strict, ids are unique across all the packs checked,
and every deployment builds. For each puzzle (`puzzle_problems`, which the generator's tests run on
generated puzzles too), against its engine-computed key:
- robust (`puzzles.keys.robustness_problems`, DESIGN.md "Robust keys"): the verdict and the best lever are the
  same under the floor, the realistic fidelity and, where the optional extra runs and covers the
  accelerator and precisions, the measured kernels; the band is the realistic gain's, so no band
  starting more than 5% above it is accepted (a floor of 2.00 beside a realistic 1.45 lets only
  `1.25-2x` through), and each fidelity's own band is one the key accepts. The message names the puzzle,
  the fidelity and both answers;
- the bottleneck options are only the verdicts that can bound the objective, and the key's is one;
- options (verdicts, levers, reasons) are in the one fixed order;
- no lever the puzzle does not offer comes within 2% of the offered best (at any fidelity)
  unless `ruled_out` names it, and a ruled-out lever is not also offered;
- the key's reason is among the candidates, and no other candidate holds for this deployment
  (`puzzles.reasons.reason_holds`), so a true reason is never graded wrong;
- the card is complete: changing any input the card does not show leaves the key as it is;
- every asked estimate exists, the answer is not borderline at the floor nor at the realistic
  fidelity (`puzzles.keys.ambiguity`; a gain near a band edge is allowed, since both bands are
  accepted there), and the author's `expect`
  block agrees with the engine.
Every problem is one PackError line naming file, line, puzzle id and field.
"""
from __future__ import annotations

from pathlib import Path

from engine.catalog import Catalog
from engine.deployment import validate
from engine.errors import RidgeError
from engine.ids import OBJECTIVE_VERDICTS, Fidelity
from engine.levers import LEVERS

from puzzles.errors import PackError
from puzzles.keys import Key, ambiguity, key_from_solution, robustness_problems, shown_gain, solve_both
from puzzles.load_keys import key_of as compute_key
from puzzles.puzzle import Puzzle, fixed_order
from puzzles.reasons import REASONS, reason_holds

# Inputs a card may leave unsaid, and a changed value for each that would move a key depending on it.
_PERTURB = {
    "spec_alpha": lambda d: {"spec_alpha": 0.95 if d.spec_alpha < 0.6 else 0.2},
    "spec_draft_cost": lambda d: {"spec_draft_cost": 0.6},
    "chunk_tokens": lambda d: {"chunk_tokens": 64 if d.chunk_tokens > 64 else 4096},
    "max_output": lambda d: {"max_output": max(d.output + 1, min(d.model.context - d.prompt, 16 * d.output))},
    "route_fraction": lambda d: {"route_fraction": 0.95 if d.route_fraction < 0.6 else 0.1},
}


def _answer(key: Key) -> tuple:
    return (key.bottleneck, key.best_lever, key.bands)



def hidden_input_problems(puzzle: Puzzle, key: Key) -> list[tuple[str, str]]:
    """(field, message) for each input the card leaves unsaid that changes the key when changed."""

    from puzzles.cards import shown_fields

    dep = puzzle.deployment
    shown = shown_fields(dep, puzzle.levers)
    out = []
    for name, change in _PERTURB.items():
        if name in shown:
            continue
        try:
            other = validate(dep.with_(**change(dep)))
        except RidgeError:  # a change the deployment refuses cannot matter
            continue
        moved = key_from_solution(*solve_both(other, puzzle.levers))
        if _answer(moved) != _answer(key):
            out.append((f"deployment.{name}", f"the key depends on {name}, which the card does not show "
                                              f"(changing it to {getattr(other, name)!r} gives "
                                              f"{moved.bottleneck}/{moved.best_lever}/{'|'.join(moved.bands)})"))
    return out


def contract_problems(puzzle: Puzzle, key: Key, measured: bool = False) -> list[tuple[str, str]]:
    """(field, message) for every breach of the grading contract (DESIGN.md, "Robust keys" and
    "Grading"), for a built-in or a generated puzzle alike."""
    if puzzle.load is not None:
        from puzzles.load_check import load_problems

        return load_problems(puzzle, key, measured=measured)
    out = robustness_problems(key, puzzle.levers, puzzle.ruled_out, measured)
    allowed = tuple(str(v) for v in OBJECTIVE_VERDICTS[puzzle.objective])
    if puzzle.verdicts != allowed:
        out.append(("objective", f"the bottleneck options {list(puzzle.verdicts)} are not the verdicts that "
                                 f"bound {puzzle.objective}: {list(allowed)}"))
    if key.bottleneck not in allowed:
        out.append(("objective", f"the key's bottleneck {key.bottleneck} cannot bound {puzzle.objective}"))
    if puzzle.levers != fixed_order(puzzle.levers, LEVERS):
        out.append(("levers", f"levers are not in the fixed order: {list(fixed_order(puzzle.levers, LEVERS))}"))
    if puzzle.reasons != fixed_order(puzzle.reasons, REASONS):
        out.append(("reasons", f"reasons are not in the fixed order: {list(fixed_order(puzzle.reasons, REASONS))}"))
    for lever in puzzle.ruled_out:
        if lever in puzzle.levers:
            out.append(("ruled_out", f"{lever} is ruled out and offered at once"))
    if key.reason not in puzzle.reasons:
        out.append(("reasons", f"the key's reason '{key.reason}' ({REASONS[key.reason]}) is not among "
                               f"the candidates {list(puzzle.reasons)}"))
    solutions = [solution for _, solution in key.judged()]
    for reason in puzzle.reasons:
        if reason != key.reason and any(reason_holds(reason, solution) for solution in solutions):
            out.append(("reasons", f"the candidate '{reason}' ({REASONS[reason]}) is also true here, so a player "
                                   f"who picks it would be graded wrong for a true reason; offer a false one"))
    out.extend(hidden_input_problems(puzzle, key))
    return out


def puzzle_problems(puzzle: Puzzle, key: Key | None = None, measured: bool = False) -> list[PackError]:
    """Everything wrong with one loaded puzzle, judged by its engine key (and the measured kernels
    too with `measured`, where they run)."""
    key = key or compute_key(puzzle)

    def err(field: str, message: str) -> PackError:
        line = puzzle.line
        if field not in ("deployment", "id") and puzzle.source and puzzle.source != "generator":
            from puzzles.schema import field_line

            line = field_line(puzzle, field)
        return PackError(message, path=puzzle.source or None, line=line, puzzle=puzzle.id, field=field)

    problems = []
    for fidelity, solution in key.judged():
        for field, message in ambiguity(solution, band_margin=None):
            where = "" if fidelity == Fidelity.FLOOR else f" ({fidelity})"
            problems.append(err(field if field != "levers" else "deployment", f"ambiguous{where}: {message}"))
    for field, message in contract_problems(puzzle, key, measured):
        problems.append(err(field, message))
    for name in puzzle.estimates:
        if key.estimates.get(name) is None:
            problems.append(err("ask.estimates", f"{name} is undefined for this deployment (it does not fit)"))
    expect = puzzle.expect or {}
    actual = {"bottleneck": key.bottleneck, "best_lever": key.best_lever, "gain_band": key.gain_band,
              "reason": key.reason}
    for field, wanted in expect.items():
        if field == "gain_band" and wanted in key.bands:
            continue
        if wanted != actual[field]:
            extra = ""
            if field == "gain_band" and key.gain is not None:
                extra = f" ({key.best_lever} gains {shown_gain(key)})"
            elif field == "best_lever":
                ranked = ", ".join(f"{lv.name} {lv.gain:.2f}x" if lv.gain is not None else f"{lv.name} n/a"
                                   for lv in key.levers[:3])
                extra = f" (ranked: {ranked})"
            problems.append(err(f"expect.{field}", f"the author expects {wanted!r} but the engine says "
                                                   f"{actual[field]!r}{extra}"))
    return problems


def check_paths(paths: list[str | Path], catalog: Catalog | None = None,
                measured: bool = True) -> tuple[list[PackError], int, int]:
    """(problems, puzzles checked, packs read) for the given pack files, judged under the measured
    kernels too where they run (`measured`)."""
    from puzzles.schema import load_pack

    problems: list[PackError] = []
    seen: dict[str, Puzzle] = {}
    count = packs = 0
    for path in paths:
        pack = load_pack(path, catalog, problems)
        if pack is None:
            continue
        packs += 1
        for puzzle in pack.puzzles:
            if puzzle.id in seen:
                first = seen[puzzle.id]
                problems.append(PackError(f"duplicate id: already used at {first.source}:{first.line}",
                                          path=puzzle.source, line=puzzle.line, puzzle=puzzle.id, field="id"))
                continue
            seen[puzzle.id] = puzzle
            count += 1
            problems.extend(puzzle_problems(puzzle, measured=measured))
    return problems, count, packs
