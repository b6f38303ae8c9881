"""One lock-in guard for every timed mode (`ModeScreen.claim_lock`): a second lock of the same
question — a racing countdown, a second confirmation — grades and records nothing; and the
campaign's reveal is built from the `PredictionLocked` message itself."""
from __future__ import annotations

import asyncio
import datetime as dt

from app.game import make_app
from app.messages import PredictionLocked
from app.screens.drill import DrillScreen
from app.screens.exam import ExamScreen
from app.screens.hotseat import HotseatScreen
from app.screens.reveal import RevealScreen
from app.screens.rounds import ModeScreen
from helpers.forms import fill
from helpers.pilot import settled
from saves.store import SaveStore

NOW = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.timezone.utc)


def test_every_timed_mode_uses_the_one_guard():
    for screen in (DrillScreen, ExamScreen, HotseatScreen):
        assert issubclass(screen, ModeScreen)
        assert "claim_lock" not in vars(screen) and "lock_open" not in vars(screen)


def _mode(tmp_path, screen):
    return make_app(solo=screen, save_dir=tmp_path, profile="Ada", clock=lambda: NOW, strict=True, cursor_blink=False)


async def _first_question(pilot):
    """Start the mode's round (s) and wait for its first question."""
    await settled(pilot)
    await pilot.press("s")
    await settled(pilot)
    assert pilot.app.screen.phase == "question" and pilot.app.screen.lock_open
    return pilot.app.screen


async def test_a_second_lock_of_the_same_exam_question_records_nothing(tmp_path):
    async with _mode(tmp_path, lambda: ExamScreen(seed=42, length=2, tz=dt.timezone.utc)).run_test(size=(80, 24)) as pilot:
        screen = await _first_question(pilot)
        await fill(pilot, screen, screen.items[0], certainty="high")
        await asyncio.gather(screen.lock_answer(), screen.lock_answer())  # a double press
        await settled(pilot)
        assert screen.position == 1 and screen.phase == "question"  # one step on, not two
    attempts = SaveStore(tmp_path).load("Ada").attempts
    assert [a.mode for a in attempts] == ["exam"]


async def test_the_drill_clock_running_out_after_a_lock_in_records_nothing_more(tmp_path):
    drill = _mode(tmp_path, lambda: DrillScreen(seed=7, length=2, difficulty=1, tz=dt.timezone.utc))
    async with drill.run_test(size=(80, 24)) as pilot:
        screen = await _first_question(pilot)
        await fill(pilot, screen, screen.planned[0].item)
        await screen.lock_answer(timed_out=False)
        assert screen.phase == "reveal" and not screen.lock_open
        await screen.time_up()  # the countdown firing late
        await screen.lock_answer(timed_out=True)
        await settled(pilot)
        assert len(screen.answered) == 1
    assert len(SaveStore(tmp_path).load("Ada").attempts) == 1


def test_hot_seat_asks_in_the_players_name():
    screen = HotseatScreen(players=["Ada", "Bo"])
    screen.players, screen.turn = ["Ada", "Bo"], 1
    assert screen.lock_title() == "Lock in Bo's answer?"
    assert ModeScreen.lock_title(screen) == "Lock in this answer?"


def test_the_reveal_takes_the_locked_message():
    locked = PredictionLocked(puzzle="p", prediction={"certainty": "low"}, key="k", grade="g", hints_used=1)
    screen = RevealScreen(locked)
    assert screen.locked is locked
