"""Readiness for an exam date: how many concepts would be recalled on the day (FSRS
retrievability at the exam's morning), the weakest ones by name, and each concept's chance of
recall, as home, the stats screen and `ridge drill plan` show them from the same cards."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from puzzles.drill import CONCEPT_TITLES, CONCEPTS
from puzzles.review import (DESIRED_RETENTION, exam_moment, local_date, parse_exam_date, profile_cards, readiness,
                            recall_words, retrievability)

EXAM_SETTING = "exam-date"  # the profile setting holding the exam date, YYYY-MM-DD


@dataclass(frozen=True)
class Recall:
    """One concept's chance of recall: its title, the chance (0-1) and the chance as shown."""

    label: str
    value: float
    shown: str


def _exam_date(profile: Any, now: _dt.datetime, tz: _dt.tzinfo | None) -> _dt.date | None:
    """The profile's exam date if it is set, readable and not past; else None."""
    if profile is None:
        return None
    try:
        return parse_exam_date(str(profile.settings.get(EXAM_SETTING, "")), local_date(now, tz))
    except ValueError:
        return None


def readiness_lines(profile: Any, now: _dt.datetime, tz: _dt.tzinfo | None = None, weakest: int = 4) -> list[str]:
    """Two lines when the player has set an exam date that has not passed; none otherwise."""
    exam = _exam_date(profile, now, tz)
    if exam is None:
        return []
    ready = readiness(CONCEPTS, profile_cards(profile), exam, tz)
    days = (exam - local_date(now, tz)).days
    good = sum(r >= DESIRED_RETENTION for r in ready.values())
    head = (f"Exam {exam.isoformat()}, {'today' if days == 0 else f'in {days} day' + ('s' if days != 1 else '')}: "
            f"{good} of {len(ready)} concepts would be recalled on the day")
    low = sorted(ready, key=ready.get)[:weakest]
    tail = "Weakest: " + " · ".join(f"{CONCEPT_TITLES.get(c, c)} {ready[c]:.0%}" for c in low
                                    if ready[c] < DESIRED_RETENTION)
    return [head + "."] + ([tail + " (drill picks these first)."] if tail != "Weakest: " else [])


def recall_by_concept(profile: Any, now: _dt.datetime, tz: _dt.tzinfo | None = None) -> tuple[str, list[Recall]]:
    """A heading and each concept's chance of recall on the exam's morning (with an exam date)
    or now: the same cards as home and `ridge drill plan`."""
    cards = profile_cards(profile)
    exam = _exam_date(profile, now, tz)
    when = exam_moment(exam, tz) if exam else now
    heading = f"Chance of recall on the exam's morning, {exam.isoformat()}" if exam else "Chance of recall now"
    rows = []
    for concept in CONCEPTS:
        card = cards.get(concept)
        rows.append(Recall(CONCEPT_TITLES.get(concept, concept), retrievability(card, when),
                           recall_words(card, when, now)))
    return heading + " (every drill, campaign, exam and match answer counts)", rows


def recall_now(profile: Any) -> dict[str, float | None]:
    """Each concept's chance of recall now, rounded for `ridge stats --json`; None for a concept
    never answered."""
    cards = profile_cards(profile)
    now = _dt.datetime.now(_dt.timezone.utc)
    return {c: (round(retrievability(cards[c], now), 4) if c in cards and cards[c].last_review else None)
            for c in CONCEPTS}
