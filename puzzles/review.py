"""Spaced repetition for drills: one FSRS card per concept, rated by the grade, with a daily cap.

The player never rates themselves: a cleared answer is `Good`, anything else (lucky, close,
missed) is `Again`. A drill answer reviews the concept it was drilled for; an answer in the
campaign, an exam or a match is a recall too, of the concept that decided its key, folded in
from the history whenever cards are read (`player_cards`), so every screen sees one schedule. The scheduler's parameters are fixed here, fuzzing is off, and every function
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

from engine.ids import Outcome

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
    return Rating.Good if outcome == Outcome.CLEARED else Rating.Again


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


# Answers outside the drill that are recalls too: a puzzle someone else set, diagnosed before the
# engine showed its numbers. The simulator's are not (the player built that deployment).
RECALL_MODES = ("campaign", "cli", "exam", "hotseat", "match")


def recalled_concept(attempt: Any) -> str | None:
    """The concept an attempt recalled: the one that decided the key it was graded against
    (`puzzles.concepts.deciding_concept`, read from the key the attempt recorded)."""
    from puzzles.concepts import deciding_concept_of_pair

    key = getattr(attempt, "key", None)
    return deciding_concept_of_pair(key.bottleneck, key.best_lever) if key is not None else None


def player_cards(stored: Mapping[str, Mapping[str, Any]], attempts: Iterable[Any]) -> dict[str, Card]:
    """Each concept's card as every screen reads it: the card the drill stored, then every
    answer given since in another mode (`RECALL_MODES`), replayed in order: a clear is a
    recall of the concept that decided its key (Good), anything else is Again, as in a drill.

    Nothing is written: the drill stores a card from what this returns, so an answer folded in
    before a drill review is inside that card, and one after it is folded in from the history.
    Such answers are outside the daily cap, which counts drill answers. `attempts` are the
    profile's counted ones (hand-edited attempts never count), oldest first."""
    cards = load_cards(stored)
    folded = scheduler()
    for attempt in attempts:
        if getattr(attempt, "mode", None) not in RECALL_MODES:
            continue
        concept = recalled_concept(attempt)
        if concept is None:
            continue
        when = _utc(attempt.locked_at)
        card = cards.get(concept)
        if card is not None and card.last_review is not None and when <= card.last_review:
            continue  # already in the card the drill stored
        card = card if card is not None else new_card(concept, when)
        cards[concept], _log = folded.review_card(card, rating_for(attempt.outcome), review_datetime=when)
    return cards


def profile_cards(profile: Any) -> dict[str, Card]:
    """`player_cards` for a loaded profile (`saves.model.Profile`); {} for none."""
    if profile is None:
        return {}
    return player_cards(profile.review_cards(), profile.counted_attempts())


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


# --- counts, readiness and an exam date -------------------------------------------------------

@dataclass(frozen=True)
class Counts:
    """What a round would meet, as Anki counts it: cards due for review, concepts never seen,
    and cards still in their (re)learning steps."""

    due: int
    new: int
    learning: int

    def describe(self) -> str:
        return f"Due {self.due} · New {self.new} · Learning {self.learning}"


def counts(concepts: Iterable[str], cards: Mapping[str, Card], now: _dt.datetime) -> Counts:
    """Due (reviewed, in review, its time come), new (never reviewed) and learning (in a
    learning or relearning step, whenever due) among `concepts`."""
    due = new = learning = 0
    for concept in dict.fromkeys(concepts):
        card = cards.get(concept)
        if card is None or card.last_review is None:
            new += 1
        elif card.state in (State.Learning, State.Relearning):
            learning += 1
        elif card.due <= _utc(now):
            due += 1
    return Counts(due, new, learning)


def retrievability(card: Card | None, when: _dt.datetime) -> float:
    """The chance that the concept is recalled at `when`, as every screen shows it and the exam
    plan counts it: 0 for one never reviewed, and 0 for one still in its (re)learning steps (its
    last answer was missed and the drill brings it back within minutes: it is not recalled yet;
    FSRS's own curve would say 100% right after the miss, beside a drill that says "in 10 min"),
    else FSRS's retrievability."""
    if card is None or card.last_review is None or learning(card):
        return 0.0
    return float(scheduler().get_card_retrievability(card, current_datetime=_utc(when)))


def recall_words(card: Card | None, when: _dt.datetime, now: _dt.datetime | None = None) -> str:
    """The chance of recall at `when` in words, saying what the drill says of the same card:
    "not seen", "due again in 9 min" while it is being relearnt (its last answer was not
    cleared), else a percentage."""
    if card is None or card.last_review is None:
        return "not seen"
    if learning(card):
        due = describe_due(card, now or when)
        return due if due == "due now" else f"due again {due}"
    return f"{retrievability(card, when):.0%}"


def exam_moment(exam: _dt.date, tz: _dt.tzinfo | None) -> _dt.datetime:
    """The exam's morning (09:00 local): the moment a concept must still be recalled."""
    zone = tz or _dt.datetime.now().astimezone().tzinfo
    return _dt.datetime.combine(exam, _dt.time(9, 0), tzinfo=zone)


def readiness(concepts: Iterable[str], cards: Mapping[str, Card], exam: _dt.date,
              tz: _dt.tzinfo | None = None) -> dict[str, float]:
    """Each concept's retrievability on the exam's morning, if nothing more were reviewed."""
    when = exam_moment(exam, tz)
    return {c: retrievability(cards.get(c), when) for c in dict.fromkeys(concepts)}


@dataclass(frozen=True)
class ExamPlan:
    """Reviews planned toward an exam: the days left before it, the concepts that would not be
    recalled on the day (never seen, or retrievability below the target), lowest first, and how
    many reviews a day see them all in time."""

    exam: _dt.date
    days_left: int
    to_review: tuple[str, ...]
    per_day: int

    def describe(self) -> str:
        when = f"{self.exam.isoformat()} ({self.days_left} day{'s' if self.days_left != 1 else ''} left)"
        if not self.to_review:
            return f"Exam {when}: every concept would be recalled on the day."
        count = len(self.to_review)
        return (f"Exam {when}: {count} concept{'s' if count != 1 else ''} to see or recall before then, "
                f"about {self.per_day} a day.")


def exam_plan(concepts: Iterable[str], cards: Mapping[str, Card], now: _dt.datetime, exam: _dt.date,
              tz: _dt.tzinfo | None = None, target: float = DESIRED_RETENTION) -> ExamPlan:
    """Which concepts need a review before `exam` so each is seen and recalled on the day, and
    how to spread them: never-seen ones and those whose retrievability on the exam's morning
    falls below `target`, weakest first, over the days left (today included)."""
    days_left = max(0, (exam - local_date(now, tz)).days)
    ready = readiness(concepts, cards, exam, tz)
    weak = sorted((c for c, r in ready.items() if r < target), key=lambda c: (ready[c], list(ready).index(c)))
    per_day = -(-len(weak) // max(1, days_left)) if weak else 0
    return ExamPlan(exam, days_left, tuple(weak), per_day)


def exam_order(concepts: Iterable[str], cards: Mapping[str, Card], now: _dt.datetime, exam: _dt.date,
               tz: _dt.tzinfo | None = None) -> list[str]:
    """The order a drill takes concepts with an exam ahead: those the exam would find weak
    (weakest first), then the rest as `due_order` has them."""
    weak = list(exam_plan(concepts, cards, now, exam, tz).to_review)
    return weak + [c for c in due_order(concepts, cards, now) if c not in weak]


def parse_exam_date(text: str, today: _dt.date) -> _dt.date | None:
    """A typed exam date (YYYY-MM-DD) that is today or later; None for an empty one; ValueError
    with a one-line reason otherwise."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        day = _dt.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"the exam date must look like 2026-03-09, got {text!r}") from None
    if day < today:
        raise ValueError(f"the exam date {day.isoformat()} has passed")
    return day
