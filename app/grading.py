"""The one place the app turns a filled-in form into a graded attempt, through `puzzles`."""
from __future__ import annotations


def grade_prediction(bank, puzzle, prediction: dict, hints_used: int):
    """(key, grade) for a locked-in prediction given as ids, graded by `puzzles.grading`."""
    from puzzles.grading import Prediction, grade

    key = bank.key(puzzle)
    locked = Prediction(bottleneck=prediction["bottleneck"], lever=prediction["lever"],
                        gain_band=prediction["gain_band"], reason=prediction["reason"],
                        certainty=prediction["certainty"], estimates=dict(prediction.get("estimates") or {}))
    return key, grade(puzzle, key, locked, hints_used)
