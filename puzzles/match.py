"""Competitions' rules: what a match code names, how an answer scores, and re-grading a stored
answer. The board these scores make is `puzzles.boards`; result files are `saves.match`.

A match code names the same seeded puzzles on every machine: `R-<seed>-<difficulty>-<count>`,
with `-S` at the end when answers earn a speed bonus (`R-42-3-10-S`). Puzzle n of a match is the
generated puzzle `gen-s<seed>-d<difficulty>-<n-1>`.

Scoring (every number derived from the answers, never stored): each answer earns the game's
certainty-marked points (`puzzles.scoring`: the right answer for the right reason earns most, a
confident wrong answer costs most), plus, when the match has one, a speed bonus for cleared
answers only, so guessing fast never pays. Imports no Textual.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.errors import RidgeError

from engine.ids import Outcome
from puzzles.scoring import points

MAX_COUNT = 50
MAX_SEED = 10**12 - 1
SPEED_WINDOW_SECONDS = 120.0
SPEED_BONUS_MAX = 5
_CODE = re.compile(r"^R-(\d{1,12})-([1-5])-(\d{1,2})(-S)?$", re.IGNORECASE)
_NAME = re.compile(r"^[\w\- ]{1,32}$")


@dataclass(frozen=True)
class MatchCode:
    """What a match code encodes: the seed, the difficulty, how many puzzles, the speed bonus."""

    seed: int
    difficulty: int
    count: int
    speed_bonus: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.seed <= MAX_SEED:
            raise RidgeError(f"a match seed is a whole number from 0 to {MAX_SEED}, got {self.seed}")
        if not 1 <= self.difficulty <= 5:
            raise RidgeError(f"a match difficulty is 1 to 5, got {self.difficulty}")
        if not 1 <= self.count <= MAX_COUNT:
            raise RidgeError(f"a match has 1 to {MAX_COUNT} puzzles, got {self.count}")

    def __str__(self) -> str:
        return f"R-{self.seed}-{self.difficulty}-{self.count}" + ("-S" if self.speed_bonus else "")

    @classmethod
    def parse(cls, text: str) -> MatchCode:
        m = _CODE.match(str(text).strip())
        if not m:
            raise RidgeError(f"'{text}' is not a match code (they look like R-42-3-10, or R-42-3-10-S "
                             "with a speed bonus: seed, difficulty 1-5, number of puzzles)")
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), bool(m.group(4)))

    def puzzle_id(self, number: int) -> str:
        """The id of puzzle `number` (1-based) of this match."""
        return f"gen-s{self.seed}-d{self.difficulty}-{number - 1:04d}"

    def puzzle_ids(self) -> list[str]:
        return [self.puzzle_id(n) for n in range(1, self.count + 1)]

    def items(self) -> list:
        """The match's questions, each a generated puzzle with its key (`puzzles.questions.Item`):
        the same on every machine that plays this code."""
        from puzzles.generator import make
        from puzzles.questions import make_item

        made = (make(self.seed, self.difficulty, n) for n in range(self.count))
        return [make_item(gen.puzzle, gen.key) for gen in made]


def check_name(text: str, what: str = "player") -> str:
    text = str(text).strip()
    if not _NAME.match(text):
        raise RidgeError(f"a {what} name is 1-32 letters, digits, spaces, '-' or '_', got {text!r}")
    return text



# --- scoring -------------------------------------------------------------------------------------

def speed_bonus(outcome: str, seconds: float | None) -> int:
    """Up to SPEED_BONUS_MAX extra points for a cleared answer, falling to 0 at SPEED_WINDOW_SECONDS."""
    if outcome != Outcome.CLEARED or seconds is None or not math.isfinite(seconds) or seconds < 0:
        return 0
    return round(SPEED_BONUS_MAX * max(0.0, 1.0 - seconds / SPEED_WINDOW_SECONDS))


def speed_note(outcome: str, seconds: float) -> str:
    """What the reveal says about the speed bonus of a match that has one."""
    bonus = speed_bonus(outcome, seconds)
    if bonus:
        return f"Speed bonus: +{bonus} ({seconds:.0f} s)"
    return f"No speed bonus ({'only cleared answers earn one' if outcome != Outcome.CLEARED else f'{seconds:.0f} s'})."


def answer_score(outcome: str, certainty: str, seconds: float | None = None, with_speed: bool = False) -> int:
    """One answer's score: certainty-marked points, plus the speed bonus when the match has one."""
    return points(outcome, certainty) + (speed_bonus(outcome, seconds) if with_speed else 0)



# --- re-grading a stored answer ------------------------------------------------------------------

def regrade_problem(puzzle_id: str, prediction: Mapping[str, Any], key: Mapping[str, Any], outcome: str) -> str | None:
    """Why a stored answer cannot be trusted, or None: its key must be the engine's, and its
    outcome what its prediction grades as by the one grader (`puzzles.grading.grade`)."""
    from puzzles.generator import from_id
    from puzzles.grading import grade
    from puzzles.questions import make_item

    gen = from_id(puzzle_id)
    engine = gen.key
    for name in ("bottleneck", "best_lever", "gain_band", "reason"):
        truth = getattr(engine, name)
        # files written before the objective's bottleneck was judged name the six-rule verdict
        allowed = {truth, str(engine.solution.report.bottleneck)} if name == "bottleneck" else {truth}
        if key.get(name) not in allowed:
            return f"the engine's key was edited ({name} says {key.get(name)!r}; the engine says {truth!r})"
    estimates = prediction.get("estimates") or {}
    if not isinstance(estimates, Mapping) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in estimates.values()):
        return "estimates must be numbers"
    item = make_item(gen.puzzle, engine)
    graded = grade(item.puzzle, item.key, {**prediction, "estimates": dict(estimates)}, **item.asks).outcome
    if graded != outcome:
        return f"the outcome says {outcome}, but its prediction grades as {graded}"
    return None
