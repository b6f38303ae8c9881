"""The host's screen for a live match, meant for the projector at the front of the room: the join
address large with its QR code and the pin in big digits; during a question the whole card, the
countdown and how many have locked in (never who, nor what: the spread and the names wait for
the close, so nobody copies the room); then the answer, who answered what, the board; at the end
the podium and the facilitator's report, written by itself and named on screen.

The host paces it: **s** starts, **n** closes the open question now or goes on (not before the
answer has been up a few seconds), **p** pauses the countdown, **l** locks the room, **r** removes
a player, **e** writes the report now, **j** shows or hides the join panel. The lobby API runs in
this same process, on this app's event loop.
"""
from __future__ import annotations

import textwrap

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Digits, Footer, Input, Label, Static

from app import labels
from engine.units import countdown
from puzzles.live import LiveRefusal
from puzzles.live_views import answer_lines, board_lines, card_lines, podium_lines, spread_lines, who_lines

REFRESH_SECONDS = 0.25
# A QR code is read by a phone's camera: it needs dark modules on a light ground whatever the
# terminal's theme, so these two colours are fixed on purpose (the only fixed colours here).
QR_STYLE = Style(color="black", bgcolor="white")


def qr_text(url: str) -> Text:
    """The URL as a QR code in half-block characters (two modules per character cell), with the
    quiet zone a scanner needs."""
    import segno

    rows = [list(row) for row in segno.make(url, error="l").matrix_iter(scale=1, border=2)]
    if len(rows) % 2:
        rows.append([0] * len(rows[0]))
    glyph = {(1, 1): "█", (1, 0): "▀", (0, 1): "▄", (0, 0): " "}
    lines = ["".join(glyph[(bool(a), bool(b))] for a, b in zip(top, bottom)) for top, bottom in zip(rows[::2], rows[1::2])]
    return Text("\n".join(lines), style=QR_STYLE, no_wrap=True)


class RemoveDialog(ModalScreen[str | None]):
    """Ask which player to remove (by nickname)."""

    DEFAULT_CSS = """
    RemoveDialog { align: center middle; }
    #remove-box { width: 60; height: auto; padding: 1 2; border: round $error; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        with Vertical(id="remove-box"):
            yield Label("Remove which player? (Escape: nobody)")
            yield Input(placeholder="nickname", id="remove-name", max_length=24)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _done(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def key_escape(self) -> None:
        self.dismiss(None)


class HostApp(App[None]):
    """The host's screen; `room` is the match, `site` and `sock` where players reach it, `reach`
    the one line saying who can join."""

    TITLE = "Ridge live · host"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #join-panel { height: auto; padding: 0 1; background: $boost; }
    #join-text { width: 1fr; height: auto; }
    #join-url { text-style: bold; color: $accent; }
    #pin-digits { width: auto; }
    #reach { color: $text-warning; }
    #qr { width: auto; height: auto; margin-left: 2; }
    #join-line { height: 1; padding: 0 1; background: $boost; text-style: bold; }
    #status { height: auto; padding: 0 1; }
    #phase { width: 1fr; text-style: bold; margin-top: 1; }
    #clock-box { width: auto; height: auto; }
    #clock { width: auto; }
    #clock.-low { color: $text-error; }
    #clock-note { width: auto; }
    #body { height: 1fr; }
    #left, #right { width: 1fr; height: 1fr; padding: 0 1; }
    #locked-digits { width: auto; }
    .title { text-style: bold; margin-top: 1; }
    """
    BINDINGS = [
        Binding("s", "start", "Start"),
        Binding("n", "next", "Close / next"),
        Binding("p", "pause", "Pause"),
        Binding("l", "lock", "Lock room"),
        Binding("r", "remove", "Remove player"),
        Binding("e", "export", "Report"),
        Binding("j", "join_panel", "Join panel"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, room, site, sock=None, serve: bool = True, reach: str = "",
                 deadlines: tuple[float, float] | None = None) -> None:
        super().__init__()
        self.deadlines = deadlines  # (header, body) seconds for a request (None: the server's defaults)
        self.room = room
        self.site = site
        self.sock = sock
        self.reach = reach
        self.serve = serve and sock is not None
        self.runner = None
        self.exported: tuple | None = None
        self.join_panel: bool | None = None   # None: shown in the lobby, hidden during the match
        self.dirty = True
        self.drawn: tuple | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="join-panel"):
            with Vertical(id="join-text"):
                yield Label("Join on your phone or laptop at", markup=False)
                yield Label(self.site.public_url, id="join-url", markup=False)
                yield Label("with the pin", markup=False)
                yield Digits(self.room.pin, id="pin-digits")
                yield Label(self.reach, id="reach", markup=False)
            yield Static(qr_text(self.site.public_url), id="qr")
        yield Label(f"Join at {self.site.public_url}   pin {self.room.pin}", id="join-line", markup=False)
        with Horizontal(id="status"):
            yield Label("", id="phase", markup=False)
            with Vertical(id="clock-box"):
                yield Digits("", id="clock")
                yield Label("", id="clock-note", markup=False)
        with Horizontal(id="body"):
            with VerticalScroll(id="left"):
                yield Label("", id="left-title", classes="title", markup=False)
                yield Static("", id="left-text", markup=False)
            with VerticalScroll(id="right"):
                yield Label("", id="right-title", classes="title", markup=False)
                yield Digits("", id="locked-digits")
                yield Static("", id="right-text", markup=False)
        yield Footer()

    async def on_mount(self) -> None:
        self.room.listeners.append(self._room_changed)
        if self.serve:
            from app.live.server import BODY_SECONDS, HEADER_SECONDS, build_app, start

            header, body = self.deadlines or (HEADER_SECONDS, BODY_SECONDS)
            self.runner = await start(build_app(self.room, self.site, body_seconds=body), self.sock, header)
        self.refresh_view()
        self.set_interval(REFRESH_SECONDS, self.redraw_if_due)

    async def on_unmount(self) -> None:
        if self._room_changed in self.room.listeners:
            self.room.listeners.remove(self._room_changed)
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    def _room_changed(self, what: str) -> None:
        self.dirty = True  # drawn on the next tick: a burst of 200 answers is one redraw

    def redraw_if_due(self) -> None:
        room = self.room
        room.tick()
        left = room.seconds_left()
        now = (room.phase, room.index, room.paused, None if left is None else int(left + 0.999))
        if self.dirty or now != self.drawn:
            self.refresh_view()

    def _text_widths(self) -> tuple[int, int]:
        """The two panes' text widths as laid out (half the screen each before the first layout),
        less room for a scroll bar: a long card must not re-wrap when one appears."""
        fallback = max(24, self.size.width // 2 - 4)
        return tuple(max(20, (self.query_one(wid, Static).content_size.width or fallback) - 2)
                     for wid in ("#left-text", "#right-text"))

    # -- what the room sees ---------------------------------------------------------------------
    def refresh_view(self) -> None:
        room = self.room
        room.tick()
        self.dirty = False
        phase, n, count = room.phase, room.index + 1, room.count
        players = room.active()
        left = room.seconds_left()
        self.drawn = (phase, room.index, room.paused, None if left is None else int(left + 0.999))
        panel = self.join_panel if self.join_panel is not None else phase == "lobby"
        self.query_one("#join-panel").display = panel
        self.query_one("#join-line").display = not panel
        clock = self.query_one("#clock", Digits)
        note = self.query_one("#clock-note", Label)
        if phase == "question" and left is not None:
            clock.update(countdown(left))
            clock.set_class(left <= 10, "-low")
            note.update("paused (p resumes)" if room.paused else "left")
        else:
            clock.update("")
            note.update("")
        locked_digits = self.query_one("#locked-digits", Digits)
        locked_digits.display = phase == "question"
        left_w, right_w = self._text_widths()
        locked_room = " · room locked (l opens it)" if room.room_locked else ""
        if phase == "lobby":
            head = f"Lobby: {len(players)} joined{locked_room}. Press s to start."
            left_title = f"Who has joined ({len(players)})"
            left_text = "\n".join(textwrap.wrap(", ".join(p.name for p in players), max(24, left_w))) \
                or "Waiting for the first player…"
            right_title, right_text = f"{count} questions, {room.settings.seconds:g} s each", ""
        elif phase == "question":
            card = room.cards[room.index]
            locked = len(room.locked_now())
            head = (f"Question {n} of {count}: {card['title']} · {locked} of {len(players)} locked in"
                    + (" · paused" if room.paused else "") + locked_room + " · n closes it now")
            left_title, left_text = card["title"], "\n".join(card_lines(card, labels, left_w))
            locked_digits.update(f"{locked}/{len(players)}")
            right_title = "Locked in"
            right_text = ("Who answered what, and the spread of answers, show when the question closes.")
        elif phase == "closed":
            reveal = room.reveal(room.index)
            head = (f"Question {n} of {count} closed{locked_room} · "
                    + ("n: next question" if n < count else "n: the podium"))
            left_title = "The answer"
            left_text = "\n".join(answer_lines(reveal["answer"], labels, left_w) + [""]
                                  + spread_lines(reveal["spread"], labels, left_w))
            right_title = "Who answered what"
            right_text = "\n".join(who_lines(reveal["players"], labels, right_w) + ["", "The board"]
                                   + board_lines(room.rows(), width=right_w))
        else:
            if self.exported is None:
                self.action_export(quiet=True)
            head = f"The match is over: {count} questions, {len(players)} players."
            rows = room.rows()
            left_title, left_text = "The podium", "\n".join(podium_lines(rows))
            right_title, right_text = "The board", "\n".join(board_lines(rows, top=30, width=right_w))
        if self.exported:
            head += f" · report: {self.exported[0]}"
        self.query_one("#phase", Label).update(head)
        self.query_one("#left-title", Label).update(left_title)
        self.query_one("#left-text", Static).update(left_text)
        self.query_one("#right-title", Label).update(right_title)
        self.query_one("#right-text", Static).update(right_text)

    # -- the host's controls --------------------------------------------------------------------
    def action_start(self) -> None:
        self.room.start()
        self.refresh_view()

    def action_next(self) -> None:
        try:
            self.room.skip()
        except LiveRefusal as refused:
            self.notify(refused.message, title="Not yet", severity="warning", timeout=4)
        self.refresh_view()

    def action_pause(self) -> None:
        self.room.pause()
        self.refresh_view()

    def action_lock(self) -> None:
        locked = self.room.lock_room()
        self.notify("The room is locked: no new player can join (players in it may rejoin)." if locked
                    else "The room is open: new players can join.", title="Room")
        self.refresh_view()

    def action_join_panel(self) -> None:
        shown = self.query_one("#join-panel").display
        self.join_panel = not shown
        self.refresh_view()

    @work(group="asking", exclusive=True)
    async def action_remove(self) -> None:
        """Ask for a nickname and remove that player (a worker: the question waits for its answer)."""
        name = await self.push_screen_wait(RemoveDialog())
        if not name:
            return
        if self.room.remove(name):
            self.notify(f"{name} is removed from the match.", title="Removed")
        else:
            self.notify(f"No player called {name!r} is in the room.", severity="warning")
        self.refresh_view()

    def action_export(self, quiet: bool = False) -> None:
        from engine.errors import RidgeError

        try:
            self.exported = self.room.export()
        except (OSError, RidgeError) as error:
            self.exported = ()
            self.notify(f"The report could not be written: {error}", severity="error")
            return
        if not quiet:
            self.notify("Report written:\n" + "\n".join(str(p) for p in self.exported), title="Report", timeout=8)
            self.refresh_view()
