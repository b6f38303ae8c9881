"""What screens tell the app. A screen knows its own widgets and posts what happened, or where the
player asked to go; the app (`app.game.RidgeApp`) decides what comes next. So no screen imports
another screen, and the stack of each way to play is kept in one place.

Every message bubbles from the screen that posts it (`self.post_message(...)`) up to the app.
Navigation requests carry ids; the lock-in and the saved attempt carry the game's own objects.
"""
from __future__ import annotations

from typing import Any, Callable

from textual.message import Message


class Navigate(Message):
    """A request to go somewhere. The app handles every subclass; screens never push each other."""


class OpenMode(Navigate):
    """Open a way to play (a name in `RidgeApp.MODES`: "map", "stats", "simulator", "drill",
    "exam", "hotseat", "match", "lab") on its own, fresh stack, above the home screen."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode


class GoHome(Navigate):
    """Back to the home screen, closing whatever ways to play are open."""


class OpenMap(Navigate):
    """The campaign map: the one already open on the way back, else a fresh one above home."""


class Back(Navigate):
    """Leave `origin`: one step back in its stack, or, at the bottom of a way to play, back to
    where that way was opened from (quitting when the app runs that one way on its own)."""

    def __init__(self, origin: Any) -> None:
        super().__init__()
        self.origin = origin


class OpenChapter(Navigate):
    """A chapter's briefing; `start` is the puzzle its Start key opens."""

    def __init__(self, chapter_id: str, start: str | None = None) -> None:
        super().__init__()
        self.chapter_id = chapter_id
        self.start = start


class OpenPuzzle(Navigate):
    """One puzzle; `replace` puts it in the place of the screen that asks (after a reveal)."""

    def __init__(self, puzzle_id: str, replace: bool = False) -> None:
        super().__init__()
        self.puzzle_id = puzzle_id
        self.replace = replace


class ContinueCampaign(Navigate):
    """The player's next puzzle (through its chapter's briefing the first time a chapter is
    entered): after `after`, within its chapter first; `replace` as for `OpenPuzzle`."""

    def __init__(self, after: str | None = None, replace: bool = False) -> None:
        super().__init__()
        self.after = after
        self.replace = replace


class PredictionLocked(Message):
    """A prediction was locked in and graded: final from here on. The app shows the reveal in the
    place of the puzzle (`RidgeApp.show_reveal`, which the puzzle calls in the same turn so that no
    frame of the puzzle comes between; posted, it works one frame later); `record` writes the
    attempt (the reveal runs it in a worker)."""

    def __init__(self, puzzle: Any, prediction: dict, key: Any, grade: Any, hints_used: int,
                 record: Callable[[], Any] | None = None) -> None:
        super().__init__()
        self.puzzle = puzzle
        self.prediction = prediction
        self.key = key
        self.grade = grade
        self.hints_used = hints_used
        self.record = record


class AttemptSaved(Message):
    """A locked-in attempt was written: `attempt` is the saved record, or None with the `error`
    that stopped it (the player has been told)."""

    def __init__(self, attempt: Any, error: BaseException | None = None) -> None:
        super().__init__()
        self.attempt = attempt
        self.error = error


class PuzzlesLoaded(Message):
    """The puzzle packs finished loading in the background (`error` says why not, if not)."""

    def __init__(self, error: BaseException | None = None) -> None:
        super().__init__()
        self.error = error
