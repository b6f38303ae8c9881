"""The drill's pure logic with fixed clocks and seeds: the FSRS schedule after a run of grades,
the daily cap, streaks across local midnight and with freezes, and round planning."""
from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from fsrs import Rating, State

from puzzles import drill, review, streak
from puzzles.grading import grade, objective_bottleneck
from puzzles.questions import NAPKIN_IDS, make_item
from saves.store import SaveStore

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LA = ZoneInfo("America/Los_Angeles")


def judge(item, prediction):
    """The one grader, with what the item asks."""
    return grade(item.puzzle, item.key, prediction, **item.asks)


def _attempt(when: dt.datetime, mode: str = "drill"):
    return SimpleNamespace(mode=mode, locked_at=when)


# --- spaced repetition ------------------------------------------------------------------------

def test_the_grade_sets_the_rating():
    assert review.rating_for("cleared") is Rating.Good
    for outcome in ("lucky", "close", "missed"):
        assert review.rating_for(outcome) is Rating.Again


def test_schedule_after_a_sequence_of_grades():
    """Each review happens when the card falls due; the pinned weights make this exact."""
    card = review.new_card("kv-cache", T0)
    steps = [("cleared", T0), ("cleared", None), ("missed", None), ("cleared", None), ("lucky", None),
             ("cleared", None)]
    seen = []
    for outcome, when in steps:
        when = when or card.due
        card = review.review(card, outcome, when)
        seen.append((card.state, card.due - when))
    minute, day = dt.timedelta(minutes=1), dt.timedelta(days=1)
    assert seen == [
        (State.Review, 2 * day),           # cleared at first sight: straight to review
        (State.Review, 11 * day),          # cleared again: the gap grows
        (State.Relearning, 10 * minute),   # a miss brings it back within the hour
        (State.Review, 2 * day),           # relearnt, with less stability than before
        (State.Relearning, 10 * minute),   # lucky is not cleared: Again
        (State.Review, 1 * day),
    ]
    assert card.due == dt.datetime(2026, 3, 18, 9, 20, tzinfo=UTC)
    assert card.stability == pytest.approx(0.4970, abs=1e-4)
    assert card.difficulty == pytest.approx(9.1102, abs=1e-4)
    missed_first = review.review(review.new_card("kv-cache", T0), "missed", T0)
    assert (missed_first.state, missed_first.due - T0) == (State.Learning, 10 * minute)


def test_cards_survive_the_save_file(tmp_path):
    """None values are dropped for TOML and restored on reading; the schedule carries on the same."""
    store = SaveStore(tmp_path)
    card = review.review(review.new_card("napkin-cost", T0), "cleared", T0)
    store.save_review_state("Ada", "napkin-cost", review.card_dict(card))
    back = review.load_cards(store.load("Ada").review_cards())["napkin-cost"]
    assert back.to_dict() == card.to_dict()
    later = T0 + dt.timedelta(days=2)
    assert review.review(back, "cleared", later).to_dict() == review.review(card, "cleared", later).to_dict()


def test_due_concepts_come_first():
    cards = {
        "kv-cache": review.review(review.new_card("kv-cache", T0), "missed", T0),          # due 09:10
        "batching": review.review(review.new_card("batching", T0), "close", T0 - dt.timedelta(hours=1)),
        "intensity": review.review(review.new_card("intensity", T0), "cleared", T0),        # due in 2 days
    }
    now = T0 + dt.timedelta(minutes=30)
    order = review.due_order(["two-phases", "intensity", "kv-cache", "batching"], cards, now)
    # batching fell due at 08:10, kv-cache at 09:10; two-phases is new; intensity is not due yet
    assert order == ["batching", "kv-cache", "two-phases", "intensity"]
    assert review.due_count(order, cards, now) == 3
    assert review.describe_due(cards["intensity"], now) == "in 2 days"


def test_daily_cap_counts_local_days():
    # 20 drill answers on 2 March in Los Angeles; one in another mode does not count
    day = dt.datetime(2026, 3, 2, 8, 0, tzinfo=LA)
    attempts = [_attempt(day + dt.timedelta(minutes=10 * i)) for i in range(20)]
    attempts.append(_attempt(day, mode="campaign"))
    now = dt.datetime(2026, 3, 2, 23, 30, tzinfo=LA)  # 07:30 UTC on 3 March: still 2 March locally
    status = review.cap_status(attempts, now, LA)
    assert (status.done, status.left, status.reached) == (20, 0, True)
    assert "wait until tomorrow" in status.describe(waiting=4)
    card = review.new_card("batching", now)
    assert review.schedule(card, "batching", "cleared", now, status.done) is None  # past the cap: unchanged
    tomorrow = dt.datetime(2026, 3, 3, 0, 5, tzinfo=LA)
    fresh = review.cap_status(attempts, tomorrow, LA)
    assert (fresh.done, fresh.left) == (0, review.DAILY_CAP)
    assert review.schedule(card, "batching", "cleared", tomorrow, fresh.done) is not None
    # the same answers seen from UTC fall on two different days
    assert review.cap_status(attempts, now, UTC).done < 20


# --- streaks ----------------------------------------------------------------------------------

def _days(*offsets: int, start=dt.date(2026, 3, 1)) -> set[dt.date]:
    return {start + dt.timedelta(days=o) for o in offsets}


def test_streak_across_local_midnight():
    """23:50 and 00:10 Los Angeles time are two local days (and one UTC day)."""
    late = dt.datetime(2026, 3, 2, 23, 50, tzinfo=LA)
    early = dt.datetime(2026, 3, 3, 0, 10, tzinfo=LA)
    attempts = [_attempt(late), _attempt(early)]
    assert late.astimezone(UTC).date() == early.astimezone(UTC).date()
    local = streak.streak_for(attempts, early + dt.timedelta(hours=1), LA)
    assert (local.days, local.active_today) == (2, True)
    utc = streak.streak_for(attempts, early + dt.timedelta(hours=1), UTC)
    assert utc.days == 1


def test_today_does_not_break_a_streak_but_yesterday_does():
    start = dt.date(2026, 3, 1)
    s = streak.streak_from_days(_days(0, 1, 2), start + dt.timedelta(days=3))
    assert (s.days, s.active_today, s.at_risk) == (3, False, True)
    gone = streak.streak_from_days(_days(0, 1, 2), start + dt.timedelta(days=4))
    assert gone.days == 0 and gone.longest == 3


def test_a_freeze_protects_but_does_not_extend():
    # seven days earn a freeze; day 8 is missed and covered; days 9-10 carry on
    s = streak.streak_from_days(_days(*range(7), 8, 9), dt.date(2026, 3, 10))
    assert s.days == 9               # 7 + 2: the frozen day adds nothing
    assert s.frozen_days == (dt.date(2026, 3, 8),)
    assert s.freezes == 0
    # without the seven-day run there is no freeze, and the gap resets the streak
    short = streak.streak_from_days(_days(*range(6), 7, 8), dt.date(2026, 3, 9))
    assert short.days == 2 and short.frozen_days == ()


def test_freezes_bank_up_to_two_and_two_misses_need_two():
    s = streak.streak_from_days(_days(*range(21)), dt.date(2026, 3, 21))
    assert (s.days, s.freezes) == (21, streak.MAX_FREEZES)   # 7, 14, 21 earned; at most two kept
    covered = streak.streak_from_days(_days(*range(14), 16), dt.date(2026, 3, 17))
    assert (covered.days, covered.freezes) == (15, 0)        # two missed days, two freezes spent
    broken = streak.streak_from_days(_days(*range(7), 10), dt.date(2026, 3, 11))
    assert broken.days == 1                                   # one freeze, two missed days


# --- planning and judging ---------------------------------------------------------------------

def test_round_is_deterministic_and_follows_the_order():
    order = ["napkin-concurrency", "kv-cache", "batching", "napkin-spec", "prefix-caching"]
    first = drill.plan_round(order, 2, seed=11, length=5)
    again = drill.plan_round(order, 2, seed=11, length=5)
    assert [p.item.puzzle.id for p in first] == [p.item.puzzle.id for p in again]
    assert [p.concept for p in first] == order
    assert len({p.item.puzzle.id for p in first}) == 5
    for planned in first:
        if planned.concept in NAPKIN_IDS:
            assert planned.item.napkin == planned.concept
        else:
            assert planned.concept == drill.deciding_concept(planned.item.key)
    spec = first[3].item
    assert spec.puzzle.estimates == () and spec.spec_helps is not None
    assert first[0].item.puzzle.estimates == ("max_concurrency",)


def test_unreachable_concepts_are_skipped():
    assert "two-phases" not in drill.reachable(1)
    assert "two-phases" in drill.reachable(3)
    planned = drill.plan_round(["two-phases", "batching"], 1, seed=3, length=2)
    assert [p.concept for p in planned] == ["batching", "batching"]


def _right(item) -> dict:
    key = item.key
    p = {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain_band": key.gain_band,
         "reason": key.reason, "certainty": "medium",
         "estimates": {n: key.estimates[n] for n in item.puzzle.estimates}}
    if item.question is not None and item.question.yes_no:
        p["spec_helps"] = "yes" if item.spec_helps else "no"
    return p


def test_judging_blanks_after_the_time_runs_out():
    planned = drill.plan_round(["napkin-spec"], 1, seed=5, length=1)[0]
    item = planned.item
    full = judge(item, _right(item))
    assert (full.outcome, full.points) == ("cleared", 20)
    partial = _right(item)
    partial.pop("spec_helps")
    partial["certainty"] = ""
    graded = judge(item, partial)
    assert graded.outcome == "lucky" and graded.certainty == "low"   # the yes/no is part of the reason
    assert set(graded.blanks) == {"spec_helps", "certainty"}
    empty = judge(item, {})
    assert empty.outcome == "missed" and empty.points == 0


def test_estimates_are_judged_within_a_factor_of_one_and_a_half():
    planned = drill.plan_round(["napkin-concurrency"], 2, seed=5, length=1)[0]
    item = planned.item
    truth = item.key.estimates["max_concurrency"]
    inside, outside = _right(item), _right(item)
    inside["estimates"] = {"max_concurrency": truth * 1.45}
    outside["estimates"] = {"max_concurrency": truth * 1.6}
    assert judge(item, inside).outcome == "cleared"
    assert judge(item, outside).outcome == "lucky"
    assert make_item(item.puzzle, item.key).napkin is None


def test_a_review_is_tagged_with_the_concept_that_decided_the_key():
    """A batching answer (verdict decode-compute, best lever batching) reviews batching, not the
    arithmetic intensity its verdict names; a quantization answer reviews quantization; only a
    lever without a concept of its own (more GPUs) leaves it to the verdict."""
    planned_round = drill.plan_round(list(drill.MODULE_CONCEPTS), 4, seed=3, length=10)
    assert "quantization" in {p.concept for p in planned_round}
    for planned in planned_round:
        key = planned.item.key
        assert planned.concept == drill.deciding_concept(key)
        if planned.item.puzzle.load is not None:   # a generated load puzzle reviews its chapter
            assert planned.concept in drill.LOAD_CHAPTERS
            continue
        if key.best_lever in drill.LEVER_CONCEPT:
            assert planned.concept == drill.LEVER_CONCEPT[key.best_lever]
        else:
            assert planned.concept == drill.VERDICT_CONCEPT[objective_bottleneck(key)]


def test_quantization_can_be_drilled_at_every_difficulty():
    for difficulty in (1, 2, 3, 4, 5):
        assert "quantization" in drill.reachable(difficulty)
    [planned] = drill.plan_round(["quantization"], 1, seed=8, length=1)
    assert planned.concept == "quantization" and planned.item.key.best_lever == "quantization"
