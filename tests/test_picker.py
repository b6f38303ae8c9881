"""The prediction form's menus (Textual's Select) and certainty (a RadioSet), driven by keys (and
a click) on the puzzle screen at 80×24: opening, moving, picking, Escape closing the list without
leaving the puzzle, Tab moving on, a burst of keys after Tab, and the open list on the screen. The
form's screens read these values, so a key lost here is a wrong answer."""
from __future__ import annotations

from textual.widgets import Input, RadioSet, Select

from app.screens.puzzle import PuzzleScreen
from pilot_forms import offered
from pilot_wait import settled, until
from snapshot_app import build_app
from test_comfort import burst, settle, to_puzzle

SIZE = (80, 24)


async def test_enter_opens_arrows_move_enter_picks(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        select = screen.query_one("#bottleneck", Select)
        values = offered(screen.query_one("#form"), "bottleneck")
        assert screen.focused is select and select.is_blank() and not select.expanded
        await settle(pilot, "enter")
        assert select.expanded
        await settle(pilot, "down", "down", "enter")  # past the blank line, to the second option
        assert select.value == values[1] and not select.expanded
        assert screen.query_one("#form").prediction()["bottleneck"] == values[1]
        await settle(pilot, "enter")  # opens on the value chosen
        await settle(pilot, "up", "enter")
        assert select.value == values[0]


async def test_escape_closes_the_list_and_stays_on_the_puzzle(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        select = screen.query_one("#lever", Select)
        select.focus()
        await settle(pilot, "enter", "down", "escape")
        assert not select.expanded and select.is_blank()
        assert pilot.app.screen is screen


async def test_tab_moves_on_to_the_next_menu(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        select = screen.query_one("#lever", Select)
        select.focus()
        await settle(pilot, "tab")
        assert screen.focused is screen.query_one("#band", Select)


async def test_an_open_list_stays_on_the_screen(tmp_path):
    """The last menu of the form opened at 80×24: its whole list is on the screen."""
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        last = list(screen.query_one("#form").query(Select))[-1]
        last.focus()
        await settle(pilot, "enter")
        await until(pilot, lambda: last.expanded, "the list open")
        await settled(pilot)
        overlay = last.query_one("SelectOverlay").region
        assert overlay.height > 0 and screen.region.contains_region(overlay), overlay


async def test_the_certainty_list_by_keys_and_by_click(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        choices = screen.query_one("#certainty", RadioSet)
        choices.focus()
        await settle(pilot, "down", "enter")
        assert screen.query_one("#form").certainty() == "medium"
        choices.scroll_visible(animate=False)
        await settled(pilot)
        await pilot.click("#certainty-high")
        await settled(pilot)
        assert screen.query_one("#form").certainty() == "high"


async def test_tab_from_the_napkin_lands_on_a_control_you_can_see(tmp_path):
    """Below 100 columns Tab from the napkin used to land on the answer pane itself, which shows
    no focus: now it lands on the first control of the prediction."""
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        await settle(pilot, "n", "tab")
        assert isinstance(pilot.app.screen, PuzzleScreen)
        assert screen.focused is screen.query_one("#bottleneck", Select)


async def test_tab_in_a_burst_moves_on_before_the_next_keys(tmp_path):
    """Typed as one burst (a paste, a browser), the keys after Tab belong to the next control:
    a number, Tab, then Down and Enter on the certainty list picks "medium", and the number
    stays whole in the box it was typed into."""
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        chain = screen.focus_chain
        choices = screen.query_one("#certainty", RadioSet)
        before = chain[chain.index(choices) - 1]
        before.focus()
        await settled(pilot)
        typed = ("1", "2") if isinstance(before, Input) else ()
        await burst(pilot, *typed, "tab", "down", "enter")
        assert screen.focused is choices
        assert screen.query_one("#form").certainty() == "medium"
        if typed:
            assert before.value == "12"
