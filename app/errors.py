"""The crash guard: an unexpected error is written, with its traceback, to the log file in the data
folder, and the player sees one short line instead. Only Textual's public API is used.

Two layers.
1. Keep going. `Guarded` (a mixin for the app, screens and widgets) overrides `on_event`, Textual's
   public hook for every event a node handles: keys (so every binding's action), mouse, mount,
   resume, timers. An error there is logged and announced in one line while the game goes on.
   Message handlers (a button's Pressed, a list's Selected) do not pass through `on_event`; the
   app's own ones are wrapped in `keep_going`, and the rest fall to the second layer.
2. The last line. Whatever still escapes (a worker, a callback, a message handler) ends the app,
   as Textual always does. Textual prints the traceback on the app's public `error_console` once
   the terminal is restored; Ridge gives the app a console that writes into memory
   (`crash_console`), and after the run (`finish_run`) writes what it caught to the log and prints
   one line instead.
Tests turn on `strict`, which lets errors through so a failing test fails loudly.
"""
from __future__ import annotations

import datetime as _dt
import functools
import inspect
import io
import sys
from pathlib import Path
from typing import Any, Callable

from saves.crash_log import crash_kind, log_exception, write_log


def told(message: object) -> str:
    """A message as a notice or a label shows it (DESIGN.md: one line, at most 300 characters):
    `engine.text.refusal`, with markup written as text, so an error that echoes a file's `[/]`
    cannot itself break the screen that tells it."""
    from textual.markup import escape

    from engine.text import refusal

    return escape(refusal(message))


def short_message(error: BaseException | str, path: Path) -> str:
    """The one line a player sees: what kind of trouble, and where the details went."""
    from engine.text import refusal

    kind = error if isinstance(error, str) else type(error).__name__
    return refusal(f"Something went wrong ({kind}). Details were saved to {path}")


def report(app, error: Exception, where: str = "") -> None:
    """Log an error and tell the player in one line, or re-raise it when the app is strict."""
    if getattr(app, "strict", False):
        raise error
    path = log_exception(error, getattr(app, "log_file", None), where)
    app.unexpected_errors.append(error)
    try:
        app.notify(short_message(error, path), title="Unexpected error", severity="error", timeout=8, markup=False)
    except Exception:  # noqa: BLE001 - the notice is best effort; the log already has it
        pass


class Guarded:
    """Mixin for Ridge's app, screens and widgets: an error while handling an event (a key and the
    action it is bound to, a click, mount, resume, a timer) is logged and told, not fatal."""

    async def on_event(self, event) -> None:
        try:
            await super().on_event(event)  # type: ignore[misc]
        except Exception as error:  # noqa: BLE001 - this is the guard
            report(self.app, error, f"{type(self).__name__} handling {type(event).__name__}")  # type: ignore[attr-defined]


def keep_going(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a message handler (which `on_event` does not see) so that an error in it is logged
    and told, not fatal. Put it under `@on(...)`; the handler keeps its own parameters."""

    @functools.wraps(handler)
    async def guarded(self, *args: Any, **kwargs: Any) -> Any:
        try:
            result = handler(self, *args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result
        except Exception as error:  # noqa: BLE001 - this is the guard
            report(self.app, error, f"{type(self).__name__}.{handler.__name__}")
            return None

    return guarded


# --- the last line ---------------------------------------------------------------------------------

def crash_console():
    """A console for `App.error_console` that keeps what Textual prints there (the traceback of
    an error that ended the app, or an exit message) in memory, for `finish_run` to sort out."""
    from rich.console import Console  # loaded with Textual anyway

    return Console(file=io.StringIO(), width=100, color_system=None, force_terminal=False,
                   markup=False, highlight=False, emoji=False, soft_wrap=False)


def finish_run(app, console) -> None:
    """After a run: an app that ended on an error (return code 1 with a traceback printed) has
    the traceback written to its log and one line printed; anything else Textual printed (an
    exit message) goes to stderr as it would have."""
    text = console.file.getvalue() if console is not None else ""
    if not text.strip():
        return
    console.file.seek(0)
    console.file.truncate()
    if app.return_code == 1 and "Traceback" in text:
        stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        path = write_log(f"--- {stamp} unhandled\n{text}\n", getattr(app, "log_file", None))
        print(short_message(crash_kind(text), path), file=sys.stderr)
    else:
        sys.stderr.write(text)
