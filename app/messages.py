"""What screens tell the app. A screen knows its own widgets and posts what happened, or where the
player asked to go; the app (`app.game.RidgeApp`) decides what comes next. So no screen imports
another screen, and the stack of each way to play is kept in one place.

Every message bubbles from the screen that posts it (`self.post_message(...)`) up to the app.
Each is a dataclass of plain data: navigation requests carry ids, the lock-in and the saved
attempt carry the game's own objects (typed here, loaded only where they are made), never a
callback.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message
from textual.screen import Screen

if TYPE_CHECKING:
    from puzzles.grading import Grade
    from puzzles.keys import Key
    from puzzles.puzzle import Puzzle
    from saves.model import Attempt


class Navigate(Message):
    """A request to go somewhere. The app handles every subclass; screens never push each other."""


@dataclass
class OpenMode(Navigate):
    """Open a way to play (a name in `RidgeApp.MODES`: "map", "stats", "simulator", "drill",
    "exam", "hotseat", "match", "lab") on its own, fresh stack, above the home screen."""

    mode: str


class GoHome(Navigate):
    """Back to the home screen, closing whatever ways to play are open."""


class OpenMap(Navigate):
    """The campaign map: the one already open on the way back, else a fresh one above home."""


@dataclass
class Back(Navigate):
    """Leave `origin`: one step back in its stack, or, at the bottom of a way to play, back to
    where that way was opened from (quitting when the app runs that one way on its own)."""

    origin: Screen


@dataclass
class OpenChapter(Navigate):
    """A chapter's briefing; `start` is the puzzle its Start key opens."""

    chapter_id: str
    start: str | None = None


@dataclass
class OpenPuzzle(Navigate):
    """One puzzle; `replace` puts it in the place of the screen that asks (after a reveal)."""

    puzzle_id: str
    replace: bool = False


@dataclass
class ContinueCampaign(Navigate):
    """The player's next puzzle (through its chapter's briefing the first time a chapter is
    entered): after `after`, within its chapter first; `replace` as for `OpenPuzzle`."""

    after: str | None = None
    replace: bool = False


@dataclass
class PredictionLocked(Message):
    """A prediction was locked in and graded: final from here on. The app shows the reveal in the
    place of the puzzle (`RidgeApp.show_reveal`, which the puzzle calls in the same turn so that no
    frame of the puzzle comes between; posted, it works one frame later). With `locked_at`, the
    reveal records the attempt in the open session (in a worker), `seconds` taken to answer."""

    puzzle: Puzzle
    prediction: dict[str, object]
    key: Key
    grade: Grade
    hints_used: int
    seconds: float | None = None
    locked_at: _dt.datetime | None = None


@dataclass
class AttemptSaved(Message):
    """A locked-in attempt was written: `attempt` is the saved record, or None with the `error`
    that stopped it (the player has been told)."""

    attempt: Attempt | None
    error: BaseException | None = None


@dataclass
class PuzzlesLoaded(Message):
    """The puzzle packs finished loading in the background (`error` says why not, if not)."""

    error: BaseException | None = None
