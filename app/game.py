"""The Ridge app and its one factory, `make_app`, used by the command line, the tests and the
benchmarks.

The app owns what every screen shares: the save store, the puzzle bank, the open Session, the
clock, the crash guard, the command palette, and navigation. Each way to play has its own stack of
screens (a Textual mode, listed in `MODES`); screens never open one another, they post the
requests in `app.messages` and the app decides where they lead. Screens own what the player sees.
Puzzles, saves, the engine and every screen but the first are imported only when first needed, so
the home screen draws quickly.
"""
from __future__ import annotations

import datetime as _dt
import gc
import os
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable

from textual import on
from textual.app import App, SystemCommand, UnknownModeError
from textual.binding import Binding
from textual.screen import Screen

from app import messages, styling
from app.errors import Guarded, crash_console, finish_run, keep_going, told
from saves.crash_log import log_exception
from saves.locations import log_path

READY_EXIT_ENV = "RIDGE_EXIT_WHEN_READY"
DEFAULT_THEME = "textual-dark"
HOME = "play"  # the mode of the home screen, at the bottom of every trail


# The base screen of each way to play, imported only when that way is first opened.
def _map() -> Screen:
    from app.screens.campaign import CampaignScreen

    return CampaignScreen()


def _stats() -> Screen:
    from app.screens.stats import StatsScreen

    return StatsScreen()


def _simulator() -> Screen:
    from app.screens.simulator import SimulatorScreen

    return SimulatorScreen()


def _drill() -> Screen:
    from app.screens.drill import DrillScreen

    return DrillScreen()


def _exam() -> Screen:
    from app.screens.exam import ExamScreen

    return ExamScreen()


def _hotseat() -> Screen:
    from app.screens.hotseat import HotseatScreen

    return HotseatScreen()


def _match() -> Screen:
    from app.screens.match import MatchScreen

    return MatchScreen()


def _lab() -> Screen:
    from app.screens.lab import LabScreen  # type: ignore[import-not-found]

    return LabScreen()


class RidgeApp(Guarded, App[None]):
    """Ridge: commit to a diagnosis of a deployment, then see the engine's answer."""

    CSS_PATH = "ridge.tcss"
    TITLE = "Ridge"
    SUB_TITLE = "inference economics, one deployment at a time"
    ENABLE_COMMAND_PALETTE = True

    # Each way to play is a mode with its own stack, opened afresh above the home screen and
    # closed when the player leaves it. The home screen's own mode, HOME, starts on
    # get_default_screen (the home screen, or the one way a solo app runs), and "campaign" (a
    # chapter's briefing and puzzles) is added when it opens, on the briefing or puzzle it opens with.
    MODES = {
        "map": _map,
        "stats": _stats,
        "simulator": _simulator,
        "drill": _drill,
        "exam": _exam,
        "hotseat": _hotseat,
        "match": _match,
        "lab": _lab,
    }
    DEFAULT_MODE = HOME
    # Modes that open above the one the player is in (so leaving one returns there); all others
    # open above the home screen.
    NESTED_MODES = frozenset({"campaign"})
    # Ways to play whose screens live until Ridge closes (or another player takes over): the
    # simulator is a workbench, so leaving it keeps the deployment, the pin, the prediction and
    # the tab the player left, and opening it again shows them as they were (and costs a screen
    # switch, not a build).
    KEPT_MODES = frozenset({"simulator"})
    # Modes whose screen, built on the player's key, draws whole in its first frame: opened
    # without switch_mode's paint hold (`delay_update`).
    PAINTED_WHOLE = frozenset({"simulator"})

    BINDINGS = [
        Binding("f1", "help", "Help", id="ridge.help", tooltip="Help for the part that has focus"),
        Binding("ctrl+t", "change_theme", "Theme", id="ridge.theme", show=False,
                tooltip="Choose a colour theme"),
        Binding("ctrl+s", "save_screenshot", "Screenshot", id="ridge.screenshot", show=False,
                tooltip="Save an SVG picture of the screen in the data folder"),
        Binding("ctrl+q", "quit", "Quit", id="ridge.quit", priority=True, tooltip="Leave Ridge"),
    ]

    def __init__(self, save_dir: str | os.PathLike[str] | None = None, profile: str | None = None,
                 clock: Callable[[], _dt.datetime] | None = None, strict: bool = False,
                 cursor_blink: bool = True, ready_exit: str = "",
                 solo: Callable[[], Screen] | None = None, bank=None, warm: bool = False) -> None:
        super().__init__()
        self.solo = solo
        self.warm = warm and solo is None
        if solo is not None:
            # A solo app's HOME is a named mode from the start, so Textual makes its screen as it
            # makes every mode's base, loading the screen's own CSS_PATH: a default screen Textual
            # makes itself loads none (`ridge match play` and the simulator ran unstyled).
            self.add_mode(HOME, self.get_default_screen)
        self.trail: list[str] = [HOME]  # the open modes, the current one last
        self.kept: set[str] = set()  # the KEPT_MODES whose screens exist, open or left
        self.save_dir = save_dir
        self.requested_profile = profile
        self.clock = clock or (lambda: _dt.datetime.now(_dt.timezone.utc))
        self.strict = strict
        self.blink = cursor_blink
        self.ready_exit = ready_exit
        self.log_file: Path = log_path(save_dir)
        if not strict:
            self.error_console = crash_console()  # where Textual prints a crash: see run()
        self.unexpected_errors: list[BaseException] = []
        self.session = None
        self._store = None
        self._bank = bank
        self._saving_theme = False
        self.theme = DEFAULT_THEME

    # -- shared services -------------------------------------------------------------------
    @property
    def store(self):
        if self._store is None:
            from saves.store import SaveStore

            self._store = SaveStore(self.save_dir)
        return self._store

    @property
    def bank(self):
        if self._bank is None:
            from puzzles.chapters import Bank
            from saves.locations import packs_dir

            self._bank = Bank(player_packs=packs_dir(self.save_dir))  # the player's own packs, beside ours
        return self._bank

    @property
    def bank_ready(self) -> bool:
        """True once the puzzle packs are loaded (they load in the background at start-up)."""
        return self._bank is not None and self._bank.loaded

    def reload_packs(self) -> None:
        """A pack changed (the simulator saved a puzzle into the player's own): read the packs
        again in a worker. The bank answers as it was until the new packs are in, then the screen
        on show is told (`PuzzlesLoaded`), so a map or home screen open by then shows the new
        chapter at once, and one opened later reads it."""
        self.run_worker(self._reload_packs, thread=True, group="packs", exclusive=True, exit_on_error=False)

    def _reload_packs(self) -> None:
        try:
            self.bank.reload()
        except Exception as error:  # noqa: BLE001 - told in one line, logged in full
            self.call_from_thread(self._packs_reloaded, error)
            return
        self.call_from_thread(self._packs_reloaded, None)

    def _packs_reloaded(self, error: BaseException | None) -> None:
        self.screen.post_message(messages.PuzzlesLoaded(error))

    @on(messages.PuzzlesLoaded)
    def _on_puzzles_loaded(self, message: messages.PuzzlesLoaded) -> None:
        """A reload no screen on show took up: only a failure needs saying."""
        if message.error is not None:
            path = log_exception(message.error, self.log_file, "reading the puzzle packs again")
            self.notify(told(f"The puzzles could not be read again: {message.error} (details in {path})"),
                        severity="error", timeout=15)

    def open_session(self, name: str):
        """Open `name`'s save (SaveError if it cannot be read) and make it the current player."""
        from saves.session import Session

        session = Session(self.store, name, self.bank, clock=self.clock)
        if self.session is not None and self.session.name != session.name:
            for mode in sorted(self.kept - {self.current_mode}):
                self._discard(mode)  # another player: a fresh simulator, not the last one's work
        self.session = session
        theme = session.settings.get("theme")
        if isinstance(theme, str) and theme in self.available_themes and theme != self.theme:
            self._saving_theme = True
            try:
                self.theme = theme
            finally:
                self._saving_theme = False
        return session

    def refresh_css(self, animate: bool = True) -> None:
        """Textual calls this whenever a mode opens (its new screen has never been refreshed), and
        it reparses every stylesheet and restyles the screen: some 60 ms of each mode's opening
        spent for nothing when the current screen `app.styling.is_styled`. A theme change still
        refreshes (its variables differ), and so does a screen styled before it."""
        try:
            screen = self.screen
        except Exception:  # noqa: BLE001 - no screen yet: nothing to compare against
            super().refresh_css(animate)
            return
        if styling.is_styled(screen):
            return
        super().refresh_css(animate)
        styling.refreshed(self, self.screen_stack)

    def watch_theme(self, theme: str) -> None:
        styling.theme_changing(self)  # Textual's own watcher has just asked for a full refresh

    def now(self) -> _dt.datetime:
        return self.clock()

    def get_default_screen(self) -> Screen:
        """The base of the HOME mode: the home screen, or the screen of a solo app's one way."""
        if self.solo is not None:
            return self.solo()
        from app.screens.home import HomeScreen

        return HomeScreen()

    def prepare_reveal(self, puzzle) -> None:
        """Load what the reveal of `puzzle` needs (called from a puzzle's worker thread while the
        player thinks, so lock-in shows the reveal at once). Nothing here is shown early."""
        import app.screens.reveal  # noqa: F401
        import puzzles.explain  # noqa: F401
        import puzzles.grading  # noqa: F401

        key = self.bank.key(puzzle)
        key.derivation  # noqa: B018 - computed once and cached on the key

    def on_mount(self) -> None:
        if self.solo is None:
            # HOME's stack was made from get_default_screen (as Textual does for a DEFAULT_MODE that
            # MODES does not name); naming it now lets the player switch back to it.
            self.add_mode(HOME, self.get_default_screen)
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        if not gc.isenabled():  # `ridge play` pauses collection while the game starts
            self.call_after_refresh(_resume_collection)

    def _remember_theme(self, theme) -> None:
        if self._saving_theme or self.session is None:
            return
        try:
            self.session.update_settings(theme=theme.name)
        except Exception as error:  # noqa: BLE001 - a theme that is not saved is no reason to stop
            log_exception(error, self.log_file, "saving the theme")

    # -- navigation: screens ask (app.messages), the app decides ----------------------------
    COLLECTION_PAUSE = 0.5  # seconds: longer than a screen takes to be built and drawn

    def pause_collection(self) -> None:
        """A screen about to be built allocates tens of thousands of objects, and Python would
        collect garbage 60 to 90 times while it does (a full collection costs 20 to 90 ms, more as
        a session's heap grows): collection waits until the screen has been drawn (a screen that
        knows when it is drawn may resume it sooner, as the reveal does). Nothing changes if it
        is already paused (as while the game starts). Kept by issue 26's rule, measured A/B with
        bench_feel against the tree without it: next puzzle 107 ms CPU with it, 208 ms without."""
        if gc.isenabled():
            gc.disable()
            self.set_timer(self.COLLECTION_PAUSE, gc.enable, name="collection pause")

    def action_command_palette(self) -> None:
        """The palette is a screen built like any other: collection waits while it is (one full
        collection made one opening in three take 90-130 ms instead of 60)."""
        self.pause_collection()
        super().action_command_palette()

    def open_mode(self, mode: str, base: Callable[[], Screen] | None = None) -> None:
        """Show `mode`: the one already open on the way back (and close those after it), one of
        the KEPT_MODES as the player left it, or a fresh one on `base` (default: its base in
        MODES), above the home screen or, for the NESTED_MODES, above the current mode."""
        if base is None and mode in self.trail:
            self._back_to(mode)
            return
        if mode in self.trail:
            self._back_to(self.trail[self.trail.index(mode) - 1])
        elif mode not in self.NESTED_MODES:
            self._back_to(HOME)
        self.trail.append(mode)
        self.pause_collection()
        if base is None and mode in self.kept:
            self.switch_mode(mode)  # as the player left it
            return
        self._discard(mode)
        self.add_mode(mode, base or self.MODES[mode])
        if mode in self.KEPT_MODES:
            self.kept.add(mode)
        self.paint_at_once = mode in self.PAINTED_WHOLE
        try:
            self.switch_mode(mode)
        finally:
            self.paint_at_once = False

    paint_at_once = False  # set while open_mode builds one of the PAINTED_WHOLE (see delay_update)

    def delay_update(self, delay: float = 0.05) -> None:
        """Textual's switch_mode holds every paint for 50 ms, to hide a screen still being built.
        The simulator built on the player's key draws whole in its first frame (the rows it mounts
        later are below the fold, and its scrollbar is there from the start), so for it the hold
        only put that frame off, and with it the work the screen defers until after the frame:
        some 50 ms of opening it. Every other hold stays: the other modes' first frames are not
        yet whole (measured: without the hold the map, drill, exam and hot-seat draw two to twelve
        partial frames first), nor is the palette's."""
        if not self.paint_at_once:
            super().delay_update(delay)

    def build_kept(self) -> None:
        """Build the KEPT_MODES not built yet, off-stage, while the player is on the home screen
        (which asks a moment after the packs are in): even the first visit to the simulator is
        then a screen switch, not a 250 ms build. Only with `warm` (as `ridge play` runs), and
        only on the home screen with nothing above it, so no build interrupts a puzzle."""
        if not self.warm or self.current_mode != HOME or len(self.screen_stack) > 1:
            return
        for mode in sorted(self.KEPT_MODES - self.kept):
            self._discard(mode)
            self.add_mode(mode, self.MODES[mode])
            self.kept.add(mode)
            self.pause_collection()
            # Textual builds a mode's screen when it first switches to it, and draws only once
            # this handler returns: switching there and straight back builds it unseen.
            self.switch_mode(mode)
            self.switch_mode(HOME)

    def _back_to(self, mode: str) -> None:
        """Return to `mode` on the trail, closing every mode opened after it."""
        keep = self.trail.index(mode) + 1
        closing, self.trail = self.trail[keep:], self.trail[:keep]
        if closing:
            self.switch_mode(mode)
        for name in reversed(closing):
            if name not in self.kept:
                self._discard(name)

    def _discard(self, mode: str) -> None:
        """Forget `mode`'s screens (it opens afresh next time)."""
        self.kept.discard(mode)
        try:
            self.remove_mode(mode)
        except UnknownModeError:
            pass

    def leave_mode(self) -> None:
        """Back to where the current way to play was opened from; a solo app quits."""
        if len(self.trail) > 1:
            self._back_to(self.trail[-2])
        elif self.solo is not None:
            self.exit()

    def replace_screen(self, make: Callable[[], Screen]) -> None:
        """`make()` in the place of the current screen, within its mode. Textual replaces only a
        screen that was pushed (`switch_screen` drops the replaced screen's result callback, which
        a mode's base screen never had: the stack emptied and Ridge ended, as Continue → lock-in
        did when the puzzle opened the campaign). A mode's base is replaced by opening the mode
        afresh on the new screen, at the same place on the trail, so every way into a screen
        leads to the next one the same way."""
        if len(self.screen_stack) > 1:
            self.switch_screen(make())
        elif self.current_mode == HOME:
            self.push_screen(make())  # the home screen is never replaced: what asks goes above it
        else:
            self.open_mode(self.current_mode, make)

    def show_in_campaign(self, make: Callable[[], Screen], replace: bool = False) -> None:
        """A briefing or a puzzle: in the place of the asking screen, above it within the
        campaign, or as the start of a campaign opened from here."""
        self.pause_collection()
        if replace:
            self.replace_screen(make)
        elif self.current_mode == "campaign":
            self.push_screen(make())
        else:
            self.open_mode("campaign", make)

    def continue_campaign(self, after: str | None = None, replace: bool = False) -> None:
        """The player's next puzzle: within the same chapter first when coming from one, via the
        chapter's briefing the first time a chapter is entered; the map once all are cleared."""
        session = self.session
        pid = session.continue_after(after)
        if pid is None:
            self.notify("Every puzzle is cleared. Replay any chapter from the map.", title="Campaign complete")
            self.open_mode("map")
            return
        chapter = session.chapter_of(pid)
        if chapter is not None and not session.started(chapter):
            self.show_in_campaign(partial(_briefing, chapter.id, pid), replace)
        else:
            self.show_in_campaign(partial(_puzzle, pid), replace)

    @on(messages.OpenMode)
    @keep_going
    def _on_open_mode(self, message: messages.OpenMode) -> None:
        self.open_mode(message.mode)

    @on(messages.GoHome)
    @keep_going
    def _on_go_home(self) -> None:
        self._back_to(HOME)

    @on(messages.OpenMap)
    @keep_going
    def _on_open_map(self) -> None:
        self.open_mode("map")

    @on(messages.Back)
    @keep_going
    def _on_back(self, message: messages.Back) -> None:
        if message.origin is not self.screen:
            return  # asked by a screen no longer on top: already left
        if len(self.screen_stack) > 1:
            self.pop_screen()
        else:
            self.leave_mode()

    @on(messages.OpenChapter)
    @keep_going
    def _on_open_chapter(self, message: messages.OpenChapter) -> None:
        self.show_in_campaign(partial(_briefing, message.chapter_id, message.start))

    @on(messages.OpenPuzzle)
    @keep_going
    def _on_open_puzzle(self, message: messages.OpenPuzzle) -> None:
        self.show_in_campaign(partial(_puzzle, message.puzzle_id), message.replace)

    @on(messages.ContinueCampaign)
    @keep_going
    def _on_continue(self, message: messages.ContinueCampaign) -> None:
        self.continue_campaign(message.after, message.replace)

    def show_reveal(self, locked: messages.PredictionLocked) -> None:
        """The reveal, in the place of the puzzle that was locked in. The puzzle calls this in the
        turn it locks in (no frame of the puzzle in between); posting the message works too."""
        from app.screens.reveal import RevealScreen

        self.replace_screen(partial(RevealScreen, locked))

    @on(messages.PredictionLocked)
    @keep_going
    def _on_locked(self, message: messages.PredictionLocked) -> None:
        self.show_reveal(message)

    # -- actions ---------------------------------------------------------------------------
    async def action_quit(self) -> None:
        """Quit, but never in the middle of writing an attempt."""
        for worker in list(self.workers):
            if worker.group == "save" and not worker.is_finished:
                await worker.wait()
        self.exit()

    def action_help(self) -> None:
        from app.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        self.push_screen(HelpScreen(self.screen, self.screen.focused))

    def action_save_screenshot(self) -> None:
        folder = self.log_file.parent.parent / "screenshots"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = self.save_screenshot(path=str(folder))
        except OSError as error:
            self.notify(told(f"Could not save the screenshot: {error}"), severity="warning")
            return
        self.notify(told(f"Saved {path}"), title="Screenshot")

    # -- the command palette: every bound action of the screen, by its description ---------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        seen: set[str] = set()
        for node in (screen, self):
            for binding in getattr(node, "BINDINGS", []):
                if not isinstance(binding, Binding) or not binding.description:
                    continue
                if binding.action in seen or binding.action in ("quit", "help"):
                    continue
                if node is screen and hasattr(screen, "check_action"):
                    if screen.check_action(binding.action, ()) is False:
                        continue
                seen.add(binding.action)
                yield SystemCommand(binding.description, binding.tooltip or binding.description,
                                    partial(self._run_from_palette, node, binding.action))
        yield SystemCommand("Help", "Help for the part that has focus, and the keys (F1)", self.action_help)
        titles = {binding.description for node in (screen, self) for binding in getattr(node, "BINDINGS", [])
                  if isinstance(binding, Binding) and binding.action not in ("quit", "help")}
        for command in super().get_system_commands(screen):
            # Textual's own entries, less the ones Ridge already offers (Theme, Screenshot) and its
            # key list, which shows framework bindings rather than Ridge's (F1 lists those).
            if command.title not in titles and command.title != "Keys":
                yield command

    async def _run_from_palette(self, node: Any, action: str) -> None:
        await self.run_action(action, node)

    # -- the last line of the crash guard (app.errors) ---------------------------------------
    def run(self, *args: Any, **kwargs: Any):
        """Run in the terminal. An error that ends the game is logged with its traceback and
        told in one line; the player never sees the traceback."""
        console = None if self.strict else self.error_console
        try:
            return super().run(*args, **kwargs)
        finally:
            finish_run(self, console)


def _resume_collection() -> None:
    """After the first frame: keep what start-up built (it lasts as long as the app) out of every
    later collection, which then has far less to walk while the packs load, and collect again."""
    gc.freeze()
    gc.enable()


def _briefing(chapter_id: str, start: str | None = None) -> Screen:
    from app.screens.campaign import BriefingScreen

    return BriefingScreen(chapter_id, start=start)


def _puzzle(puzzle_id: str) -> Screen:
    from app.screens.puzzle import PuzzleScreen

    return PuzzleScreen(puzzle_id)


def make_app(save_dir: str | os.PathLike[str] | None = None, profile: str | None = None,
             clock: Callable[[], _dt.datetime] | None = None,
             strict: bool = False, cursor_blink: bool = True, ready_exit: bool | str | None = None,
             solo: str | Callable[[], Screen] | None = None, bank=None, warm: bool = False) -> RidgeApp:
    """The app, ready to `run()` or `run_test()`. `strict` lets errors through so tests fail loudly.
    `ready_exit` (or the RIDGE_EXIT_WHEN_READY environment variable), for benchmarks: "1" quits as soon as the home
    screen shows the player and takes keys, "loaded" once the chapters have loaded too.
    `solo` runs one way to play on its own in place of the home screen (`ridge match play`,
    demos, tests): a name in `RidgeApp.MODES`, or a function making its screen; leaving it quits.
    `bank` replaces the built-in puzzle packs (a `puzzles.chapters.Bank`; the tests' fixture packs).
    `warm` builds the simulator in the background while the home screen waits (`ridge play` and
    the benches; tests that need it say so, so no other test pays for a screen it never opens)."""
    if ready_exit is None:
        ready_exit = os.environ.get(READY_EXIT_ENV, "")
    elif isinstance(ready_exit, bool):
        ready_exit = "1" if ready_exit else ""
    if ready_exit == "0":
        ready_exit = ""
    if isinstance(solo, str):
        solo = RidgeApp.MODES[solo]
    app = RidgeApp(save_dir=save_dir, profile=profile, clock=clock, strict=strict,
                   cursor_blink=cursor_blink, ready_exit=ready_exit, solo=solo, bank=bank, warm=warm)
    return app
