"""Every screen's footer is Textual's own: at 80 columns the home screen's everyday keys and the
palette key are on its last line, a click on a key presses it, and it follows the keys the screen
offers as they change."""
from __future__ import annotations

from textual.widgets import Footer

from app.game import make_app
from app.screens.simulator import SimulatorScreen
from helpers.pilot import settled, until
from helpers.screen import screen_lines


def _line(app) -> str:
    """The footer as the player sees it: the screen's last line."""
    return screen_lines(app)[-1]


async def test_the_footer_shows_the_home_keys_and_the_palette_on_the_right(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        app.screen.query_one(Footer)  # Textual's own (raises NoMatches without one)
        line = _line(app)
        for label in ("c Continue", "m Map", "s Stats", "p Player", "f1 Help"):
            assert f" {label} " in line, line
        assert line.rstrip().endswith("^p palette"), line


async def test_a_click_on_a_key_in_the_footer_presses_it(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        x = _line(app).index(" Map ") + 1
        await pilot.click(offset=(x, 23))
        await until(pilot, lambda: app.current_mode == "map", "the map, opened from the footer")


async def test_the_footer_follows_the_keys_the_screen_offers(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, SimulatorScreen), "the simulator")
        await settled(pilot)
        assert "l Lock in" in _line(app)  # predicting first: lock in is offered
        await pilot.press("f")
        await until(pilot, lambda: "Lock in" not in _line(app), "lock in gone once predicting is off")
        await pilot.press("f")
        await until(pilot, lambda: "l Lock in" in _line(app), "lock in back")
