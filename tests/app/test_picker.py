"""The one-widget menus of the prediction form, driven by keys (and a click) on the puzzle screen
at 80×24: opening, moving, picking, a letter jump, Escape closing the list without leaving the
puzzle, Tab moving on, keys in a burst, the list kept inside its pane above the footer, and the
certainty list. The form's screens read these values, so a key lost here is a wrong answer."""
from __future__ import annotations

from textual.widgets import Input

from app.screens.puzzle import PuzzleScreen
from app.widgets.footer import RidgeFooter
from app.widgets.picker import ChoiceList, Picker
from helpers.pilot import burst, settle, settled
from helpers.snapshots import build_app
from helpers.forms import to_puzzle

SIZE = (80, 24)


def labels_of(picker: Picker) -> list[str]:
    return [label for label, _ in picker.options]


async def test_enter_opens_arrows_move_enter_picks(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        picker = screen.query_one("#bottleneck", Picker)
        assert screen.focused is picker and picker.is_blank() and not picker.expanded
        await settle(pilot, "enter")
        assert picker.expanded
        shown = "\n".join(line.plain for line, _ in picker.lines(picker.size.width))
        assert all(label in shown for label in labels_of(picker)[: Picker.VISIBLE])
        await settle(pilot, "down", "down", "enter")
        assert picker.value == picker.options[2][1] and not picker.expanded
        assert screen.query_one("#form").prediction()["bottleneck"] == picker.options[2][1]
        await settle(pilot, "enter")  # opens on the value chosen
        await settle(pilot, "up", "space")
        assert picker.value == picker.options[1][1]


async def test_escape_closes_the_list_and_stays_on_the_puzzle(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        picker = screen.query_one("#lever", Picker)
        picker.focus()
        await settle(pilot, "enter", "down", "escape")
        assert not picker.expanded and picker.is_blank()
        assert pilot.app.screen is screen


async def test_a_letter_jumps_and_tab_closes_and_moves_on(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        picker = screen.query_one("#lever", Picker)
        picker.focus()
        target = next(i for i, label in enumerate(labels_of(picker)) if i > 0)
        letter = labels_of(picker)[target][0]
        first = next(i for i, label in enumerate(labels_of(picker)) if i > 0 and label[0] == letter)
        await settle(pilot, "enter", letter.lower(), "enter")
        assert picker.value == picker.options[first][1]
        await settle(pilot, "enter", "tab")
        assert not picker.expanded and screen.focused is screen.query_one("#band", Picker)


async def test_keys_in_a_burst_all_land_in_order(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        await burst(pilot, "enter", "down", "down", "down", "enter", "tab", "enter", "down", "enter")
        assert screen.query_one("#bottleneck", Picker).value == screen.query_one("#bottleneck", Picker).options[3][1]
        assert screen.query_one("#lever", Picker).value == screen.query_one("#lever", Picker).options[1][1]


async def test_an_open_list_stays_inside_its_pane_above_the_footer(tmp_path):
    """The last menu of the form opened at 80×24: every option of the list is inside the answer
    pane (which scrolls to it), none under the footer."""
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        pickers = list(screen.query_one("#form").query(Picker))
        last = pickers[-1]
        last.focus()
        await settle(pilot, "enter")
        await settled(pilot)
        pane = screen.query_one("#answer").region
        footer = screen.query_one(RidgeFooter).region
        assert last.expanded
        assert pane.contains_region(last.region), (pane, last.region)
        assert last.region.bottom <= footer.y


async def test_the_certainty_list_by_keys_and_by_click(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        choices = screen.query_one("#certainty", ChoiceList)
        choices.focus()
        await settle(pilot, "down", "enter")
        assert screen.query_one("#form").certainty() == "medium"
        assert "●" in choices.lines(choices.size.width)[1][0].plain
        choices.scroll_visible(animate=False)
        await settled(pilot)
        await pilot.click(choices, offset=(3, 2))
        await settled(pilot)
        assert screen.query_one("#form").certainty() == "high"


async def test_tab_from_the_napkin_lands_on_a_control_you_can_see(tmp_path):
    """Below 100 columns Tab from the napkin used to land on the answer pane itself, which shows
    no focus: now it lands on the first control of the prediction."""
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        await settle(pilot, "n", "tab")
        assert isinstance(pilot.app.screen, PuzzleScreen)
        assert screen.focused is screen.query_one("#bottleneck", Picker)


async def test_tab_in_a_burst_moves_on_before_the_next_keys(tmp_path):
    """Typed as one burst (a paste, a browser), the keys after Tab belong to the next control:
    a number, Tab, then Down and Enter on the certainty list picks "medium", and the number
    stays whole in the box it was typed into."""
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        chain = screen.focus_chain
        choices = screen.query_one("#certainty", ChoiceList)
        before = chain[chain.index(choices) - 1]
        before.focus()
        await settled(pilot)
        typed = ("1", "2") if isinstance(before, Input) else ()
        await burst(pilot, *typed, "tab", "down", "enter")
        assert screen.focused is choices
        assert screen.query_one("#form").certainty() == "medium"
        if typed:
            assert before.value == "12"
