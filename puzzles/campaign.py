"""The campaign's order, headless: which puzzle a player meets next and when a puzzle put off
with "retry later" comes back. Pure functions over chapter puzzle ids (in course order), each
puzzle's recorded outcomes, and the retry queue; the app's session (`app.progress.Session`) asks
them with what the save holds. Imports no Textual.

The order: in the earliest chapter not yet cleared, a puzzle never tried, else one tried but not
cleared; puzzles put off come after every other open puzzle, in the order they were put off.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.ids import Outcome


def cleared(outcomes: Mapping[str, Sequence[str]], puzzle_id: str) -> bool:
    """A puzzle counts as cleared once any attempt at it cleared."""
    return Outcome.CLEARED in outcomes.get(puzzle_id, ())


def next_puzzle(chapters: Sequence[Sequence[str]], outcomes: Mapping[str, Sequence[str]], queue: Sequence[str],
                exclude: Sequence[str] = (), within: Sequence[str] | None = None) -> str | None:
    """The next puzzle id (None when everything is cleared). `chapters` holds each chapter's
    puzzle ids in course order; `within` limits the choice to one chapter's ids."""
    for ids in ([within] if within is not None else chapters):
        open_ids = [p for p in ids if not cleared(outcomes, p) and p not in exclude and p not in queue]
        untried = [p for p in open_ids if not outcomes.get(p)]
        if untried:
            return untried[0]
        if open_ids:
            return open_ids[0]
    return next((p for p in queue if p not in exclude and (within is None or p in within)), None)


def returns_after(chapters: Sequence[Sequence[str]], outcomes: Mapping[str, Sequence[str]], queue: Sequence[str],
                  puzzle_id: str) -> int:
    """How many puzzles `next_puzzle` offers before `puzzle_id` comes back from the queue: every
    open puzzle not put off, then those put off before it."""
    open_ids = [p for ids in chapters for p in ids if not cleared(outcomes, p) and p not in queue and p != puzzle_id]
    earlier = queue[:list(queue).index(puzzle_id)] if puzzle_id in queue else queue
    return len(open_ids) + len([p for p in earlier if p != puzzle_id])
