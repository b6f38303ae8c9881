"""Every key a screen offers is on show at 80 columns: in the footer, or in the list F1 opens
(the footer names F1). `a` on the puzzle, and pin and save in the simulator, are in neither the
footer nor, before, a list a player could find."""
from __future__ import annotations

import pytest

from app.screens.help import HelpScreen, key_rows
from app.widgets.footer import RidgeFooter
from helpers.pilot import settled, until
from helpers.snapshots import build_app

pytestmark = pytest.mark.ui


def ridge_keys(screen) -> dict[str, str]:
    """key -> description of every binding of Ridge's own (they carry ids) enabled on `screen`."""
    return {key: active.binding.description for key, active in screen.active_bindings.items()
            if active.binding.id and active.enabled and not active.binding.system}


async def keys_shown(pilot) -> tuple[str, str]:
    """The footer's line, and the text of the key list F1 opens on the screen."""
    app = pilot.app
    screen = app.screen
    footer = screen.query_one(RidgeFooter).render().plain
    await pilot.press("f1")
    await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
    assert app.screen.query_one("#help-keys")
    listed = "\n".join(f"{keys} {what}" for keys, what in key_rows(screen))  # the rows it lays out
    await pilot.press("escape")
    await until(pilot, lambda: app.screen is screen, "the help closed")
    return footer, listed


def missing(screen, footer: str, listed: str) -> list[str]:
    out = []
    for key, description in ridge_keys(screen).items():
        shown = screen.app.get_key_display(next(a.binding for k, a in screen.active_bindings.items() if k == key))
        if f"{shown} {description}" in footer:
            continue
        if description in listed and shown in listed:
            continue
        out.append(f"{key} ({description})")
    return out


async def test_every_key_of_every_screen_is_in_the_footer_or_f1(tmp_path):
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        seen = {}
        for keys, kind in (((), "HomeScreen"), (("c", "s"), "PuzzleScreen"), (("escape", "escape", "v"), "SimulatorScreen")):
            await pilot.press(*keys)
            await until(pilot, lambda: type(app.screen).__name__ == kind, kind)
            await settled(pilot)
            screen = app.screen
            footer, listed = await keys_shown(pilot)
            assert "f1 Help" in footer
            assert missing(screen, footer, listed) == [], type(screen).__name__
            seen[type(screen).__name__] = listed
        assert "Answer" in seen["PuzzleScreen"]
        assert "Pin A" in seen["SimulatorScreen"] and "Save puzzle" in seen["SimulatorScreen"]
