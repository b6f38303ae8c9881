"""Certainty-based marking: the points an outcome earns, so honest confidence pays.

With p the chance of being right, the expected points are 10p (low), 40p - 20 (medium) and
90p - 60 (high): medium pays once p > 2/3 and high once p > 4/5, so bluffing high costs more than
it wins. Lucky (right answer, wrong reason) earns half of a low-certainty right; close (wrong
answer, right reasoning) loses less than a miss. Each hint taken costs HINT_COST.
"""
from __future__ import annotations

OUTCOMES = ("cleared", "lucky", "close", "missed")
CERTAINTIES = ("low", "medium", "high")
HINT_COST = 3

POINTS: dict[str, dict[str, int]] = {
    "cleared": {"low": 10, "medium": 20, "high": 30},
    "lucky": {"low": 5, "medium": 5, "high": 0},
    "close": {"low": 0, "medium": -5, "high": -15},
    "missed": {"low": 0, "medium": -20, "high": -60},
}


def points(outcome: str, certainty: str, hints_used: int = 0) -> int:
    """Points for one graded attempt: the certainty table, less HINT_COST per hint taken."""
    return POINTS[outcome][certainty] - HINT_COST * max(0, int(hints_used))
