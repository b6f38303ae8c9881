"""Opening a mode skips Textual's full stylesheet refresh when nothing changed (RidgeApp.refresh_css),
yet a theme change still reaches every screen: the one showing, one opened after, and the home
screen the player returns to."""
from __future__ import annotations

from textual.color import Color

from app.game import make_app
from app.screens.simulator import SimulatorScreen
from helpers.pilot import settled, until


def _background(app) -> Color:
    return Color.parse(app.get_css_variables()["background"])


async def test_a_theme_change_reaches_every_screen(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        home = app.screen
        dark = _background(app)
        assert home.styles.background == dark
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, SimulatorScreen), "the simulator")
        await settled(pilot)
        assert app.screen.styles.background == dark
        app.theme = "textual-light"
        await settled(pilot)
        light = _background(app)
        assert light != dark
        assert app.screen.styles.background == light  # the screen showing
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is home, "back home")
        await settled(pilot)
        assert home.styles.background == light  # the screen returned to
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, SimulatorScreen), "the simulator again")
        await settled(pilot)
        assert app.screen.styles.background == light  # a screen opened after
