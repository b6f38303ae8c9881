"""Streaks in local days, with freezes that protect a streak without lengthening it.

A streak counts consecutive local calendar days with at least one recorded attempt. Every
`FREEZE_EVERY` days a streak reaches (7, 14, 21, ...) banks one freeze, up to `MAX_FREEZES`. A
past day with no attempt spends a banked freeze, if there is one: the streak survives but does
not grow. With none banked, the streak starts again from zero. Today never breaks a streak: it is
not over yet.

Everything is derived from the attempts' lock-in times each time (no stored counter), with the
clock and the time zone passed in, so tests can cross local midnight in any zone. Imports no
Textual.
"""
from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

FREEZE_EVERY = 7
MAX_FREEZES = 2
_DAY = _dt.timedelta(days=1)


@dataclass(frozen=True)
class Streak:
    """The current streak (days), the longest ever, freezes banked now, the past days a freeze
    covered, and whether today already counts."""

    days: int
    longest: int
    freezes: int
    frozen_days: tuple[_dt.date, ...]
    active_today: bool

    @property
    def at_risk(self) -> bool:
        """A streak is running but today has no attempt yet."""
        return self.days > 0 and not self.active_today

    def describe(self) -> str:
        if self.days == 0:
            return "No streak yet: answer something today to start one."
        plural = "s" if self.days != 1 else ""
        text = f"Streak: {self.days} day{plural}"
        if self.freezes:
            text += (f" · {self.freezes} freeze{'s' if self.freezes != 1 else ''} banked (each covers "
                     "one missed day; it keeps the streak but does not add to it)")
        if self.at_risk:
            text += " · nothing yet today"
        return text + "."

    def freeze_note(self) -> str:
        """Freezes from the first day: how many are banked and when the next one is earned."""
        banked = (f"{self.freezes} freeze{'s' if self.freezes != 1 else ''} banked"
                  if self.freezes else "No freezes banked")
        if self.freezes >= MAX_FREEZES:
            return f"{banked} (the most you can hold); each covers one missed day."
        to_go = FREEZE_EVERY - self.days % FREEZE_EVERY
        return (f"{banked}; the next comes after {to_go} more day{'s' if to_go != 1 else ''} of streak "
                f"(one every {FREEZE_EVERY} days, up to {MAX_FREEZES}; each covers one missed day).")


def local_days(times: Iterable[_dt.datetime], tz: _dt.tzinfo | None) -> set[_dt.date]:
    """The local calendar dates of `times` in `tz` (the machine's zone when None)."""
    return {(t.astimezone(tz) if tz is not None else t.astimezone()).date() for t in times}


def streak_from_days(days: Iterable[_dt.date], today: _dt.date) -> Streak:
    """Walk from the first active day to `today`, earning and spending freezes on the way."""
    active = {d for d in days if d <= today}
    if not active:
        return Streak(0, 0, 0, (), False)
    day = min(active)
    current = longest = banked = 0
    frozen: list[_dt.date] = []
    while day <= today:
        if day in active:
            current += 1
            longest = max(longest, current)
            if current % FREEZE_EVERY == 0:
                banked = min(MAX_FREEZES, banked + 1)
        elif day < today and current > 0:
            if banked > 0:
                banked -= 1
                frozen.append(day)
            else:
                current = 0
        day += _DAY
    return Streak(current, longest, banked, tuple(frozen), today in active)


def streak_for(attempts: Iterable[Any], now: _dt.datetime, tz: _dt.tzinfo | None = None) -> Streak:
    """The streak of a player's attempts (anything with `locked_at`) as of `now`, in zone `tz`."""
    today = (now.astimezone(tz) if tz is not None else now.astimezone()).date()
    return streak_from_days(local_days((a.locked_at for a in attempts), tz), today)
