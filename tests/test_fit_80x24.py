"""Every screen at 80×24 (the campaign and reveal at 100×30 too) with the real packs: no label cut short (no "…"), and every key the
footer offers shown whole. Screens that scroll are checked page by page."""
from __future__ import annotations

import pytest
from textual.widgets import Input

from app.widgets.picker import ChoiceList, Picker

from app.game import make_app
from pilot_wait import until
from screen_text import screen_lines

SIZE = (80, 24)


def problems(app, where: str) -> list[str]:
    """Cut labels and footer keys that do not show whole, on the screen as drawn now."""
    lines = screen_lines(app)
    found = [f"{where}: cut at row {row}: {line.strip()!r}" for row, line in enumerate(lines) if "…" in line]
    footer = lines[-1] if lines else ""
    from textual.screen import ModalScreen

    shown = () if isinstance(app.screen, ModalScreen) else app.screen.active_bindings.items()  # no footer of its own
    for key, active in shown:
        binding = active.binding
        if binding.show and active.enabled and binding.description and binding.description not in footer:
            found.append(f"{where}: footer key {key} ({binding.description}) not shown whole: {footer.strip()!r}")
    return found


async def settle(pilot, *keys: str) -> None:
    if keys:
        await pilot.press(*keys)
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def pages(pilot, selector: str, where: str, most: int = 12) -> list[str]:
    """Check a scrolling part page by page, from its top to its end."""
    app = pilot.app
    scroll = app.screen.query_one(selector)
    scroll.scroll_home(animate=False)
    await pilot.pause()
    found = []
    for page in range(most):
        found += problems(app, f"{where} p{page}")
        if scroll.scroll_y >= scroll.max_scroll_y:
            break
        scroll.scroll_page_down(animate=False)
        await pilot.pause()
    return found


def _fill_right(screen, app) -> None:
    key = app.bank.key(screen.puzzle)
    screen.query_one("#bottleneck", Picker).value = key.bottleneck
    screen.query_one("#lever", Picker).value = key.best_lever
    screen.query_one("#band", Picker).value = key.gain_band
    if screen.query("#reason"):
        screen.query_one("#reason", Picker).value = key.reason
    for field in screen.query(Input):
        if (field.id or "").startswith("est-"):
            field.value = "2"
    screen.query_one("#certainty", ChoiceList).value = "medium"


@pytest.mark.parametrize("size", [SIZE, (100, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_campaign_puzzle_and_reveal_fit(tmp_path, size):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    found: list[str] = []
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.bank_ready, "the packs")
        await settle(pilot)
        found += await pages(pilot, "#home-body", "home")
        await settle(pilot, "m")
        found += problems(app, "map")
        for _ in range(12):
            await settle(pilot, "down")
            found += problems(app, "map")
        await settle(pilot, "escape", "c")
        found += await pages(pilot, "#briefing-body", "briefing")
        await settle(pilot, "s")
        found += await pages(pilot, "#brief", "puzzle brief")
        found += await pages(pilot, "#answer", "puzzle answer")
        await settle(pilot, "f1")
        found += await pages(pilot, "#help-body", "help")
        await settle(pilot, "escape")
        _fill_right(app.screen, app)
        await settle(pilot, "l")
        found += problems(app, "lock-in dialog")
        await settle(pilot, "y")
        found += await pages(pilot, "#reveal-body", "reveal", most=20)
    assert not found, "\n".join(found)


async def test_simulator_tabs_fit(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    found: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "v")
        found += problems(app, "simulator, predicting")
        await settle(pilot, "f")
        for key in ("r", "o", "x", "k", "c", "b"):
            await settle(pilot, key)
            found += problems(app, f"simulator tab {key}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("key", ["d", "e", "h", "t", "l", "s"])
async def test_modes_fit(tmp_path, key):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.bank_ready, "the packs")
        await settle(pilot, key)
        found = problems(app, f"mode {key}")
    assert not found, "\n".join(found)
