"""How hard the suite searches. The README's test command runs a fixed search: hypothesis
derandomized (every run draws the same examples, from a fixed seed) with no example database
carried between runs, and the keyboard walk on its fixed seeds, so a failure on one machine is a
failure on every machine, and a defect is never found (then replayed) by luck.

A hunt is the separate, randomized run: `RIDGE_HUNT=N pytest -m hunt` draws fresh examples on
every run, N times as many per test, keeps what fails in `.hypothesis/` so it replays until
fixed, and walks three fresh seeds (RIDGE_WALK_STEPS sets their length). Whatever a hunt finds
becomes a named test."""
from __future__ import annotations

import os

HUNT = max(0, int(os.environ.get("RIDGE_HUNT", "0") or 0))


def examples(count: int) -> int:
    """A property test's number of examples: `count` in the suite, N times it in a hunt."""
    return count * HUNT if HUNT > 1 else count
