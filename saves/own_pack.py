"""The player's own puzzle pack: the simulator's deployment saved as a puzzle. The text comes from
`puzzles.pack_writer`, the whole file is checked by `ridge puzzles check`'s own code, and only
then written, atomically, so a pack the check would reject is never left on disk."""
from __future__ import annotations

import os
from pathlib import Path

from engine.catalog import builtin_catalog
from engine.errors import RidgeError
from engine.sim.result import Result
from puzzles.check import check_paths
from puzzles.pack_writer import pack_ids, pack_text, puzzle_entry
from puzzles.schema import read_pack_text
from puzzles.sim import sim_key
from saves import atomic
from saves.locations import data_dir as locate

PACK_NAME = "my-puzzles.toml"


def pack_path(data_dir: str | os.PathLike | None = None) -> Path:
    """`<data dir>/packs/my-puzzles.toml`, the player's own pack."""
    return locate(data_dir) / "packs" / PACK_NAME


def save_puzzle(result: Result, path: str | os.PathLike) -> tuple[str, Path]:
    """Add this deployment to the pack at `path` as a puzzle; (its id, the path). The text comes
    from `puzzles.pack_writer` (tomli-w), the whole file is checked by `ridge puzzles check`'s own
    code, and only then written, atomically (`saves.atomic`); RidgeError says why not."""
    path = Path(path)
    builtin = builtin_catalog()
    dep = result.deployment
    if builtin.models.get(dep.model.id) != dep.model or builtin.gpus.get(dep.gpu.id) != dep.gpu:
        raise RidgeError("only catalog models and GPUs can go in a puzzle pack: pick them from the lists")
    entry = puzzle_entry(dep, sim_key(result))
    old = read_pack_text(path) if path.exists() else ""  # capped: PackError names the file
    if entry["id"] in pack_ids(old):
        raise RidgeError(f"this deployment is already in your pack as {entry['id']}")
    text = pack_text(old, entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    trial = path.with_name(f".{path.name}.{os.getpid()}.check.toml")
    try:
        trial.write_text(text, encoding="utf-8")
        problems, _, _ = check_paths([trial])
    finally:
        trial.unlink(missing_ok=True)
    if problems:
        first = problems[0]
        where = f"puzzle {first.puzzle}: " if first.puzzle and first.puzzle != entry["id"] else ""
        field = f"{first.field}: " if first.field else ""
        raise RidgeError(f"not saved: the puzzle check would reject it: {where}{field}{first.detail}")
    try:
        atomic.write_atomic(path, text)
    except OSError as exc:
        raise RidgeError(f"{path}: could not write your pack: {exc}") from None
    return entry["id"], path
