"""The simulator by keyboard: keys for every results tab, the grade on every tab after lock-in,
no lost keystrokes in a burst, notices that clear, errors in the screen's words, and the pin A
kept for the next visit."""
from __future__ import annotations

from textual import events
from textual.widgets import Static, TabbedContent

from app.screens.simulator import TABS, SimulatorScreen
from app.widgets.picker import Picker
from pilot_wait import until
from puzzles.sim import sim_key
from test_simulator_pilot import SimApp, type_into


def burst(app, *keys: str) -> None:
    """Queue keys before the app handles any (Pilot's `press` waits between keys)."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


async def test_every_tab_has_a_key_and_a_palette_entry():
    app = SimApp(predict_first=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        tabs = screen.query_one("#sim-tabs", TabbedContent)
        screen.query_one("#in-gpus").focus()  # letters pass through a number field
        for key, tab_id in (("o", "tab-roofline"), ("x", "tab-spec"), ("k", "tab-kv"), ("c", "tab-cost"),
                            ("b", "tab-compare"), ("r", "tab-results")):
            await pilot.press(key)
            await until(pilot, lambda: tabs.active == tab_id, f"{key} shows {tab_id}")
        seen = []
        for _ in TABS:
            await pilot.press("right_square_bracket")
            await until(pilot, lambda: tabs.active not in seen[-1:], "] moves on")
            seen.append(tabs.active)
        assert sorted(seen) == sorted(tab_id for tab_id, _ in TABS)
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: tabs.active == seen[-2], "[ goes back")
        descriptions = {b.description for b in SimulatorScreen.BINDINGS}
        assert {"Results tab", "Roofline tab", "Speculation tab", "KV tab", "Cost tab", "A/B tab"} <= descriptions


async def test_the_grade_shows_on_every_tab_after_lock_in():
    app = SimApp(predict_first=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        key = sim_key(screen.sim.result)

        screen.query_one("#sim-guess-bottleneck", Picker).value = key.bottleneck
        screen.query_one("#sim-guess-lever", Picker).value = key.best_lever
        screen.query_one("#sim-guess-band", Picker).value = key.gain_band
        await pilot.press("l")
        grade = screen.query_one("#sim-grade", Static)
        await until(pilot, lambda: grade.display and "Cleared" in str(grade.content), "the grade")
        for key_ in ("o", "x", "k", "c", "b"):
            await pilot.press(key_)
            await until(pilot, lambda: grade.display and grade.region.height > 0, f"the grade after {key_}")


async def test_backspace_then_digits_in_a_burst_are_all_kept():
    app = SimApp(predict_first=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        field = screen.query_one("#in-prompt")
        field.focus()
        field.cursor_position = len(field.value)  # "1536"
        burst(app, "backspace", "backspace", "2", "4", "backspace", "8", "end", "backspace", "0")
        await until(pilot, lambda: field.value == "1520" and screen.sim.raw["prompt"] == "1520", "the burst")
        await until(pilot, lambda: screen.sim.result.deployment.prompt == 1520, "the result follows")


async def test_a_not_saved_notice_clears_after_an_edit_and_errors_use_screen_words(tmp_path):
    app = SimApp(predict_first=False, pack_path=tmp_path / "packs" / "mine.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        screen.notice = "✗ not saved: something"
        screen._show_status()
        await type_into(pilot, "#in-gpus", "0")
        status = str(screen.query_one("#sim-status", Static).content)
        assert "not saved" not in status
        err = str(screen.query_one("#err-gpus", Static).content)
        assert "GPUs must be at least 1" in err and "gpus" not in err
        assert all(len(line) <= 33 for line in err.splitlines())  # fits the inputs column
