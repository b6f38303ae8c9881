"""Spaced repetition for drills: one FSRS card per concept, rated by the grade, with a daily cap.

The player never rates themselves: a cleared answer is `Good`, anything else (lucky, close,
missed) is `Again`. The scheduler's parameters are fixed here, fuzzing is off, and every function
takes the clock as an argument, so a schedule can be replayed exactly.

The daily cap keeps a missed week from turning into a wall: at most `DAILY_CAP` drill answers a
local day move the schedule. Past the cap a drill still grades and records answers, but due cards
wait for tomorrow. How many reviews a day holds is counted from the recorded drill attempts, never
from a stored counter. Cards are stored with `SaveStore.save_review_state` (None values dropped)
and read back with `Profile.review_cards` (None values restored). Imports no Textual.
"""
from __future__ import annotations

import datetime as _dt
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fsrs import Card, Rating, Scheduler, State

DAILY_CAP = 20
DESIRED_RETENTION = 0.9
MAX_INTERVAL_DAYS = 365
LEARNING_STEPS = (_dt.timedelta(minutes=10),)
RELEARNING_STEPS = (_dt.timedelta(minutes=10),)
# The FSRS-6 default weights, pinned so a new fsrs release cannot move a player's schedule.
PARAMETERS = (0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
              1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542)
DRILL_MODE = "drill"


def scheduler() -> Scheduler:
    """The one scheduler Ridge uses: fixed weights, no fuzzing, so schedules are reproducible."""
    return Scheduler(parameters=PARAMETERS, desired_retention=DESIRED_RETENTION,
                     learning_steps=LEARNING_STEPS, relearning_steps=RELEARNING_STEPS,
                     maximum_interval=MAX_INTERVAL_DAYS, enable_fuzzing=False)


def rating_for(outcome: str) -> Rating:
    """The grade decides: cleared is Good; lucky, close and missed are Again."""
    return Rating.Good if outcome == "cleared" else Rating.Again


def _utc(moment: _dt.datetime) -> _dt.datetime:
    if moment.tzinfo is None:
        raise ValueError("review times need a timezone")
    return moment.astimezone(_dt.timezone.utc)


def new_card(concept_id: str, now: _dt.datetime) -> Card:
    """A never-reviewed card for `concept_id`, due at `now`; its id is stable per concept."""
    return Card(card_id=zlib.crc32(concept_id.encode("utf-8")) or 1, due=_utc(now))


def load_cards(stored: Mapping[str, Mapping[str, Any]]) -> dict[str, Card]:
    """Cards from `Profile.review_cards()`; a card that no longer parses is left out (the concept
    then starts afresh, which is safer than guessing a schedule)."""
    cards: dict[str, Card] = {}
    for concept, data in stored.items():
        try:
            cards[concept] = Card.from_dict(dict(data))  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError):
            continue
    return cards


def card_dict(card: Card) -> dict[str, Any]:
    """What `SaveStore.save_review_state` stores for a card."""
    return card.to_dict()


def review(card: Card, outcome: str, when: _dt.datetime) -> Card:
    """The card after one graded answer at `when`."""
    updated, _log = scheduler().review_card(card, rating_for(outcome), review_datetime=_utc(when))
    return updated


def is_due(card: Card | None, now: _dt.datetime) -> bool:
    """True for a card never reviewed, or one whose due time has come."""
    return card is None or card.last_review is None or card.due <= _utc(now)


def due_order(concepts: Iterable[str], cards: Mapping[str, Card], now: _dt.datetime) -> list[str]:
    """`concepts` in the order a drill should take them: reviewed cards that are due (most overdue
    first), then concepts never reviewed (in the order given), then the rest by when they fall due."""
    concepts = list(dict.fromkeys(concepts))
    now = _utc(now)
    seen = [c for c in concepts if c in cards and cards[c].last_review is not None]
    due = sorted((c for c in seen if cards[c].due <= now), key=lambda c: (cards[c].due, concepts.index(c)))
    fresh = [c for c in concepts if c not in seen]
    later = sorted((c for c in seen if cards[c].due > now), key=lambda c: (cards[c].due, concepts.index(c)))
    return due + fresh + later


def due_count(concepts: Iterable[str], cards: Mapping[str, Card], now: _dt.datetime) -> int:
    """How many of `concepts` are due now (never-reviewed ones included)."""
    return sum(1 for c in dict.fromkeys(concepts) if is_due(cards.get(c), now))


def local_date(moment: _dt.datetime, tz: _dt.tzinfo | None) -> _dt.date:
    """The calendar date of `moment` in `tz` (the machine's zone when None)."""
    return (moment.astimezone(tz) if tz is not None else moment.astimezone()).date()


def reviews_on(attempts: Iterable[Any], day: _dt.date, tz: _dt.tzinfo | None) -> int:
    """Drill answers locked in on local `day`: each one counts as a review towards the cap."""
    return sum(1 for a in attempts
               if getattr(a, "mode", None) == DRILL_MODE and local_date(a.locked_at, tz) == day)


@dataclass(frozen=True)
class CapStatus:
    """Where today stands against the daily cap."""

    done: int
    cap: int

    @property
    def left(self) -> int:
        return max(0, self.cap - self.done)

    @property
    def reached(self) -> bool:
        return self.done >= self.cap

    def describe(self, waiting: int = 0) -> str:
        if not self.reached:
            return f"Reviews today: {self.done} of {self.cap}."
        wait = (f" {waiting} due concept{'s' if waiting != 1 else ''} wait until tomorrow."
                if waiting else "")
        return (f"Today's {self.cap} reviews are done.{wait} You can keep practising: answers are "
                "still graded and saved, but they do not move the schedule until tomorrow.")


def cap_status(attempts: Iterable[Any], now: _dt.datetime, tz: _dt.tzinfo | None = None,
               cap: int = DAILY_CAP) -> CapStatus:
    """Reviews used on today's local date (from the recorded drill attempts) against `cap`."""
    return CapStatus(reviews_on(attempts, local_date(now, tz), tz), cap)


def schedule(card: Card | None, concept_id: str, outcome: str, when: _dt.datetime,
             done_today: int, cap: int = DAILY_CAP) -> Card | None:
    """The card to store after a drill answer, or None when today's cap is already used up (the
    card then keeps its due time). `done_today` counts the reviews before this one."""
    if done_today >= cap:
        return None
    return review(card if card is not None else new_card(concept_id, when), outcome, when)


def describe_due(card: Card | None, now: _dt.datetime) -> str:
    """A few words on when a concept comes back: 'new', 'due now', 'in 3 days'."""
    if card is None or card.last_review is None:
        return "new"
    delta = card.due - _utc(now)
    if delta <= _dt.timedelta(0):
        return "due now"
    minutes = delta.total_seconds() / 60
    if minutes < 60:
        return f"in {max(1, round(minutes))} min"
    if minutes < 60 * 24:
        return f"in {round(minutes / 60)} h"
    days = round(minutes / 60 / 24)
    return f"in {days} day{'s' if days != 1 else ''}"


def learning(card: Card | None) -> bool:
    """True while a card is still in its first (or a relearning) step rather than in review."""
    return card is None or card.state in (State.Learning, State.Relearning)
