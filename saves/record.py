"""Recording a graded answer: the one way every mode (the campaign, `ridge answer`, drill, exam,
hot-seat, match) appends an attempt to a player's save, so an attempt means the same thing
whichever screen or command wrote it. `puzzles.attempts` builds the fields; the store validates
and appends them (creating the player when new). Imports no Textual.
"""
from __future__ import annotations

import datetime as _dt

from puzzles.attempts import attempt_fields
from saves.model import Attempt, AttemptIn


def record_graded(store, player: str, puzzle, grade, *, mode: str, locked_at: _dt.datetime,
                  hints_used: int = 0, seconds: float | None = None) -> Attempt:
    """Append `grade` (a `puzzles.grading.Grade` of `puzzle`) to `player`'s save in `store` (a
    `saves.store.SaveStore`) as an attempt of `mode`; return the attempt as stored. Raises what
    the store raises (`SaveError`, one line) when it refuses: the caller decides how to say so."""
    attempt = AttemptIn.model_validate(attempt_fields(puzzle, grade, mode=mode, locked_at=locked_at,
                                                      hints_used=hints_used, seconds=seconds))
    return store.record_attempt(player, attempt)
