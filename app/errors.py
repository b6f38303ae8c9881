"""The crash guard: an unexpected error is written, with its traceback, to the log file in the data
folder, and the player sees one short line instead.

Two layers. `Guarded` wraps a message pump's dispatch, so an error in one of Ridge's own screens or
widgets is logged and announced while the game keeps going. `RidgeApp._handle_exception` (in
`app.game`) catches whatever still escapes — from a worker, a timer, or Textual's own widgets —
logs it, and closes the app with a single line on the terminal rather than a traceback.
Tests turn on `strict`, which lets errors through so a failing test fails loudly.
"""
from __future__ import annotations

import datetime as _dt
import os
import tempfile
import traceback
from pathlib import Path


def default_log_path(save_dir: str | os.PathLike[str] | None = None) -> Path:
    """The log file: `saves.locations.log_path` when available, else one in the temp folder."""
    try:
        from saves.locations import log_path
    except ImportError:  # pragma: no cover - saves is part of every build, but never crash here
        return Path(tempfile.gettempdir()) / "ridge" / "ridge.log"
    return log_path(save_dir)


def log_exception(error: BaseException, log_file: Path | None, where: str = "") -> Path:
    """Append `error` with its traceback to `log_file` (falling back to the temp folder); return
    the file actually written, or the intended one if even that failed."""
    stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    entry = f"--- {stamp} {where}\n{text}\n"
    candidates = [p for p in (log_file, Path(tempfile.gettempdir()) / "ridge" / "ridge.log") if p]
    for path in candidates:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(entry)
            return path
        except OSError:
            continue
    return candidates[0] if candidates else Path("ridge.log")


def short_message(error: BaseException, path: Path) -> str:
    """The one line a player sees: what kind of trouble, and where the details went."""
    return f"Something went wrong ({type(error).__name__}). Details were saved to {path}"


def report(app, error: Exception, where: str = "") -> None:
    """Log an error and tell the player in one line, or re-raise it when the app is strict."""
    if getattr(app, "strict", False):
        raise error
    path = log_exception(error, getattr(app, "log_file", None), where)
    app.unexpected_errors.append(error)
    try:
        app.notify(short_message(error, path), title="Unexpected error", severity="error", timeout=8)
    except Exception:  # noqa: BLE001 - the notice is best effort; the log already has it
        pass


class Guarded:
    """Mixin for Ridge's screens and widgets: errors in their handlers are logged, not fatal."""

    async def _dispatch_message(self, message) -> None:  # type: ignore[override]
        try:
            await super()._dispatch_message(message)  # type: ignore[misc]
        except Exception as error:  # noqa: BLE001 - this is the guard
            report(self.app, error, f"{type(self).__name__} handling {type(message).__name__}")  # type: ignore[attr-defined]
