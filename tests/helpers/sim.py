"""The simulator on its own in Pilot, and typing into its fields until it has taken each edit."""
from __future__ import annotations

from textual.widgets import Input

from app.game import make_app
from app.screens.simulator import SimulatorScreen
from helpers.pilot import until


def SimApp(pack_path=None, predict_first: bool = True, tab: str | None = None):
    """The simulator on its own in the one app factory (Ridge's styles, its Back handling),
    with no blinking cursor and errors failing the test."""
    return make_app(strict=True, cursor_blink=False,
                    solo=lambda: SimulatorScreen(pack_path=pack_path, predict_first=predict_first, initial_tab=tab))


async def type_into(pilot, selector: str, text: str) -> None:
    """Type into a field and wait until the screen has taken the edit (and redrawn its notices)."""
    screen = pilot.app.screen
    widget = screen.query_one(selector, Input)
    widget.focus()
    widget.value = ""
    await pilot.press(*text)
    name = selector.removeprefix("#in-")
    await until(pilot, lambda: widget.value == text and (name == "budget" or screen.sim.raw.get(name) == text),
                f"{selector} took {text!r}")
    await settled(pilot)


async def settled(pilot) -> None:
    """Wait until every inline error is shown exactly when the simulator holds one for its field."""
    screen = pilot.app.screen

    def consistent() -> bool:
        shown = {}
        for err in screen.query(".sim-error"):
            if not (err.id or "").startswith("err-"):
                continue
            name = err.id.removeprefix("err-")
            shown[name] = bool(err.display)
            if name == "budget" and shown[name] != err.has_class("-shown"):
                return False
        # A field's message line is made on its first message: a held error needs a shown line.
        held = {name for name, message in screen.sim.errors.items() if message}
        return all(shown.get(name, False) == (name in held) for name in held | set(shown) - {"budget"})

    await until(pilot, consistent, "inline errors match the simulator's")
