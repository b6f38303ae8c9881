"""Errors the puzzle layer raises: always one line naming the file, line, puzzle id and field."""
from __future__ import annotations

from engine.errors import RidgeError


class PackError(RidgeError):
    """A pack (or one puzzle in it) that cannot be loaded or whose key disagrees with the engine.

    The message is built by `where()` so every problem reads the same way:
    `path/to/pack.toml:42: puzzle kv-cache-03: deployment.model: unknown model 'llama-9'`.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 puzzle: str | None = None, field: str | None = None) -> None:
        self.path, self.line, self.puzzle, self.field, self.detail = path, line, puzzle, field, message
        from engine.bounds import one_line  # echoed values: one line, no escapes, long ones shortened

        super().__init__(one_line(where(path, line, puzzle, field) + message))


def where(path: str | None, line: int | None, puzzle: str | None, field: str | None) -> str:
    """The `file:line: puzzle ID: field: ` prefix, leaving out whatever is unknown."""
    parts = []
    if path:
        parts.append(f"{path}:{line}" if line else str(path))
    if puzzle:
        parts.append(f"puzzle {puzzle}")
    if field:
        parts.append(field)
    return "".join(p + ": " for p in parts)
