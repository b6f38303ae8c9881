"""Playing through Pilot the way the modes' tests all need it: the first run's name, the way to a
puzzle, the prediction form filled as the engine has it (each estimate scaled by a factor, to make
one wrong; or right but for the wrong reason), by keys or directly, then locking in."""
from __future__ import annotations

from textual.widgets import Input

from app.screens.dialogs import NameDialog
from app.screens.home import HomeScreen
from app.screens.puzzle import PuzzleScreen
from app.widgets.picker import ChoiceList, Picker

from helpers.pilot import settle
from helpers.snapshots import fixture_bank
from puzzles.grading import objective_bottleneck


async def fill(pilot, screen, item, estimate_factor: float = 1.0, certainty: str = "medium") -> None:
    """The engine's answer to `item` in the form on `screen`, each estimate times `estimate_factor`."""
    key = item.key
    screen.query_one("#bottleneck", Picker).value = objective_bottleneck(key)
    screen.query_one("#lever", Picker).value = key.best_lever
    screen.query_one("#band", Picker).value = key.gain_band
    if screen.query("#reason"):
        screen.query_one("#reason", Picker).value = key.reason
    for name in item.puzzle.estimates:
        screen.query_one(f"#est-{name}").value = repr(key.estimates[name] * estimate_factor)
    screen.query_one("#certainty", ChoiceList).value = certainty
    await settle(pilot)


async def lock_in(pilot) -> None:
    """Lock in, and confirm."""
    await settle(pilot, "l")
    await settle(pilot, "y")


async def first_run(pilot, name: str = "Ada") -> None:
    """The first start: the name dialog, then home as that player."""
    await settle(pilot)
    assert isinstance(pilot.app.screen, NameDialog)
    await settle(pilot, *name, "enter")
    assert isinstance(pilot.app.screen, HomeScreen)
    assert pilot.app.session is not None and pilot.app.session.name == name


async def choose(pilot, select_id: str, value: str) -> None:
    """Pick `value` in a Picker with the keyboard: focus, Enter to open, arrows, Enter."""
    select = pilot.app.screen.query_one(f"#{select_id}", Picker)
    values = [v for _, v in select.options]  # the list opens on the value chosen, else the first
    here = values.index(select.value) if select.value in values else 0
    there = values.index(value)
    select.focus()
    await settle(pilot, "enter")
    moves = ["down"] * (there - here) if there >= here else ["up"] * (here - there)
    await settle(pilot, *moves, "enter")
    assert select.value == value


async def answer(pilot, prediction: dict, certainty: str = "medium", by_keys: bool = False) -> None:
    """Fill in the form: with the keyboard (and a click) when `by_keys`, else by setting the
    controls directly, which is quicker for tests whose subject is elsewhere."""
    screen = pilot.app.screen
    assert isinstance(screen, PuzzleScreen)
    parts = (("bottleneck", "bottleneck"), ("lever", "lever"), ("band", "gain_band"), ("reason", "reason"))
    for select_id, key in parts:
        if by_keys:
            await choose(pilot, select_id, prediction[key])
        else:
            screen.query_one(f"#{select_id}", Picker).value = prediction[key]
    for name, text in prediction.get("estimates", {}).items():
        field = screen.query_one(f"#est-{name}", Input)
        if by_keys:
            field.focus()
            await settle(pilot, *text)
        else:
            field.value = text
    if not by_keys:
        screen.query_one("#certainty", ChoiceList).value = certainty
        await settle(pilot)
        assert screen.query_one("#form").certainty() == certainty
        return
    choices = screen.query_one("#certainty", ChoiceList)
    choices.scroll_visible(animate=False)
    await settle(pilot)
    line = [v for _, v in choices.options].index(certainty)
    await pilot.click(choices, offset=(2, line))  # by mouse, to show the form works both ways
    await settle(pilot)
    assert screen.query_one("#form").certainty() == certainty


def key_answer(puzzle_id: str) -> dict:
    """The engine's answer to a fixture puzzle, as `answer` takes it."""
    key = fixture_bank().keys[puzzle_id]
    return {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain_band": key.gain_band,
            "reason": key.reason}


async def to_puzzle(pilot) -> PuzzleScreen:
    """From home to the first puzzle (Continue, then Start on the briefing)."""
    await settle(pilot)
    await settle(pilot, "c", "s")
    assert isinstance(pilot.app.screen, PuzzleScreen)
    return pilot.app.screen


async def fill_wrong_reason(pilot) -> None:
    """A prediction that is right but for the wrong reason, with one hint taken."""
    screen = pilot.app.screen
    key = fixture_bank().keys[screen.puzzle.id]
    screen.query_one("#bottleneck", Picker).value = objective_bottleneck(key)
    screen.query_one("#lever", Picker).value = key.best_lever
    screen.query_one("#band", Picker).value = key.gain_band
    screen.query_one("#reason", Picker).value = "kv-cap"  # does not hold at batch 1 (the weight read would: it decides)
    screen.query_one("#est-intensity", Input).value = "2 * 70e9 / 141e9"
    screen.query_one("#certainty", ChoiceList).value = "medium"
    await settle(pilot, "h")
    screen.query_one("#bottleneck").focus()
    await settle(pilot)


def fill_right(screen, app) -> None:
    """The key's answer in the form (every estimate 2), for tests of what is drawn after it."""
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
