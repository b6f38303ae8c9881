"""Every puzzle by id: the built-in packs (loaded and keyed once per process) and generated ids.

`get(id)` returns a Puzzle for any id, built-in (`kv-cache-03`) or generated
(`gen-s{seed}-d{difficulty}-{index:04d}`), and `key(puzzle)` its engine key. Built-in keys are all
computed when the packs first load. A generated id is rebuilt from its own seed string, so looking
one up never loads the packs (nor pydantic).
"""
from __future__ import annotations

from pathlib import Path

from puzzles.errors import PackError
from puzzles.keys import Key, compute_key
from puzzles.puzzle import MODULES, Puzzle

PACK_DIR = Path(__file__).parent / "packs"

_PACKS: list | None = None
_PUZZLES: dict[str, Puzzle] | None = None
_KEYS: dict[str, Key] = {}


def pack_paths() -> list[Path]:
    """The built-in packs, in course order (one file per module id)."""
    found = {p.stem: p for p in PACK_DIR.glob("*.toml")}
    ordered = [found.pop(m) for m in MODULES if m in found]
    return ordered + sorted(found.values())


def packs() -> list:
    """The built-in packs (LoadedPack), loaded and validated once; the first problem raises."""
    global _PACKS, _PUZZLES
    if _PACKS is None:
        from puzzles.schema import load_pack

        loaded = [load_pack(path) for path in pack_paths()]
        puzzles: dict[str, Puzzle] = {}
        for pack in loaded:
            for puzzle in pack.puzzles:
                if puzzle.id in puzzles:
                    first = puzzles[puzzle.id]
                    raise PackError(f"duplicate id: already used at {first.source}:{first.line}",
                                    path=puzzle.source, line=puzzle.line, puzzle=puzzle.id, field="id")
                puzzles[puzzle.id] = puzzle
                _KEYS[puzzle.id] = compute_key(puzzle)
        _PACKS, _PUZZLES = loaded, puzzles
    return _PACKS


def builtin() -> dict[str, Puzzle]:
    """Built-in puzzles by id, in course order."""
    packs()
    return _PUZZLES


def chapters() -> list:
    """The chapter specs (id, title, briefing, expects), in course order."""
    return [p.chapter for p in packs()]


def chapter(module: str):
    return next((p.chapter for p in packs() if p.chapter.id == module), None)


def in_module(module: str) -> list[Puzzle]:
    return [p for p in builtin().values() if p.module == module]


def get(puzzle_id: str) -> Puzzle:
    """Any puzzle by id; RidgeError (one line) for an unknown one."""
    from puzzles import generator

    if generator.is_generated_id(puzzle_id):
        if puzzle_id not in _KEYS or puzzle_id not in _GENERATED:
            made = generator.from_id(puzzle_id)
            _remember(made.puzzle, made.key)
        return _GENERATED[puzzle_id]
    puzzles = builtin()
    if puzzle_id not in puzzles:
        from engine.errors import RidgeError

        raise RidgeError(f"unknown puzzle '{puzzle_id}' (see `ridge puzzles list`; generated ids look like "
                         f"gen-s7-d3-0001)")
    return puzzles[puzzle_id]


_GENERATED: dict[str, Puzzle] = {}


def _remember(puzzle: Puzzle, key: Key) -> None:
    if len(_GENERATED) > 4096:
        for old in list(_GENERATED)[:1024]:
            _GENERATED.pop(old, None)
            _KEYS.pop(old, None)
    _GENERATED[puzzle.id] = puzzle
    _KEYS[puzzle.id] = key


def key(puzzle: Puzzle) -> Key:
    """The engine's key for a puzzle (cached for built-in and looked-up generated puzzles)."""
    found = _KEYS.get(puzzle.id)
    if found is not None and (puzzle.id in (_PUZZLES or {}) or puzzle.id in _GENERATED):
        return found
    return compute_key(puzzle)
