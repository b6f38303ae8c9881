"""The campaign: a map of the course's chapters, and each chapter's briefing with its puzzles.

Chapters guide and never lock: any chapter opens, and a chapter opened early says what it
builds on. Where Continue, a chapter or a puzzle leads is the app's to decide (`app.messages`).
"""
from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from app.errors import keep_going
from app.labels import outcome_symbol
from app.messages import ContinueCampaign, OpenChapter, OpenPuzzle, PuzzlesLoaded
from app.screens.base import RidgeScreen
from app.widgets.footer import RidgeFooter
from app.widgets.hanging import hanging, paragraphs
from app.widgets.titlebar import TitleBar


def own_chapter_text(chapter) -> str:
    """What is true of a player's own chapter: where it was read from, and that it follows no
    chapter of the course's in particular."""
    from pathlib import Path

    files = ", ".join(Path(f).name for f in chapter.files) or "your packs folder"
    return (f"Your own chapter, read from {files} in your packs folder: deployments you saved in the "
            "simulator or imported. They may draw on any chapter of the course; none needs clearing first.")


def _bar(fraction: float, width: int = 10) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled + "░" * (width - filled)


class CampaignScreen(RidgeScreen):
    """Every chapter with its progress and mastery; open any of them."""

    HELP = """\
## The campaign map

One chapter per module of the course, in order. Each line shows how many of its puzzles you
have cleared and your mastery (the share of tried puzzles whose latest attempt was cleared).
Chapters never lock: open any with **Enter**. A chapter opened early says what it expects
you to know.
"""

    BINDINGS = [
        Binding("enter", "open", "Open chapter", id="map.open", tooltip="Open the highlighted chapter's briefing"),
        Binding("c", "continue", "Continue", id="map.continue", tooltip="Go straight to your next puzzle"),
        Binding("escape", "back", "Home", id="map.back", tooltip="Back to the home screen"),
    ]

    def __init__(self) -> None:
        super().__init__(id="campaign")

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="campaign-body"):
            yield OptionList(id="chapters")
            with VerticalScroll(id="chapter-detail"):
                yield Static("", id="chapter-info", markup=False)
        yield RidgeFooter()

    def on_mount(self) -> None:
        self.sub_title = "Campaign map"
        self.refresh_view()
        for line in self.app.session.bank.skipped():  # a broken pack of the player's is said, never hidden
            self.notify(line, title="One of your packs was left out", severity="warning", timeout=12)
        chapters = self.query_one("#chapters", OptionList)
        pid = self.app.session.next_puzzle()
        chapter = self.app.session.chapter_of(pid) if pid else None
        if chapter is not None:
            chapters.highlighted = chapter.number - 1
        chapters.focus()

    def on_screen_resume(self) -> None:
        if self.is_active:  # not when passed through while a mode reopened above it
            self.refresh_view()

    def refresh_view(self) -> None:
        session = self.app.session
        chapters = self.query_one("#chapters", OptionList)
        highlighted = chapters.highlighted
        chapters.clear_options()
        for ch in session.chapters:
            prog = session.progress(ch)
            mark = "✓" if prog.done else ("◐" if prog.tried else "·")
            chapters.add_option(Option(hanging([(f"{mark} {ch.number:>2}.", f"{ch.title}\n{prog.cleared}/{prog.total} "
                                                                              f"cleared · mastery {prog.mastery:.0%}")]),
                                       id=ch.id))
        chapters.highlighted = highlighted if highlighted is not None else 0
        self._show(chapters.highlighted or 0)

    def _show(self, index: int) -> None:
        session = self.app.session
        if not session.chapters:
            return
        ch = session.chapters[min(index, len(session.chapters) - 1)]
        prog = session.progress(ch)
        parts: list = [f"Chapter {ch.number}: {ch.title}", ""]
        tried = f"of the {prog.tried} tried" if prog.tried else "nothing tried yet"
        parts.append(hanging([("Cleared", f"{_bar(prog.cleared / prog.total if prog.total else 0)} "
                                          f"{prog.cleared}/{prog.total}"),
                              ("Mastery", f"{_bar(prog.mastery)} {prog.mastery:.0%} {tried}")]))
        if ch.expects:
            parts += ["", "What it expects of you:", hanging([("•", e) for e in ch.expects])]
        earlier = session.earlier_unfinished(ch)
        if ch.own:
            parts += ["", own_chapter_text(ch)] + [line for note in ch.notes for line in ("", note)]
        elif earlier:
            names = ", ".join(str(e.number) for e in earlier)
            parts += ["", f"Builds on chapter{'s' if len(earlier) > 1 else ''} {names}, not yet cleared. "
                          "You may still open it."]
        rows = []
        for pid in ch.puzzle_ids:
            standing, title, _level = session.listed(pid)
            rows.append((f" {outcome_symbol(standing)}", title))
        parts += ["", "Puzzles:", hanging(rows), "", "Enter opens the briefing."]
        self.query_one("#chapter-info", Static).update(paragraphs(*parts))

    @on(PuzzlesLoaded)
    @keep_going
    def _packs_changed(self, message: PuzzlesLoaded) -> None:
        """The packs were read again (a puzzle saved in the simulator): its chapter shows now."""
        if message.error is None:
            message.stop()
            self.refresh_view()

    @on(OptionList.OptionHighlighted, "#chapters")
    @keep_going
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option_index)

    @on(OptionList.OptionSelected, "#chapters")
    @keep_going
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.post_message(OpenChapter(event.option.id or ""))

    def action_open(self) -> None:
        chapters = self.query_one("#chapters", OptionList)
        if chapters.highlighted is None:
            return
        option = chapters.get_option_at_index(chapters.highlighted)
        self.post_message(OpenChapter(option.id or ""))

    def action_continue(self) -> None:
        self.post_message(ContinueCampaign())


class BriefingScreen(RidgeScreen):
    """A chapter's briefing, what it expects, and its puzzles with the player's marks."""

    HELP = """\
## The briefing

What this chapter is about and what it expects you to be able to do, then its puzzles.
**Enter** or **s** starts the next one you have not cleared; in the list, **Enter** opens
the highlighted puzzle.
Marks: ✓ cleared, ~ lucky, ≈ close, ✗ missed, · not tried (on the map, ◐ a chapter begun).
"""

    BINDINGS = [
        Binding("s", "start", "Start", id="briefing.start", tooltip="Start this chapter's next puzzle"),
        Binding("enter", "start", "Start", id="briefing.enter", show=False,
                tooltip="Start this chapter's next puzzle (in the list: open the highlighted one)"),
        Binding("escape", "back", "Back", id="briefing.back", tooltip="Back"),
    ]

    def __init__(self, chapter_id: str, start: str | None = None) -> None:
        super().__init__(id="briefing")
        self.chapter_id = chapter_id
        self.start_id = start

    def compose(self) -> ComposeResult:
        session = self.app.session
        ch = session.chapter(self.chapter_id)
        yield TitleBar()
        with VerticalScroll(id="briefing-body"):
            yield Label(f"Chapter {ch.number}: {ch.title}", classes="screen-title", markup=False)
            earlier = session.earlier_unfinished(ch)
            if ch.own:
                yield Static("\n\n".join((own_chapter_text(ch), *ch.notes)), classes="note", markup=False)
            elif earlier:
                names = "; ".join(f"{e.number}. {e.title}" for e in earlier)
                yield Static(f"Jumping ahead? This chapter builds on: {names}. Nothing is locked — "
                             "the expectations below say what it assumes.", classes="note", markup=False)
            yield Static("Read on with ↓ or Page Down. Enter or s starts the next puzzle; Tab reaches the "
                         "list below, to pick another.", classes="subtle", markup=False)
            yield Static(ch.briefing or "", id="briefing-text", markup=False)
            if ch.expects:
                yield Label("What it expects of you", classes="section-title")
                yield Static("\n".join(f"• {e}" for e in ch.expects), id="expects", markup=False)
            yield Label("Puzzles", classes="section-title")
            yield OptionList(id="puzzles")
        yield RidgeFooter()

    def on_mount(self) -> None:
        self.sub_title = "Briefing"
        self.refresh_view()
        puzzles = self.query_one("#puzzles", OptionList)
        target = self.start_id or self.app.session.next_puzzle(within=self.app.session.chapter(self.chapter_id))
        ids = list(self.app.session.chapter(self.chapter_id).puzzle_ids)
        if target in ids:
            puzzles.highlighted = ids.index(target)
        body = self.query_one("#briefing-body", VerticalScroll)
        body.focus()  # read from the top; Tab reaches the puzzle list, s starts
        body.scroll_home(animate=False)

    def on_screen_resume(self) -> None:
        if self.is_active:  # not when passed through while a mode reopened above it
            self.refresh_view()

    def refresh_view(self) -> None:
        session = self.app.session
        ch = session.chapter(self.chapter_id)
        puzzles = self.query_one("#puzzles", OptionList)
        highlighted = puzzles.highlighted
        puzzles.clear_options()
        for pid in ch.puzzle_ids:
            standing, title, level = session.listed(pid)
            queued = "  (retry later)" if pid in session.retry_queue else ""
            difficulty = f"  difficulty {level}" if level != "" else ""
            puzzles.add_option(Option(f"{outcome_symbol(standing)} {title}{difficulty}{queued}", id=pid))
        puzzles.highlighted = highlighted if highlighted is not None else 0

    @on(OptionList.OptionSelected, "#puzzles")
    @keep_going
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.post_message(OpenPuzzle(event.option.id or ""))

    def action_start(self) -> None:
        session = self.app.session
        ch = session.chapter(self.chapter_id)
        pid = session.next_puzzle(within=ch) or (ch.puzzle_ids[0] if ch.puzzle_ids else None)
        if pid is None:
            self.notify("This chapter has no puzzles yet.", severity="warning")
            return
        self.post_message(OpenPuzzle(pid))
