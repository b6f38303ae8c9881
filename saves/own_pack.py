"""The player's own puzzle packs: the simulator's deployment saved as a puzzle, and a shared pack
installed into the data folder. Either way the whole file is checked by `ridge puzzles check`'s
own code first, and only then written, atomically, so a pack the check would reject is never left
on disk."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.catalog import builtin_catalog
from engine.errors import RidgeError
from engine.sim.result import Result
from puzzles import bank
from puzzles.check import check_paths
from puzzles.errors import PackError
from puzzles.pack_writer import pack_ids, pack_text, puzzle_entry, saved_by_old_simulator
from puzzles.schema import ChapterSpec, load_pack, read_pack_text
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


class PackRefused(RidgeError):
    """A shared pack the check rejects: the one line, and every problem found."""

    def __init__(self, message: str, problems: list[PackError]) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(frozen=True)
class InstalledPack:
    """Where the pack now is, its chapter and how many puzzles it holds."""

    path: Path
    chapter: ChapterSpec
    count: int


def install_pack(source: Path, folder: Path, replace: bool = False) -> InstalledPack:
    """Check a shared pack as `ridge puzzles check` does, refuse one whose chapter or puzzle ids
    clash with the packs already loaded, and copy it (atomically) into `folder` under its own
    name. RidgeError (one line) says why not; PackRefused also carries the problems when there
    are several."""
    if source.suffix.lower() != ".toml":
        raise RidgeError(f"{source}: a pack is a .toml file")
    if not bank.loads_as_pack(source.name):  # it would be copied, then never loaded
        raise RidgeError(f"{source}: the game reads only packs named NAME.toml (lower-case .toml, no leading "
                         "dot); rename the file and import it again")
    problems, count, _ = check_paths([source])
    if len(problems) == 1:  # one problem: one line
        raise RidgeError(f"not imported: {problems[0]}")
    if problems:
        raise PackRefused(f"{source}: not imported: {len(problems)} problem{'s' if len(problems) != 1 else ''} "
                          f"(listed above; `ridge puzzles check {source}` shows the same)", problems)
    pack = load_pack(source)
    old = saved_by_old_simulator(pack.chapter)  # the old simulator's: it joins the player's own chapter
    if old:
        pack = bank.into_own_chapter(pack)
    target = folder / source.name
    if target.is_symlink() or target.exists() and not target.is_file():
        raise RidgeError(f"{target} is a link or not a regular file; it was left as it is")
    if target.exists() and not replace:
        raise RidgeError(f"{target} already exists: pass --replace to overwrite it")
    bank.use_player_packs(folder)
    others = [p for p in bank.packs() if Path(p.path).resolve() != target.resolve()]
    chapter = next((p.chapter for p in others if p.chapter.id == pack.chapter.id), None)
    if chapter is not None and not old:
        raise RidgeError(f"{source}: chapter id '{pack.chapter.id}' is already used by '{chapter.title}': "
                         "give the pack's [chapter] its own id")
    taken = {p.id for other in others for p in other.puzzles}
    clash = next((p for p in pack.puzzles if p.id in taken), None)
    if clash is not None:
        raise RidgeError(f"{source}:{clash.line}: puzzle id '{clash.id}' is already used: give it its own id")
    atomic.make_dir(folder)
    atomic.write_atomic(target, read_pack_text(str(source)))
    bank.reload()
    return InstalledPack(target, pack.chapter, count)
