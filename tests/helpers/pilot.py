"""Waiting on a condition in Pilot tests, never on timing.

`pilot.pause()` returns once the process looks idle (wall clock against CPU time), which on a busy
machine can be before a posted message has been handled or a style has been applied. A test that
asserts right after one pause is therefore timing-dependent. `until` pauses until the condition
holds, bounded by a count of pauses so a broken test still fails, with its message.
"""
from __future__ import annotations

from collections.abc import Callable

from app.screens.base import at_work, wait_for_work

MAX_PAUSES = 400


async def until(pilot, condition: Callable[[], object], what: str = "condition", pauses: int = MAX_PAUSES) -> None:
    """Pause until `condition()` is true; fail naming `what` if it never becomes true."""
    for _ in range(pauses):
        if condition():
            return
        await pilot.pause()
    assert condition(), f"{what} never held after {pauses} pauses"


def quiet(app) -> bool:
    """No message waiting anywhere on screen and no worker at work (a question waiting on the
    player's answer to the dialog on screen is as settled as it gets: `app.screens.base.at_work`)."""
    try:
        nodes = [app, *app.screen_stack, *app.screen.walk_children(with_self=True)]
    except Exception:  # noqa: BLE001 - no screen yet (or the app has exited)
        nodes = [app]
    if any(node.message_queue_size for node in nodes):
        return False
    return not at_work(app)


async def settled(pilot, pauses: int = MAX_PAUSES, delay: float | None = None, calm_needed: int = 2) -> None:
    """Pause until the app is quiet `calm_needed` times running: every message handled, including
    the ones handlers posted in turn, every worker finished but those waiting on the player. One
    pause only covers what was queued when it began; under load that is not everything a key press
    sets off. `delay` is passed to
    `pilot.pause`: None waits for the process to look idle (at least 20 ms a pause), 0 only lets
    every widget on screen handle what it was sent (the walk's many steps use that)."""
    calm = 0
    for _ in range(pauses):
        await wait_for_work(pilot.app)
        await pilot.pause(delay)
        calm = calm + 1 if quiet(pilot.app) else 0
        if calm >= calm_needed:
            return
    raise AssertionError(f"the app was still busy after {pauses} pauses")


async def settle(pilot, *keys: str) -> None:
    """Press `keys` (if any), then wait until the app has handled them and any work they started
    (`settled`: a condition, never one pause)."""
    if keys:
        await pilot.press(*keys)
    await settled(pilot)


_NAMED = {" ": "space", "*": "asterisk", "+": "plus", "/": "slash", ".": "full_stop", "-": "minus"}


async def burst(pilot, *keys: str) -> None:
    """Queue every key before the app handles any of them, as a paste or a fast typist does
    (Pilot's own `press` waits for the app between keys)."""
    from textual import events

    for key in keys:
        if len(key) == 1:
            pilot.app.post_message(events.Key(_NAMED.get(key, key), key))
        else:
            pilot.app.post_message(events.Key(key, None))
    await settle(pilot)
