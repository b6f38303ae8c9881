"""Filling the prediction form through Pilot the way the modes' tests all need it: everything as
the engine has it (each estimate scaled by a factor, to make one wrong), then locking in."""
from __future__ import annotations

from textual.widgets import RadioButton, Select

from pilot_wait import settled
from puzzles.grading import objective_bottleneck


async def settle(pilot, *keys):
    """Press `keys`, then wait until the app is quiet (a condition, never one pause)."""
    if keys:
        await pilot.press(*keys)
    await settled(pilot)


def offered(form, select_id: str) -> list[str]:
    """The ids a prediction form's Select offers, in the order it lists them (after its blank)."""
    spec = form.spec
    return list({"bottleneck": spec.bottlenecks, "lever": spec.levers, "band": spec.bands,
                 "reason": tuple(rid for rid, _ in spec.reasons)}[select_id])


async def choose_by_keys(pilot, select: Select, values: list, value) -> None:
    """Pick `value` in `select` with the keyboard: focus, Enter opens its list on the value chosen
    (or on the blank line above the first option), arrows move, Enter picks."""
    here = values.index(select.value) + 1 if select.value in values else 0
    there = values.index(value) + 1
    select.focus()
    await settle(pilot, "enter")
    moves = ["down"] * (there - here) if there >= here else ["up"] * (here - there)
    await settle(pilot, *moves, "enter")
    assert select.value == value


async def fill(pilot, screen, item, estimate_factor: float = 1.0, certainty: str = "medium") -> None:
    """The engine's answer to `item` in the form on `screen`, each estimate times `estimate_factor`."""
    key = item.key
    screen.query_one("#bottleneck", Select).value = objective_bottleneck(key)
    screen.query_one("#lever", Select).value = key.best_lever
    screen.query_one("#band", Select).value = key.gain_band
    if screen.query("#reason"):
        screen.query_one("#reason", Select).value = key.reason
    for name in item.puzzle.estimates:
        screen.query_one(f"#est-{name}").value = repr(key.estimates[name] * estimate_factor)
    screen.query_one(f"#certainty-{certainty}", RadioButton).value = True
    await settle(pilot)


async def lock_in(pilot) -> None:
    """Lock in, and confirm."""
    await settle(pilot, "l")
    await settle(pilot, "y")
