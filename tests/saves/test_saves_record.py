"""One way to record a graded answer (`saves.record.record_graded`), used by every mode: the
campaign's session, the timed rounds and `ridge answer` store the same prediction and key for the
same grade, differing only in the mode, and a refusal is the store's one line."""
from __future__ import annotations

import datetime as dt

import pytest

from puzzles import bank
from puzzles.chapters import Bank
from puzzles.grading import grade, objective_bottleneck
from saves.errors import SaveError
from saves.record import record_graded
from saves.session import Session
from saves.store import SaveStore

WHEN = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone.utc)


def _graded(answer: dict | None = None):
    puzzle = bank.in_module(bank.chapters()[0].id)[0]  # the course's first puzzle
    return puzzle, grade(puzzle, bank.key(puzzle), answer or {"certainty": "low"}, strict=False)


def test_a_new_player_is_created_and_the_attempt_is_what_was_graded(tmp_path):
    store = SaveStore(tmp_path)
    puzzle, graded = _graded()
    stored = record_graded(store, "Ada", puzzle, graded, mode="drill", locked_at=WHEN, seconds=12.34567)
    assert (stored.puzzle_id, stored.mode, stored.outcome) == (puzzle.id, "drill", str(graded.outcome))
    assert stored.seconds_taken == pytest.approx(12.346) and stored.hints_used == 0
    assert [a.seq for a in store.load("Ada").attempts] == [stored.seq]


def test_the_campaign_and_a_round_record_the_same_answer_alike(tmp_path):
    store = SaveStore(tmp_path)
    store.create_profile("Ada")
    puzzle, graded = _graded()
    session = Session(store, "Ada", Bank())
    by_campaign = session.record(puzzle, graded, 1, 30.0, WHEN)
    by_round = record_graded(store, "Ada", puzzle, graded, mode="exam", locked_at=WHEN, seconds=30.0)
    assert (by_campaign.mode, by_round.mode) == ("campaign", "exam")
    assert by_campaign.prediction == by_round.prediction and by_campaign.key == by_round.key
    assert (by_campaign.hints_used, by_round.hints_used) == (1, 0)


def test_a_cleared_campaign_answer_leaves_the_retry_queue(tmp_path):
    store = SaveStore(tmp_path)
    store.create_profile("Ada")
    session = Session(store, "Ada", Bank())
    puzzle, missed = _graded()
    session.record(puzzle, missed, 0, 30.0, WHEN)
    session.queue_retry(puzzle.id)
    assert session.retry_queue == [puzzle.id]
    key = bank.key(puzzle)
    right = {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain_band": key.gain_band,
             "reason": key.reason or "", "certainty": "high"}
    cleared = grade(puzzle, key, right, strict=False)
    assert str(cleared.outcome) == "cleared"
    session.record(puzzle, cleared, 0, 30.0, WHEN)
    assert session.retry_queue == [] and session.cleared(puzzle.id)


def test_a_refused_attempt_is_one_line_and_nothing_is_written(tmp_path):
    store = SaveStore(tmp_path)
    puzzle, graded = _graded()
    with pytest.raises(SaveError) as refused:
        record_graded(store, "../Ada", puzzle, graded, mode="drill", locked_at=WHEN)
    assert "\n" not in str(refused.value) and len(str(refused.value)) <= 300
    assert store.profiles() == []


def test_home_lines_follow_the_recorded_answers(tmp_path):
    """What the home screen shows, asked of the session: where Continue leads, and a box per
    puzzle that turns from not yet (·) to tried (□) to cleared (■)."""
    store = SaveStore(tmp_path)
    store.create_profile("Ada")
    session = Session(store, "Ada", Bank())
    first = session.chapters[0]
    assert session.next_text() == f"{session.puzzle(first.puzzle_ids[0]).title} (chapter {first.number})"
    before = session.chapter_lines(100)
    assert len(before) == len(session.chapters) + 1 and before[-1] == "■ cleared  □ tried  · not yet"
    assert before[0].startswith(f"·  {first.number}. ") and "□" not in before[0] and "■" not in before[0]
    puzzle, missed = _graded()
    session.record(puzzle, missed, 0, 30.0, WHEN)
    assert "□" in session.chapter_lines(100)[0]


def test_a_typed_name_finds_its_save_in_any_case_or_none(tmp_path):
    """What a mode's set-up asks of the store for a name typed there: the save under that name in
    any case, or None before the first answer is recorded."""
    store = SaveStore(tmp_path)
    assert not store.has_profile("Ada") and store.load_if_any("Ada") is None
    store.create_profile("Ada")
    assert store.has_profile("ADA") and store.load_if_any("ada").name == "Ada"
