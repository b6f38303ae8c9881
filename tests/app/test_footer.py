"""The footer is one widget that draws the screen's keys: it shows them in the first frame, follows
the screen's bindings as they change, and a click or hover on a key works as on Textual's own."""
from __future__ import annotations

from app.game import make_app
from app.screens.simulator import SimulatorScreen
from app.widgets.footer import RidgeFooter
from helpers.pilot import settled, until


def _line(footer: RidgeFooter) -> str:
    return footer.render().plain


def _column(footer: RidgeFooter, word: str) -> int:
    column = _line(footer).index(word)
    assert column >= 0, f"{word!r} not in the footer"
    return column


async def test_the_footer_is_one_widget_with_every_key_and_the_palette_on_the_right(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        footer = app.screen.query_one(RidgeFooter)
        assert not footer.children
        line = _line(footer)
        assert len(line) == 80
        for label in ("c Continue", "m Map", "s Stats", "p Player", "f1 Help"):
            assert f" {label} " in line
        assert line.rstrip().endswith("▏^p palette")


async def test_a_click_on_a_key_presses_it_and_hovering_shows_its_tip(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        footer = app.screen.query_one(RidgeFooter)
        x = _column(footer, "Map")
        await pilot.hover(RidgeFooter, offset=(x, 0))
        await until(pilot, lambda: footer.tooltip == "The campaign map: every chapter", "the Map key's tip")
        await pilot.click(RidgeFooter, offset=(x, 0))
        await until(pilot, lambda: app.current_mode == "map", "the map, opened from the footer")


async def test_the_footer_follows_the_keys_the_screen_offers(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, SimulatorScreen), "the simulator")
        await settled(pilot)
        footer = app.screen.query_one(RidgeFooter)
        assert "l Lock in" in _line(footer)  # predicting first: lock in is offered
        await pilot.press("f")
        await until(pilot, lambda: "Lock in" not in _line(footer), "lock in gone once predicting is off")
        await pilot.press("f")
        await until(pilot, lambda: "l Lock in" in _line(footer), "lock in back")
