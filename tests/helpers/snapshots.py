"""The game as the app tests see it: a small fixed puzzle bank (tests/game_packs), a fixed clock,
no cursor blink, and errors that fail the test. Snapshot and pilot tests build apps from here,
so a change to the built-in packs never changes a screenshot."""
from __future__ import annotations

import datetime as _dt
from pathlib import Path

from app.game import RidgeApp, make_app

PACKS = Path(__file__).parents[1] / "game_packs"
FIXED_NOW = _dt.datetime(2026, 3, 2, 9, 30, tzinfo=_dt.timezone.utc)
ORDER = ("two-phases", "intensity", "kv-cache")


class FixtureBank:
    """The same functions as `puzzles.bank`, over the test packs."""

    def __init__(self) -> None:
        from puzzles.keys import compute_key
        from puzzles.schema import load_pack

        self.packs = [load_pack(PACKS / f"{name}.toml") for name in ORDER]
        self.puzzles = {p.id: p for pack in self.packs for p in pack.puzzles}
        self.keys = {pid: compute_key(p) for pid, p in self.puzzles.items()}

    def chapters(self):
        return [pack.chapter for pack in self.packs]

    def in_module(self, module: str):
        return [p for p in self.puzzles.values() if p.module == module]

    def get(self, puzzle_id: str):
        if puzzle_id not in self.puzzles:
            from engine.errors import RidgeError

            raise RidgeError(f"unknown puzzle '{puzzle_id}'")
        return self.puzzles[puzzle_id]

    def key(self, puzzle):
        return self.keys[puzzle.id]


_BANK: FixtureBank | None = None


def fixture_bank() -> FixtureBank:
    global _BANK
    if _BANK is None:
        _BANK = FixtureBank()
    return _BANK


def build_app(save_dir, profile: str | None = None, strict: bool = True) -> RidgeApp:
    """An app over the fixture packs with a fixed clock and no blinking cursors."""
    from puzzles.chapters import Bank

    return make_app(save_dir=save_dir, profile=profile, clock=lambda: FIXED_NOW, strict=strict,
                    cursor_blink=False, ready_exit=False, bank=Bank(fixture_bank()))
