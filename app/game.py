"""The Ridge app and its one factory, `make_app`, used by `ridge play` and by the tests.

The app owns what every screen shares: the save store, the puzzle bank, the open Session, the
clock, the crash guard and the command palette. Screens own what the player sees. Puzzles, saves
and the engine are imported only when first needed, so the home screen draws quickly.
"""
from __future__ import annotations

import datetime as _dt
import os
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from app.errors import Guarded, default_log_path, log_exception, short_message

READY_EXIT_ENV = "RIDGE_EXIT_WHEN_READY"
DEFAULT_THEME = "textual-dark"


class RidgeApp(Guarded, App[None]):
    """Ridge: commit to a diagnosis of a deployment, then see the engine's answer."""

    CSS_PATH = "ridge.tcss"
    TITLE = "Ridge"
    SUB_TITLE = "inference economics, one deployment at a time"
    ENABLE_COMMAND_PALETTE = True

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
                 cursor_blink: bool = True, ready_exit: str = "") -> None:
        super().__init__()
        self.save_dir = save_dir
        self.requested_profile = profile
        self.clock = clock or (lambda: _dt.datetime.now(_dt.timezone.utc))
        self.strict = strict
        self.blink = cursor_blink
        self.ready_exit = ready_exit
        self.log_file: Path = default_log_path(save_dir)
        self.unexpected_errors: list[BaseException] = []
        self.session = None
        self._store = None
        self._bank = None
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
            from app.progress import Bank

            self._bank = Bank()
        return self._bank

    @property
    def bank_ready(self) -> bool:
        """True once the puzzle packs are loaded (they load in the background at start-up)."""
        return self._bank is not None and self._bank.loaded

    def open_session(self, name: str):
        """Open `name`'s save (SaveError if it cannot be read) and make it the current player."""
        from app.progress import Session

        session = Session(self.store, name, self.bank, clock=self.clock)
        self.session = session
        theme = session.settings.get("theme")
        if isinstance(theme, str) and theme in self.available_themes and theme != self.theme:
            self._saving_theme = True
            try:
                self.theme = theme
            finally:
                self._saving_theme = False
        return session

    def now(self) -> _dt.datetime:
        return self.clock()

    def get_default_screen(self) -> Screen:
        from app.screens.home import HomeScreen

        return HomeScreen()

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._remember_theme)

    def _remember_theme(self, theme) -> None:
        if self._saving_theme or self.session is None:
            return
        try:
            self.session.update_settings(theme=theme.name)
        except Exception as error:  # noqa: BLE001 - a theme that is not saved is no reason to stop
            log_exception(error, self.log_file, "saving the theme")

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
            self.notify(f"Could not save the screenshot: {error}", severity="warning")
            return
        self.notify(f"Saved {path}", title="Screenshot")

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
        yield from super().get_system_commands(screen)

    async def _run_from_palette(self, node: Any, action: str) -> None:
        await self.run_action(action, node)

    # -- the last line of the crash guard --------------------------------------------------
    def _handle_exception(self, error: Exception) -> None:
        path = log_exception(error, self.log_file, "unhandled")
        if self.strict:
            super()._handle_exception(error)
            return
        self._return_code = 1
        if self._exception is None:
            self._exception = error
            self._exception_event.set()
        self.unexpected_errors.append(error)
        self._exit_renderables.append(short_message(error, path))
        self._close_messages_no_wait()


def make_app(save_dir: str | os.PathLike[str] | None = None, profile: str | None = None,
             size: tuple[int, int] | None = None, clock: Callable[[], _dt.datetime] | None = None,
             strict: bool = False, cursor_blink: bool = True, ready_exit: bool | str | None = None) -> RidgeApp:
    """The app, ready to `run()` or `run_test()`. `size` is only a hint for tests (run_test takes
    the real one); `strict` lets errors through so tests fail loudly. `ready_exit` (or the
    RIDGE_EXIT_WHEN_READY environment variable), for benchmarks: "1" quits as soon as the home
    screen shows the player and takes keys, "loaded" once the chapters have loaded too."""
    if ready_exit is None:
        ready_exit = os.environ.get(READY_EXIT_ENV, "")
    elif isinstance(ready_exit, bool):
        ready_exit = "1" if ready_exit else ""
    if ready_exit == "0":
        ready_exit = ""
    app = RidgeApp(save_dir=save_dir, profile=profile, clock=clock, strict=strict,
                   cursor_blink=cursor_blink, ready_exit=ready_exit)
    app.size_hint = size
    return app
