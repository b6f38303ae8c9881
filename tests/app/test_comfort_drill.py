"""The drill's comfort: Anki-style counts and freezes before a round, Escape pausing the clock,
"review what I missed" after it, and an exam date that plans the reviews (headless and on screen)."""
from __future__ import annotations

import datetime as dt

from textual.widgets import Input

from app.game import make_app
from app.screens.dialogs import ConfirmDialog
from app.screens.drill import EXAM_SETTING, DrillScreen
from app.screens.rounds import Countdown
from helpers.pilot import settle, until
from puzzles import review
from puzzles.streak import streak_from_days
from saves.store import SaveStore

NOW = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.timezone.utc)
UTC = dt.timezone.utc


def _app(tmp_path, **drill):
    return make_app(solo=lambda: DrillScreen(seed=7, difficulty=1, tz=UTC, **drill), save_dir=tmp_path,
                    profile="Ada", clock=lambda: NOW, strict=True, cursor_blink=False)


def test_counts_split_due_new_and_learning():
    learned = review.review(review.new_card("batching", NOW), "cleared", NOW)
    relearn = review.review(review.new_card("kv-cache", NOW), "missed", NOW)
    cards = {"batching": learned, "kv-cache": relearn}
    later = NOW + dt.timedelta(days=60)
    assert review.counts(["batching", "kv-cache", "intensity"], cards, NOW) == review.Counts(0, 1, 1)
    assert review.counts(["batching", "kv-cache", "intensity"], cards, later).due == 1


def test_freezes_are_described_from_the_first_day():
    first = streak_from_days([NOW.date()], NOW.date())
    assert "No freezes banked" in first.freeze_note() and "6 more days" in first.freeze_note()
    week = streak_from_days([NOW.date() - dt.timedelta(days=d) for d in range(7)], NOW.date())
    assert "1 freeze banked" in week.freeze_note()


def test_an_exam_plan_covers_every_weak_concept_before_the_day():
    concepts = ["batching", "kv-cache", "intensity"]
    strong = review.review(review.new_card("batching", NOW - dt.timedelta(days=3)), "cleared",
                           NOW - dt.timedelta(days=3))
    cards = {"batching": strong}
    plan = review.exam_plan(concepts, cards, NOW, NOW.date() + dt.timedelta(days=2), UTC)
    assert set(plan.to_review) >= {"kv-cache", "intensity"} and plan.days_left == 2
    assert plan.per_day * plan.days_left >= len(plan.to_review)  # all seen before the day
    order = review.exam_order(concepts, cards, NOW, NOW.date() + dt.timedelta(days=2), UTC)
    assert order[:len(plan.to_review)] == list(plan.to_review) and sorted(order) == sorted(concepts)
    ready = review.readiness(concepts, cards, NOW.date() + dt.timedelta(days=2), UTC)
    assert ready["intensity"] == 0.0 and 0.0 < ready["batching"] <= 1.0


async def test_setup_shows_counts_freezes_and_the_exam_plan(tmp_path):
    SaveStore(tmp_path).create_profile("Ada")
    async with _app(tmp_path, length=1).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        today = str(screen.query_one("#drill-today").render())
        assert "Due 0 · New" in today and "Learning 0" in today and "No freezes banked" in today
        screen.query_one("#exam-date", Input).value = "2026-03-09"
        await until(pilot, lambda: "Exam 2026-03-09 (7 days left)" in str(screen.query_one("#drill-today").render()),
                    "the exam plan")
        await settle(pilot, "s")
        assert screen.phase == "question"
    assert SaveStore(tmp_path).load("Ada").settings[EXAM_SETTING] == "2026-03-09"


async def test_enter_in_the_exam_date_starts_the_round(tmp_path):
    """Typed keyboard-only: the date, then Enter (s would be typed into the field)."""
    SaveStore(tmp_path).create_profile("Ada")
    async with _app(tmp_path, length=1).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        screen.query_one("#exam-date", Input).focus()
        await settle(pilot, *"2026-03-09")
        await settle(pilot, "enter")
        await until(pilot, lambda: screen.phase == "question", "the round to start")
    assert SaveStore(tmp_path).load("Ada").settings[EXAM_SETTING] == "2026-03-09"


async def test_escape_pauses_the_clock_and_stay_resumes_it(tmp_path):
    async with _app(tmp_path, length=1, seconds=90).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await settle(pilot, "s")
        screen = pilot.app.screen
        clock = screen.query_one(Countdown)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), "the leave dialog")
        assert clock.paused_at is not None
        held = clock.left
        await pilot.pause()
        assert clock.left == held  # no time runs while the dialog asks
        await pilot.press("n")
        await until(pilot, lambda: pilot.app.screen is screen, "back to the question")
        assert clock.paused_at is None and screen.phase == "question"


async def test_review_what_i_missed_drills_the_missed_concepts_on_new_puzzles(tmp_path):
    async with _app(tmp_path, length=2).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await settle(pilot, "s")
        screen = pilot.app.screen
        first_round = []
        for _ in range(2):
            first_round.append(screen.planned[screen.position])
            await screen.time_up()  # nothing filled in: missed
            await settle(pilot, "n")
        assert screen.phase == "summary" and screen.query("#review-missed")
        missed = screen.missed()
        await settle(pilot, "r")
        assert screen.phase == "question"
        assert [p.concept for p in screen.planned] == missed[:len(screen.planned)]
        assert not {p.item.puzzle.id for p in screen.planned} & {p.item.puzzle.id for p in first_round}


async def test_home_shows_readiness_per_concept_for_an_exam_date(tmp_path):
    from helpers.screen import screen_lines

    store = SaveStore(tmp_path)
    store.create_profile("Ada")
    store.update_settings("Ada", **{EXAM_SETTING: "2026-03-09"})
    app = make_app(save_dir=tmp_path, profile="Ada", clock=lambda: NOW, strict=True, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "Exam 2026-03-09, in 7 days: 0 of 18 concepts would be recalled on the day." in text
        assert "Weakest:" in text and "0%" in text


def test_drill_plan_until_a_date_from_the_command_line(tmp_path, capsys):
    from app.cli import main

    SaveStore(tmp_path).create_profile("Ada")
    until = (dt.date.today() + dt.timedelta(days=5)).isoformat()
    header = SaveStore(tmp_path).header_path("Ada")
    before = header.read_bytes()
    assert main(["drill", "plan", "--until", until, "--profile", "Ada", "--save-dir", str(tmp_path)]) == 0
    assert header.read_bytes() == before  # planning only prints; --save stores the date
    capsys.readouterr()
    assert main(["drill", "plan", "--until", until, "--profile", "Ada", "--save-dir", str(tmp_path), "--json",
                 "--save"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["days_left"] == 5 and len(out["to_review"]) == 18 and out["per_day"] == 4
    assert SaveStore(tmp_path).load("Ada").settings[EXAM_SETTING] == until
    assert main(["drill", "plan", "--until", "2001-01-01", "--save-dir", str(tmp_path)]) == 2
    assert main(["drill", "plan", "--save-dir", str(tmp_path)]) == 0  # the saved date
    assert "18 concepts to see or recall" in capsys.readouterr().out


async def test_b_reads_the_brief_in_a_drill_question(tmp_path):
    async with _app(tmp_path, length=1).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await settle(pilot, "s")
        screen = pilot.app.screen
        brief = screen.query_one("#item-brief")
        await settle(pilot, "b")
        assert pilot.app.focused is brief
        await settle(pilot, "b")
        assert brief.scroll_y > 0
        await settle(pilot, "a")
        assert pilot.app.focused is not brief
