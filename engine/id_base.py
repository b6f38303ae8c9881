"""The base of every id enum (engine/ids.py, engine/play_ids.py), in a module of its own so that the
ids only the game's modes use can load apart from the engine's (see engine/play_ids.py)."""
from __future__ import annotations

from enum import StrEnum


class _Id(StrEnum):
    """An id: a string everywhere, including its repr (`'cost'`, not `<Objective.COST: ...>`)."""

    def __repr__(self) -> str:
        return str.__repr__(self)
