"""`ridge puzzles check`: validate packs and hold every puzzle to the engine.

For each pack: the file parses, the schema is strict, ids are unique across all the packs checked,
and every deployment builds. For each puzzle, against its engine-computed key: the key's reason is
among the candidates, every asked estimate exists for this deployment, the answer is not
borderline (see `puzzles.keys.ambiguity`; a gain on a band edge is allowed, since grading accepts
either neighbouring band there), and the author's `expect` block agrees with the engine.
Every problem is one PackError line naming file, line, puzzle id and field.
"""
from __future__ import annotations

from pathlib import Path

from engine.catalog import Catalog

from puzzles.errors import PackError
from puzzles.keys import Key, ambiguity, compute_key
from puzzles.puzzle import Puzzle
from puzzles.reasons import REASONS


def puzzle_problems(puzzle: Puzzle, key: Key | None = None) -> list[PackError]:
    """Everything wrong with one loaded puzzle, judged by its engine key."""
    key = key or compute_key(puzzle)

    def err(field: str, message: str) -> PackError:
        line = puzzle.line
        if field not in ("deployment", "id"):
            from puzzles.schema import field_line

            line = field_line(puzzle, field)
        return PackError(message, path=puzzle.source or None, line=line, puzzle=puzzle.id, field=field)

    problems = []
    for field, message in ambiguity(key.solution, band_margin=None):
        problems.append(err(field if field != "levers" else "deployment", f"ambiguous: {message}"))
    if key.reason not in puzzle.reasons:
        problems.append(err("reasons", f"the key's reason '{key.reason}' ({REASONS[key.reason]}) is not among "
                                       f"the candidates {list(puzzle.reasons)}"))
    for name in puzzle.estimates:
        if key.estimates.get(name) is None:
            problems.append(err("ask.estimates", f"{name} is undefined for this deployment (it does not fit)"))
    expect = puzzle.expect or {}
    actual = {"bottleneck": key.bottleneck, "best_lever": key.best_lever, "gain_band": key.gain_band,
              "reason": key.reason}
    for field, wanted in expect.items():
        if wanted != actual[field]:
            extra = ""
            if field in ("best_lever", "gain_band"):
                ranked = ", ".join(f"{lv.name} {lv.gain:.2f}x" if lv.gain is not None else f"{lv.name} n/a"
                                   for lv in key.levers[:3])
                extra = f" (ranked: {ranked})"
            problems.append(err(f"expect.{field}", f"the author expects {wanted!r} but the engine says "
                                                   f"{actual[field]!r}{extra}"))
    return problems


def check_paths(paths: list[str | Path], catalog: Catalog | None = None) -> tuple[list[PackError], int, int]:
    """(problems, puzzles checked, packs read) for the given pack files."""
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
            problems.extend(puzzle_problems(puzzle))
    return problems, count, packs
