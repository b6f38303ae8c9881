"""Filling the prediction form through Pilot the way the modes' tests all need it: everything as
the engine has it (each estimate scaled by a factor, to make one wrong), then locking in."""
from __future__ import annotations

from app.widgets.picker import ChoiceList, Picker

from pilot_wait import settled
from puzzles.grading import objective_bottleneck


async def settle(pilot, *keys):
    """Press `keys`, then wait until the app is quiet (a condition, never one pause)."""
    if keys:
        await pilot.press(*keys)
    await settled(pilot)


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
