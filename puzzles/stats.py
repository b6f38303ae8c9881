"""Figures derived from a player's recorded attempts. Nothing here is stored: every number is
recomputed from the history each time, so an edited total can never be believed. A rule of the
game (how a score, a mastery and a streak count), so it lives in `puzzles`; it reads anything
shaped like `saves.model.Attempt` (and a profile's `counted_attempts()`), never a file."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Callable

from engine.ids import Certainty, Outcome
from puzzles.scoring import CERTAINTIES, OUTCOMES, pays_above
from puzzles.streak import Streak, streak_for


@dataclass(frozen=True)
class ModuleStats:
    """One module: attempts, points, distinct puzzles tried and how many were last cleared."""

    attempts: int
    score: int
    puzzles: int
    cleared_latest: int

    @property
    def mastery(self) -> float:
        """Share of the module's attempted puzzles whose most recent attempt was cleared."""
        return self.cleared_latest / self.puzzles if self.puzzles else 0.0


@dataclass(frozen=True)
class Calibration:
    """One certainty level: how often it was chosen and how often the attempt was cleared."""

    count: int
    cleared: int

    @property
    def share_cleared(self) -> float | None:
        return self.cleared / self.count if self.count else None


@dataclass(frozen=True)
class Stats:
    """A player's derived figures. `mastery` per module is the share of that module's puzzles
    (among those attempted) whose most recent attempt was cleared; `streak_days` is the one
    streak (`puzzles.streak`: consecutive local days with an attempt, a banked freeze covering a
    missed day), the same on home, stats and the drill."""

    attempts: int
    score: int
    hints_used: int
    by_outcome: dict[str, int]
    by_module: dict[str, ModuleStats]
    streak_days: int
    longest_streak_days: int
    calibration: dict[str, Calibration]
    outcomes_over_time: dict[str, dict[str, int]]  # local date (ISO) -> outcome -> count
    streak: Streak = Streak(0, 0, 0, (), False)  # the one streak (with freezes), as every screen shows it

    @property
    def mastery(self) -> dict[str, float]:
        return {module: m.mastery for module, m in self.by_module.items()}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every figure."""
        return {
            "attempts": self.attempts,
            "score": self.score,
            "hints_used": self.hints_used,
            "by_outcome": dict(self.by_outcome),
            "mastery": {m: round(v, 4) for m, v in self.mastery.items()},
            "by_module": {m: {"attempts": s.attempts, "score": s.score, "puzzles": s.puzzles,
                              "cleared_latest": s.cleared_latest, "mastery": round(s.mastery, 4)}
                          for m, s in self.by_module.items()},
            "streak_days": self.streak_days,
            "longest_streak_days": self.longest_streak_days,
            "streak_freezes": self.streak.freezes,
            "calibration": {c: {"count": v.count, "cleared": v.cleared,
                                "share_cleared": None if v.share_cleared is None
                                else round(v.share_cleared, 4)}
                            for c, v in self.calibration.items()},
            "outcomes_over_time": {d: dict(v) for d, v in self.outcomes_over_time.items()},
        }


def _local_date(moment: _dt.datetime, tz: _dt.tzinfo | None) -> _dt.date:
    # astimezone() with no zone uses the machine's zone, daylight saving included
    return (moment.astimezone(tz) if tz is not None else moment.astimezone()).date()


def derive(profile: Any, *, now: _dt.datetime | None = None,
           tz: _dt.tzinfo | None = None) -> Stats:
    """Every figure for `profile` (or a list of attempts, oldest first), with local days in `tz`
    (the machine's zone when None) and "today" taken from `now` (the clock when None)."""
    attempts = list(profile.counted_attempts() if hasattr(profile, "counted_attempts") else profile)  # edits never count
    now = now or _dt.datetime.now(_dt.timezone.utc)
    by_outcome = {o: 0 for o in OUTCOMES}
    calibration = {c: [0, 0] for c in CERTAINTIES}
    modules: dict[str, list[int]] = {}  # module -> [attempts, score]
    latest: dict[tuple[str, str], str] = {}  # (module, puzzle) -> outcome of the latest attempt
    over_time: dict[str, dict[str, int]] = {}
    score = hints = 0
    for a in attempts:
        pts = a.points
        score += pts
        hints += a.hints_used
        by_outcome[a.outcome] += 1
        cal = calibration[a.prediction.certainty]
        cal[0] += 1
        cal[1] += a.outcome == Outcome.CLEARED
        mod = modules.setdefault(a.module, [0, 0])
        mod[0] += 1
        mod[1] += pts
        latest[(a.module, a.puzzle_id)] = a.outcome
        day = _local_date(a.locked_at, tz).isoformat()
        bucket = over_time.setdefault(day, {o: 0 for o in OUTCOMES})
        bucket[a.outcome] += 1
    puzzles: dict[str, list[int]] = {}
    for (module, _), outcome in latest.items():
        p = puzzles.setdefault(module, [0, 0])
        p[0] += 1
        p[1] += outcome == Outcome.CLEARED
    streak = streak_for(attempts, now, tz)
    return Stats(
        attempts=len(attempts), score=score, hints_used=hints, by_outcome=by_outcome,
        by_module={m: ModuleStats(v[0], v[1], *puzzles[m]) for m, v in sorted(modules.items())},
        streak_days=streak.days, longest_streak_days=streak.longest, streak=streak,
        calibration={c: Calibration(*v) for c, v in calibration.items()},
        outcomes_over_time=dict(sorted(over_time.items())))


FEW = 5  # answers at a certainty level before its share is judged


def calibration_verdict(level: str, count: int, share: float | None) -> str:
    """Whether a certainty level is said as often as it pays: below the share where it starts to
    pay it is over-confident, above the next level's it is under-confident (`pays_above` reads
    those shares from the marking table: medium beats low above 2/3, high beats medium above 4/5)."""
    if count < FEW:
        return f"too few to say ({count} of {FEW})"
    if level == Certainty.HIGH and share < pays_above(Certainty.HIGH):
        return "over-confident: say medium more often"
    if level == Certainty.MEDIUM and share < pays_above(Certainty.MEDIUM):
        return "over-confident: say low more often"
    if level == Certainty.MEDIUM and share > pays_above(Certainty.HIGH):
        return "under-confident: high would pay"
    if level == Certainty.LOW and share > pays_above(Certainty.MEDIUM):
        return "under-confident: medium would pay"
    return "well judged"


def calibration_lines(calibration: dict) -> list[str]:
    """One row per certainty level: answers, cleared share, where it pays, and a verdict."""
    rows = [f"{'certainty':<10} {'answers':>7} {'cleared':>8}  {'pays above':>10}  verdict"]
    for level in (Certainty.LOW, Certainty.MEDIUM, Certainty.HIGH):
        cal = calibration.get(level)
        count = getattr(cal, "count", 0)
        share = getattr(cal, "share_cleared", None)
        shown = "—" if share is None else f"{share:.0%}"
        pays = "always" if level == Certainty.LOW else f"{pays_above(level):.0%}"
        rows.append(f"{level:<10} {count:>7} {shown:>8}  {pays:>10}  {calibration_verdict(level, count, share)}")
    return rows


def outcome_lines(over_time: dict, symbol: Callable[[str], str], days: int = 14) -> list[str]:
    """The last `days` active days, each with its outcomes as symbols (`symbol` gives an
    outcome's) and counts."""
    lines = []
    for day, counts in list(over_time.items())[-days:]:
        marks = "".join(symbol(o) * n for o, n in counts.items())
        summary = ", ".join(f"{n} {o}" for o, n in counts.items() if n)
        lines.append(f"{day}  {marks[:30]:<30}  {summary}")
    return lines or ["No attempts yet: your results will build up here, day by day."]
