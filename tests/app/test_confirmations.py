"""Every question Ridge asks before it acts (`app.screens.base.asking`: a worker awaiting Textual's
`push_screen_wait`), answered by the keys a player uses, both ways: what is on screen after, and
what is on disk. And an error after the answer is told, not the end of Ridge."""
from __future__ import annotations

import datetime as dt
import itertools

from app.screens.dialogs import ConfirmDialog
from app.screens.drill import DrillScreen
from app.screens.exam import ExamScreen
from app.screens.home import HomeScreen
from app.screens.hotseat import HotseatScreen
from app.screens.match import MatchScreen
from app.screens.puzzle import PuzzleScreen
from app.screens.rounds import Countdown
from helpers.forms import answer, fill, key_answer, lock_in
from helpers.pilot import burst, settle
from helpers.snapshots import build_app
from saves.locations import matches_dir, reports_dir
from saves.match import read_result, result_path
from saves.store import SaveStore

SIZE = (80, 24)
UTC = dt.timezone.utc


def ticking_app(save_dir):
    """The fixture app with a clock that moves a minute a reading, as a match's result file expects."""
    from app.game import make_app
    from puzzles.chapters import Bank
    from helpers.snapshots import FIXED_NOW, fixture_bank

    ticks = itertools.count()
    return make_app(save_dir=save_dir, profile="Ada", clock=lambda: FIXED_NOW + dt.timedelta(minutes=next(ticks)),
                    strict=True, cursor_blink=False, ready_exit=False, bank=Bank(fixture_bank()))


def asked(app, dialog_id: str) -> bool:
    return isinstance(app.screen, ConfirmDialog) and app.screen.id == dialog_id


def attempts(save_dir, name: str = "Ada") -> list:
    store = SaveStore(save_dir)
    return list(store.load(name).attempts) if store.has_profile(name) else []


async def opened(pilot, mode: str, make) -> object:
    """Open `mode` from home on the screen `make()` builds, and start its round with s."""
    await settle(pilot)
    pilot.app.open_mode(mode, make)
    await settle(pilot)
    screen = pilot.app.screen
    await settle(pilot, "s")
    return screen


async def begun_puzzle(pilot) -> PuzzleScreen:
    """Continue from home into the chapter's puzzle and fill its form with the key's answer."""
    await settle(pilot)
    await settle(pilot, "c", "s")
    puzzle = pilot.app.screen
    assert isinstance(puzzle, PuzzleScreen)
    await answer(pilot, key_answer(puzzle.puzzle.id) | {"estimates": {"intensity": "1"}})
    return puzzle


async def test_stopping_the_exam_asks_and_only_yes_writes_the_report(tmp_path):
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=SIZE) as pilot:
        exam = await opened(pilot, "exam", lambda: ExamScreen(seed=42, length=2, tz=UTC))
        assert exam.phase == "question"
        await fill(pilot, exam, exam.items[0], certainty="high")
        await lock_in(pilot)
        assert exam.position == 1 and exam.phase == "question"

        await settle(pilot, "escape")
        assert asked(app, "stop-exam")
        await settle(pilot, "n")  # go on
        assert app.screen is exam and exam.phase == "question" and exam.position == 1
        assert not reports_dir(tmp_path).exists()

        await settle(pilot, "escape")
        assert asked(app, "stop-exam")
        await settle(pilot, "y")  # stop and see the report
        assert app.screen is exam and exam.phase == "report"
        assert exam.result.length == 2 and exam.report_path is not None
        assert exam.report_path.parent == reports_dir(tmp_path) and exam.report_path.is_file()
    assert [a.mode for a in attempts(tmp_path)] == ["exam"]  # the question not locked in is not an attempt


async def test_a_match_played_again_is_practice_only_when_agreed(tmp_path):
    code = "R-42-1-1"
    app = ticking_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        match = await opened(pilot, "match", lambda: MatchScreen(code=code, player="Ada"))
        await fill(pilot, match, match.items[0], certainty="low")
        await lock_in(pilot)
        assert match.phase == "reveal" and match.writer is not None
        path = match.writer.path
        first_play = path.read_bytes()
        await settle(pilot, "n", "escape")  # the result, then leave
        assert isinstance(app.screen, HomeScreen)

        again = await opened(pilot, "match", lambda: MatchScreen(code=code, player="Ada"))
        assert asked(app, "replay-practice")
        await settle(pilot, "n")  # leave it
        assert app.screen is again and again.phase == "setup"

        await settle(pilot, "s")
        assert asked(app, "replay-practice")
        await settle(pilot, "y")  # practise
        assert app.screen is again and again.phase == "question" and again.writer is None
        await fill(pilot, again, again.items[0], certainty="low")
        await lock_in(pilot)
        assert again.phase == "reveal"
    assert path.read_bytes() == first_play  # only the first play counts
    assert [a.mode for a in attempts(tmp_path)] == ["match", "match"]


async def test_leaving_a_match_asks_and_keeps_the_answers_locked_in(tmp_path):
    app = ticking_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        match = await opened(pilot, "match", lambda: MatchScreen(code="R-42-1-2", player="Ada"))
        await fill(pilot, match, match.items[0], certainty="low")
        await lock_in(pilot)
        await settle(pilot, "n")
        assert match.phase == "question" and match.position == 1

        await settle(pilot, "escape")
        assert asked(app, "leave-match")
        await settle(pilot, "n")  # stay
        assert app.screen is match and match.phase == "question"

        await settle(pilot, "escape")
        await settle(pilot, "y")  # leave
        assert isinstance(app.screen, HomeScreen)
    result = read_result(result_path(matches_dir(tmp_path), "R-42-1-2", "Ada"))
    assert len(result.answers) == 1
    assert len(attempts(tmp_path)) == 1


async def test_leaving_hot_seat_asks_and_each_answer_stays_in_its_players_save(tmp_path):
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_mode("hotseat", lambda: HotseatScreen(players=["Ada", "Bo"], seed=5, difficulty=1, count=1))
        await settle(pilot)
        seat = app.screen
        assert seat.phase == "pass"
        await settle(pilot, "escape")
        assert asked(app, "leave-hotseat")
        await settle(pilot, "n")  # stay
        assert app.screen is seat and seat.phase == "pass"

        await settle(pilot, "enter")  # Ada is ready
        assert seat.phase == "question"
        await fill(pilot, seat, seat.items[0])
        await lock_in(pilot)
        assert seat.phase == "pass" and seat.current_player == "Bo"

        await settle(pilot, "escape")
        assert asked(app, "leave-hotseat")
        await settle(pilot, "y")  # leave
        assert isinstance(app.screen, HomeScreen)
    assert [a.mode for a in attempts(tmp_path, "Ada")] == ["hotseat"]
    assert attempts(tmp_path, "Bo") == []


async def test_leaving_the_drill_pauses_the_clock_and_saves_nothing_unlocked(tmp_path):
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=SIZE) as pilot:
        drill = await opened(pilot, "drill", lambda: DrillScreen(seed=7, length=2, difficulty=1, tz=UTC))
        assert drill.phase == "question"
        clock = drill.query_one(Countdown)

        await settle(pilot, "escape")
        assert asked(app, "leave-drill")
        assert clock.paused_at is not None  # the player's time, while asked
        await settle(pilot, "n")  # stay
        assert app.screen is drill and drill.phase == "question"
        assert clock.paused_at is None and not clock.stopped

        await settle(pilot, "escape")
        await settle(pilot, "y")  # leave
        assert isinstance(app.screen, HomeScreen)
    assert attempts(tmp_path) == []
    assert not SaveStore(tmp_path).load("Ada").review


async def test_leaving_a_puzzle_begun_asks_and_records_nothing(tmp_path):
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=SIZE) as pilot:
        puzzle = await begun_puzzle(pilot)
        puzzle.query_one("#bottleneck").focus()  # not a text box: Escape leaves the puzzle, not the box

        await settle(pilot, "escape")
        assert asked(app, "leave-confirm")
        await settle(pilot, "n")  # stay
        assert app.screen is puzzle and not puzzle.locked

        await settle(pilot, "escape")
        await settle(pilot, "y")  # leave
        assert puzzle not in app.screen_stack and not isinstance(app.screen, ConfirmDialog)
    assert attempts(tmp_path) == []


async def test_locking_in_asks_and_only_yes_records(tmp_path):
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=SIZE) as pilot:
        puzzle = await begun_puzzle(pilot)

        await settle(pilot, "l")
        assert asked(app, "lock-confirm")
        await settle(pilot, "escape")  # keep thinking
        assert app.screen is puzzle and not puzzle.locked
        assert attempts(tmp_path) == []

        await settle(pilot, "l", "y")
        assert puzzle.locked and type(app.screen).__name__ == "RevealScreen"
    assert len(attempts(tmp_path)) == 1


async def test_keys_typed_ahead_ask_once(tmp_path):
    """Two Escapes queued before the app handles either: one question, not two stacked."""
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=SIZE) as pilot:
        exam = await opened(pilot, "exam", lambda: ExamScreen(seed=42, length=2, tz=UTC))
        await burst(pilot, "escape", "escape")
        assert asked(app, "stop-exam")
        assert sum(isinstance(screen, ConfirmDialog) for screen in app.screen_stack) == 1
        await settle(pilot, "n")
        assert app.screen is exam and exam.phase == "question"


async def test_an_error_after_the_answer_is_told_and_the_game_goes_on(tmp_path, monkeypatch):
    async def broken(self):
        raise RuntimeError("a bug after the answer")

    monkeypatch.setattr(ExamScreen, "finish", broken)
    app = build_app(tmp_path, profile="Ada", strict=False)
    async with app.run_test(size=SIZE) as pilot:
        exam = await opened(pilot, "exam", lambda: ExamScreen(seed=42, length=2, tz=UTC))
        await settle(pilot, "escape", "y")
        assert app.is_running and app.screen is exam  # still playing
        notices = list(app._notifications)
        assert notices and "Something went wrong (RuntimeError)" in notices[-1].message
        await settle(pilot, "escape")  # and the next question is asked as before
        assert asked(app, "stop-exam")
    log = (tmp_path / "logs" / "ridge.log").read_text(encoding="utf-8")
    assert "a bug after the answer" in log
