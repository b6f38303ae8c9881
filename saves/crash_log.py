"""The crash log: an unexpected error's traceback appended to the log file in the data folder
(`saves.locations.log_path`, falling back to the temp folder), so the player sees one line and
the details are kept."""
from __future__ import annotations

import datetime as _dt
import re
import tempfile
import traceback
from pathlib import Path

from engine.bounds import append_text


def log_exception(error: BaseException, log_file: Path | None, where: str = "") -> Path:
    """Append `error` with its traceback to `log_file` (falling back to the temp folder); return
    the file actually written, or the intended one if even that failed."""
    stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return write_log(f"--- {stamp} {where}\n{text}\n", log_file)


def write_log(entry: str, log_file: Path | None) -> Path:
    """Append `entry` to `log_file` (falling back to the temp folder); the file written."""
    candidates = [p for p in (log_file, Path(tempfile.gettempdir()) / "ridge" / "ridge.log") if p]
    for path in candidates:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            append_text(path, entry)  # never blocks on a pipe or writes into a device
            return path
        except OSError:
            continue
    return candidates[0] if candidates else Path("ridge.log")


_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")


def crash_kind(text: str) -> str:
    """The kind of error a printed traceback ends with ("RuntimeError"), or "error"."""
    for line in reversed([line.strip() for line in text.splitlines() if line.strip()]):
        match = _EXCEPTION_LINE.match(line)
        if match:
            return match.group(1).rsplit(".", 1)[-1]
    return "error"
