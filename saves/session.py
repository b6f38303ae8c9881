"""A player's session: their save read through the campaign's rules (`puzzles.campaign`) over the
chapters of the bank (`puzzles.chapters`), and recording their answers (`saves.record`).

The app holds one for the current player and its screens ask it questions; tests ask the same
questions without Textual. Puzzles are read when a session is first asked for its chapters, not
when it opens, so the home screen can draw first.
"""
from __future__ import annotations

import datetime as _dt
from typing import Any, Callable

from engine.ids import Outcome
from puzzles import campaign
from puzzles.chapters import Chapter
from puzzles.campaign import ChapterProgress

RETRY_SETTING = "retry"  # the save's setting that holds the retry queue (`puzzles.campaign.queue_text`)


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


class Session:
    """One player's view of the campaign. Call `reload()` after anything is written."""

    def __init__(self, store: Any, name: str, bank: Any, clock: Callable[[], _dt.datetime] = utc_now) -> None:
        self.store = store
        self.name = name
        self.bank = bank
        self.clock = clock
        self.profile = None
        self.stats = None
        self._outcomes: dict[str, list[str]] = {}
        self.reload()

    @property
    def chapters(self) -> list[Chapter]:
        """The campaign's chapters (loading the puzzle packs the first time)."""
        return self.bank.chapters()

    # -- the save --------------------------------------------------------------------------
    def reload(self) -> None:
        from saves.history import ensure_intact
        from puzzles.stats import derive

        self.profile = self.store.load(self.name)
        ensure_intact(self.store, self.name)  # a damaged history is asked about, never appended to
        self.stats = derive(self.profile, now=self.clock())
        self._outcomes = campaign.outcomes_by_puzzle(self.attempts)

    @property
    def attempts(self) -> tuple:
        """The attempts that count, each at its re-graded outcome (`Profile.counted_attempts`), so
        the map and the campaign's order agree with the score."""
        return self.profile.counted_attempts() if self.profile is not None else ()

    @property
    def settings(self) -> dict:
        return dict(self.profile.settings) if self.profile is not None else {}

    def update_settings(self, **values: Any) -> None:
        self.store.update_settings(self.name, **values)
        self.reload()

    # -- puzzles ---------------------------------------------------------------------------
    def puzzle(self, puzzle_id: str):
        return self.bank.puzzle(puzzle_id)

    def chapter(self, chapter_id: str) -> Chapter:
        for ch in self.chapters:
            if ch.id == chapter_id:
                return ch
        raise KeyError(chapter_id)

    def chapter_of(self, puzzle_id: str) -> Chapter | None:
        for ch in self.chapters:
            if puzzle_id in ch.puzzle_ids:
                return ch
        try:
            return self.chapter(self.puzzle(puzzle_id).module)
        except Exception:  # noqa: BLE001 - an unknown or generated id has no chapter of its own
            return None

    def outcomes(self, puzzle_id: str) -> list[str]:
        return list(self._outcomes.get(puzzle_id, ()))

    def latest(self, puzzle_id: str) -> str | None:
        found = self._outcomes.get(puzzle_id)
        return found[-1] if found else None

    def cleared(self, puzzle_id: str) -> bool:
        return campaign.cleared(self._outcomes, puzzle_id)

    def listed(self, puzzle_id: str) -> tuple[str | None, str, Any]:
        """(standing, title, difficulty) as a chapter lists a puzzle: its outcome by
        `puzzles.campaign.standing` (None: never tried); a puzzle that will not load is listed by
        its id, difficulty ""."""
        standing = campaign.standing(self._outcomes, puzzle_id)
        try:
            puzzle = self.puzzle(puzzle_id)
        except Exception:  # noqa: BLE001 - list the id of a puzzle that will not load
            return standing, puzzle_id, ""
        return standing, puzzle.title, getattr(puzzle, "difficulty", "")

    def progress(self, chapter: Chapter) -> ChapterProgress:
        module = self.stats.by_module.get(chapter.id) if self.stats else None
        return campaign.chapter_progress(chapter.puzzle_ids, self._outcomes, module.mastery if module else 0.0)

    def started(self, chapter: Chapter) -> bool:
        return campaign.started(chapter.puzzle_ids, self._outcomes)

    def earlier_unfinished(self, chapter: Chapter) -> list[Chapter]:
        """The course's chapters before this one not yet cleared (`puzzles.campaign`)."""
        return campaign.earlier_unfinished(chapter, self.chapters, self._outcomes)

    # -- the retry queue -------------------------------------------------------------------
    @property
    def _retries(self) -> list[tuple[str, int]]:
        return campaign.parse_queue(str(self.settings.get(RETRY_SETTING, "")))

    @property
    def retry_queue(self) -> list[str]:
        """The puzzles put off with "retry later", in the order they were."""
        return [pid for pid, _ in self._retries]

    def queue_retry(self, puzzle_id: str) -> None:
        queue = campaign.put_off(self._retries, puzzle_id, self.answered())
        self.update_settings(**{RETRY_SETTING: campaign.queue_text(queue)})

    def _dequeue(self, puzzle_id: str) -> None:
        if puzzle_id in self.retry_queue:
            queue = campaign.taken_off(self._retries, puzzle_id)
            self.store.update_settings(self.name, **{RETRY_SETTING: campaign.queue_text(queue) or None})

    # -- what next (the rule: puzzles.campaign) ---------------------------------------------
    def answered(self) -> int:
        """How many campaign answers the save holds (`puzzles.campaign.campaign_answers`)."""
        return campaign.campaign_answers(self.attempts)

    def _order(self) -> list[tuple[str, ...]]:
        return [ch.puzzle_ids for ch in self.chapters]

    def next_puzzle(self, exclude: tuple[str, ...] = (), within: Chapter | None = None) -> str | None:
        """The player's next puzzle, by `puzzles.campaign.next_puzzle`."""
        return campaign.next_puzzle(self._order(), self._outcomes, self._retries, exclude,
                                    within.puzzle_ids if within is not None else None, self.answered())

    def due_retry(self, exclude: tuple[str, ...] = ()) -> str | None:
        """A puzzle put off that is due again, from any chapter (`puzzles.campaign.due_retry`)."""
        return campaign.due_retry(self._retries, self._outcomes, self.answered(), exclude)

    def continue_after(self, after: str | None = None) -> str | None:
        """The puzzle Continue opens after `after` (None from home): a put-off puzzle that is due
        first, from any chapter; then the rest of `after`'s chapter; then the campaign's next.
        None once every puzzle is cleared."""
        exclude = (after,) if after else ()
        pid = self.due_retry(exclude)
        if pid is None and after:
            chapter = self.chapter_of(after)
            if chapter is not None:
                pid = self.next_puzzle(exclude=exclude, within=chapter)
        return pid if pid is not None else self.next_puzzle(exclude=exclude)

    def returns_after(self, puzzle_id: str) -> int:
        """How many puzzles come before `puzzle_id` returns from the retry queue."""
        chapter = self.chapter_of(puzzle_id)
        return campaign.returns_after(self._order(), self._outcomes, self._retries, puzzle_id, self.answered(),
                                      chapter.puzzle_ids if chapter is not None else None)

    # -- what the home screen shows --------------------------------------------------------
    def next_text(self) -> str:
        """Where Continue leads, in a few words: the next puzzle's title and chapter, or that
        every chapter is cleared."""
        pid = self.next_puzzle()
        if pid is None:
            return "every chapter cleared: replay any from the map"
        chapter = self.chapter_of(pid)
        try:
            title = self.puzzle(pid).title
        except Exception:  # noqa: BLE001 - a missing puzzle still lets the player go on
            title = pid
        return f"{title} (chapter {chapter.number})" if chapter else title

    def chapter_lines(self, room: int = 76) -> list[str]:
        """One line per chapter: done or not, a box per puzzle (cleared, tried, not yet) and the
        count cleared. Titles get what `room` leaves beside the boxes and counts, and are
        shortened (with …) only when even that is too little."""
        lines = []
        most = max((len(ch.puzzle_ids) for ch in self.chapters), default=0)
        width = max((len(ch.title) for ch in self.chapters), default=10)
        width = min(width, max(20, room - 6 - most - 2 - 7))
        for ch in self.chapters:
            prog = self.progress(ch)
            boxes = "".join("■" if self.cleared(p) else ("□" if self.outcomes(p) else "·")
                            for p in ch.puzzle_ids).ljust(most)
            mark = "✓" if prog.done else "·"
            title = ch.title if len(ch.title) <= width else ch.title[: width - 1] + "…"
            lines.append(f"{mark} {ch.number:>2}. {title.ljust(width)} {boxes}  {prog.cleared}/{prog.total}")
        lines.append("■ cleared  □ tried  · not yet")
        return lines

    # -- recording -------------------------------------------------------------------------
    def record(self, puzzle, grade, hints_used: int, seconds_taken: float, locked_at: _dt.datetime,
               mode: str = campaign.MODE):
        """Append the graded attempt to the save (`saves.record.record_graded`); a cleared puzzle
        leaves the retry queue. Return the attempt as stored."""
        from saves.record import record_graded

        recorded = record_graded(self.store, self.name, puzzle, grade, mode=mode, locked_at=locked_at,
                                 hints_used=hints_used, seconds=seconds_taken)
        if grade.outcome == Outcome.CLEARED:
            self._dequeue(puzzle.id)
        self.reload()
        return recorded
