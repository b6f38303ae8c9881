"""The course's chapters as the campaign reads them from the puzzle packs: each chapter's words
and its puzzle ids in order, and the bank they come from. Imports no Textual.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
        from puzzles.puzzle import MODULES  # the app makes its bank before it draws home: kept light

        return self.id not in MODULES


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
