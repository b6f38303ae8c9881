"""Errors the app tells a player (a notice, the line under a set-up form) are one line of at
most 300 characters, and an error that echoes markup (`[/]` from a file) is shown as text
instead of breaking the screen that tells it."""
from __future__ import annotations

import datetime as dt

from textual.content import Content

from app.errors import told
from app.game import make_app
from app.screens.exam import ExamScreen
from helpers.pilot import settled

WHEN = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.timezone.utc)
NASTY = "line one [/] [red]x[/blue]\nTraceback (most recent call last):\n" + "  File \"x.py\", line 1\n" * 200


def test_a_told_error_is_one_line_of_at_most_300_and_its_markup_is_text():
    text = told(NASTY)
    plain = Content.from_markup(text).plain  # raises MarkupError if the brackets were read as tags
    assert "\n" not in plain and len(plain) <= 300
    assert plain.startswith("line one [/] [red]x[/blue] Traceback")


async def test_an_exam_that_cannot_be_drawn_says_so_in_one_line(tmp_path, monkeypatch):
    import puzzles.exam

    def broken(*_args, **_kwargs):
        raise ValueError(NASTY)

    monkeypatch.setattr(puzzles.exam, "build", broken)
    app = make_app(solo=lambda: ExamScreen(seed=42, length=1, tz=dt.timezone.utc), save_dir=tmp_path,
                   profile="Ada", clock=lambda: WHEN, strict=True, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await pilot.press("s")
        await settled(pilot)
        screen = app.screen
        assert screen.phase == "setup"
        shown = str(screen.query_one("#setup-error").render())
        assert shown.startswith("The exam could not be drawn: line one [/] [red]x[/blue]")
        assert "\n" not in shown and len(shown) <= 300
