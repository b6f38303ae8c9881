"""The puzzle screen: the scenario and deployment card on one side, the prediction on the other,
with hints that cost points and the napkin calculator. Lock-in asks once and is final."""
from __future__ import annotations

import time

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Label, Static

from app import labels
from app.errors import keep_going
from app.messages import PredictionLocked
from app.screens.base import RidgeScreen, asking
from app.widgets.card import DeploymentCard
from app.widgets.footer import RidgeFooter
from app.widgets.form import PredictionForm
from app.widgets.napkin_pad import NapkinPad
from app.widgets.titlebar import TitleBar
from puzzles.scoring import HINT_COST


class HintBox(Vertical):
    """The hints taken so far, and the button for the next one."""

    HELP = """\
## Hints

Each hint points you a little further along and costs points when the answer is graded,
whatever the outcome. Take them one at a time with **h** or the button.
"""

    DEFAULT_CSS = """
    HintBox { height: auto; padding: 0 1; }
    HintBox > #hints-taken { height: auto; }
    """

    def __init__(self, hints: tuple[str, ...], cost: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.hints = tuple(hints)
        self.cost = cost
        self.taken = 0

    def compose(self) -> ComposeResult:
        yield Static("", id="hints-taken", markup=False)
        yield Button(self._button_text(), id="hint", compact=True)

    def _button_text(self) -> str:
        left = len(self.hints) - self.taken
        if left <= 0:
            return "No hints left"
        return f"Take a hint (−{self.cost} points, {left} left)"

    def take(self) -> bool:
        if self.taken >= len(self.hints):
            return False
        self.taken += 1
        self.query_one("#hints-taken", Static).update(
            "\n".join(f"{i}. {text}" for i, text in enumerate(self.hints[: self.taken], 1)))
        button = self.query_one("#hint", Button)
        button.label = self._button_text()
        button.disabled = self.taken >= len(self.hints)
        return True


class PuzzleScreen(RidgeScreen):
    """One puzzle, from first look to lock-in."""

    AUTO_FOCUS = "#bottleneck"  # focused as the screen is composed, so the first frame shows it

    HELP = """\
## A puzzle

Read the scenario and the deployment card, then fill in your prediction: what limits the
deployment, which lever helps most, by roughly how much, and why. Work numbers out on the
napkin (**n**). Hints (**h**) cost points. When you are ready, lock in (**l**): you are asked
once, and then the answer is final and the engine shows its working.

**b** moves to the brief on the left and shows its next part each time you press it (the
scenario, the whole deployment card, the hints, the napkin); arrows and Page Down scroll it. On
a narrow terminal the brief takes the whole width while you read it. **a** goes back to the
first part of your prediction still unanswered.
"""

    BINDINGS = [
        Binding("l", "lock_in", "Lock in", id="puzzle.lock", tooltip="Lock in your prediction (asked once, then final)"),
        Binding("h", "hint", "Hint", id="puzzle.hint", tooltip="Take the next hint (costs points)"),
        Binding("b", "brief", "Brief", id="puzzle.brief",
                tooltip="Read the brief: each press shows its next part (card, hints, napkin)"),
        Binding("n", "napkin", "Napkin", id="puzzle.napkin", tooltip="Jump to the napkin calculator"),
        Binding("a", "answer", "Answer", id="puzzle.answer", show=False,
                tooltip="Jump to the first part of your prediction still unanswered"),
        Binding("escape", "back", "Back", id="puzzle.back", tooltip="Leave this puzzle without answering"),
    ]

    def __init__(self, puzzle_id: str) -> None:
        super().__init__(id="puzzle")
        self.puzzle_id = puzzle_id
        self.puzzle = None
        self.locked = False
        self._shown_at = time.monotonic()

    def compose(self) -> ComposeResult:
        app = self.app
        session = app.session
        self.puzzle = puzzle = session.puzzle(self.puzzle_id)
        chapter = session.chapter_of(puzzle.id)
        yield TitleBar()
        with Horizontal(id="puzzle-body"):
            with VerticalScroll(id="brief"):
                where = f"Chapter {chapter.number}: {chapter.title}" if chapter else "Generated puzzle"
                yield Label(puzzle.title, classes="screen-title", markup=False, id="brief-top")
                yield Label(f"{where} · difficulty {getattr(puzzle, 'difficulty', '?')}/5", classes="subtle",
                            markup=False)
                from puzzles.cards import form_spec
                from puzzles.chapters import reflow

                yield Static(reflow(puzzle.scenario), id="scenario", markup=False)
                yield Label("The deployment", classes="section-title", id="card-title")
                yield DeploymentCard(puzzle.deployment, levers=tuple(puzzle.levers),
                                     ruled_out=getattr(puzzle, "ruled_out", None), load=getattr(puzzle, "load", None),
                                     objective=getattr(puzzle, "objective", None), id="card")
                yield Label("Hints", classes="section-title", id="hints-title")
                yield HintBox(tuple(getattr(puzzle, "hints", ()) or ()), HINT_COST, id="hintbox")
                yield Label("Napkin", classes="section-title", id="napkin-title")
                yield NapkinPad(cursor_blink=app.blink, id="napkin")
            with VerticalScroll(id="answer", can_focus=False):  # its controls take focus and scroll it
                yield Label("Your prediction", classes="section-title")
                yield PredictionForm(form_spec(puzzle, labels), cursor_blink=app.blink, id="form")
                yield Button("Lock in", variant="primary", id="lock-in")
                yield Label("Asked once, then final.", classes="subtle", id="lock-note")
        yield RidgeFooter()

    def on_mount(self) -> None:
        self.sub_title = self.puzzle.title if self.puzzle else ""
        self._shown_at = time.monotonic()
        # after the first frame: a thread started now would share the interpreter with drawing it
        self.call_after_refresh(self.run_worker, self._warm_up, thread=True, group="warm-up", exit_on_error=False)

    def _warm_up(self) -> None:
        """Let the app load what the reveal needs while the player thinks, so lock-in shows it at
        once. Nothing computed here is shown before lock-in."""
        self.app.prepare_reveal(self.puzzle)

    # -- hints and the napkin --------------------------------------------------------------
    @on(Button.Pressed, "#hint")
    @keep_going
    def action_hint(self) -> None:
        if self.locked:
            return
        box = self.query_one("#hintbox", HintBox)
        if not box.take():
            self.notify("No hints left for this puzzle.", severity="warning")
            return
        self.query_one("#hints-taken").scroll_visible()

    @property
    def hints_used(self) -> int:
        return self.query_one("#hintbox", HintBox).taken

    def action_napkin(self) -> None:
        pad = self.query_one("#napkin", NapkinPad)
        pad.input.focus()
        pad.scroll_visible()

    BRIEF_PARTS = ("#brief-top", "#card-title", "#hints-title", "#napkin-title")

    READING_BELOW = 100  # columns: narrower than this, the brief takes the whole width while read

    def action_brief(self) -> None:
        """Focus the brief and bring its next part to the top, so the card is read from its
        start and each press moves on (a part taller than the pane is paged through first);
        after the last part it starts again from the scenario. On a narrow terminal the brief
        takes the whole width while it is read, so the card's rows fit on one line each."""
        brief = self.query_one("#brief", VerticalScroll)
        was_here = self.focused is brief
        self.set_reading(self.app.size.width < self.READING_BELOW)
        brief.focus(scroll_visible=False)
        tops = [self.query_one(part).virtual_region.y for part in self.BRIEF_PARTS]
        now = round(brief.scroll_y)
        if not was_here:
            target = max((top for top in tops if top <= now), default=0)
        elif now >= brief.max_scroll_y:
            target = 0
        else:
            later = [top for top in tops if top > now]
            page = max(1, brief.scrollable_content_region.height - 1)
            # the part on show continues below the pane: page through it before moving on
            target = min(later[0] if later else brief.max_scroll_y, now + page)
        brief.scroll_to(y=target, animate=False)

    def set_reading(self, reading: bool) -> None:
        """The brief alone at full width (reading), or beside the prediction."""
        body = self.query_one("#puzzle-body")
        if body.has_class("-reading") != reading:
            body.set_class(reading, "-reading")

    def on_descendant_focus(self, event) -> None:
        """Leaving the brief for the prediction brings the two panes back side by side."""
        answer = self.query_one("#answer")
        if self.focused is not None and (self.focused is answer or answer in self.focused.ancestors):
            self.set_reading(False)

    def action_answer(self, skip_focused: bool = False) -> None:
        """Focus the first part of the prediction still unanswered (with `skip_focused`, other
        than the one focused now, so Escape always moves on), else the lock-in button."""
        here = self.focused.id if (skip_focused and self.focused is not None) else None
        gaps = [wid for _, wid in self.query_one("#form", PredictionForm).missing() if wid != here]
        target = self.query_one(f"#{gaps[0]}" if gaps else "#lock-in")
        self.set_reading(False)
        target.focus()
        target.scroll_visible(animate=False)

    # -- lock-in ---------------------------------------------------------------------------
    @on(Button.Pressed, "#lock-in")
    @asking
    async def action_lock_in(self) -> None:
        if self.locked:
            self.notify("Already locked in.")
            return
        form = self.query_one("#form", PredictionForm)
        gaps = form.missing()
        if gaps:
            names = ", ".join(what for what, _ in gaps)
            self.notify(f"Still to answer: {names}.", title="Not yet", severity="warning")
            widget = self.query_one(f"#{gaps[0][1]}")
            widget.focus()
            widget.scroll_visible()
            return
        from app.screens.dialogs import confirm

        from puzzles.reveal import lock_summary

        body = lock_summary(form.prediction(), labels.words, self.hints_used, HINT_COST)
        if await confirm(self, "Lock in this prediction?", body, yes="Lock in", no="Keep thinking",
                         dialog_id="lock-confirm"):
            self.lock_in()

    def lock_in(self) -> None:
        """Final: freeze the form and grade it; the app shows the reveal in this screen's place,
        and the reveal records the attempt. (Should any of it fail, the collection pause ends on
        its own timer.)"""
        if self.locked:
            return
        app = self.app
        app.pause_collection()  # no collection pause between lock-in and the reveal's first frame
        self.locked = True
        form = self.query_one("#form", PredictionForm)
        form.freeze()
        prediction = form.prediction()
        seconds = time.monotonic() - self._shown_at
        from puzzles.grading import grade

        key = app.bank.key(self.puzzle)
        graded = grade(self.puzzle, key, prediction, self.hints_used, strict=False)
        # The attempt is written by the reveal, in a thread, once the reveal is on screen: a
        # durable write can wait on a busy disk, and the player should not wait with it.
        # Shown by the app at once, in this same turn: a posted message would arrive after one
        # more frame of this (now final) puzzle, and the reveal would show ~5 ms later.
        app.show_reveal(PredictionLocked(self.puzzle, prediction, key, graded, self.hints_used, seconds=seconds,
                                         locked_at=app.now()))

    # -- leaving ---------------------------------------------------------------------------
    def action_back(self) -> None:
        from textual.widgets import Input

        if isinstance(self.focused, Input):  # Escape in a text box leaves the box, not the puzzle
            self.action_answer(skip_focused=True)
            return
        form = self.query_one("#form", PredictionForm)
        if self.locked or not (form.is_dirty() or self.hints_used):
            self.leave()
            return
        self.leave_unlocked()

    @asking
    async def leave_unlocked(self) -> None:
        """Ask before leaving an answer begun but not locked in (nothing of it is recorded)."""
        from app.screens.dialogs import confirm

        if await confirm(self, "Leave this puzzle?", "Your answer is not locked in, so nothing is recorded. You "
                         "can come back to it later.", yes="Leave", no="Stay", dialog_id="leave-confirm"):
            self.leave()
