"""The simulator lives while Ridge runs: leaving it and coming back finds it as it was left, and
`ridge play` builds it behind the home screen so even the first visit is a screen switch. A
screen the player returns to is restyled only when the styles changed (app.styling)."""
from __future__ import annotations

import pytest
from textual.color import Color
from textual.widgets import Input, TabbedContent

from app.game import HOME, RidgeApp, make_app
from app.screens.home import HomeScreen
from app.screens.simulator import SimulatorScreen
from helpers.pilot import settled, until
from helpers.sim import type_into


def _counting(app, built: list) -> None:
    """Count the simulators `app` makes (its MODES, for this app only)."""
    make = RidgeApp.MODES["simulator"]

    def counted():
        built.append(make())
        return built[-1]

    app.MODES = {**RidgeApp.MODES, "simulator": counted}


async def _open_simulator(pilot) -> SimulatorScreen:
    await pilot.press("v")
    await until(pilot, lambda: isinstance(pilot.app.screen, SimulatorScreen), "the simulator")
    await settled(pilot)
    return pilot.app.screen


async def _leave(pilot, home) -> None:
    await pilot.press("escape")
    await until(pilot, lambda: pilot.app.screen is home, "back home")
    await settled(pilot)


async def _started(pilot):
    """The home screen, once the app has settled on it."""
    await settled(pilot)
    return pilot.app.screen


async def test_leaving_the_simulator_keeps_it_as_the_player_left_it(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(100, 30)) as pilot:
        home = await _started(pilot)
        screen = await _open_simulator(pilot)
        await pilot.press("f")  # predicting off: the tabs show
        await until(pilot, lambda: not screen.predict_first, "predicting off")
        await type_into(pilot, "#in-gpus", "8")
        await pilot.press("p")
        await until(pilot, lambda: screen.sim.pinned is not None, "the pin")
        await type_into(pilot, "#in-gpus", "4")
        await pilot.press("k")
        tabs = screen.query_one("#sim-tabs", TabbedContent)
        await until(pilot, lambda: tabs.active == "tab-kv", "the KV tab")
        await _leave(pilot, home)
        again = await _open_simulator(pilot)
        assert again is screen
        assert screen.query_one("#in-gpus", Input).value == "4"
        assert screen.sim.result.deployment.gpus == 4
        assert screen.sim.pinned is not None and screen.sim.pinned.deployment.gpus == 8
        assert tabs.active == "tab-kv"
        assert not screen.predict_first


@pytest.fixture
def no_build_delay(monkeypatch):
    monkeypatch.setattr(HomeScreen, "BUILD_DELAY", 0.01)  # the delay is for players, not for tests


async def test_ridge_play_builds_the_simulator_behind_the_home_screen(tmp_path, no_build_delay):
    built: list = []
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True, warm=True)
    _counting(app, built)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: built and built[0].is_mounted, "the simulator built behind home")
        await settled(pilot)
        assert isinstance(app.screen, HomeScreen) and app.current_mode == HOME
        screen = await _open_simulator(pilot)
        assert screen is built[0] and len(built) == 1
        assert screen.focused is not None and screen.focused.id == "sim-guess-bottleneck"
        await pilot.press("enter", "down", "enter")  # the Bottleneck menu still takes keys
        await until(pilot, lambda: screen.query_one("#sim-guess-bottleneck").value not in (None, ""),
                    "a bottleneck picked")


async def test_nothing_is_built_ahead_away_from_home_or_without_warm(tmp_path, no_build_delay):
    built: list = []
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    _counting(app, built)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        app.build_kept()
        await settled(pilot)
        assert built == []  # tests and solo apps build only what the player opens
        app.warm = True
        await pilot.press("m")  # the map
        await until(pilot, lambda: app.current_mode == "map", "the map")
        app.build_kept()
        await settled(pilot)
        assert built == []  # never behind another screen


async def test_a_return_restyles_only_after_the_styles_changed(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        home = await _started(pilot)
        screen = await _open_simulator(pilot)
        restyles: list = []
        real = screen.update_node_styles
        screen.update_node_styles = lambda *a, **k: (restyles.append(1), real(*a, **k))[1]
        for _ in range(2):
            await _leave(pilot, home)
            await _open_simulator(pilot)
        assert restyles == []  # nothing changed: nothing restyled
        await _leave(pilot, home)
        app.theme = "textual-light"
        await settled(pilot)
        await _open_simulator(pilot)
        light = Color.parse(app.get_css_variables()["background"])
        assert screen.styles.background == light  # the theme changed while away: it shows


async def test_a_simulator_left_at_one_size_is_drawn_anew_at_the_next(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        home = await _started(pilot)
        screen = await _open_simulator(pilot)
        await pilot.press("f", "k")  # predicting off, the KV tab's plot
        await settled(pilot)
        small = screen._plot_size()
        await _leave(pilot, home)
        await pilot.resize_terminal(120, 40)
        await settled(pilot)
        await _open_simulator(pilot)
        await until(pilot, lambda: screen._plot_size() != small, "the plot's room follows the new size")
        await until(pilot, lambda: screen._drawn_size == screen._plot_size(), "the plot drawn for the new size")
        assert screen.size.width == 120


async def test_another_player_gets_a_fresh_simulator(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        home = await _started(pilot)
        screen = await _open_simulator(pilot)
        await pilot.press("f")
        await until(pilot, lambda: not screen.predict_first, "predicting off")
        await type_into(pilot, "#in-gpus", "8")
        await _leave(pilot, home)
        app.open_session("Ada")  # the same player again: the simulator stays
        assert await _open_simulator(pilot) is screen
        await _leave(pilot, home)
        app.store.create_profile("Bo")
        app.open_session("Bo")
        fresh = await _open_simulator(pilot)
        assert fresh is not screen and fresh.sim.result.deployment.gpus != 8


async def test_the_status_line_is_folded_again_when_the_terminal_is_resized(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(120, 40)) as pilot:
        home = await _started(pilot)
        screen = await _open_simulator(pilot)
        status = screen.query_one("#sim-status")

        def folded() -> bool:
            lines = str(status.content).splitlines()
            return bool(lines) and all(len(line) <= status.content_size.width for line in lines)

        assert folded()
        wide = str(status.content)
        await pilot.resize_terminal(80, 24)  # while it shows
        await until(pilot, lambda: folded() and str(status.content) != wide, "folded again at 80 columns")
        await _leave(pilot, home)
        await pilot.resize_terminal(120, 40)  # while away
        await _open_simulator(pilot)
        await until(pilot, lambda: str(status.content) == wide, "folded as before at 120 columns")


async def test_returning_to_the_kept_simulator_pauses_collection_too(tmp_path):
    import gc

    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    collecting: list[bool] = []
    switch = app.switch_mode

    def switch_mode(mode):
        if mode == "simulator":
            collecting.append(gc.isenabled())
        return switch(mode)

    app.switch_mode = switch_mode
    async with app.run_test(size=(80, 24)) as pilot:
        home = await _started(pilot)
        await _open_simulator(pilot)
        await _leave(pilot, home)
        await until(pilot, gc.isenabled, "collection resumed", pauses=4000)
        await _open_simulator(pilot)
        assert collecting == [False, False]  # built, then kept: neither switch collects
        await until(pilot, gc.isenabled, "collection resumed", pauses=4000)


async def test_a_simulator_built_on_the_key_is_drawn_without_the_switch_hold(tmp_path, monkeypatch):
    """Textual's switch_mode holds paints for 50 ms (App.delay_update); a mode Ridge builds on the
    player's key draws whole in its first frame, so open_mode skips the hold there (and the
    simulator's first frame is not put off). Switching back to a kept one still holds."""
    from textual.app import App

    holds: list[str] = []
    hold = App.delay_update

    def noted(app, delay: float = 0.05) -> None:
        holds.append(app.current_mode)
        hold(app, delay)

    monkeypatch.setattr(App, "delay_update", noted)
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.session is not None and app.bank_ready, "the packs loaded")
        home = app.screen
        await _open_simulator(pilot)
        assert holds == []
        await _leave(pilot, home)
        holds.clear()
        await _open_simulator(pilot)  # kept: a plain switch, with Textual's hold
        assert holds == [HOME]
