"""The two ways a learner's session broke in the default path (issue 22), walked with the exact
keys that broke it: Continue straight into a puzzle, then lock-in; and a puzzle saved in the
simulator, after which no way to play would open."""
from __future__ import annotations

import pytest
from textual.content import Content

from app.game import make_app
from app.screens.campaign import BriefingScreen, CampaignScreen
from app.screens.dialogs import ConfirmDialog
from app.screens.home import HomeScreen
from app.screens.puzzle import PuzzleScreen
from app.screens.reveal import RevealScreen
from helpers.pilot import settle, until
from saves.store import SaveStore
from helpers.snapshots import build_app
from helpers.forms import answer, first_run, key_answer

pytestmark = pytest.mark.ui
SIZE = (80, 24)


def recorded(save_dir, name: str = "Ada") -> list[str]:
    return [a.puzzle_id for a in SaveStore(save_dir).load(name).attempts]


@pytest.mark.slow
async def test_continue_straight_into_a_puzzle_then_lock_in_shows_the_reveal(tmp_path):
    """`c`, `s`, answer puzzle 1, Escape, `c` (puzzle 2 opens directly: the campaign's first
    screen), answer, `l`, Enter: the reveal shows, the attempt is on disk, and the next keys
    (`n`, then Escape) lead on, instead of an empty screen stack."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await first_run(pilot)
        await settle(pilot, "c", "s")
        assert isinstance(app.screen, PuzzleScreen) and app.screen.puzzle.id == "fixture-tp-01"
        await answer(pilot, {**key_answer("fixture-tp-01"), "estimates": {"intensity": "1"}}, by_keys=True)
        await settle(pilot, "l", "enter")
        assert isinstance(app.screen, RevealScreen)
        await settle(pilot, "escape")
        assert isinstance(app.screen, HomeScreen)

        await settle(pilot, "c")
        assert isinstance(app.screen, PuzzleScreen) and app.screen.puzzle.id == "fixture-tp-02"
        assert len(app.screen_stack) == 1  # the first screen of the campaign's stack: the case that broke
        await answer(pilot, key_answer("fixture-tp-02"), by_keys=True)
        await settle(pilot, "l")
        assert isinstance(app.screen, ConfirmDialog)
        await settle(pilot, "enter")
        await until(pilot, lambda: isinstance(app.screen, RevealScreen), "the reveal")
        await until(pilot, lambda: app.screen.attempt is not None, "the attempt written")
        assert recorded(tmp_path) == ["fixture-tp-01", "fixture-tp-02"]

        await settle(pilot, "n")  # in the reveal's place, as from a briefing
        assert isinstance(app.screen, (PuzzleScreen, BriefingScreen))
        assert app.current_mode == "campaign"
        await settle(pilot, "escape")
        assert isinstance(app.screen, HomeScreen) and app.trail == ["play"]
        await settle(pilot, "c")
        assert isinstance(app.screen, (PuzzleScreen, BriefingScreen))
    assert app.return_code in (None, 0)


async def test_the_reveal_replaces_the_puzzle_the_same_way_from_the_map(tmp_path):
    """A puzzle opened from a briefing opened from the map: the reveal takes the puzzle's place
    above the briefing, and Escape goes home from there too."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await first_run(pilot)
        await settle(pilot, "m")
        assert isinstance(app.screen, CampaignScreen)
        await settle(pilot, "enter", "s")
        assert isinstance(app.screen, PuzzleScreen)
        await answer(pilot, {**key_answer("fixture-tp-01"), "estimates": {"intensity": "1"}})
        await settle(pilot, "l", "enter")
        assert isinstance(app.screen, RevealScreen)
        assert [type(s).__name__ for s in app.screen_stack] == ["BriefingScreen", "RevealScreen"]
        await until(pilot, lambda: app.screen.attempt is not None, "the attempt written")
        await settle(pilot, "m")
        assert isinstance(app.screen, CampaignScreen)
    assert recorded(tmp_path) == ["fixture-tp-01"]


async def save_in_the_simulator(pilot) -> None:
    """From home once the packs are in: `v`, then `s`, until the simulator says it saved."""
    app = pilot.app
    await until(pilot, lambda: app.bank_ready, "the packs loaded")
    await settle(pilot, "v")
    await until(pilot, lambda: type(app.screen).__name__ == "SimulatorScreen", "the simulator")
    await settle(pilot, "s")
    await until(pilot, lambda: "Saved as puzzle" in str(app.screen.notice), "the saved notice")


async def test_saving_a_puzzle_in_the_simulator_keeps_every_way_to_play_open(tmp_path):
    """`v`, `s` (saved), Escape, then `m`: the map opens at once and shows the player's own
    chapter with the saved puzzle; Continue, Stats, Drill and Exam open too."""
    app = make_app(save_dir=tmp_path, profile="Pat", strict=True, cursor_blink=False, ready_exit=False)
    async with app.run_test(size=SIZE) as pilot:
        await save_in_the_simulator(pilot)
        assert app.bank_ready  # the bank never empties while it reads the packs again
        await settle(pilot, "escape")
        assert isinstance(app.screen, HomeScreen)
        await settle(pilot, "m")
        assert isinstance(app.screen, CampaignScreen)
        await until(pilot, lambda: any(ch.own for ch in app.session.chapters), "the player's own chapter")
        own = next(ch for ch in app.session.chapters if ch.own)
        assert len(own.puzzle_ids) == 1
        await until(pilot, lambda: own.id in [o.id for o in app.screen.query_one("#chapters").options],
                    "the new chapter on the map")
        for key, screen_name in (("s", "StatsScreen"), ("d", "DrillScreen"), ("e", "ExamScreen")):
            await settle(pilot, "escape")
            assert isinstance(app.screen, HomeScreen)
            await settle(pilot, key)
            await until(pilot, lambda: type(app.screen).__name__ == screen_name, screen_name)
        await settle(pilot, "escape")
        await settle(pilot, "c")
        await until(pilot, lambda: isinstance(app.screen, (BriefingScreen, PuzzleScreen)), "Continue")


async def test_packs_that_fail_to_read_again_are_told_in_one_line_and_the_old_ones_stay(tmp_path, monkeypatch):
    """A pack reload that fails (a broken pack, a full disk) leaves the bank as it was and tells
    the player in one line, however long or odd the error; every way to play still opens."""
    app = make_app(save_dir=tmp_path, profile="Pat", strict=True, cursor_blink=False, ready_exit=False)
    notices = shown_notices(app, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.bank_ready, "the packs loaded")
        before = [ch.id for ch in app.session.chapters]

        def broken() -> None:
            raise ValueError("pack [/] broken\n" + "x" * 5000)

        monkeypatch.setattr(app.bank, "reload", broken)
        app.reload_packs()
        await until(pilot, lambda: notices, "the notice")
        [line] = notices
        assert line.startswith("The puzzles could not be ") and "pack [/] broken xxx" in line  # home says it
        assert "\n" not in line and len(line) <= 300
        assert app.bank_ready and [ch.id for ch in app.session.chapters] == before
        await settle(pilot, "m")
        assert isinstance(app.screen, CampaignScreen)


def shown_notices(app, monkeypatch) -> list[str]:
    """Every notice the app gives, read as its toast reads it (markup unless told otherwise):
    a notice whose markup does not parse raises here, as the toast's render did in a terminal."""
    shown: list[str] = []

    def notify(message, *, markup: bool = True, **_kw) -> None:
        shown.append(Content.from_markup(message).plain if markup else message)

    monkeypatch.setattr(app, "notify", notify)
    return shown


async def test_a_save_folder_whose_path_reads_as_markup_still_saves_a_puzzle(tmp_path, monkeypatch):
    """The simulator's 'Saved as ... in <path>' notice names a folder the player chose; a path
    holding '[/]' (folders 'a[' and ']b') is shown as text. Read as markup, it ended Ridge with
    a MarkupError ("Something went wrong") the moment the puzzle was saved."""
    app = make_app(save_dir=tmp_path / "a[/]b", profile="Pat", strict=True, cursor_blink=False, ready_exit=False)
    notices = shown_notices(app, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await save_in_the_simulator(pilot)
        await until(pilot, lambda: notices, "the notice")
        assert any(f"{tmp_path / 'a[/]b' / 'packs'}" in line for line in notices)
        await settle(pilot, "escape")
        assert isinstance(app.screen, HomeScreen)
    assert (tmp_path / "a[" / "]b" / "packs").is_dir()
