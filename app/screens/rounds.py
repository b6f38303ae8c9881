"""What the drill, the clearing test and the competitions share: a screen that moves through
phases (set-up, questions, reveals, summary) in one stage, the view of one question, a countdown,
a compact reveal, and recording an answer to a player's save.

Each of those modes is one screen whose stage changes content, at the bottom of its own stack, so
leaving one is one `Back` to the app (which returns home, or quits when the mode runs on its own:
`make_app(solo=...)`). The question view reuses the game's deployment card, prediction form and
napkin pad.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Header, Label, Static

from app import labels
from app.errors import keep_going
from app.screens.base import RidgeScreen, asking
from app.screens.dialogs import confirm
from app.widgets.card import DeploymentCard
from app.widgets.footer import RidgeFooter
from app.widgets.form import PredictionForm
from app.widgets.napkin_pad import NapkinPad
from app.widgets.picker import Picker
from engine.text import refusal
from engine.units import countdown
from saves.players import check_player

DIFFICULTY_TEXT = {
    1: "1 · one dominant effect, common models",
    2: "2 · more models and GPUs, TPOT goals",
    3: "3 · every objective, more levers",
    4: "4 · mixture-of-experts, routing",
    5: "5 · everything, large deployments",
}


words = labels.words  # ids in the words the game shows (feedback and reports use this)


def default_player(app) -> str:
    """The name a mode offers first: the open session's, the one asked for, or the last used."""
    session = getattr(app, "session", None)
    if session is not None:
        return session.name
    requested = getattr(app, "requested_profile", None)
    if requested:
        return requested
    try:
        return app.store.last_profile() or ""
    except Exception:  # noqa: BLE001 - an unreadable folder just means no suggestion
        return ""


def record(app, player: str, item, judged, mode: str, seconds: float | None, locked_at) -> Any:
    """Append one graded answer to `player`'s save (created if new) by `saves.record.record_graded`.
    Returns the Attempt, or None when it could not be saved (the player is told; the round goes on)."""
    from saves.record import record_graded

    try:
        return record_graded(app.store, player, item.puzzle, judged, mode=mode, locked_at=locked_at,
                             seconds=seconds)
    except Exception as error:  # noqa: BLE001 - the round still teaches; say it was not saved
        from app.errors import told
        from saves.crash_log import log_exception

        path = log_exception(error, app.log_file, f"recording a {mode} answer")
        app.notify(told(f"This answer could not be saved: {error or type(error).__name__}. Details in {path}"),
                   severity="error", timeout=10)
        return None


# --- the countdown ---------------------------------------------------------------------------------

class Countdown(Static):
    """Seconds left for the current question; posts `Expired` once when they run out."""

    class Expired(Message):
        """The time for this question is up."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self.seconds = seconds
        self.clock = clock
        self.started = clock()
        self.fired = False
        self.stopped = False
        self.paused_at: float | None = None

    def on_mount(self) -> None:
        self.started = self.clock()
        self.tick()
        self.set_interval(0.5, self.tick)

    @property
    def left(self) -> float:
        now = self.paused_at if self.paused_at is not None else self.clock()
        return max(0.0, self.seconds - (now - self.started))

    def pause(self) -> None:
        """Hold the clock (while a question is asked over the round): no time runs out."""
        if self.paused_at is None and not self.stopped:
            self.paused_at = self.clock()
            self.tick()

    def resume(self) -> None:
        if self.paused_at is not None:
            self.started += self.clock() - self.paused_at
            self.paused_at = None
            self.tick()

    def tick(self) -> None:
        if self.stopped:
            return
        if self.paused_at is not None:
            self.update(f"⏸ {countdown(self.left)} left (paused)")
            return
        left = self.left
        self.update(f"⏱ {countdown(left)} left")
        self.set_class(left <= 15, "-low")
        if left <= 0 and not self.fired:
            self.fired = True
            self.post_message(self.Expired())

    def stop(self) -> None:
        self.stopped = True


# --- one question -----------------------------------------------------------------------------------

class ItemView(Horizontal):
    """One question: the scenario and deployment card beside the prediction form, with the napkin
    question (and its yes/no) above the form when the item asks one."""

    HELP = """\
## A question

Read the card, then say what limits the deployment, which change helps most and by about how
much. A napkin question, when there is one, is answered in the fields it names (numbers may be
typed as sums, like `2 * 80 * 8 * 128 * 2`). Lock in with **l**.
"""

    def __init__(self, item, heading: str, blink: bool = True, napkin_pad: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.item = item
        self.heading = heading
        self.blink = blink
        self.with_pad = napkin_pad
        self.frozen = False

    def compose(self) -> ComposeResult:
        from puzzles.cards import form_spec
        from puzzles.chapters import reflow
        from puzzles.questions import SPEC_CHOICES

        puzzle, question = self.item.puzzle, self.item.question
        with VerticalScroll(id="item-brief"):
            yield Label(puzzle.title, classes="screen-title", markup=False)
            yield Label(self.heading, classes="subtle", markup=False)
            yield Static(reflow(puzzle.scenario), id="item-scenario", markup=False)
            yield Label("The deployment", classes="section-title")
            yield DeploymentCard(puzzle.deployment, load=getattr(puzzle, "load", None),
                                 objective=getattr(puzzle, "objective", None), id="item-card")
            if self.with_pad:
                yield Label("Napkin", classes="section-title")
                yield NapkinPad(cursor_blink=self.blink, id="napkin")
        with VerticalScroll(id="item-answer", can_focus=False):  # its controls take focus and scroll it
            if question is not None:
                yield Label(f"Napkin question: {question.title}", classes="section-title", markup=False)
                yield Static(question.prompt, id="napkin-question", markup=False)
                if question.yes_no:
                    yield Picker([(text, value) for value, text in SPEC_CHOICES], prompt="yes or no?",
                                 id="spec-helps")
            yield Label("Your prediction", classes="section-title")
            yield PredictionForm(form_spec(self.item.puzzle, labels, self.item.ask_reason), cursor_blink=self.blink,
                                 id="form")
            yield Button("Lock in", variant="primary", id="lock-in")
            yield Label("Final once locked in.", classes="subtle", id="lock-note")

    @property
    def form(self) -> PredictionForm:
        return self.query_one("#form", PredictionForm)

    def spec_answer(self) -> str:
        found = self.query("#spec-helps")
        if not found:
            return ""
        value = found.first(Picker).value
        return "" if value is Picker.NULL or value is None else str(value)

    def prediction(self) -> dict:
        from puzzles.questions import SPEC_FIELD

        if self.frozen:
            return dict(self._snapshot)
        p = self.form.prediction()
        if self.query("#spec-helps"):
            p[SPEC_FIELD] = self.spec_answer()
        return p

    def missing(self) -> list[tuple[str, str]]:
        gaps = list(self.form.missing())
        if self.query("#spec-helps") and not self.spec_answer():
            gaps.insert(0, ("whether speculative decoding helps", "spec-helps"))
        return gaps

    def is_dirty(self) -> bool:
        return self.form.is_dirty() or bool(self.spec_answer())

    def freeze(self) -> None:
        self._snapshot = self.prediction()
        self.frozen = True
        self.form.freeze()
        for control in self.query("#spec-helps, #lock-in"):
            control.can_focus = False
        self.query_one("#lock-in", Button).disabled = True

    def focus_first(self) -> None:
        target = self.query("#spec-helps") or self.query("#bottleneck")
        if target:
            target.first().focus()
            target.first().scroll_visible()


def verdict_banner(judged, extra: str = "") -> Static:
    """The outcome in a word and a symbol (never colour alone), with the points."""
    symbol, word = labels.OUTCOMES.get(judged.outcome, ("?", judged.outcome))
    sign = "+" if judged.points > 0 else ""
    text = f"{symbol} {word.upper()}   {sign}{judged.points} points   (certainty {judged.certainty})"
    if extra:
        text += f"\n{extra}"
    return Static(text, id="verdict", classes=f"-{judged.outcome}", markup=False)


class RevealPanel(VerticalScroll):
    """A compact reveal: the grade, each part against the engine's answer, and what comes next."""

    HELP = """\
## The reveal

First the part that decided your grade, then every part judged — estimates included — with
yours beside the engine's: ✓ right, ✗ wrong, ◆ the part that decided the outcome. An estimate of
the quantity that decides the puzzle counts toward the reason; any other estimate is a check on
your working and costs nothing. Press **n** to go on.
"""

    def __init__(self, judged, notes: list[str], next_text: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.judged = judged
        self.notes = notes
        self.next_text = next_text

    def compose(self) -> ComposeResult:
        blank = ""
        if self.judged.blanks:
            blank = "Left blank: " + ", ".join(b.replace("_", " ") for b in self.judged.blanks) + "."
        yield verdict_banner(self.judged, blank)
        from puzzles.grading import reveal_lines

        yield Static("\n".join(labels.humanize(line) for line in reveal_lines(self.judged, words)),
                     id="reveal-lines", markup=False)
        if self.notes:
            yield Static("\n".join(self.notes), id="reveal-notes", markup=False)
        yield Button(self.next_text, variant="primary", id="next")


# --- the mode screen ------------------------------------------------------------------------------

class ModeScreen(RidgeScreen):
    """A screen that moves through phases in its `#stage`: each phase mounts fresh widgets.
    Subclasses set `PHASE_ACTIONS` (action -> phases where it is offered)."""

    CSS_PATH = "rounds.tcss"
    PHASE_ACTIONS: dict[str, tuple[str, ...]] = {}
    TITLE_TEXT = ""
    BINDINGS = [
        Binding("p", "napkin", "Napkin", id="mode.napkin", tooltip="Jump to the napkin calculator"),
        Binding("a", "answer", "Answer", id="mode.answer", show=False, tooltip="Jump to the answer form"),
        Binding("b", "brief", "Brief", id="mode.brief", show=False,
                tooltip="Read the scenario and card: each press shows the next page, then the top again"),
    ]
    QUESTION_ACTIONS = ("napkin", "answer", "brief")

    # Which phase is on the stage; the keys offered follow it (Textual refreshes the bindings).
    phase: reactive[str] = reactive("setup", repaint=False, bindings=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.locking = False  # set once the question on show is being locked in (`claim_lock`)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Horizontal(Static("", id="round-status", markup=False), id="status-bar")
        yield Vertical(id="stage")
        yield RidgeFooter()

    def on_mount(self) -> None:
        self.sub_title = self.TITLE_TEXT
        self.call_after_refresh(self.show_setup)

    async def show_setup(self) -> None:  # pragma: no cover - overridden
        pass

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in self.QUESTION_ACTIONS:
            return self.phase == "question"
        phases = self.PHASE_ACTIONS.get(action)
        if phases is None:
            return True
        return self.phase in phases

    def action_napkin(self) -> None:
        found = self.query("#napkin-input")
        if found:
            found.first().focus()
            found.first().scroll_visible()

    def action_brief(self) -> None:
        """Focus the brief; pressed again, page down it, and from its end back to the top."""
        found = self.query("#item-brief")
        if not found:
            return
        brief = found.first()
        if self.focused is not brief:
            brief.focus(scroll_visible=False)
            return
        if brief.scroll_y >= brief.max_scroll_y:
            brief.scroll_home(animate=False)
        else:
            brief.scroll_page_down(animate=False)

    def action_answer(self) -> None:
        view = self.item_view()
        if view is not None:
            view.focus_first()

    async def set_phase(self, phase: str, *widgets: Widget) -> None:
        stage = self.query_one("#stage", Vertical)
        await stage.remove_children()
        self.phase = phase
        if widgets:
            await stage.mount(*widgets)

    def setup_error(self, text: str) -> None:
        """Show (or, with "", hide) the line under a set-up form that says what is wrong: one line
        of at most 300 characters (the label shows text, not markup)."""
        for label in self.query("#setup-error").results(Label):
            label.update(refusal(text) if text else "")
            label.set_class(bool(text), "-shown")

    def status(self, text: str) -> None:
        self.query_one("#round-status", Static).update(text)

    async def set_countdown(self, seconds: float | None) -> None:
        bar = self.query_one("#status-bar", Horizontal)
        for old in self.query(Countdown):
            old.stop()
            await old.remove()
        if seconds:
            await bar.mount(Countdown(seconds, id="countdown"))

    def stop_countdown(self) -> float | None:
        found = self.query(Countdown)
        if not found:
            return None
        countdown = found.first()
        countdown.stop()
        return countdown.left

    @on(Button.Pressed, "#leave")
    @keep_going
    def _leave_pressed(self) -> None:
        self.leave()

    @on(Button.Pressed, "#lock-in")
    @keep_going
    def _lock_in_pressed(self) -> None:
        self.action_lock_in()

    @asking
    async def action_lock_in(self) -> None:
        """Ask once for confirmation, then `lock_answer` (which each mode defines)."""
        view = self.ready_to_lock()
        if view is not None and await confirm(self, self.lock_title(), self.lock_summary(view), yes="Lock in",
                                              no="Keep thinking", dialog_id="lock-confirm"):
            await self.lock_answer()

    def lock_title(self) -> str:
        """The confirmation's question (hot-seat names whose answer it is)."""
        return "Lock in this answer?"

    @property
    def lock_open(self) -> bool:
        """A question is on show and nothing has started locking it in yet."""
        return self.phase == "question" and not self.locking

    def claim_lock(self) -> bool:
        """True for the first lock-in of the question on show, and then False: a second press, a
        countdown running out as the player presses, or a confirmation answered after the round
        moved on must not grade or record the answer twice. `ask` opens the next question."""
        if not self.lock_open:
            return False
        self.locking = True
        return True

    def typed_player(self) -> str | None:
        """The name in the set-up's `#player-name`, or None having said (under the form) why it
        cannot name a save."""
        field = self.query_one("#player-name")  # an Input
        name = field.value.strip()
        problem = check_player(name) if name else "Type your name first: answers are saved under it."
        if problem:
            self.setup_error(problem)
            field.focus()
            return None
        return name

    async def show_reveal(self, judged, notes: list[str], next_label: str) -> None:
        """The compact reveal after a lock-in, with the button that moves on."""
        await self.set_phase("reveal", RevealPanel(judged, notes, next_label, id="reveal"))
        self.query_one("#next", Button).focus()

    async def ask(self, item, heading: str) -> ItemView:
        """Show `item` as the question now being answered, timed from this moment."""
        view = ItemView(item, heading, blink=self.app.blink, id="item")
        await self.set_phase("question", view)
        self.locking = False  # only now: a lock racing the change would grade the old form as this item
        self.shown_at = time.monotonic()
        view.focus_first()
        return view

    async def ask_item(self, index: int, status: str, extra: str = "") -> ItemView:
        """`ask` the mode's `items[index]`, headed as question index + 1 of them all, with `status`
        in the bar (the exam, a match and hot-seat keep their questions in `items`)."""
        item = self.items[index]
        self.status(status)
        return await self.ask(item, puzzle_heading(item, index + 1, len(self.items), extra))

    def ready_to_lock(self) -> ItemView | None:
        """The question's form when it may be locked in now; None (having said what is missing,
        if anything) when it may not."""
        view = self.item_view()
        if not self.lock_open or view is None or gaps_notice(self, view):
            return None
        return view

    def take_answer(self, item) -> tuple[dict, Any, float]:
        """Freeze the form for good and grade it: (prediction, grade, seconds taken)."""
        from puzzles.grading import grade

        view = self.item_view()
        view.freeze()
        prediction = view.prediction()
        return prediction, grade(item.puzzle, item.key, prediction, **item.asks), time.monotonic() - self.shown_at

    def item_view(self) -> ItemView | None:
        found = self.query(ItemView)
        return found.first() if found else None

    def lock_summary(self, view: ItemView) -> str:
        """The locked-in answer in a few lines, for the confirmation (`puzzles.reveal.lock_summary`)."""
        from puzzles.reveal import lock_summary

        return lock_summary(view.prediction(), words)


def gaps_notice(screen: Screen, view: ItemView) -> bool:
    """Tell the player what is still unanswered and focus it; True when something is."""
    gaps = view.missing()
    if not gaps:
        return False
    names = ", ".join(what for what, _ in gaps)
    screen.notify(f"Still to answer: {names}.", title="Not yet", severity="warning")
    widget = screen.query_one(f"#{gaps[0][1]}")
    widget.focus()
    widget.scroll_visible()
    return True


def puzzle_heading(item, number: int, total: int, extra: str = "") -> str:
    difficulty = getattr(item.puzzle, "difficulty", "?")
    text = f"Question {number} of {total} · difficulty {difficulty}/5"
    return f"{text} · {extra}" if extra else text


def setup_field(title: str, *children: Widget, **kwargs) -> Vertical:
    return Vertical(Label(title, classes="field-label", markup=False), *children, classes="setup-field", **kwargs)
