"""The drill's lock-in without Textual (`puzzles.drill`): the seconds an answer is recorded with,
and what the answer does to its concept's card and the line the reveal says about it."""
from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from engine.ids import Module, Outcome
from puzzles import review
from puzzles.drill import UNCHANGED, review_answer, seconds_counted

NOW = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone.utc)
UTC = dt.timezone.utc


def test_a_timed_out_answer_counts_the_whole_limit_and_no_answer_more():
    assert seconds_counted(12.5, 90, timed_out=False) == 12.5
    assert seconds_counted(93.0, 90, timed_out=False) == 90  # a lock-in as the clock hit zero
    assert seconds_counted(3.0, 90, timed_out=True) == 90.0


def test_a_clear_spaces_the_next_review_further_than_a_miss():
    cleared = review_answer(None, Module.BATCHING, Outcome.CLEARED, NOW, (), UTC)
    missed = review_answer(None, Module.BATCHING, Outcome.MISSED, NOW, (), UTC)
    assert cleared.card is not None and missed.card is not None
    assert cleared.card.due > missed.card.due
    assert cleared.next_review == review.describe_due(cleared.card, NOW) != UNCHANGED
    assert cleared.note.startswith("Batching: next review ") and "cleared" in cleared.note
    assert "comes back soon" in missed.note


def test_once_todays_reviews_are_used_up_the_card_keeps_its_place():
    today = [SimpleNamespace(mode=review.DRILL_MODE, locked_at=NOW - dt.timedelta(minutes=m))
             for m in range(review.DAILY_CAP)]
    card = review_answer(None, Module.KV_CACHE, Outcome.CLEARED, NOW, (), UTC).card
    capped = review_answer(card, Module.KV_CACHE, Outcome.MISSED, NOW, today, UTC)
    assert (capped.card, capped.next_review) == (None, UNCHANGED)
    assert "used up" in capped.note and "the KV cache budget" in capped.note
    yesterday = [SimpleNamespace(mode=a.mode, locked_at=a.locked_at - dt.timedelta(days=1)) for a in today]
    assert review_answer(card, Module.KV_CACHE, Outcome.MISSED, NOW, yesterday, UTC).card is not None


def test_reviewing_the_missed_asks_each_missed_concept_once_on_a_new_puzzle():
    from puzzles.drill import Answered, missed_concepts, plan_review, plan_round, reachable

    concepts = list(reachable(1)[:3])  # three concepts a first-level round can ask
    round_ = plan_round(concepts, 1, seed=3, length=3)
    outcomes = (Outcome.MISSED, Outcome.CLEARED, Outcome.CLOSE)
    answered = [Answered(p.concept, p.item.puzzle.id, o, 0, UNCHANGED, False) for p, o in zip(round_, outcomes)]
    missed = missed_concepts(answered + answered[:1])  # the same concept missed twice is asked once
    assert missed == [round_[0].concept, round_[2].concept]
    review_round = plan_review(answered, 1, seed=3)
    assert [p.concept for p in review_round] == missed
    assert not {p.item.puzzle.id for p in review_round} & {a.puzzle_id for a in answered}
    assert plan_review(answered, 1, seed=3) == review_round  # the same seed, the same review
