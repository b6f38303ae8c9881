"""Hot-seat: two to eight players on one screen, the same puzzles, each locking in privately in
turn, then one shared reveal and a running leaderboard.

Between turns the screen is cleared and asks for the keyboard to be passed, so nobody sees the
answer before theirs. Each answer is saved to that player's own profile with mode `hotseat`.
Scores use the competition rules (`puzzles.match`, `puzzles.boards`): certainty-marked points, so a confident wrong
answer costs the most.
"""
from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static

from app import labels
from app.screens.base import asking
from app.screens.dialogs import confirm
from app.screens.rounds import DIFFICULTY_TEXT, ModeScreen, record, setup_field
from app.widgets.picker import Picker
from saves.players import MAX_PLAYERS, MIN_PLAYERS, parse_players

COUNTS = (3, 5, 8)


@dataclass
class Turn:
    prediction: dict
    judged: object
    seconds: float


class HotseatScreen(ModeScreen):
    """Several players, one keyboard: private lock-ins, a shared reveal, a running board."""

    TITLE_TEXT = "Hot-seat"
    HELP = """\
## Hot-seat

Two to eight players share this screen. For each puzzle, every player in turn gets the keyboard,
reads the card and locks in an answer while the others look away; the screen is cleared between
turns. When everyone has locked in, one reveal shows the engine's answer, everyone's grade, and
the leaderboard so far.

Scoring: the right answer for the right reason earns the most; the more certain you said you
were, the more a right answer earns and the more a wrong one costs.

**s** start · **Enter** ready · **l** lock in · **p** napkin · **a** back to the answer · **n** next ·
**Escape** leave
"""

    BINDINGS = [
        Binding("s", "start", "Start", id="hotseat.start", tooltip="Start the match with these players"),
        Binding("enter", "ready", "Ready", id="hotseat.ready", tooltip="The next player has the keyboard"),
        Binding("l", "lock_in", "Lock in", id="hotseat.lock", tooltip="Lock in this player's answer (final)"),
        Binding("n", "next", "Next", id="hotseat.next", tooltip="Go on to the next puzzle"),
        Binding("escape", "leave", "Leave", id="hotseat.leave", tooltip="Leave the hot-seat match"),
    ]
    PHASE_ACTIONS = {"start": ("setup",), "ready": ("pass",), "lock_in": ("question",), "next": ("reveal",)}

    def __init__(self, players: list[str] | None = None, seed: int | None = None, difficulty: int = 2,
                 count: int = 5) -> None:
        super().__init__(id="hotseat")
        self.preset = list(players) if players else None
        self.players: list[str] = []
        self.seed = seed
        self.difficulty = difficulty
        self.count = count
        self.items: list = []
        self.answers: list[dict[str, Turn]] = []
        self.puzzle_index = 0
        self.turn = 0
        self.shown_at = 0.0

    # -- set-up -----------------------------------------------------------------------------------
    async def show_setup(self) -> None:
        if self.preset:
            names, problem = parse_players(", ".join(self.preset))
            if problem is None:
                await self.begin(names)
                return
        self.status("Hot-seat · who is playing?")
        counts = sorted(set(COUNTS) | {self.count})
        body = VerticalScroll(
            Label("Hot-seat: one screen, several players", classes="screen-title"),
            Static("Everyone answers the same puzzles in turn, privately, then sees one shared reveal. "
                   f"Name {MIN_PLAYERS} to {MAX_PLAYERS} players; each one's answers go to their own save.",
                   classes="mode-text", markup=False),
            setup_field("Players, separated by commas", Input(placeholder="Ada, Grace, Linus", id="players", compact=True)),
            setup_field("Difficulty", Picker([(text, d) for d, text in DIFFICULTY_TEXT.items()],
                                             value=self.difficulty, allow_blank=False, id="difficulty")),
            setup_field("Puzzles", Picker([(f"{n} puzzles", n) for n in counts], value=self.count,
                                          allow_blank=False, id="count")),
            Label("", id="setup-error", classes="setup-error", markup=False),
            Horizontal(Button("Start (s)", variant="primary", id="start"), Button("Leave", id="leave"),
                       classes="setup-buttons"),
            classes="mode-body")
        await self.set_phase("setup", body)
        field = self.query_one("#players", Input)
        field.cursor_blink = self.app.blink
        field.focus()

    @on(Input.Submitted, "#players")
    @on(Button.Pressed, "#start")
    async def action_start(self) -> None:
        if self.phase != "setup":
            return
        names, problem = parse_players(self.query_one("#players", Input).value)
        if problem:
            self.setup_error(problem)
            self.query_one("#players", Input).focus()
            return
        difficulty = self.query_one("#difficulty", Picker).value
        count = self.query_one("#count", Picker).value
        self.difficulty = difficulty if isinstance(difficulty, int) else self.difficulty
        self.count = count if isinstance(count, int) else self.count
        await self.begin(names)

    async def begin(self, names: list[str]) -> None:
        from puzzles.generator import make
        from puzzles.questions import make_item

        self.players = names
        seed = self.seed if self.seed is not None else int(self.app.now().timestamp()) % 1_000_000
        self.seed = seed
        self.items = []
        for index in range(self.count):
            gen = make(seed, self.difficulty, index)
            self.items.append(make_item(gen.puzzle, gen.key))
        self.answers = [{} for _ in self.items]
        self.puzzle_index = 0
        self.turn = 0
        await self.show_pass()

    # -- turns ------------------------------------------------------------------------------------
    @property
    def current_player(self) -> str:
        return self.players[self.turn]

    async def show_pass(self) -> None:
        name = self.current_player
        k, n = self.puzzle_index + 1, len(self.items)
        self.status(f"Hot-seat · puzzle {k}/{n} · {name}'s turn ({self.turn + 1} of {len(self.players)})")
        box = Vertical(
            Static(f"Puzzle {k} of {n}", markup=False),
            Static(f"Pass the keyboard to {name}", id="pass-name", markup=False),
            Static(f"Everyone else, look away. {name}, press Enter when you are ready.", markup=False),
            Button(f"I'm {name}: show the puzzle", variant="primary", id="ready"),
            classes="pass-box")
        await self.set_phase("pass", Vertical(box, classes="pass-card"))
        self.query_one("#ready", Button).focus()

    @on(Button.Pressed, "#ready")
    async def action_ready(self) -> None:
        if self.phase != "pass":
            return
        who = f"{self.current_player} answering"
        number = f"{self.puzzle_index + 1}/{len(self.items)}"
        await self.ask_item(self.puzzle_index, f"Hot-seat · puzzle {number} · {who}", extra=who)

    def lock_title(self) -> str:
        return f"Lock in {self.current_player}'s answer?"

    async def lock_answer(self) -> None:
        if not self.claim_lock():
            return
        item = self.items[self.puzzle_index]
        prediction, judged, seconds = self.take_answer(item)
        record(self.app, self.current_player, item, judged, "hotseat", seconds, self.app.now())
        self.answers[self.puzzle_index][self.current_player] = Turn(prediction, judged, seconds)
        self.turn += 1
        if self.turn < len(self.players):
            await self.show_pass()
        else:
            await self.show_reveal()

    # -- the shared reveal ------------------------------------------------------------------------
    async def show_reveal(self) -> None:
        from puzzles.boards import board_lines, hotseat_board, hotseat_reveal_lines

        k, n = self.puzzle_index + 1, len(self.items)
        judged = {name: turn.judged for name, turn in self.answers[self.puzzle_index].items()}
        reveal = hotseat_reveal_lines(self.items[self.puzzle_index].key, self.players, judged, labels)
        board = hotseat_board(self.players, self.answers)
        last = k >= n
        body = VerticalScroll(
            Label(f"Puzzle {k} of {n}: the engine's answer", classes="screen-title"),
            Static("\n".join(reveal), id="hotseat-reveal", classes="mode-text", markup=False),
            Label("Final standings" if last else f"Leaderboard after {k} of {n}", classes="section-title"),
            Static("\n".join(board_lines(board, width=76, top=MAX_PLAYERS)), id="hotseat-board", classes="board",
                   markup=False),
            Button("Leave (Escape)" if last else "Next puzzle (n)", variant="primary", id="leave" if last else "next"),
            classes="mode-body")
        self.status(f"Hot-seat · puzzle {k}/{n} · reveal")
        await self.set_phase("final" if last else "reveal", body)
        self.query_one("#leave" if last else "#next", Button).focus()

    @on(Button.Pressed, "#next")
    async def action_next(self) -> None:
        if self.phase != "reveal":
            return
        self.puzzle_index += 1
        self.turn = 0
        await self.show_pass()

    @asking
    async def action_leave(self) -> None:
        if self.phase in ("pass", "question", "reveal") and not await confirm(
                self, "Leave the hot-seat match?", "Answers already locked in are saved in each player's profile; the "
                "match itself ends here.", yes="Leave", no="Stay", dialog_id="leave-hotseat"):
            return
        self.leave()
