"""A player's session: their save, the chapters and puzzles, what to play next, and recording.

No Textual here: the screens ask this object questions and show the answers, and tests can ask
the same questions directly. Puzzles and saves are imported when a session is opened, not when
the app starts, so the home screen can draw first.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Callable

from engine.ids import Outcome

RETRY_SETTING = "retry"
THEME_SETTING = "theme"


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


@dataclass(frozen=True)
class Chapter:
    """One campaign chapter, as the screens show it."""

    id: str
    number: int
    title: str
    briefing: str
    expects: tuple[str, ...]
    puzzle_ids: tuple[str, ...]
    files: tuple[str, ...] = ()  # a player's own chapter: the packs it was read from (none: the course's)
    notes: tuple[str, ...] = ()  # one line each on a pack loaded otherwise than it is written

    @property
    def own(self) -> bool:
        """A chapter of the player's own (a pack in <data>/packs), not one of the course's."""
        from puzzles.puzzle import MODULES

        return self.id not in MODULES


@dataclass(frozen=True)
class ChapterProgress:
    total: int
    tried: int
    cleared: int
    mastery: float  # share of tried puzzles whose latest attempt cleared (puzzles.stats)

    @property
    def done(self) -> bool:
        return self.total > 0 and self.cleared >= self.total


def _text_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(line.strip().lstrip("-•*").strip() for line in value.splitlines() if line.strip())
    return tuple(str(v) for v in value)


def reflow(text: str) -> str:
    """Join a TOML block's hard-wrapped lines into paragraphs (blank lines and list items stay)."""
    paragraphs = []
    for block in text.strip().split("\n\n"):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        merged: list[str] = []
        for line in lines:
            if merged and not line.startswith(("-", "•", "*")):
                merged[-1] += " " + line
            else:
                merged.append(line)
        paragraphs.append("\n".join(merged))
    return "\n\n".join(paragraphs)


class Bank:
    """The puzzle bank as the app uses it: chapters with their puzzle ids, puzzles and keys by id.
    Wraps `puzzles.bank` (or anything with the same functions, for tests)."""

    def __init__(self, source: Any = None, player_packs: Any = None) -> None:
        self._source = source
        self._player_packs = player_packs  # the player's own packs' folder, for the built-in bank
        self._chapters: list[Chapter] | None = None

    @property
    def source(self) -> Any:
        if self._source is None:
            from puzzles import bank  # first needed by the loading worker, not the home screen

            if self._player_packs is not None:
                bank.use_player_packs(self._player_packs)
            self._source = bank
        return self._source

    @property
    def loaded(self) -> bool:
        return self._chapters is not None

    def chapters(self) -> list[Chapter]:
        if self._chapters is None:
            self._chapters = self._read_chapters()
        return self._chapters

    def _read_chapters(self) -> list[Chapter]:
        chapters = []
        for number, spec in enumerate(self.source.chapters(), 1):
            ids = tuple(p.id for p in self.source.in_module(spec.id))
            files = getattr(self.source, "pack_files", lambda _id: ())(spec.id)
            notes = getattr(self.source, "player_notes", lambda _id: ())(spec.id)
            chapters.append(Chapter(id=spec.id, number=number, title=spec.title,
                                    briefing=reflow(spec.briefing), expects=_text_list(spec.expects),
                                    puzzle_ids=ids, files=tuple(files), notes=tuple(notes)))
        return chapters

    def puzzle(self, puzzle_id: str):
        return self.source.get(puzzle_id)

    def reload(self) -> None:
        """Read the packs again now (a player pack was added or changed) and swap the chapters in
        whole once read. The bank stays loaded throughout, answering as it was until the swap, so
        no screen waits for it or finds it empty (emptying it here left every way to play saying
        "Loading the puzzles…" until Ridge restarted). Blocking: the app runs it in a worker."""
        refresh = getattr(self.source, "refresh", None)
        if refresh is not None:
            refresh()
        else:
            reset = getattr(self.source, "reload", None)
            if reset is not None:
                reset()
        self._chapters = self._read_chapters()

    def key(self, puzzle):
        return self.source.key(puzzle)

    def skipped(self) -> list[str]:
        """One line for each of the player's packs left out, and why (none for a test bank)."""
        return [str(problem) for problem in getattr(self.source, "player_problems", list)()]


class Session:
    """One player's view of the campaign. Call `reload()` after anything is written."""

    def __init__(self, store: Any, name: str, bank: Any, clock: Callable[[], _dt.datetime] = utc_now) -> None:
        self.store = store
        self.name = name
        self.bank = bank
        self.clock = clock
        self.profile = None
        self.stats = None
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
        return [a.outcome for a in self.attempts if a.puzzle_id == puzzle_id]

    def latest(self, puzzle_id: str) -> str | None:
        found = self.outcomes(puzzle_id)
        return found[-1] if found else None

    def cleared(self, puzzle_id: str) -> bool:
        return "cleared" in self.outcomes(puzzle_id)

    def listed(self, puzzle_id: str):
        """(mark, title, difficulty) as a chapter lists a puzzle: ✓ once cleared, else the latest
        outcome's mark; a puzzle that will not load is listed by its id, difficulty ""."""
        from app.labels import outcome_symbol

        mark = "✓" if self.cleared(puzzle_id) else outcome_symbol(self.latest(puzzle_id))
        try:
            puzzle = self.puzzle(puzzle_id)
        except Exception:  # noqa: BLE001 - list the id of a puzzle that will not load
            return mark, puzzle_id, ""
        return mark, puzzle.title, getattr(puzzle, "difficulty", "")

    def progress(self, chapter: Chapter) -> ChapterProgress:
        ids = chapter.puzzle_ids
        tried = sum(1 for p in ids if self.outcomes(p))
        cleared = sum(1 for p in ids if self.cleared(p))
        module = self.stats.by_module.get(chapter.id) if self.stats else None
        return ChapterProgress(len(ids), tried, cleared, module.mastery if module else 0.0)

    def started(self, chapter: Chapter) -> bool:
        return any(self.outcomes(p) for p in chapter.puzzle_ids)

    def earlier_unfinished(self, chapter: Chapter) -> list[Chapter]:
        """The course's chapters before this one that are not yet cleared (jumping ahead is
        allowed); none for a player's own chapter, which follows no order of the course's."""
        if chapter.own:
            return []
        return [ch for ch in self.chapters if ch.number < chapter.number and not self.progress(ch).done]

    # -- the retry queue -------------------------------------------------------------------
    @property
    def _retries(self) -> list[tuple[str, int]]:
        from puzzles.campaign import parse_queue

        return parse_queue(str(self.settings.get(RETRY_SETTING, "")))

    @property
    def retry_queue(self) -> list[str]:
        """The puzzles put off with "retry later", in the order they were."""
        return [pid for pid, _ in self._retries]

    def queue_retry(self, puzzle_id: str) -> None:
        from puzzles.campaign import queue_text

        queue = [q for q in self._retries if q[0] != puzzle_id] + [(puzzle_id, self.answered())]
        self.update_settings(**{RETRY_SETTING: queue_text(queue)})

    def _dequeue(self, puzzle_id: str) -> None:
        from puzzles.campaign import queue_text

        if puzzle_id in self.retry_queue:
            queue = [q for q in self._retries if q[0] != puzzle_id]
            self.store.update_settings(self.name, **{RETRY_SETTING: queue_text(queue) or None})

    # -- what next (the rule: puzzles.campaign) ---------------------------------------------
    def answered(self) -> int:
        """How many campaign answers the save holds (a puzzle put off comes back after a few)."""
        from puzzles.campaign import MODE

        return sum(1 for a in self.attempts if a.mode == MODE)

    def _order(self) -> tuple[list[tuple[str, ...]], dict[str, list[str]]]:
        outcomes: dict[str, list[str]] = {}
        for a in self.attempts:
            outcomes.setdefault(a.puzzle_id, []).append(a.outcome)
        return [ch.puzzle_ids for ch in self.chapters], outcomes

    def next_puzzle(self, exclude: tuple[str, ...] = (), within: Chapter | None = None) -> str | None:
        """The player's next puzzle, by `puzzles.campaign.next_puzzle`."""
        from puzzles.campaign import next_puzzle

        chapters, outcomes = self._order()
        return next_puzzle(chapters, outcomes, self._retries, exclude,
                           within.puzzle_ids if within is not None else None, self.answered())

    def due_retry(self, exclude: tuple[str, ...] = ()) -> str | None:
        """A puzzle put off that is due again, from any chapter (`puzzles.campaign.due_retry`)."""
        from puzzles.campaign import due_retry

        _chapters, outcomes = self._order()
        return due_retry(self._retries, outcomes, self.answered(), exclude)

    def returns_after(self, puzzle_id: str) -> int:
        """How many puzzles come before `puzzle_id` returns from the retry queue."""
        from puzzles.campaign import returns_after

        chapters, outcomes = self._order()
        chapter = self.chapter_of(puzzle_id)
        return returns_after(chapters, outcomes, self._retries, puzzle_id, self.answered(),
                             chapter.puzzle_ids if chapter is not None else None)

    # -- recording -------------------------------------------------------------------------
    def record(self, puzzle, grade, hints_used: int, seconds_taken: float, locked_at: _dt.datetime,
               mode: str = "campaign"):
        """Append the graded attempt (built by `puzzles.attempts`) to the save; return it."""
        from saves.model import AttemptIn

        from puzzles.attempts import attempt_fields

        attempt = AttemptIn.model_validate(attempt_fields(puzzle, grade, mode=mode, locked_at=locked_at,
                                                          hints_used=hints_used, seconds=seconds_taken))
        recorded = self.store.record_attempt(self.name, attempt)
        if grade.outcome == Outcome.CLEARED:
            self._dequeue(puzzle.id)
        self.reload()
        return recorded
