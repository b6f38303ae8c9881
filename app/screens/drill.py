"""The drill: short timed rounds of generated puzzles, the concepts chosen by spaced repetition.

Set-up (player, difficulty, round length, today's streak and reviews) → each question against a
countdown (when it runs out, what is filled in is locked in) → a compact reveal → the round's
summary. Every answer is saved with mode `drill`; the concept's card moves by the grade (cleared is
Good, anything else Again) until today's review cap is used up.
"""
from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, Static

from app.screens.base import asking
from app.screens.dialogs import confirm
from app.screens.rounds import (DIFFICULTY_TEXT, ModeScreen, default_player, puzzle_heading, record,
                                setup_field)
from app.widgets.picker import Picker
from engine.ids import Outcome
from engine.text import refusal
from puzzles.readiness import EXAM_SETTING
from saves.players import check_player


class DrillScreen(ModeScreen):
    """Timed rounds for interview practice, scheduled by spaced repetition."""

    TITLE_TEXT = "Drill"
    HELP = """\
## Drill

Short timed rounds of generated puzzles at the difficulty you choose. Spaced repetition decides
which concept comes next: the concepts due for review come first, then ones you have not met.
A cleared answer (right answer, right reason) pushes a concept's next review further away;
anything else brings it back soon. You never rate yourself: the grade does. Campaign, exam and
match answers count too, as reviews of the concept that decided the puzzle's key.

Each question has a countdown. When it reaches zero, whatever you have filled in is locked in,
and anything left blank counts as wrong (a blank certainty counts as low).

At most 20 answers a day move the schedule, so a missed week does not become a wall: past that,
you can keep practising, but due concepts wait until tomorrow.

Before a round: **Due** counts concepts whose review has come, **New** those never answered,
**Learning** those still in their first short steps. Give an **exam date** and rounds take the
concepts the exam would find weakest first, so each is seen and recalled before the day; home
shows each concept's readiness (its chance of being recalled on the day).

Escape during a question pauses the clock while it asks. After a round, **r** drills what you
did not clear, on new puzzles.

**s** start · **l** lock in · **n** next · **r** review what you missed · **p** napkin · **a** back
to the answer · **Escape** leave
"""

    BINDINGS = [
        Binding("s", "start", "Start round", id="drill.start", tooltip="Start a round with these settings"),
        Binding("l", "lock_in", "Lock in", id="drill.lock", tooltip="Lock in this answer (final)"),
        Binding("n", "next", "Next", id="drill.next", tooltip="Go on to the next question"),
        Binding("r", "review_missed", "Review missed", id="drill.review_missed",
                tooltip="A round of new puzzles on the concepts this round did not clear"),
        Binding("escape", "leave", "Leave", id="drill.leave", tooltip="Leave the drill"),
    ]
    PHASE_ACTIONS = {"start": ("setup", "summary"), "lock_in": ("question",),
                     "next": ("reveal",), "review_missed": ("summary",)}

    def __init__(self, seed: int | None = None, seconds: float | None = None, tz=None, length: int | None = None,
                 difficulty: int | None = None) -> None:
        super().__init__(id="drill")
        from puzzles.drill import DEFAULT_ROUND, SECONDS_PER_PUZZLE

        self.seed = seed
        self.seconds = SECONDS_PER_PUZZLE if seconds is None else seconds
        self.tz = tz
        self.length = length or DEFAULT_ROUND
        self.difficulty = difficulty or 2
        self.player = ""
        self.planned: list = []
        self.position = 0
        self.answered: list = []  # puzzles.drill.Answered, one per answer of the round
        self.cards: dict = {}
        self.shown_at = 0.0

    # -- set-up -----------------------------------------------------------------------------------
    async def show_setup(self) -> None:
        from puzzles.drill import ROUND_LENGTHS

        self.status("Drill · set up a round")
        await self.set_countdown(None)
        lengths = sorted(set(ROUND_LENGTHS) | {self.length})
        body = VerticalScroll(
            Static(f"Generated puzzles, {self.seconds:g} s each; spaced repetition picks the concepts, due ones "
                   "first. When time runs out, what you have filled in is locked in.",
                   classes="mode-text", markup=False),
            setup_field("Player", Input(value=self.player or default_player(self.app), placeholder="your name",
                                        id="player-name", max_length=32, compact=True)),
            setup_field("Difficulty", Picker([(text, d) for d, text in DIFFICULTY_TEXT.items()], value=self.difficulty,
                                             allow_blank=False, id="difficulty")),
            setup_field("Round length", Picker([(f"{n} questions", n) for n in lengths], value=self.length,
                                               allow_blank=False, id="length")),
            setup_field("Exam date (optional, YYYY-MM-DD)", Input(value=self._exam_text(), placeholder="e.g. 2026-03-09",
                                                                  id="exam-date", max_length=10, compact=True)),
            Static("", id="drill-today", classes="mode-text", markup=False),
            Label("", id="setup-error", classes="setup-error", markup=False),
            Horizontal(Button("Start round (s)", variant="primary", id="start"), Button("Leave", id="leave"),
                       classes="setup-buttons"),
            classes="mode-body")
        await self.set_phase("setup", body)
        self.query_one("#player-name", Input).cursor_blink = self.app.blink
        self.query_one("#exam-date", Input).cursor_blink = self.app.blink
        self.update_today()
        self.query_one("#start", Button).focus()

    def _profile(self, name: str):
        return None if not name or check_player(name) else self.app.store.load_if_any(name)

    def update_today(self) -> None:
        """Today's streak, reviews and due concepts for the player named in the set-up."""
        from puzzles.drill import today_lines

        found = self.query("#player-name")
        name = found.first(Input).value.strip() if found else self.player
        try:
            profile = self._profile(name)
        except Exception as error:  # noqa: BLE001 - a damaged save is named, not fatal
            self.query_one("#drill-today", Static).update(refusal(f"{name}'s save cannot be read: {error}"))
            return
        exam, problem = self._exam_date()
        lines = today_lines(profile, self._difficulty(), self.app.now(), exam, problem, self.tz)
        self.query_one("#drill-today", Static).update("\n".join(lines))

    def _exam_text(self) -> str:
        try:
            profile = self._profile(self.player or default_player(self.app))
        except Exception:  # noqa: BLE001 - a damaged save is said elsewhere
            return ""
        return str(profile.settings.get(EXAM_SETTING, "")) if profile else ""

    def _exam_date(self):
        """(the exam date typed, or None; the reason it is refused, or "")."""
        from puzzles.review import local_date, parse_exam_date

        found = self.query("#exam-date")
        text = found.first(Input).value if found else self._exam_text()
        try:
            return parse_exam_date(text, local_date(self.app.now(), self.tz)), ""
        except ValueError as error:
            return None, str(error)

    def _difficulty(self) -> int:
        found = self.query("#difficulty")
        if found:
            value = found.first(Picker).value
            if isinstance(value, int):
                return value
        return self.difficulty

    @on(Input.Changed, "#player-name")
    @on(Input.Changed, "#exam-date")
    @on(Picker.Changed, "#difficulty")
    def _setup_changed(self) -> None:
        if self.phase == "setup":
            self.update_today()

    @on(Input.Submitted, "#player-name")
    @on(Input.Submitted, "#exam-date")  # Enter in either field starts the round, as the footer's s does
    @on(Button.Pressed, "#start")
    async def action_start(self) -> None:
        if self.phase == "summary":
            await self.show_setup()
            return
        if self.phase != "setup":
            return
        from puzzles.drill import plan_round, reachable, round_order
        from puzzles.review import profile_cards

        name = self.typed_player()
        if name is None:
            return
        self.difficulty = self._difficulty()
        length = self.query_one("#length", Picker).value
        self.length = length if isinstance(length, int) else self.length
        now = self.app.now()
        try:
            profile = self._profile(name)
        except Exception as error:  # noqa: BLE001
            self.setup_error(f"{name}'s save cannot be read: {error}")
            return
        exam, exam_problem = self._exam_date()
        if exam_problem:
            self.setup_error(exam_problem)
            self.query_one("#exam-date", Input).focus()
            return
        self.player = profile.name if profile else name
        self.cards = profile_cards(profile)  # campaign answers since the last drill included
        if profile is not None and str(profile.settings.get(EXAM_SETTING, "")) != (exam.isoformat() if exam else ""):
            self.app.store.update_settings(profile.name, **{EXAM_SETTING: exam.isoformat() if exam else None})
        order = round_order(reachable(self.difficulty), self.cards, now, exam, self.tz)
        seed = self.seed if self.seed is not None else int(now.timestamp()) % 1_000_000
        self.planned = plan_round(order, self.difficulty, seed, self.length)
        self.position = 0
        self.answered = []
        await self.show_question()

    # -- a question -------------------------------------------------------------------------------
    async def show_question(self) -> None:
        from puzzles.drill import CONCEPT_TITLES
        from puzzles.review import describe_due

        planned = self.planned[self.position]
        now = self.app.now()
        concept = CONCEPT_TITLES.get(planned.concept, planned.concept)
        due = describe_due(self.cards.get(planned.concept), now)
        score = sum(a.points for a in self.answered)
        self.status(f"Drill · {self.position + 1}/{len(self.planned)} · {concept} ({due}) · {score:+d} pts")
        await self.ask(planned.item, puzzle_heading(planned.item, self.position + 1, len(self.planned),
                                                    f"reviews {concept}"))
        await self.set_countdown(self.seconds)

    def action_lock_in(self) -> None:
        if self.ready_to_lock() is None:
            return
        self.run_worker(self.lock_answer(timed_out=False), exclusive=True, group="lock")

    def on_countdown_expired(self) -> None:
        if self.lock_open:
            self.notify("Time is up: what you had filled in is locked in.", title="Time", severity="warning")
            self.run_worker(self.lock_answer(timed_out=True), exclusive=True, group="lock")

    async def time_up(self) -> None:
        """Run out the clock now (what the countdown does at zero)."""
        if self.lock_open:
            await self.lock_answer(timed_out=True)

    async def lock_answer(self, timed_out: bool) -> None:
        """Grade the answer, move its concept's card (`puzzles.drill.review_answer`), save both."""
        if not self.claim_lock():
            return
        from puzzles.drill import CONCEPT_TITLES, TIME_UP, UNCHANGED, Answered, review_answer, seconds_counted
        from puzzles.review import card_dict

        self.stop_countdown()
        await self.set_countdown(None)
        planned = self.planned[self.position]
        prediction, judged, taken = self.take_answer(planned.item)
        seconds = seconds_counted(taken, self.seconds, timed_out)
        now = self.app.now()
        notes = [TIME_UP] if timed_out else []
        concept = CONCEPT_TITLES.get(planned.concept, planned.concept)
        next_review = UNCHANGED
        try:
            profile = self._profile(self.player)
            reviewed = review_answer(self.cards.get(planned.concept), planned.concept, judged.outcome, now,
                                     profile.attempts if profile else (), self.tz)
            if reviewed.card is not None:
                self.app.store.save_review_state(self.player, planned.concept, card_dict(reviewed.card))
                self.cards[planned.concept] = reviewed.card
            next_review = reviewed.next_review
            notes.append(reviewed.note)
        except Exception as error:  # noqa: BLE001 - the schedule is a convenience; say it was not saved
            from app.errors import told
            from saves.crash_log import log_exception

            path = log_exception(error, self.app.log_file, "saving a review card")
            self.notify(told(f"The review schedule could not be saved. Details in {path}"), severity="error")
        record(self.app, self.player, planned.item, judged, "drill", seconds, now)
        self.answered.append(Answered(planned.concept, planned.item.puzzle.id, judged.outcome, judged.points,
                                      next_review, timed_out))
        last = self.position + 1 >= len(self.planned)
        score = sum(a.points for a in self.answered)
        self.status(f"Drill · {self.position + 1}/{len(self.planned)} · {concept} · {score:+d} pts")
        await self.show_reveal(judged, notes, "See the round (n)" if last else "Next question (n)")

    @on(Button.Pressed, "#next")
    async def action_next(self) -> None:
        if self.phase != "reveal":
            return
        self.position += 1
        if self.position < len(self.planned):
            await self.show_question()
        else:
            await self.show_summary()

    # -- the round's summary -----------------------------------------------------------------------
    async def show_summary(self) -> None:
        from app import labels
        from puzzles.drill import after_lines, summary_rows

        now = self.app.now()
        score = sum(a.points for a in self.answered)
        cleared = sum(a.outcome == Outcome.CLEARED for a in self.answered)
        rows = summary_rows(self.answered, labels.outcome)
        try:
            profile = self._profile(self.player)
        except Exception:  # noqa: BLE001
            profile = None
        lines = after_lines(profile, self.difficulty, self.cards, now, self.tz)
        body = VerticalScroll(
            Label(f"Round done: {cleared} of {len(self.answered)} cleared, {score:+d} points", classes="screen-title"),
            Static("\n".join(rows), id="drill-table", classes="mode-text", markup=False),
            Static("\n".join(lines), id="drill-after", classes="mode-text", markup=False),
            Horizontal(*([Button("Review what I missed (r)", variant="primary", id="review-missed")]
                         if self.missed() else []),
                       Button("Another round (s)", variant="default" if self.missed() else "primary", id="start"),
                       Button("Leave", id="leave"), classes="setup-buttons"),
            classes="mode-body")
        await self.set_countdown(None)
        self.status(f"Drill · round done · {score:+d} points")
        await self.set_phase("summary", body)
        self.query_one("#review-missed" if self.missed() else "#start", Button).focus()

    def missed(self) -> list[str]:
        """The concepts this round did not clear (`puzzles.drill.missed_concepts`)."""
        from puzzles.drill import missed_concepts

        return missed_concepts(self.answered)

    @on(Button.Pressed, "#review-missed")
    async def action_review_missed(self) -> None:
        """A round of new puzzles on the concepts just missed (a new puzzle each, never a repeat)."""
        from puzzles.drill import plan_review

        if self.phase != "summary" or not self.missed():
            return
        seed = self.seed if self.seed is not None else int(self.app.now().timestamp()) % 1_000_000
        self.planned = plan_review(self.answered, self.difficulty, seed)
        self.position = 0
        self.answered = []
        await self.show_question()

    # -- leaving -----------------------------------------------------------------------------------
    @asking
    async def action_leave(self) -> None:
        if self.phase == "question":
            from app.screens.rounds import Countdown

            clocks = list(self.query(Countdown))
            for clock in clocks:
                clock.pause()  # the time is the player's while the question is asked
            if not await confirm(self, "Leave the drill?", "The clock is paused. This question is not locked in, "
                                 "so nothing is saved for it. Answers already locked in are saved.",
                                 yes="Leave", no="Stay", dialog_id="leave-drill"):
                for clock in clocks:
                    clock.resume()
                return
        self.leave()
