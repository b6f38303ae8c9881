"""Waiting on a condition in Pilot tests, never on timing.

`pilot.pause()` returns once the process looks idle (wall clock against CPU time), which on a busy
machine can be before a posted message has been handled or a style has been applied. A test that
asserts right after one pause is therefore timing-dependent. `until` pauses until the condition
holds, bounded by a count of pauses so a broken test still fails, with its message.
"""
from __future__ import annotations

from collections.abc import Callable

MAX_PAUSES = 400


async def until(pilot, condition: Callable[[], object], what: str = "condition", pauses: int = MAX_PAUSES) -> None:
    """Pause until `condition()` is true; fail naming `what` if it never becomes true."""
    for _ in range(pauses):
        if condition():
            return
        await pilot.pause()
    assert condition(), f"{what} never held after {pauses} pauses"
