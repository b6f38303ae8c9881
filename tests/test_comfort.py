"""Comfort at 80×24 by keyboard: keys that arrive in a burst, the napkin's sums one after another,
the brief key, `a` and the first-run Escape. Driven by keys with Pilot over the fixture packs."""
from __future__ import annotations

from textual import events
from textual.widgets import Label

from app.widgets.picker import Picker

from app.screens.dialogs import ConfirmDialog, NameDialog
from app.screens.puzzle import PuzzleScreen
from snapshot_app import build_app
from pilot_wait import settled

SIZE = (80, 24)


async def settle(pilot, *keys: str) -> None:
    if keys:
        await pilot.press(*keys)
    await settled(pilot)  # a condition, not one pause: see tests/pilot_wait.py


_NAMED = {" ": "space", "*": "asterisk", "+": "plus", "/": "slash", ".": "full_stop", "-": "minus"}


async def burst(pilot, *keys: str) -> None:
    """Queue every key before the app handles any of them, as a paste or a fast typist does
    (Pilot's own `press` waits for the app between keys)."""
    for key in keys:
        if len(key) == 1:
            pilot.app.post_message(events.Key(_NAMED.get(key, key), key))
        else:
            pilot.app.post_message(events.Key(key, None))
    await settle(pilot)


async def to_puzzle(pilot) -> PuzzleScreen:
    await settle(pilot)
    await settle(pilot, "c", "s")
    assert isinstance(pilot.app.screen, PuzzleScreen)
    return pilot.app.screen


async def test_two_napkin_sums_typed_in_a_burst_both_evaluate(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        await settle(pilot, "n")
        await burst(pilot, *"2 * 3", "enter", *"4 * 5", "enter")
        pad = screen.query_one("#napkin")
        assert pad.history == ["2 * 3 = 6", "4 * 5 = 20"]
        assert pad.input.value == ""
        assert "4 * 5 = 20" in str(screen.query_one("#napkin-result", Label).render())


async def test_napkin_error_clears_with_the_line_and_up_recalls(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        await settle(pilot, "n", *"140 GB / 3.35 TB/s", "enter")
        result = screen.query_one("#napkin-result", Label)
        assert "41.79 ms" in str(result.render())
        await settle(pilot, *"1 +", "enter")
        assert "ends too early" in str(result.render())
        pad = screen.query_one("#napkin")
        assert pad.input.value == "1 +"  # a refused sum stays on the line to be fixed
        await settle(pilot, "backspace", "backspace", "backspace")
        assert str(result.render()).strip() == ""
        await settle(pilot, "up")
        assert pad.input.value == "140 GB / 3.35 TB/s"


async def test_backspace_then_a_digit_in_a_burst_is_kept(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        field = screen.query_one("#est-intensity")
        field.focus()
        await burst(pilot, *"12", "backspace", "5", "backspace", "backspace", *"40", "left", "3")
        assert field.value == "430"


async def test_a_goes_to_the_first_unanswered_part_even_when_focused(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        screen.query_one("#lever").focus()
        await settle(pilot, "a")
        assert pilot.app.focused is screen.query_one("#bottleneck")
        await settle(pilot, "a")  # still empty, so it stays
        assert pilot.app.focused is screen.query_one("#bottleneck")
        screen.query_one("#bottleneck", Picker).value = "decode-weights"
        await settle(pilot, "a")
        assert pilot.app.focused is screen.query_one("#lever")


async def test_b_moves_to_the_brief_and_shows_the_card_whole(tmp_path):
    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        assert "b" in [key for key, _ in _footer_keys(screen)]
        brief = screen.query_one("#brief")
        await settle(pilot, "b")
        assert pilot.app.focused is brief and brief.scroll_y == 0
        await settle(pilot, "b")
        card_title = screen.query_one("#card-title")
        card = screen.query_one("#card")
        assert card_title.region.y == brief.region.y  # the card read from its heading
        assert screen.query_one("#puzzle-body").has_class("-reading")  # 80 columns: the brief alone
        assert not screen.query_one("#answer").display
        if card.region.height + 1 <= brief.region.height:
            assert brief.region.contains_region(card.region)  # all of it in view when it fits
        else:  # a card taller than the pane is paged through before the hints
            await settle(pilot, "b")
            assert brief.scroll_y < screen.query_one("#hints-title").virtual_region.y
        for _ in range(8):
            await settle(pilot, "b")
            if brief.scroll_y == 0:
                break
        assert brief.scroll_y == 0  # round again to the scenario
        await settle(pilot, "a")  # back to the prediction, side by side again
        assert screen.query_one("#answer").display and pilot.app.focused is screen.query_one("#bottleneck")


def _footer_keys(screen):
    return [(key, active.binding.description) for key, active in screen.active_bindings.items()
            if active.binding.show]


async def test_escape_on_the_first_run_screen_asks_before_leaving(tmp_path):
    app = build_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, NameDialog)
        await settle(pilot, "escape")
        assert isinstance(app.screen, ConfirmDialog) and app.screen.id == "leave-first-run"
        await settle(pilot, "escape")  # Escape again is "Stay"
        assert isinstance(app.screen, NameDialog) and app.is_running
        assert app.focused is app.screen.query_one("#name")
        await settle(pilot, "escape", "y")
        assert not app.is_running or app._exit_renderables is not None


async def test_the_reveal_opens_with_what_to_remember_and_says_when_a_retry_returns(tmp_path):
    from pilot_wait import until
    from screen_text import screen_lines
    from test_snapshots import _fill

    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        await to_puzzle(pilot)
        await _fill(pilot)
        await settle(pilot, "l", "y")
        top = "\n".join(screen_lines(pilot.app)[:12])
        key = pilot.app.screen.locked.key  # the realistic gain that keys the band, not the floor's ceiling
        assert "What to remember" in top and "Bound by" in top and f"wins: {key.band_gain:.2f}×" in top
        assert f"{key.band_gain:.2f}" != f"{key.gain:.2f}"
        notes: list[str] = []
        tell = pilot.app.notify
        pilot.app.notify = lambda message, **kwargs: (notes.append(str(message)), tell(message, **kwargs))[1]
        await settle(pilot, "r")
        await until(pilot, lambda: any("comes back" in note for note in notes), "the retry note")
        # back within three: here after the one other puzzle of its chapter (tests/test_campaign_order.py)
        assert "Queued: it comes back after 1 other puzzle." in notes


async def test_f1_lists_ridges_own_keys_once_each_and_the_palette_has_one_theme(tmp_path):
    from app.screens.help import HelpScreen, key_lines

    async with build_app(tmp_path, profile="Ada").run_test(size=SIZE) as pilot:
        screen = await to_puzzle(pilot)
        screen.query_one("#napkin-input").focus()
        await settle(pilot, "f1")
        assert isinstance(pilot.app.screen, HelpScreen)
        lines = key_lines(screen)
        text = "\n".join(lines)
        for internal in ("Show menu", "super+c", "Focus Next", "Select all", "Delete character"):
            assert internal not in text, internal
        actions = [line.split(":")[0].split(None, 1)[1] for line in lines if ":" in line]
        assert len(actions) == len(set(actions))  # once each
        assert "Earlier sum" in text and "here" in text  # the focused part's keys too
        await settle(pilot, "escape")
        titles = [command.title for command in pilot.app.get_system_commands(screen)]
        assert titles.count("Theme") == 1 and "Keys" not in titles and titles.count("Screenshot") == 1
