"""The clearing test: a fixed-length exam with no hints, a stated pass mark, and a Markdown report
of every answer beside the engine's, saved in the data folder for the player to keep or share."""
from __future__ import annotations

import asyncio
from pathlib import Path

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, Markdown, Static

from app.screens.base import asking
from app.screens.dialogs import confirm
from app.screens.rounds import ModeScreen, default_player, record, setup_field, words
from app.widgets.hanging import hanging, paragraphs


class ExamScreen(ModeScreen):
    """The course's clearing test: diagnose, choose the lever, size its gain, answer the napkin."""

    TITLE_TEXT = "The clearing test"
    HELP = """\
## The clearing test

A fixed number of deployments, no hints, and no feedback until the end. For each one: the
bottleneck; the best lever with the rough size of its gain; and one napkin question — the
decode intensity and the ridge, the max concurrency, whether speculative decoding helps at this
batch, or the cost per million output tokens. Numbers are judged within a factor of 1.5 either
way. You pass with three quarters of the questions right.

At the end you get a report of every answer beside the engine's, with its reasoning, saved as a
Markdown file in your data folder.

**s** start · **l** lock in · **p** napkin · **a** back to the answer · **Escape** stop
"""

    BINDINGS = [
        Binding("s", "start", "Start", id="exam.start", tooltip="Start the clearing test"),
        Binding("l", "lock_in", "Lock in", id="exam.lock", tooltip="Lock in this answer (final)"),
        Binding("escape", "leave", "Leave", id="exam.leave", tooltip="Stop the exam, or leave"),
    ]
    PHASE_ACTIONS = {"start": ("setup",), "lock_in": ("question",)}

    def __init__(self, seed: int | None = None, length: int | None = None, tz=None) -> None:
        super().__init__(id="exam")
        from puzzles.exam import EXAM_LENGTH

        self.seed = seed
        self.length = length or EXAM_LENGTH
        self.tz = tz
        self.player = ""
        self.items: list = []
        self.predictions: list[dict] = []
        self.position = 0
        self.shown_at = 0.0
        self.result = None
        self.report_path: Path | None = None
        self.report_text = ""

    # -- set-up -----------------------------------------------------------------------------------
    async def show_setup(self) -> None:
        from puzzles.exam import RULES, rules_text

        self.status("The clearing test · no hints")
        body = VerticalScroll(
            Label("The clearing test", classes="screen-title"),
            Static(rules_text(self.length), classes="mode-text", markup=False, id="exam-rules"),
            Static("Each deployment asks: the bottleneck; the best lever with the rough size of its gain; "
                   "and a napkin question (intensity and the ridge, max concurrency, whether speculative "
                   "decoding helps at this batch, or the cost per million output tokens). Say how sure you "
                   "are as well: it sets the points, not the pass mark. Nothing is revealed until the end.",
                   classes="mode-text", markup=False),
            Static(paragraphs("How answers are judged:", hanging([("•", rule) for rule in RULES])),
                   classes="mode-text"),
            Static(self.history_text(), classes="mode-text", markup=False, id="exam-history"),
            setup_field("Player", Input(value=self.player or default_player(self.app), placeholder="your name",
                                        id="player-name", max_length=32, compact=True)),
            Label("", id="setup-error", classes="setup-error", markup=False),
            Horizontal(Button("Start the test (s)", variant="primary", id="start"), Button("Leave", id="leave"),
                       classes="setup-buttons"),
            classes="mode-body", id="exam-setup")
        await self.set_phase("setup", body)
        self.query_one("#player-name", Input).cursor_blink = self.app.blink
        body.focus()  # the rules and the pass mark first; s (or the button below) starts

    def answers_of(self, name: str) -> tuple:
        """`name`'s recorded answers (none for a player without a save yet)."""
        from saves.errors import SaveError

        try:
            profile = self.app.store.load_if_any(name)
            return tuple(profile.counted_attempts()) if profile else ()
        except SaveError:
            return ()

    def history_text(self) -> str:
        """The exam's own history: the sittings of the player named in the set-up."""
        from puzzles.exam import history_text

        name = self.player or default_player(self.app)
        return history_text(name, self.answers_of(name) if name else (), self.tz)

    @on(Input.Submitted, "#player-name")
    @on(Button.Pressed, "#start")
    async def action_start(self) -> None:
        if self.phase != "setup":
            return
        name = self.typed_player()
        if name is None:
            return
        self.player = name
        from puzzles.exam import build

        seed = self.seed if self.seed is not None else int(self.app.now().timestamp()) % 1_000_000
        self.seed = seed
        self.status("The clearing test · drawing the deployments…")
        self.phase = "drawing"
        try:
            seen = {attempt.puzzle_id for attempt in self.answers_of(name)}  # only deployments not met before
            self.items = await asyncio.to_thread(build, seed, self.length, seen)
        except Exception as error:  # noqa: BLE001 - say it in one line; the set-up stays
            self.phase = "setup"
            self.setup_error(f"The exam could not be drawn: {error}")
            return
        self.predictions = []
        self.position = 0
        await self.show_question()

    # -- questions --------------------------------------------------------------------------------
    async def show_question(self) -> None:
        question = self.items[self.position].question
        await self.ask_item(self.position, f"Clearing test · {self.position + 1}/{len(self.items)} · no hints · "
                                           f"napkin: {question.title if question else '-'}")

    async def lock_answer(self) -> None:
        if not self.claim_lock():
            return
        item = self.items[self.position]
        prediction, judged, seconds = self.take_answer(item)
        record(self.app, self.player, item, judged, "exam", seconds, self.app.now())
        self.predictions.append(prediction)
        self.position += 1
        if self.position < len(self.items):
            await self.show_question()
        else:
            await self.finish()

    # -- the end ----------------------------------------------------------------------------------
    async def finish(self) -> None:
        from puzzles.exam import grade, pass_mark, report_markdown, report_name
        from saves.atomic import write_new
        from saves.locations import reports_dir

        result = grade(self.seed, self.items, self.predictions, self.length, words=words)
        self.result = result
        now = self.app.now()
        local = now.astimezone(self.tz) if self.tz is not None else now.astimezone()
        self.report_text = report_markdown(result, self.player, local, words=words)
        try:
            self.report_path = write_new(reports_dir(getattr(self.app, "save_dir", None)), report_name(local),
                                         self.report_text)
            where = f"The report is saved as {self.report_path}"
        except OSError as error:
            self.report_path = None
            where = f"The report could not be saved ({error.strerror or error}); it is shown below."
        verdict = "PASSED" if result.passed else "NOT PASSED"
        mark = "✓" if result.passed else "✗"
        banner = Static(f"{mark} {verdict}: {result.right} of {result.total} right ({result.share:.0%}); "
                        f"the pass mark is {pass_mark(self.length)}.", id="exam-verdict", markup=False,
                        classes="result-pass" if result.passed else "result-fail")
        laying = Static("Laying out the report…", id="report-wait", classes="mode-text", markup=False)
        body = VerticalScroll(
            banner,
            Static(where, id="report-path", classes="mode-text", markup=False),
            laying,
            Horizontal(Button("Leave", variant="primary", id="leave"), classes="setup-buttons"),
            classes="mode-body", id="report-body")
        self.status(f"Clearing test · {verdict.lower()} · {result.right}/{result.total}")
        await self.set_phase("report", body)
        body.focus()
        self.refresh()
        await body.mount(Markdown(self.report_text, id="report-view"), after=laying)
        await laying.remove()

    @asking
    async def action_leave(self) -> None:
        if self.phase != "question":
            self.leave()
            return
        left = len(self.items) - len(self.predictions)
        if await confirm(self, "Stop the test here?", f"The {left} question set(s) not yet locked in count as "
                         "wrong, and the report is written now.", yes="Stop and see the report", no="Go on",
                         dialog_id="stop-exam"):
            await self.finish()
