"""What one attempt records, built once for every mode: the puzzle, the mode, the locked-in
prediction, the graded outcome, the key it was judged against, and where a generated puzzle came
from, as the plain fields `saves.model.AttemptIn` validates.

Every mode (the campaign, `ridge answer`, drill, exam, hot-seat, match, the live host) hands its
`puzzles.grading.Grade` here, so an attempt means the same thing whichever screen wrote it:
- the certainty is the one graded (a blank certainty was graded, and is recorded, as low);
- the key is the one the prediction was judged against (the bottleneck of the puzzle's objective);
- a generated puzzle always keeps its provenance (seed, difficulty, index, read from its id), so
  it can be made again; a built-in puzzle has none;
- the napkin yes/no is kept among the estimates as 1 (yes) or 0 (no), the save format's way.
Imports no Textual and no saves: `saves` validates and writes what this returns.
"""
from __future__ import annotations

import datetime as _dt
from typing import Any

from puzzles.questions import SPEC_FIELD


def generator_ref(puzzle) -> dict[str, int] | None:
    """{seed, difficulty, index} of a generated puzzle (from its id), None for a built-in one."""
    if not puzzle.generated:
        return None
    from puzzles.generator import parse_id

    seed, difficulty, index = parse_id(puzzle.id)
    return {"seed": seed, "difficulty": difficulty, "index": index}


def prediction_fields(grade) -> dict[str, Any]:
    """The locked-in prediction as the save holds it."""
    p = grade.prediction
    estimates = {str(k): float(v) for k, v in p.estimates.items()}
    if p.spec_helps in ("yes", "no"):
        estimates[SPEC_FIELD] = 1.0 if p.spec_helps == "yes" else 0.0
    return {"bottleneck": str(p.bottleneck), "lever": str(p.lever), "gain_band": str(p.gain_band),
            "reason": str(p.reason), "certainty": str(grade.certainty), "estimates": estimates}


def key_fields(grade) -> dict[str, str]:
    """The key the prediction was judged against."""
    from puzzles.grading import objective_bottleneck

    key = grade.key
    return {"bottleneck": str(objective_bottleneck(key)), "best_lever": str(key.best_lever),
            "gain_band": str(key.gain_band), "reason": str(key.reason or "")}


def attempt_fields(puzzle, grade, *, mode: str, locked_at: _dt.datetime, hints_used: int = 0,
                   seconds: float | None = None) -> dict[str, Any]:
    """One attempt's fields, ready for `saves.model.AttemptIn.model_validate`."""
    fields: dict[str, Any] = {
        "puzzle_id": puzzle.id, "module": puzzle.module, "mode": mode,
        "prediction": prediction_fields(grade), "outcome": str(grade.outcome),
        "hints_used": int(hints_used), "locked_at": locked_at,
        "seconds_taken": None if seconds is None else round(max(0.0, float(seconds)), 3),
        "key": key_fields(grade),
    }
    ref = generator_ref(puzzle)
    if ref is not None:
        fields["generator"] = ref
    return fields
