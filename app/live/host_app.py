"""The host's screen for a live match, meant for the big screen at the front of the room: the
address and pin, who has joined, the shared countdown and how many have locked in, then the
answer spread, the reveal and the board between questions, and the podium at the end.

The host paces it: **s** starts, **n** closes the open question now or goes on to the next one,
**p** pauses or resumes the countdown, **r** removes a player, **e** exports the results (CSV and
Markdown). The lobby API runs in this same process, on this app's event loop.
"""
from __future__ import annotations

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, Static

from app import labels

BAR_WIDTH = 24


def bar(share: float, width: int = BAR_WIDTH) -> str:
    filled = round(max(0.0, min(1.0, share)) * width)
    return "█" * filled + "░" * (width - filled)


def spread_lines(spread: dict, width: int = 80) -> list[str]:
    """What share of the locked answers named each bottleneck and each lever, as bars; in a
    narrow pane each option's name goes on its own line above its bar."""
    lines = [f"{spread['locked']} locked in"]
    bar_w = max(8, min(BAR_WIDTH, width - 7))
    for part, words, title in (("bottleneck", labels.bottleneck, "Bottleneck"), ("lever", labels.lever, "Best lever")):
        lines += ["", title]
        for option, share in spread.get(part, {}).items():
            if width >= 2 + 30 + 1 + BAR_WIDTH + 5:
                lines.append(f"  {words(option)[:30]:<30} {bar(share)} {share:>4.0%}")
            else:
                lines += [f"  {words(option)[:width - 2]}", f"  {bar(share, bar_w)} {share:>4.0%}"]
    return lines


def board_lines(rows, top: int = 10, width: int = 60) -> list[str]:
    """The board, its name column narrowed so every row fits `width` (no row wraps)."""
    if not rows:
        return ["No one has joined yet."]
    name_w = max(6, min(24, width - 21))
    lines = [f"{'#':>3}  {'Player':<{name_w}} {'Points':>6}  Cleared"]
    for r in rows[:top]:
        lines.append(f"{r.rank:>3}  {r.name[:name_w]:<{name_w}} {r.points:>6}  {f'{r.cleared}/{r.answered}':>7}")
    if len(rows) > top:
        lines.append(f"     … and {len(rows) - top} more")
    return lines


def reveal_lines(room, index: int, width: int = 60) -> list[str]:
    answer = room.answers_json[index]
    players = room.reveal(index)["players"]
    counts: dict[str, int] = {}
    for p in players:
        counts[p["outcome"]] = counts.get(p["outcome"], 0) + 1
    told = ", ".join(f"{labels.outcome_symbol(o) if o in labels.OUTCOMES else '·'} {n} {o}"
                     for o, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    import textwrap

    from app.widgets.hanging import aligned

    width = max(24, width)
    rows = [("Bottleneck", labels.bottleneck(answer["bottleneck"])),
            ("Best lever", f"{labels.lever(answer['best_lever'])} ({labels.band(answer['gain_band'])})"),
            ("Because", answer.get("reason_text") or answer["reason"])]
    lines = [line for name, value in rows for line in aligned(name, value, width=width, indent=12).splitlines()]
    lines += textwrap.wrap(f"What decides it: {answer.get('deciding', '')}", width, subsequent_indent="  ")
    return lines + ["", told or "No answers."]


def podium_lines(rows) -> list[str]:
    from puzzles.live import podium

    places = {1: "1st", 2: "2nd", 3: "3rd"}
    return [f"{places.get(r.rank, r.rank)}  {r.name}  ·  {r.points} points, {r.cleared} cleared"
            for r in podium(rows)] or ["No one played."]


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
    """The host's screen; `room` is the match, `site` and `sock` where players reach it."""

    TITLE = "Ridge live · host"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #top { height: auto; background: $boost; padding: 0 1; }
    #join-line { text-style: bold; width: 1fr; }
    #clock { width: auto; min-width: 12; text-align: right; text-style: bold; }
    #clock.-low { color: $text-error; }
    #phase { margin: 1 1 0 1; text-style: bold; width: 1fr; }  /* wraps at 80 columns, never cut */
    #body { height: 1fr; }
    #left, #right { width: 1fr; height: 1fr; padding: 0 1; }
    .title { text-style: bold; margin-top: 1; }
    """
    BINDINGS = [
        Binding("s", "start", "Start"),
        Binding("n", "next", "Close / next"),
        Binding("p", "pause", "Pause"),
        Binding("r", "remove", "Remove player"),
        Binding("e", "export", "Export"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, room, site, sock=None, serve: bool = True) -> None:
        super().__init__()
        self.room = room
        self.site = site
        self.sock = sock
        self.serve = serve and sock is not None
        self.runner = None
        self.exported: tuple | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="top"):
            yield Label(f"Join at {self.site.public_url}   pin {self.room.pin}", id="join-line", markup=False)
            yield Label("", id="clock", markup=False)
        yield Label("", id="phase", markup=False)
        with Horizontal(id="body"):
            with VerticalScroll(id="left"):
                yield Label("", id="left-title", classes="title", markup=False)
                yield Static("", id="left-text", markup=False)
            with VerticalScroll(id="right"):
                yield Label("", id="right-title", classes="title", markup=False)
                yield Static("", id="right-text", markup=False)
        yield Footer()

    async def on_mount(self) -> None:
        if self.serve:
            from app.live.server import build_app, start

            self.runner = await start(build_app(self.room, self.site, on_change=self.refresh_view), self.sock)
        self.refresh_view()
        self.set_interval(0.5, self.refresh_view)

    async def on_unmount(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    def _text_widths(self) -> tuple[int, int]:
        """The two panes' text widths as laid out (half the screen each before the first layout)."""
        fallback = max(24, self.size.width // 2 - 4)
        return tuple(self.query_one(wid, Static).content_size.width or fallback
                     for wid in ("#left-text", "#right-text"))

    # -- what the room sees ---------------------------------------------------------------------
    def refresh_view(self) -> None:
        room = self.room
        room.tick()
        phase, n, count = room.phase, room.index + 1, room.count
        players = room.active()
        left = room.seconds_left()
        clock = self.query_one("#clock", Label)
        if phase == "question" and left is not None:
            whole = int(left + 0.999)
            clock.update(("paused " if room.paused else "⏱ ") + f"{whole // 60}:{whole % 60:02d}")
            clock.set_class(left <= 10, "-low")
        else:
            clock.update("")
        rows = room.rows()
        if phase == "lobby":
            head = f"Lobby: {len(players)} joined. Press s to start."
            left_title, left_text = "Who has joined", "\n".join(p.name for p in players) or "Waiting for the first player…"
            right_title, right_text = f"{count} questions, {room.settings.seconds:g} s each", ""
        elif phase == "question":
            card = room.cards[room.index]
            head = (f"Question {n} of {count}: {card['title']} · {len(room.locked_now())} of {len(players)} locked in"
                    + (" · paused (p resumes)" if room.paused else "") + " · n closes it now")
            left_title, left_text = "The answer spread so far", "\n".join(spread_lines(room.spread(), self._text_widths()[0]))
            right_title, right_text = "Waiting for", "\n".join(sorted(
                {p.name for p in players} - {p.name for p in players if p.token in {a.token for a in room.locked_now()}}
            )) or "Everyone has locked in."
        elif phase == "closed":
            left_w, right_w = self._text_widths()
            head = f"Question {n} of {count} closed · " + ("n: next question" if n < count else "n: the podium")
            left_title, left_text = "The answer", "\n".join(reveal_lines(room, room.index, left_w) + [""]
                                                          + spread_lines(room.spread(), left_w))
            right_title, right_text = "The board", "\n".join(board_lines(rows, width=right_w))
        else:
            head = f"The match is over: {count} questions, {len(players)} players. e exports the results."
            left_title, left_text = "The podium", "\n".join(podium_lines(rows))
            right_title, right_text = "The board", "\n".join(board_lines(rows, top=30, width=self._text_widths()[1]))
        if self.exported:
            head += f" · exported to {self.exported[0].parent}"
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
        self.room.skip()
        self.refresh_view()

    def action_pause(self) -> None:
        self.room.pause()
        self.refresh_view()

    def action_remove(self) -> None:
        def removed(name: str | None) -> None:
            if not name:
                return
            if self.room.remove(name):
                self.notify(f"{name} is removed from the match.", title="Removed")
            else:
                self.notify(f"No player called {name!r} is in the room.", severity="warning")
            self.refresh_view()

        self.push_screen(RemoveDialog(), removed)

    def action_export(self) -> None:
        try:
            self.exported = self.room.export()
        except OSError as error:
            self.notify(f"The results could not be written: {error}", severity="error")
            return
        self.notify(f"Results written:\n{self.exported[0]}\n{self.exported[1]}", title="Exported", timeout=8)
        self.refresh_view()

