"""The terminal player's side of a live match (`ridge join`; browsers get the host's web page).
It asks for the pin and a nickname and nothing else, then follows the host: the card, the
prediction form and the shared countdown, then the reveal and the board.

It holds no key and grades nothing: it only sends the prediction to the host's lobby API and
shows what the host says. It reads and writes no file: no profile, no save, no path.
"""
from __future__ import annotations

import asyncio
import time

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Input, Label, Static

from app import labels
from app.live.client import LobbyClient, LobbyRefused, LobbyUnreachable
from engine.units import countdown
from puzzles.live import NO_ANSWER
from puzzles.live_views import board_text, card_deployment, podium_text
from app.widgets.picker import ChoiceList, Picker

POLL_SECONDS = 1.0


def _warm_up() -> None:
    """Load what a question needs while the player waits in the lobby, so the first question
    draws as fast as the later ones."""
    import app.widgets.card  # noqa: F401
    import app.widgets.form  # noqa: F401
    from engine.catalog import builtin_catalog

    builtin_catalog()


FOCUS_WORDS = {"pin": "pin", "name": "nickname", "join": "join", "bottleneck": "bottleneck", "lever": "best lever",
               "band": "its gain", "reason": "because", "certainty": "how sure", "lock-in": "lock in"}
FOCUS_TIPS = {"pin": "type the pin, then Enter", "name": "type a nickname, then Enter", "join": "Enter joins",
              "certainty": "arrows move, Enter picks", "lock-in": "Enter locks in (final)"}
for _select in ("bottleneck", "lever", "band", "reason"):
    FOCUS_TIPS[_select] = "Enter opens the list; Tab moves on"


class PlayerApp(App[None]):
    """One player in a hosted room."""

    TITLE = "Ridge live"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    Screen { layout: vertical; }
    #bar { height: 1; background: $boost; padding: 0 1; }
    #bar-status { width: 1fr; }
    #bar-clock { width: auto; min-width: 10; text-align: right; }
    #bar-clock.-low { color: $text-error; text-style: bold; }
    #stage { height: 1fr; }
    .title { text-style: bold; margin: 1 1 0 1; }
    .text { margin: 0 1; }
    .muted { color: $text-muted; margin: 0 1; }
    .error { color: $text-error; margin: 0 1; }
    #join-box { width: 60; max-width: 100%; height: auto; padding: 1 2; border: round $accent; }
    #join-box Input { margin-bottom: 1; }
    #join-wrap { align: center middle; height: 1fr; }
    #lock-in { margin: 1 1; }
    #focus-hint { height: 1; padding: 0 1; color: $text-muted; }
    #verdict { margin: 1 1; text-style: bold; }
    """
    BINDINGS = [Binding("ctrl+q", "quit", "Leave", priority=True)]

    def __init__(self, url: str, pin: str | None = None, name: str | None = None,
                 poll: float = POLL_SECONDS, clock=time.monotonic) -> None:
        super().__init__()
        import secrets

        self.client = LobbyClient(url)
        self.seat = secrets.token_hex(16)  # this terminal's seat: rejoins under the same name while it runs
        self.pin = pin or ""
        self.nick = name or ""
        self.poll = poll
        self.clock = clock
        self.view: tuple | None = None     # (phase, index) on the stage
        self.state: dict = {}
        self.ends_at: float | None = None  # local monotonic time the countdown reaches zero
        self.locked: dict[int, dict] = {}  # what this player locked in, by question
        self.expired: set[int] = set()
        self.reconnecting = False
        self.stopped = False
        self.fetching = False
        self.stage_lock = asyncio.Lock()
        self.clock_shown = ""
        self.status_shown = ""

    def compose(self) -> ComposeResult:
        with Horizontal(id="bar"):
            yield Label("Ridge live", id="bar-status", markup=False)
            yield Label("", id="bar-clock", markup=False)
        yield Vertical(id="stage")
        yield Label("", id="focus-hint", markup=False)
        yield Footer()

    async def on_mount(self) -> None:
        self.watch(self.screen, "focused", self._focus_moved)
        await self.show_join()
        if self.pin and self.nick:
            self.call_after_refresh(self.try_join)

    # -- joining ---------------------------------------------------------------------------------
    async def show_join(self, error: str = "") -> None:
        box = Vertical(
            Label("Join the match", classes="title"),
            Label("The pin is on the host's screen. Your nickname shows on the board.", classes="muted"),
            Input(value=self.pin, placeholder="pin", id="pin", max_length=8, restrict=r"[0-9]*"),
            Input(value=self.nick, placeholder="nickname", id="name", max_length=24),
            Label(error, id="join-error", classes="error", markup=False),
            Button("Join", variant="primary", id="join"),
            id="join-box")
        await self.set_stage(("join", 0), Vertical(box, id="join-wrap"))
        self.query_one("#pin" if not self.pin else "#name", Input).focus()

    @on(Input.Submitted, "#pin")
    def _pin_done(self) -> None:
        self.query_one("#name", Input).focus()

    @on(Input.Submitted, "#name")
    @on(Button.Pressed, "#join")
    def try_join(self) -> None:
        if self.view and self.view[0] != "join":
            return
        self.pin = self.query_one("#pin", Input).value.strip()
        self.nick = self.query_one("#name", Input).value.strip()
        if not self.pin:
            self.join_error("Type the pin from the host's screen.")
            return
        if not self.nick:
            self.join_error("Type a nickname.")
            return
        self.join_worker()

    def join_error(self, text: str) -> None:
        for label in self.query("#join-error").results(Label):
            label.update(text)

    @work(exclusive=True, group="join")
    async def join_worker(self) -> None:
        try:
            await asyncio.to_thread(self.client.join, self.pin, self.nick, self.seat)
        except LobbyRefused as refused:
            self.join_error(refused.message)
            return
        except LobbyUnreachable as gone:
            self.join_error(str(gone))
            return
        self.set_interval(self.poll, self.poll_state)
        self.set_interval(0.25, self.tick_clock)
        self.poll_state()
        await asyncio.to_thread(_warm_up)

    # -- following the host --------------------------------------------------------------------
    def poll_state(self) -> None:
        if not self.stopped and not self.fetching:
            self.fetching = True
            self.fetch_state()

    @work(group="poll")
    async def fetch_state(self) -> None:
        """One poll at a time, never cancelled half-way (a new stage is mounted in here)."""
        try:
            await self._fetch_state()
        finally:
            self.fetching = False

    async def _fetch_state(self) -> None:
        try:
            state = await asyncio.to_thread(self.client.state)
        except LobbyUnreachable:
            self.reconnecting = True
            self.status("Reconnecting to the host…")
            return
        except LobbyRefused as refused:
            self.stopped = True
            await self.set_stage(("refused", 0), Static(refused.message, classes="error", markup=False))
            return
        self.reconnecting = False
        await self.apply(state)

    async def apply(self, state: dict) -> None:
        self.state = state
        phase, index = state["phase"], int(state["index"])
        left = state.get("seconds_left")
        self.ends_at = None if left is None else self.clock() + float(left)
        name = (state.get("you") or {}).get("name", self.nick)
        where = f"question {index + 1} of {state['count']}" if phase in ("question", "closed") else phase
        paused = " · paused by the host" if state.get("paused") else ""
        self.status(f"{name} · {where} · {state.get('locked', 0)} of {state.get('players', 0)} locked in{paused}")
        if (phase, index) == self.view:
            return
        if phase == "lobby":
            await self.set_stage((phase, index), Static(
                f"You're in, {name}. Waiting for the host to start: {state.get('players', 0)} joined so far.",
                id="lobby-text", classes="text", markup=False))
        elif phase == "question":
            if (state.get("you") or {}).get("locked") or index in self.locked:
                await self.show_locked(index)
            else:
                await self.show_question(state["puzzle"], index, state["count"])
        elif phase == "closed":
            await self.finish_late(index)
            await self.show_reveal(index)
        elif phase == "done":
            await self.show_done()

    def tick_clock(self) -> None:
        found = self.query("#bar-clock")
        if not found:
            return  # shutting down
        label = found.first(Label)
        if self.ends_at is None or self.state.get("phase") not in ("question", "lobby", "closed"):
            if self.clock_shown:
                self.clock_shown = ""
                label.update("")
            return
        left = max(0.0, self.ends_at - self.clock())
        if self.state.get("paused"):
            left = float(self.state.get("seconds_left") or 0)
        text = f"⏱ {countdown(left)}"
        if text != self.clock_shown:  # redraw only when the second changes
            self.clock_shown = text
            label.update(text)
        question = self.state.get("phase") == "question"
        label.set_class(question and left <= 10, "-low")
        index = int(self.state.get("index", 0))
        if question and left <= 0 and not self.state.get("paused") and index not in self.locked:
            self.time_up(index)

    def _focus_moved(self, widget) -> None:
        """Say in words where the keyboard is (for keyboard players, and so a test driving the
        page can wait for the focus to arrive before it types)."""
        found = self.query("#focus-hint")
        if not found:
            return
        listing = isinstance(widget, Picker) and widget.expanded
        while widget is not None and widget.id not in FOCUS_WORDS and not str(widget.id or "").startswith("est-"):
            widget = widget.parent if widget.parent is not self.screen else None
        if widget is None:
            found.first(Label).update("")
            return
        wid = str(widget.id)
        words = FOCUS_WORDS.get(wid) or f"estimate: {labels.estimate(wid[4:])}"
        tip = "Enter picks, Escape closes" if listing else FOCUS_TIPS.get(wid, "type a number, then Enter")
        found.first(Label).update(f"▶ {words}{' · list open' if listing else ''} · {tip}")

    def status(self, text: str) -> None:
        if text == self.status_shown:
            return
        self.status_shown = text
        for label in self.query("#bar-status").results(Label):
            label.update(text)

    async def set_stage(self, view: tuple, *widgets) -> bool:
        async with self.stage_lock:  # the poll and a lock-in may both change the stage
            found = self.query("#stage")
            if not found:
                return False  # shutting down: a poll that lands while the app closes has nothing to show
            stage = found.first(Vertical)
            await stage.remove_children()
            await stage.mount(*widgets)
            self.view = view
            return True

    # -- a question ----------------------------------------------------------------------------
    async def show_question(self, card: dict, index: int, count: int) -> None:
        from app.widgets.card import DeploymentCard
        from app.widgets.form import PredictionForm
        from puzzles.cards import card_form_spec

        dep = card_deployment(card)
        rows = [Label(card.get("title", ""), classes="title", markup=False),
                Label(f"Question {index + 1} of {count} · difficulty {card.get('difficulty', '?')}/5 · "
                      f"goal: {labels.objective(card.get('objective', ''))}", classes="muted", markup=False),
                Static(card.get("scenario", ""), classes="text", markup=False)]
        if dep is not None:
            rows.append(DeploymentCard(dep, tuple(card.get("levers") or ()), id="card"))
        else:
            rows.append(Static("\n".join(f"{k}: {v}" for k, v in (card.get("deployment") or {}).items()),
                               classes="text", markup=False))
        ask = card.get("ask") or {}
        rows.append(Label("Your prediction", classes="title"))
        asked = " ".join(t for t in (ask.get("bottleneck_question"), ask.get("gain_band_rule")) if t)
        if asked:
            rows.append(Static(asked, id="asked", classes="muted", markup=False))
        rows += [
                 PredictionForm(card_form_spec(card, labels), id="form"),
                 Label("", id="form-error", classes="error", markup=False),
                 Button("Lock in (final)", variant="primary", id="lock-in")]
        if await self.set_stage(("question", index), VerticalScroll(*rows, id="question")):
            self.query_one("#bottleneck").focus()

    # A live question is against the clock: each choice moves on to the next part by itself.
    @on(Picker.Toggled)
    def _list_toggled(self) -> None:
        self._focus_moved(self.screen.focused)

    @on(Picker.Changed, "#form Picker")
    @on(ChoiceList.Changed, "#form ChoiceList")
    @on(Input.Submitted, "#form Input")
    def _next_part(self, event) -> None:
        order = [w for w in self.query("#form Picker, #form Input, #form ChoiceList, #lock-in")]
        control = event.control
        if control in order and order.index(control) + 1 < len(order):
            if isinstance(control, Picker) and control.value is Picker.NULL:
                return
            order[order.index(control) + 1].focus()

    @on(Button.Pressed, "#lock-in")
    def lock_in(self) -> None:
        from app.widgets.form import PredictionForm

        found = self.query("#form")
        if not found or self.view is None or self.view[0] != "question":
            return
        form = found.first(PredictionForm)
        gaps = form.missing()
        if gaps:
            self.query_one("#form-error", Label).update("Still to answer: " + ", ".join(w for w, _ in gaps))
            self.query_one(f"#{gaps[0][1]}").focus()
            return
        self.send_answer(self.view[1], form.prediction())

    @work(exclusive=True, group="answer")
    async def send_answer(self, index: int, prediction: dict) -> None:
        try:
            await asyncio.to_thread(self.client.answer, index, prediction)
        except LobbyRefused as refused:
            if refused.status == 400:
                self.query_one("#form-error", Label).update(refused.message)
                return
            self.locked[index] = prediction
            await self.show_locked(index, refused.message)
            return
        except LobbyUnreachable as gone:
            self.query_one("#form-error", Label).update(f"{gone}: press Lock in again")
            return
        self.locked[index] = prediction
        await self.show_locked(index)

    async def show_locked(self, index: int, note: str = "") -> None:
        mine = self.locked.get(index)
        lines = ["Locked in. Waiting for the others, or for the time to run out."]
        if note:
            lines = [note]
        if mine:
            lines += ["", f"Bottleneck  {labels.bottleneck(mine.get('bottleneck', ''))}",
                      f"Best lever  {labels.lever(mine.get('lever', ''))}",
                      f"Its gain    {labels.band(mine.get('gain_band', ''))}",
                      f"Certainty   {mine.get('certainty') or '-'}"]
        await self.set_stage(("question", index), Static("\n".join(lines), id="locked", classes="text", markup=False))

    def time_up(self, index: int) -> None:
        """The countdown ran out here first: freeze what is filled in; it goes to the host (and
        locks at zero points) once the host says the question has closed."""
        if index in self.expired:
            return
        self.expired.add(index)
        for form in self.query("#form"):
            form.freeze()
        for button in self.query("#lock-in").results(Button):
            button.disabled = True
        for label in self.query("#form-error").results(Label):
            label.update("Time is up: what you filled in is locked at zero points.")

    async def finish_late(self, index: int) -> None:
        if index in self.locked:
            return
        found = self.query("#form")
        if not found:
            return
        form = found.first()
        if not form.is_dirty():
            return
        prediction = form.prediction()
        self.locked[index] = prediction
        try:
            await asyncio.to_thread(self.client.answer, index, prediction)
        except (LobbyRefused, LobbyUnreachable):
            pass  # a late answer is refused by design; the host kept it at zero points

    # -- the reveal, the board, the podium ----------------------------------------------------
    async def show_reveal(self, index: int) -> None:
        try:
            reveal = await asyncio.to_thread(self.client.reveal, index)
            board = await asyncio.to_thread(self.client.board)
        except (LobbyRefused, LobbyUnreachable) as problem:
            await self.set_stage(("closed", index), Static(str(problem), classes="error", markup=False))
            return
        answer = reveal["answer"]
        name = (self.state.get("you") or {}).get("name", self.nick)
        me = reveal.get("you") or next((p for p in reveal["players"] if p["name"] == name), None) or {}
        verdict = labels.verdict_line(me.get("outcome", NO_ANSWER), int(me.get("points") or 0))
        verdict += "".join("\n" + line for line in me.get("lines") or ())
        lines = [f"Bottleneck  {labels.bottleneck(answer['bottleneck'])}",
                 f"Best lever  {labels.lever(answer['best_lever'])} ({labels.band(answer['gain_band'])})",
                 f"Because     {answer.get('reason_text') or answer['reason']}",
                 "", f"What decides it: {answer.get('deciding', '')}"]
        await self.set_stage(("closed", index),
                             VerticalScroll(Label(f"Question {index + 1}: the answer", classes="title"),
                                            Static(verdict, id="verdict", markup=False),
                                            Static("\n".join(lines), id="answer", classes="text", markup=False),
                                            Label("The board", classes="title"),
                                            Static(board_text(board, name), id="board", classes="text", markup=False),
                                            id="reveal"))

    async def show_done(self) -> None:
        try:
            board = await asyncio.to_thread(self.client.board)
        except (LobbyRefused, LobbyUnreachable) as problem:
            await self.set_stage(("done", 0), Static(str(problem), classes="error", markup=False))
            return
        name = (self.state.get("you") or {}).get("name", self.nick)
        self.ends_at = None
        await self.set_stage(("done", 0), VerticalScroll(
            Label("The match is over", classes="title"),
            Static(podium_text(board), id="podium", classes="text", markup=False),
            Label("The board", classes="title"),
            Static(board_text(board, name, top=10), id="board", classes="text", markup=False)))

