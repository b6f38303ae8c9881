"""The campaign's order, headless: which puzzle a player meets next and when a puzzle put off
with "retry later" comes back. Pure functions over chapter puzzle ids (in course order), each
puzzle's recorded outcomes, and the retry queue; a player's session (`saves.session.Session`) asks
them with what the save holds. Where a player stands (a chapter's progress, what a chapter lists
a puzzle by, the chapters before it not yet cleared) is here too. Imports no Textual.

The order: a puzzle put off comes back once `RETRY_GAP` other campaign answers have been given
since (so it is the third puzzle at the latest: it used to wait behind every open puzzle, 69 of
them for a newcomer); otherwise, in the earliest chapter not yet cleared, a puzzle never tried,
else one tried but not cleared; puzzles put off and not yet due come when nothing else is open,
in the order they were put off.

The retry queue is stored as text, "id@answers,...": each puzzle put off with the number of
campaign answers recorded when it was (`queue_text`, `parse_queue`); an entry without the count,
from an older save, is due at once.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.ids import Outcome


MODE = "campaign"  # the mode the campaign's answers are recorded with
RETRY_GAP = 2  # other answers before a puzzle put off comes back


def parse_queue(text: str) -> list[tuple[str, int]]:
    """The stored retry queue as (puzzle id, campaign answers when it was put off), in order."""
    queue: list[tuple[str, int]] = []
    for entry in str(text or "").split(","):
        pid, _, mark = entry.strip().partition("@")
        if pid:
            queue.append((pid, int(mark) if mark.isdigit() else -RETRY_GAP))
    return queue


def queue_text(queue: Sequence[tuple[str, int]]) -> str:
    return ",".join(f"{pid}@{mark}" for pid, mark in queue)


def _entries(queue: Sequence) -> list[tuple[str, int]]:
    """Queue entries as (id, mark); a bare id is due at once."""
    return [(q, -RETRY_GAP) if isinstance(q, str) else (q[0], q[1]) for q in queue]


def due_retry(queue: Sequence, outcomes: Mapping[str, Sequence[str]], answered: int,
              exclude: Sequence[str] = (), within: Sequence[str] | None = None) -> str | None:
    """The first puzzle put off that is due again: `RETRY_GAP` answers given since (`answered`
    counts the campaign's answers), not cleared meanwhile, not excluded."""
    for pid, mark in _entries(queue):
        if (answered - mark >= RETRY_GAP and pid not in exclude and not cleared(outcomes, pid)
                and (within is None or pid in within)):
            return pid
    return None


def cleared(outcomes: Mapping[str, Sequence[str]], puzzle_id: str) -> bool:
    """A puzzle counts as cleared once any attempt at it cleared."""
    return Outcome.CLEARED in outcomes.get(puzzle_id, ())


def next_puzzle(chapters: Sequence[Sequence[str]], outcomes: Mapping[str, Sequence[str]], queue: Sequence,
                exclude: Sequence[str] = (), within: Sequence[str] | None = None, answered: int = 0) -> str | None:
    """The next puzzle id (None when everything is cleared). `chapters` holds each chapter's
    puzzle ids in course order; `within` limits the choice to one chapter's ids; `queue` holds the
    puzzles put off ((id, mark) pairs, see `parse_queue`) and `answered` the campaign's answers."""
    due = due_retry(queue, outcomes, answered, exclude, within)
    if due is not None:
        return due
    queued = {pid for pid, _ in _entries(queue)}
    for ids in ([within] if within is not None else chapters):
        open_ids = [p for p in ids if not cleared(outcomes, p) and p not in exclude and p not in queued]
        untried = [p for p in open_ids if not outcomes.get(p)]
        if untried:
            return untried[0]
        if open_ids:
            return open_ids[0]
    return next((p for p, _ in _entries(queue) if p not in exclude and not cleared(outcomes, p)
                 and (within is None or p in within)), None)


def returns_after(chapters: Sequence[Sequence[str]], outcomes: Mapping[str, Sequence[str]], queue: Sequence,
                  puzzle_id: str, answered: int = 0, within: Sequence[str] | None = None) -> int:
    """How many other puzzles come before `puzzle_id` comes back from the queue, going on from it
    within `within` (its chapter) first, as the reveal's Next does: the answers still to give
    before it is due, or fewer when fewer other puzzles are open there (or put off before it)."""
    entries = _entries(queue)
    queued = {pid for pid, _ in entries}
    mark = next((m for pid, m in entries if pid == puzzle_id), answered)
    scope = [within] if within is not None else chapters
    open_ids = [p for ids in scope for p in ids if not cleared(outcomes, p) and p not in queued]
    order = [p for p, _ in entries]
    earlier = order[:order.index(puzzle_id)] if puzzle_id in queued else []
    earlier = [p for p in earlier if within is None or p in within]
    return max(0, min(RETRY_GAP - (answered - mark), len(open_ids) + len(earlier)))


# -- where a player stands: pure functions over each puzzle's outcomes ------------------------------

@dataclass(frozen=True)
class ChapterProgress:
    total: int
    tried: int
    cleared: int
    mastery: float  # share of tried puzzles whose latest attempt cleared (puzzles.stats)

    @property
    def done(self) -> bool:
        return self.total > 0 and self.cleared >= self.total


def outcomes_by_puzzle(attempts: Iterable[Any]) -> dict[str, list[str]]:
    """Each puzzle's recorded outcomes, oldest first, from attempts (anything with `puzzle_id`
    and `outcome`), in the order they were recorded."""
    outcomes: dict[str, list[str]] = {}
    for attempt in attempts:
        outcomes.setdefault(attempt.puzzle_id, []).append(attempt.outcome)
    return outcomes


def campaign_answers(attempts: Iterable[Any]) -> int:
    """How many answers were given in the campaign (a puzzle put off comes back after a few)."""
    return sum(1 for attempt in attempts if attempt.mode == MODE)


def standing(outcomes: Mapping[str, Sequence[str]], puzzle_id: str) -> str | None:
    """The outcome a chapter lists a puzzle by: cleared once any attempt cleared, else the latest
    (None when never tried)."""
    if cleared(outcomes, puzzle_id):
        return Outcome.CLEARED
    found = outcomes.get(puzzle_id, ())
    return found[-1] if found else None


def chapter_progress(puzzle_ids: Sequence[str], outcomes: Mapping[str, Sequence[str]],
                     mastery: float = 0.0) -> ChapterProgress:
    """A chapter's puzzles, how many were tried and how many cleared."""
    tried = sum(1 for p in puzzle_ids if outcomes.get(p))
    done = sum(1 for p in puzzle_ids if cleared(outcomes, p))
    return ChapterProgress(len(puzzle_ids), tried, done, mastery)


def started(puzzle_ids: Sequence[str], outcomes: Mapping[str, Sequence[str]]) -> bool:
    return any(outcomes.get(p) for p in puzzle_ids)


def earlier_unfinished(chapter: Any, chapters: Sequence[Any], outcomes: Mapping[str, Sequence[str]]) -> list:
    """The course's chapters before `chapter` that are not yet cleared (jumping ahead is allowed);
    none for a player's own chapter, which follows no order of the course's. Chapters are
    `puzzles.chapters.Chapter`s."""
    if chapter.own:
        return []
    return [ch for ch in chapters
            if ch.number < chapter.number and not chapter_progress(ch.puzzle_ids, outcomes).done]


def put_off(queue: Sequence[tuple[str, int]], puzzle_id: str, answered: int) -> list[tuple[str, int]]:
    """The queue with `puzzle_id` put off (again) at the end, marked with the answers given so far."""
    return [q for q in queue if q[0] != puzzle_id] + [(puzzle_id, answered)]


def taken_off(queue: Sequence[tuple[str, int]], puzzle_id: str) -> list[tuple[str, int]]:
    """The queue without `puzzle_id` (cleared: it need not come back)."""
    return [q for q in queue if q[0] != puzzle_id]
