"""A match code played on this machine: the same seeded puzzles every player gets, answered here,
with a tamper-evident result file written after every answer for the host to merge
(`ridge match results FILES...`)."""
from __future__ import annotations

import secrets

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, Static

from app.screens.base import asking
from app.screens.dialogs import confirm
from app.screens.rounds import ModeScreen, default_player, record, setup_field
from saves.locations import matches_dir
from saves.players import check_player


class MatchScreen(ModeScreen):
    """Play a match code and write this player's result file."""

    TITLE_TEXT = "Match"
    HELP = """\
## A match

Everyone playing the same match code gets the same puzzles, each on their own machine. Your
answers are written to a result file after every lock-in; send that file to the host, who
merges everyone's with `ridge match results FILES...` into one leaderboard.

Scoring: the right answer for the right reason earns the most; the more certain you said you
were, the more a right answer earns and the more a wrong one costs. A code ending in -S also
pays up to 5 points for speed, on cleared answers only.

Each file carries a hash chain, and the host's merge grades every answer again, so an edited
file is turned away with the reason.

**Trust.** A match code carries its seed, so each machine makes the same puzzles and grades its
own answers: anyone who wants to can work out every key beforehand, or replay the code. Results
are as honest as the players; for a competition, host it live (`ridge host`), where the keys
never leave the host before a question closes. Playing a code again is practice: only your
first play's result file counts.

**s** start · **l** lock in · **p** napkin · **a** back to the answer · **n** next · **Escape** leave
"""

    BINDINGS = [
        Binding("s", "start", "Start", id="match.start", tooltip="Start playing this match code"),
        Binding("l", "lock_in", "Lock in", id="match.lock", tooltip="Lock in this answer (final)"),
        Binding("n", "next", "Next", id="match.next", tooltip="Go on to the next puzzle"),
        Binding("escape", "leave", "Leave", id="match.leave", tooltip="Leave the match"),
    ]
    PHASE_ACTIONS = {"start": ("setup",), "lock_in": ("question",), "next": ("reveal",)}

    def __init__(self, code=None, player: str | None = None, team: str = "") -> None:
        super().__init__(id="match")
        self.code = code
        self.player = player or ""
        self.team = team
        self.items: list = []
        self.position = 0
        self.writer = None
        self.scores: list[int] = []
        self.outcomes: list[str] = []
        self.shown_at = 0.0

    # -- set-up -----------------------------------------------------------------------------------
    async def show_setup(self) -> None:
        self.status("Match · enter the code the host gave you")
        body = VerticalScroll(
            Label("Play a match code", classes="screen-title"),
            Static("The host shares one code (like R-42-2-8); everyone plays the same puzzles on their own "
                   "machine and sends back the result file this writes. Hosting? Make a code here or with "
                   "`ridge match new`. Results are as honest as the players; for a competition, host it "
                   "live (`ridge host`).", classes="mode-text", markup=False),
            setup_field("Match code", Input(value=str(self.code or ""), placeholder="R-42-2-8", id="code", compact=True)),
            Horizontal(Button("New code", id="new-code"), classes="setup-buttons"),
            setup_field("Your name on the board", Input(value=self.player or default_player(self.app),
                                                        placeholder="your name", id="player-name", max_length=32, compact=True)),
            setup_field("Team (optional)", Input(value=self.team, placeholder="e.g. Blue", id="team", max_length=32, compact=True)),
            Label("", id="setup-error", classes="setup-error", markup=False),
            Horizontal(Button("Start (s)", variant="primary", id="start"), Button("Leave", id="leave"),
                       classes="setup-buttons"),
            classes="mode-body")
        await self.set_phase("setup", body)
        for field in self.query(Input):
            field.cursor_blink = self.app.blink
        (self.query_one("#start", Button) if self.code and self.player else self.query_one("#code", Input)).focus()

    @on(Button.Pressed, "#new-code")
    def _new_code(self) -> None:
        from puzzles.match import MatchCode

        code = MatchCode(secrets.randbelow(1_000_000), 2, 8)
        self.query_one("#code", Input).value = str(code)
        self.notify(f"Share {code} with every player (difficulty 2, 8 puzzles).", title="New match code")

    @on(Input.Submitted, "#code, #player-name, #team")
    @on(Button.Pressed, "#start")
    async def action_start(self) -> None:
        if self.phase != "setup":
            return
        from engine.errors import RidgeError
        from puzzles.match import MatchCode, check_name
        from saves.match import ResultWriter, result_path

        try:
            code = MatchCode.parse(self.query_one("#code", Input).value)
            name = self.query_one("#player-name", Input).value.strip()
            if not name:
                raise RidgeError("Type your name: it goes on the board and names your result file.")
            problem = check_player(name)
            if problem:
                raise RidgeError(problem)
            team_text = self.query_one("#team", Input).value.strip()
            team = check_name(team_text, "team") if team_text else ""
        except RidgeError as problem:
            self.setup_error(str(problem))
            return
        self.code, self.player, self.team = code, name, team
        path = result_path(matches_dir(getattr(self.app, "save_dir", None)), code, name)

        if path.exists():
            self.practise(path)
            return
        self.writer = ResultWriter(path, code, name, team, self.app.now())
        await self.begin()

    @asking
    async def practise(self, path) -> None:
        """This code was played before: offer a replay, which scores nothing (the first play's file stands)."""
        if await confirm(self, "Play this match again?", f"You already played {self.code}; your result file is\n"
                         f"{path}\n\nOnly your first play counts, so playing again is practice: nothing is "
                         "written to that file.", yes="Practise", no="Leave it", dialog_id="replay-practice"):
            self.writer = None
            await self.begin()

    async def begin(self) -> None:
        self.items = self.code.items()
        self.position = 0
        self.scores, self.outcomes = [], []
        await self.show_question()

    # -- questions --------------------------------------------------------------------------------
    async def show_question(self) -> None:
        await self.ask_item(self.position, f"Match {self.code} · {self.position + 1}/{len(self.items)} · "
                                           f"{self.player} · {sum(self.scores):+d} pts")

    async def lock_answer(self) -> None:
        if not self.claim_lock():
            return
        from puzzles.match import answer_score, speed_note
        from saves.match import answer_record

        item = self.items[self.position]
        prediction, judged, seconds = self.take_answer(item)
        now = self.app.now()
        notes = []
        try:
            if self.writer is None:
                notes.append("Practice: not written (your first play's result file stands).")
            else:
                self.writer.add(answer_record(item.puzzle.id, judged, seconds, now))
                notes.append(f"Written to your result file: {self.writer.path}")
        except Exception as error:  # noqa: BLE001 - say so; the match goes on
            from saves.crash_log import log_exception
            from engine.text import refusal

            path = log_exception(error, self.app.log_file, "writing a match result")
            notes.append(refusal(f"Your result file could not be written ({error}); details in {path}."))  # shown as text
        record(self.app, self.player, item, judged, "match", seconds, now)
        score = answer_score(judged.outcome, judged.certainty, seconds, self.code.speed_bonus)
        if self.code.speed_bonus:
            notes.insert(0, speed_note(judged.outcome, seconds))
        self.scores.append(score)
        self.outcomes.append(judged.outcome)
        last = self.position + 1 >= len(self.items)
        self.status(f"Match {self.code} · {self.position + 1}/{len(self.items)} · {self.player} · "
                    f"{sum(self.scores):+d} pts")
        await self.show_reveal(judged, notes, "See your result (n)" if last else "Next puzzle (n)")

    @on(Button.Pressed, "#next")
    async def action_next(self) -> None:
        if self.phase != "reveal":
            return
        self.position += 1
        if self.position < len(self.items):
            await self.show_question()
        else:
            await self.show_done()

    async def show_done(self) -> None:
        from saves.match import done_lines, result_path

        path = self.writer.path if self.writer else None
        if path is None:
            path = result_path(matches_dir(getattr(self.app, "save_dir", None)), self.code, self.player)
        text = done_lines(self.code, self.player, self.scores, self.outcomes, path, practice=self.writer is None)
        body = VerticalScroll(
            Label(f"Match {self.code}: done", classes="screen-title"),
            Static("\n".join(text), id="match-done", classes="mode-text", markup=False),
            Horizontal(Button("Leave", variant="primary", id="leave"), classes="setup-buttons"),
            classes="mode-body")
        self.status(f"Match {self.code} · done · {sum(self.scores):+d} pts")
        await self.set_phase("done", body)
        self.query_one("#leave", Button).focus()

    @asking
    async def action_leave(self) -> None:
        if self.phase in ("question", "reveal") and not await confirm(
                self, "Leave the match?", "Your result file keeps the answers locked in so far; the host can still "
                "merge it.", yes="Leave", no="Stay", dialog_id="leave-match"):
            return
        self.leave()

