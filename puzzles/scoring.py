"""Certainty-based marking: the points an outcome earns, so honest confidence pays.

With p the chance of being right, the expected points are 10p (low), 40p - 20 (medium) and
90p - 60 (high): medium pays once p > 2/3 and high once p > 4/5, so bluffing high costs more than
it wins. Lucky (right answer, wrong reason) earns half of a low-certainty right; close (wrong
answer, right reasoning) loses less than a miss. Each hint taken costs HINT_COST.
"""
from __future__ import annotations

import math

from engine.ids import Certainty, Outcome

# Plain strings in the enums' order: the saves' Literal types and JSON use them as they are.
OUTCOMES = tuple(str(o) for o in Outcome)
CERTAINTIES = tuple(str(c) for c in Certainty)
HINT_COST = 3
ESTIMATE_TOLERANCE = 1.5      # a factor either way, judged on a log scale
SPEC_FIELD = "spec_helps"     # the napkin yes/no among a prediction's estimates (1 yes, 0 no)

POINTS: dict[str, dict[str, int]] = {
    Outcome.CLEARED: {Certainty.LOW: 10, Certainty.MEDIUM: 20, Certainty.HIGH: 30},
    Outcome.LUCKY: {Certainty.LOW: 5, Certainty.MEDIUM: 5, Certainty.HIGH: 0},
    Outcome.CLOSE: {Certainty.LOW: 0, Certainty.MEDIUM: -5, Certainty.HIGH: -15},
    Outcome.MISSED: {Certainty.LOW: 0, Certainty.MEDIUM: -20, Certainty.HIGH: -60},
}


def estimate_right(value: float | None, truth: float | None) -> bool:
    """Within a factor of ESTIMATE_TOLERANCE of the truth, on a log scale (here, beside the
    outcome table, so re-grading a saved attempt needs no more than this light module)."""
    if value is None or truth is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if value <= 0 or truth <= 0 or not math.isfinite(value):
        return False
    return abs(math.log(value / truth)) <= math.log(ESTIMATE_TOLERANCE) + 1e-12


def outcome_for(answer_right: bool, reason_right: bool) -> Outcome:
    """The outcome of a grade from its two halves: the answer, and the reason behind it."""
    if answer_right:
        return Outcome.CLEARED if reason_right else Outcome.LUCKY
    return Outcome.CLOSE if reason_right else Outcome.MISSED


def pays_above(certainty: str) -> float:
    """The chance of being right above which `certainty` earns more than the level below it
    (0 for low): where p*right + (1-p)*missed of the two levels meet, read from POINTS."""
    i = CERTAINTIES.index(certainty)
    if i == 0:
        return 0.0
    lower, level = CERTAINTIES[i - 1], certainty
    right, wrong = POINTS[Outcome.CLEARED], POINTS[Outcome.MISSED]
    return (wrong[lower] - wrong[level]) / ((right[level] - wrong[level]) - (right[lower] - wrong[lower]))


def points(outcome: str, certainty: str, hints_used: int = 0) -> int:
    """Points for one graded attempt: the certainty table, less HINT_COST per hint taken."""
    return POINTS[outcome][certainty] - HINT_COST * max(0, int(hints_used))
