"""The error the save layer raises: one line that names the file and, where it can, the line and field."""
from __future__ import annotations

from pathlib import Path

from engine.errors import RidgeError


class SaveError(RidgeError):
    """A save file that cannot be read, validated or written; the files on disk are left as they were.

    `path` is the file at fault (or None), `line` its 1-based line when known, so a UI can offer to
    set the file aside with `SaveStore.quarantine`.
    """

    def __init__(self, message: str, *, path: Path | str | None = None, line: int | None = None):
        super().__init__(message)  # RidgeError holds it to one line of at most 300 characters
        self.path = Path(path) if path is not None else None
        self.line = line
