"""Pilot tests of the game's core loop, driven by keys (and a few clicks) as a player would.

Every app here runs over the fixture packs in tests/game_packs with a fixed clock; errors fail
the test (the app is strict) except in the crash-guard test, which checks the guard itself.
"""
from __future__ import annotations

from textual.color import Color

import pytest
from textual.widgets import Input, Label, OptionList

from app.widgets.picker import ChoiceList, Picker

from app.screens.campaign import BriefingScreen, CampaignScreen
from app.screens.dialogs import ConfirmDialog, NameDialog, ProfilePicker
from app.screens.home import HomeScreen
from app.screens.puzzle import PuzzleScreen
from app.screens.reveal import RevealScreen
from saves.store import SaveStore
from pilot_wait import settled
from screen_text import screen_lines
from snapshot_app import FIXED_NOW, build_app, fixture_bank

SIZE = (80, 24)


async def settle(pilot, *keys: str) -> None:
    """Press keys (if any) and wait until the app has handled them and any work they started."""
    if keys:
        await pilot.press(*keys)
    await settled(pilot)  # a condition, not one pause: see tests/pilot_wait.py


async def first_run(pilot, name: str = "Ada") -> None:
    await settle(pilot)
    assert isinstance(pilot.app.screen, NameDialog)
    await settle(pilot, *name, "enter")
    assert isinstance(pilot.app.screen, HomeScreen)
    assert pilot.app.session is not None and pilot.app.session.name == name


async def choose(pilot, select_id: str, value: str) -> None:
    """Pick `value` in a Picker with the keyboard: focus, Enter to open, arrows, Enter."""
    select = pilot.app.screen.query_one(f"#{select_id}", Picker)
    values = [v for _, v in select.options]  # the list opens on the value chosen, else the first
    here = values.index(select.value) if select.value in values else 0
    there = values.index(value)
    select.focus()
    await settle(pilot, "enter")
    moves = ["down"] * (there - here) if there >= here else ["up"] * (here - there)
    await settle(pilot, *moves, "enter")
    assert select.value == value


async def answer(pilot, prediction: dict, certainty: str = "medium", by_keys: bool = False) -> None:
    """Fill in the form: with the keyboard (and a click) when `by_keys`, else by setting the
    controls directly, which is quicker for tests whose subject is elsewhere."""
    screen = pilot.app.screen
    assert isinstance(screen, PuzzleScreen)
    parts = (("bottleneck", "bottleneck"), ("lever", "lever"), ("band", "gain_band"), ("reason", "reason"))
    for select_id, key in parts:
        if by_keys:
            await choose(pilot, select_id, prediction[key])
        else:
            screen.query_one(f"#{select_id}", Picker).value = prediction[key]
    for name, text in prediction.get("estimates", {}).items():
        field = screen.query_one(f"#est-{name}", Input)
        if by_keys:
            field.focus()
            await settle(pilot, *text)
        else:
            field.value = text
    if not by_keys:
        screen.query_one("#certainty", ChoiceList).value = certainty
        await settle(pilot)
        assert screen.query_one("#form").certainty() == certainty
        return
    choices = screen.query_one("#certainty", ChoiceList)
    choices.scroll_visible(animate=False)
    await settle(pilot)
    line = [v for _, v in choices.options].index(certainty)
    await pilot.click(choices, offset=(2, line))  # by mouse, to show the form works both ways
    await settle(pilot)
    assert screen.query_one("#form").certainty() == certainty


def key_answer(puzzle_id: str) -> dict:
    from puzzles.grading import objective_bottleneck

    key = fixture_bank().keys[puzzle_id]
    return {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain_band": key.gain_band,
            "reason": key.reason}


@pytest.mark.slow
async def test_first_run_to_a_recorded_attempt(tmp_path):
    """First run → name → chapter → answer with hints and napkin → lock-in → reveal → saved."""
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await first_run(pilot)
        home = app.screen
        assert "One user, four GPUs (chapter 1)" in str(home.query_one("#ways", OptionList).get_option_at_index(0).prompt)

        await settle(pilot, "c")  # Continue: the first chapter opens with its briefing
        assert isinstance(app.screen, BriefingScreen)
        assert "prompt" in str(app.screen.query_one("#briefing-text").render())
        await settle(pilot, "s")
        assert isinstance(app.screen, PuzzleScreen)
        assert app.screen.puzzle.id == "fixture-tp-01"

        await settle(pilot, "h")
        await settle(pilot, "h")
        assert app.screen.hints_used == 2
        assert "Only one sequence" in str(app.screen.query_one("#hints-taken").render())

        await settle(pilot, "n")
        assert app.focused is app.screen.query_one("#napkin-input")
        await settle(pilot, *"2 * 70e9 / 141e9", "enter")
        assert "0.99" in str(app.screen.query_one("#napkin-result", Label).render())

        truth = key_answer("fixture-tp-01")
        await answer(pilot, {**truth, "estimates": {"intensity": "2*70e9/141e9"}}, certainty="high", by_keys=True)
        await settle(pilot, "l")
        assert isinstance(app.screen, ConfirmDialog)
        assert "Lock in" in str(app.screen.query_one("#yes").label)
        await settle(pilot, "enter")

        reveal = app.screen
        assert isinstance(reveal, RevealScreen)
        assert reveal.locked.grade.outcome == "cleared"
        banner = str(reveal.query_one("#verdict").render())
        assert "✓ CLEARED" in banner and "+24 points" in banner  # 30 for high, less 2 hints x 3
        assert reveal.query_one("#lever-chart") and reveal.query_one("#roofline")
        assert reveal.query_one("#derivation") and reveal.query_one("#why-not")

    profile = SaveStore(tmp_path).load("Ada")
    assert len(profile.attempts) == 1
    attempt = profile.attempts[0]
    assert attempt.puzzle_id == "fixture-tp-01" and attempt.module == "two-phases"
    assert attempt.mode == "campaign" and attempt.outcome == "cleared" and attempt.hints_used == 2
    assert attempt.prediction.bottleneck == truth["bottleneck"]
    assert attempt.prediction.lever == truth["lever"]
    assert attempt.prediction.certainty == "high"
    assert attempt.prediction.estimates["intensity"] == pytest.approx(2 * 70e9 / 141e9)
    assert attempt.locked_at == FIXED_NOW
    assert attempt.seconds_taken is not None and attempt.seconds_taken >= 0
    assert attempt.key.best_lever == truth["lever"]


async def test_lock_in_asks_once_and_is_final(tmp_path):
    app = build_app(tmp_path, profile="Bo")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.name == "Bo"
        await settle(pilot, "c", "s")
        puzzle = app.screen
        await settle(pilot, "l")  # nothing chosen yet: no dialog, the first gap gets focus
        assert app.screen is puzzle
        assert app.focused is puzzle.query_one("#bottleneck")

        await answer(pilot, key_answer("fixture-tp-01") | {"estimates": {"intensity": "1"}})
        await settle(pilot, "l")
        assert isinstance(app.screen, ConfirmDialog)
        await settle(pilot, "n")  # keep thinking
        assert app.screen is puzzle and not puzzle.locked
        await choose(pilot, "band", "over-4x")
        form = puzzle.query_one("#form")
        band = puzzle.query_one("#band", Picker)
        await settle(pilot, "l")
        await pilot.click("#yes")
        await settle(pilot)
        assert isinstance(app.screen, RevealScreen)
        assert puzzle.locked
        assert form.frozen and form.prediction()["gain_band"] == "over-4x"
        band.value = "2-4x"  # even a change behind its back
        assert form.prediction()["gain_band"] == "over-4x"
        assert puzzle not in app.screen_stack
        await settle(pilot, "l")  # no lock-in binding on the reveal
        assert app.screen.locked.prediction["gain_band"] == "over-4x"
    attempts = SaveStore(tmp_path).load("Bo").attempts
    assert len(attempts) == 1 and attempts[0].prediction.gain_band == "over-4x"


async def test_jumping_ahead_to_a_later_chapter(tmp_path):
    app = build_app(tmp_path, profile="Cy")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "m")
        assert isinstance(app.screen, CampaignScreen)
        await settle(pilot, "down", "down")
        assert "Builds on chapters 1, 2" in "\n".join(screen_lines(app))
        await settle(pilot, "enter")
        briefing = app.screen
        assert isinstance(briefing, BriefingScreen) and briefing.chapter_id == "kv-cache"
        assert briefing.query(".note")  # says what it builds on, and does not lock
        await settle(pilot, "enter")
        assert isinstance(app.screen, PuzzleScreen) and app.screen.puzzle.id == "fixture-kv-01"
        await answer(pilot, key_answer("fixture-kv-01") | {"estimates": {"max_concurrency": "125"}})
        await settle(pilot, "l", "y")
        assert isinstance(app.screen, RevealScreen) and app.screen.locked.grade.outcome == "cleared"
        await settle(pilot, "m")  # back to the map, which now shows the progress
        assert isinstance(app.screen, CampaignScreen)
        assert "1/1 cleared · mastery 100%" in "\n".join(screen_lines(app))
    assert SaveStore(tmp_path).load("Cy").attempts[0].module == "kv-cache"


async def test_escape_goes_back_where_each_screen_was_opened_from(tmp_path):
    """Navigation is the app's (modes and messages): a briefing opened by Continue goes back
    home, one opened from the map goes back to the map, and a reveal's Map key leaves one map
    above home, as it did when the stack was walked by hand."""
    app = build_app(tmp_path, profile="Ek")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "c")
        assert isinstance(app.screen, BriefingScreen) and app.current_mode == "campaign"
        await settle(pilot, "escape")
        assert isinstance(app.screen, HomeScreen) and app.trail == ["play"]
        await settle(pilot, "m", "enter")
        assert isinstance(app.screen, BriefingScreen) and app.trail == ["play", "map", "campaign"]
        await settle(pilot, "escape")
        assert isinstance(app.screen, CampaignScreen)
        await settle(pilot, "enter", "s")
        await answer(pilot, key_answer("fixture-tp-01") | {"estimates": {"intensity": "1"}})
        await settle(pilot, "l", "y", "m")
        assert isinstance(app.screen, CampaignScreen) and app.trail == ["play", "map"]
        await settle(pilot, "c")
        assert isinstance(app.screen, PuzzleScreen) and app.screen.puzzle.id == "fixture-tp-02"
        await settle(pilot, "escape")  # nothing filled in: leaves at once, back to the map
        assert isinstance(app.screen, CampaignScreen)
        await settle(pilot, "escape")
        assert isinstance(app.screen, HomeScreen) and len(app.screen_stack) == 1


async def test_retry_later_brings_the_puzzle_back_within_three(tmp_path):
    app = build_app(tmp_path, profile="Di")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "c", "s")
        assert app.screen.puzzle.id == "fixture-tp-01"
        wrong = {"bottleneck": "kv-capacity", "lever": "batching", "gain_band": "over-4x",
                 "reason": "kv-cap", "estimates": {"intensity": "300"}}
        await answer(pilot, wrong, certainty="low")
        await settle(pilot, "l", "y")
        assert app.screen.locked.grade.outcome == "missed"
        await settle(pilot, "r")
        assert app.session.retry_queue == ["fixture-tp-01"]
        assert isinstance(app.screen, PuzzleScreen) and app.screen.puzzle.id == "fixture-tp-02"
        # the reveal's notice: its chapter has one other puzzle, so it is back after that one
        assert app.session.returns_after("fixture-tp-01") == 1
        for expected in ("fixture-tp-02",):
            assert app.screen.puzzle.id == expected
            key = fixture_bank().keys[expected]
            estimates = {n: repr(key.estimates[n]) for n in fixture_bank().puzzles[expected].estimates}
            await answer(pilot, {**key_answer(expected), "estimates": estimates}, certainty="low")
            await settle(pilot, "l", "y")
            await settle(pilot, "n")
        assert isinstance(app.screen, PuzzleScreen) and app.screen.puzzle.id == "fixture-tp-01"
    profile = SaveStore(tmp_path).load("Di")
    assert profile.settings["retry"] == "fixture-tp-01@1"
    assert [a.puzzle_id for a in profile.attempts] == ["fixture-tp-01", "fixture-tp-02"]


REFUSED = [("__import__('os')", "names"), ("1e999999", "too large"), ("2**99999999", "exponent"),
           ("a+1", "names")]


async def test_the_napkin_computes_and_refuses_what_is_not_arithmetic(tmp_path):
    app = build_app(tmp_path, profile="Ed")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "c", "s", "n")
        await settle(pilot, *"141e9 / 3.35e12", "enter")
        result = app.screen.query_one("#napkin-result", Label)
        assert "0.0420896" in str(result.render()) and not result.has_class("-error")
        napkin = app.screen.query_one("#napkin-input", Input)
        for text, refusal in REFUSED:
            napkin.value = ""
            await settle(pilot, *text, "enter")
            assert result.has_class("-error"), text
            assert "✗" in str(result.render()) and refusal in str(result.render()), text
        napkin.value = ""
        await settle(pilot, *"(80 - 16) GiB / 1.25 GiB", "enter")
        assert str(result.render()) == "(80 - 16) GiB / 1.25 GiB = 51.2" and not result.has_class("-error")
        assert "141e9 / 3.35e12" in str(app.screen.query_one("#napkin-history").render())


async def test_estimates_accept_napkin_sums_and_refuse_the_rest(tmp_path):
    app = build_app(tmp_path, profile="Fa")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "c", "s")
        field = app.screen.query_one("#est-intensity", Input)
        field.focus()
        await settle(pilot, *"a+1")
        assert "✗" in str(app.screen.query_one("#est-intensity-note").render())
        assert "intensity" not in app.screen.query_one("#form").estimates()
        field.value = ""
        await settle(pilot, *"2*70e9/141e9")
        assert app.screen.query_one("#form").estimates()["intensity"] == pytest.approx(0.99290780)


async def test_several_players_and_a_new_one(tmp_path):
    store = SaveStore(tmp_path)
    store.create_profile("Gus")
    store.create_profile("Hal")
    (tmp_path / "settings.toml").unlink(missing_ok=True)  # nobody was last: ask
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ProfilePicker)
        await settle(pilot, "down", "enter")
        assert app.session.name == "Hal"
        await settle(pilot, "p")
        assert isinstance(app.screen, ProfilePicker)
        await settle(pilot, "end", "enter")  # + New player…, last in the list
        assert isinstance(app.screen, NameDialog)
        await settle(pilot, *"Hal", "enter")  # taken: says so and stays
        assert "already exists" in str(app.screen.query_one("#name-error").render())
        app.screen.query_one("#name", Input).value = ""
        await settle(pilot, *"Ivy", "enter")
        assert app.session.name == "Ivy"
    assert SaveStore(tmp_path).profiles() == ["Gus", "Hal", "Ivy"]


async def test_a_damaged_save_is_set_aside_only_with_agreement(tmp_path):
    store = SaveStore(tmp_path)
    store.create_profile("Jo")
    store.header_path("Jo").write_text("schema_version = 2\ncreated = 'not a time'\n[[[", encoding="utf-8")
    app = build_app(tmp_path, profile="Jo")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog) and app.screen.id == "damaged-save"
        await settle(pilot, "n")
        assert app.session is None
        assert store.header_path("Jo").read_text(encoding="utf-8").endswith("[[[")  # untouched
    app = build_app(tmp_path, profile="Jo")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "y")
        assert app.session is not None and app.session.name == "Jo"
    assert any(p.name.startswith("Jo.damaged-") for p in tmp_path.iterdir())
    assert SaveStore(tmp_path).load("Jo").attempts == ()


async def test_an_unexpected_error_is_logged_and_shown_in_one_line(tmp_path, monkeypatch):
    def broken(self):
        raise RuntimeError("a bug in a handler")

    monkeypatch.setattr(HomeScreen, "action_stats", broken)
    app = build_app(tmp_path, profile="Kim", strict=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "s")
        assert isinstance(app.screen, HomeScreen)  # still playing
        notices = list(app._notifications)
        assert notices and "Something went wrong (RuntimeError)" in notices[-1].message
        assert "\n" not in notices[-1].message and "Traceback" not in notices[-1].message
        await settle(pilot, "c")  # and the game goes on
        assert isinstance(app.screen, BriefingScreen)
    log = (tmp_path / "logs" / "ridge.log").read_text(encoding="utf-8")
    assert "Traceback" in log and "a bug in a handler" in log


async def test_an_error_behind_a_list_choice_is_told_and_the_game_goes_on(tmp_path, monkeypatch):
    """A message handler (choosing from the home list) is guarded too, not only keys."""
    def broken(self):
        raise RuntimeError("a bug behind the list")

    monkeypatch.setattr(HomeScreen, "action_stats", broken)
    app = build_app(tmp_path, profile="Kit", strict=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        ways = app.screen.query_one("#ways", OptionList)
        ways.highlighted = next(i for i in range(ways.option_count) if ways.get_option_at_index(i).id == "stats")
        await settle(pilot, "enter")
        assert isinstance(app.screen, HomeScreen) and app.is_running
        assert [str(e) for e in app.unexpected_errors] == ["a bug behind the list"]
        await settle(pilot, "c")
        assert isinstance(app.screen, BriefingScreen)
    assert "a bug behind the list" in (tmp_path / "logs" / "ridge.log").read_text(encoding="utf-8")


CRASH = """
import sys
from app.game import make_app

app = make_app(save_dir=sys.argv[1], profile="Pat", ready_exit=False)


async def boom(pilot):
    await pilot.pause()

    def fail():
        raise RuntimeError("a bug past the guard")

    app.run_worker(fail, thread=True)  # a failed worker ends any Textual app


app.run(headless=True, auto_pilot=boom)
print("exit", app.return_code)
"""


def test_an_error_that_ends_the_game_is_one_line_and_a_log(tmp_path):
    """The last line of the crash guard, in a real run: no traceback on the terminal, one line
    naming the kind of error and the log, exit status 1, and the traceback in the log."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", CRASH, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("exit 1")
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    log = tmp_path / "logs" / "ridge.log"
    assert lines == [f"Something went wrong (RuntimeError). Details were saved to {log}"], out.stderr
    text = log.read_text(encoding="utf-8")
    assert "Traceback" in text and "a bug past the guard" in text


async def test_f1_shows_help_for_the_focused_part(tmp_path):
    app = build_app(tmp_path, profile="Lu")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "c", "s")
        await settle(pilot, "f1")
        from app.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        assert "## Bottleneck" in app.screen.query_one("#help-focused").source
        from app.screens.help import key_lines

        assert any("Lock in" in line for line in key_lines(app.screen.for_screen))
        await settle(pilot, "escape")
        assert isinstance(app.screen, PuzzleScreen)
        await settle(pilot, "n", "f1")
        assert "## The napkin" in app.screen.query_one("#help-focused").source


async def test_every_bound_action_is_in_the_command_palette(tmp_path):
    app = build_app(tmp_path, profile="Mo")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Continue", "Map", "Stats", "Player", "Help", "Theme"} <= titles
        await settle(pilot, "c", "s")
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Lock in", "Hint", "Napkin", "Back", "Help"} <= titles
        hint = next(c for c in app.get_system_commands(app.screen) if c.title == "Hint")
        await hint.callback()
        await settle(pilot)
        assert app.screen.hints_used == 1


async def test_the_theme_is_kept_with_the_player(tmp_path):
    app = build_app(tmp_path, profile="Ny")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "nord"
        await settle(pilot)
    assert SaveStore(tmp_path).load("Ny").settings["theme"] == "nord"
    app = build_app(tmp_path, profile="Ny")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "nord"
        nord = Color.parse(app.get_css_variables()["background"])
        assert app.screen.styles.background == nord  # drawn in it, not only named


async def test_stats_show_mastery_outcomes_and_calibration(tmp_path):
    app = build_app(tmp_path, profile="Oz")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await settle(pilot, "c", "s")
        await answer(pilot, key_answer("fixture-tp-01") | {"estimates": {"intensity": "1"}}, certainty="high")
        await settle(pilot, "l", "y", "escape")
        assert isinstance(app.screen, HomeScreen)
        assert "✓ cleared 1" in str(app.screen.query_one("#glance").render())
        await settle(pilot, "s")
        text = "\n".join(str(app.screen.query_one(f"#{w}").render())
                         for w in ("mastery", "outcomes", "calibration"))
        assert "1. Two phases" in text and "100%" in text and "1/2 cleared" in text
        assert "2. Intensity and the batch" in text and "not tried" in text
        assert "2026-03-02" in text and "✓" in text
        assert "high" in text and "too few to say" in text


async def test_every_way_to_play_opens_from_home_and_comes_back(tmp_path):
    from app.screens.drill import DrillScreen
    from app.screens.exam import ExamScreen
    from app.screens.hotseat import HotseatScreen
    from app.screens.lab import LabScreen
    from app.screens.match import MatchScreen
    from app.screens.simulator import SimulatorScreen

    app = build_app(tmp_path, profile="Di")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        ways = [str(app.screen.query_one("#ways", OptionList).get_option_at_index(i).prompt)
                for i in range(app.screen.query_one("#ways", OptionList).option_count)]
        for key, screen_type in (("v", SimulatorScreen), ("d", DrillScreen), ("e", ExamScreen),
                                 ("h", HotseatScreen), ("t", MatchScreen), ("l", LabScreen)):
            assert any(f"({key})" in way for way in ways), key
            await settle(pilot, key)
            assert isinstance(app.screen, screen_type), key
            assert app.current_mode != "play" and len(app.screen_stack) == 1, key  # its own stack
            await settle(pilot, "escape")
            assert isinstance(app.screen, HomeScreen), key
            assert app.current_mode == "play", key
