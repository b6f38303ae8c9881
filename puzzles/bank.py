"""Every puzzle by id: the built-in packs (loaded and keyed once per process) and generated ids.

`get(id)` returns a Puzzle for any id, built-in (`kv-cache-03`) or generated
(`gen-s{seed}-d{difficulty}-{index:04d}`), and `key(puzzle)` its engine key. A built-in key is
computed when first asked for and kept, so a command that only lists or shows puzzles never
solves them (`ridge puzzles list` spent a quarter of its time keying all 89). A player pack's keys
are computed when it loads, right after its check. A generated id is rebuilt from its own seed
string, so looking one up never loads the packs (nor pydantic).
"""
from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from engine.errors import RidgeError

from puzzles.errors import PackError
from puzzles.keys import Key
from puzzles.load_keys import key_of as compute_key
from puzzles.puzzle import MODULES, Puzzle

PACK_DIR = Path(__file__).parent / "packs"

_PACKS: list | None = None
_PUZZLES: dict[str, Puzzle] | None = None
_KEYS: dict[str, Key] = {}
_PLAYER_DIR: Path | None = None  # where the player's own packs are (<data>/packs), once told
_PLAYER_PROBLEMS: list[PackError] = []
_PLAYER_NOTES: list[tuple[str, str]] = []  # (chapter id, one line) for a pack loaded other than as written
_LOADING = threading.RLock()  # held while the packs are read (the app reads them in a worker thread)


def pack_paths() -> list[Path]:
    """The built-in packs, in course order (one file per module id)."""
    found = {p.stem: p for p in PACK_DIR.glob("*.toml")}
    ordered = [found.pop(m) for m in MODULES if m in found]
    return ordered + sorted(found.values())


def use_player_packs(folder: str | Path | None) -> None:
    """From the next load on, read the player's own packs (every `*.toml` in `folder`, from
    `saves.locations.packs_dir`) beside the built-in ones, each with its own chapter."""
    global _PLAYER_DIR
    folder = Path(folder) if folder else None
    if folder != _PLAYER_DIR:
        _PLAYER_DIR = folder
        reload()


def reload() -> None:
    """Read the packs again on next use (a player pack was added or changed)."""
    global _PACKS, _PUZZLES
    with _LOADING:
        _PACKS = _PUZZLES = None


def refresh() -> None:
    """Read the packs again now and swap them in whole once read (a player pack was added or
    changed): until then every lookup, from any thread, sees the packs as they were, never none.
    For a worker thread; the app's screens keep answering while it runs."""
    global _PACKS, _PUZZLES
    with _LOADING:
        _PACKS, _PUZZLES = _load()


def player_problems() -> list[PackError]:
    """Why any player pack was left out (a broken pack is skipped and said, never fatal)."""
    packs()
    return list(_PLAYER_PROBLEMS)


def player_notes(chapter_id: str | None = None) -> list[str]:
    """One line for each player pack loaded otherwise than it is written (the old simulator's,
    shown in the player's own chapter), for `chapter_id` only when given."""
    packs()
    return [text for chapter, text in _PLAYER_NOTES if chapter_id is None or chapter == chapter_id]


def pack_files(chapter_id: str) -> list[str]:
    """The files a chapter's puzzles were read from."""
    return [str(p.path) for p in packs() if p.chapter.id == chapter_id]


def loads_as_pack(name: str) -> bool:
    """Whether a file named `name` in the packs folder is read as a pack: `*.toml` in lower
    case, not hidden (a name starting with a dot)."""
    return name.endswith(".toml") and not name.startswith(".") and len(name) > len(".toml")


def player_pack_paths() -> list[Path]:
    """The player's own packs, by file name; none until `use_player_packs` names their folder."""
    if _PLAYER_DIR is None or not _PLAYER_DIR.is_dir():
        return []
    return sorted(p for p in _PLAYER_DIR.glob("*.toml") if p.is_file() and loads_as_pack(p.name))


def _player_packs(taken: dict[str, Puzzle], chapter_ids: set[str]) -> list:
    """Every player pack that passes `ridge puzzles check` and reuses no built-in chapter or
    puzzle id, with its keys computed; `_PLAYER_PROBLEMS` says why any other was left out.

    A pack the old simulator saved (under the course's `clearing-test` id, `pack_writer.OLD_CHAPTER`)
    holds the player's own puzzles: they load into the player's chapter (`pack_writer.CHAPTER`,
    joining a pack that already holds it), the file is left as it is, and `_PLAYER_NOTES` says so.
    Its puzzle ids must still be its own."""
    from puzzles.check import check_paths
    from puzzles.pack_writer import saved_by_old_simulator
    from puzzles.schema import load_pack

    _PLAYER_PROBLEMS.clear()
    _PLAYER_NOTES.clear()
    readable = []
    for path in player_pack_paths():
        problems, _count, _packs = check_paths([path])
        pack = None if problems else load_pack(path)
        if problems or pack is None:
            _PLAYER_PROBLEMS.append(problems[0] if problems else PackError("unreadable pack", path=str(path)))
            continue
        readable.append(pack)
    readable.sort(key=lambda pack: saved_by_old_simulator(pack.chapter))  # the old ones last: they join
    loaded = []
    for pack in readable:
        old = saved_by_old_simulator(pack.chapter)
        if old:
            pack = into_own_chapter(pack)
        problem = _clash(pack, taken, chapter_ids, joining=old)
        if problem is not None:
            _PLAYER_PROBLEMS.append(problem)
            continue
        for puzzle in pack.puzzles:
            taken[puzzle.id] = puzzle
            _KEYS[puzzle.id] = compute_key(puzzle)
        if old:
            _PLAYER_NOTES.append((pack.chapter.id, _old_pack_note(pack)))
        chapter_ids.add(pack.chapter.id)
        loaded.append(pack)
    return loaded


def into_own_chapter(pack):
    """The old simulator's pack with its puzzles in the player's own chapter (nothing written)."""

    from puzzles.pack_writer import CHAPTER
    from puzzles.schema import LoadedPack

    chapter = pack.chapter.model_copy(update={"id": CHAPTER["id"]})
    return LoadedPack(pack.path, chapter, [replace(p, module=chapter.id) for p in pack.puzzles])


def _old_pack_note(pack) -> str:
    from puzzles.pack_writer import OLD_CHAPTER

    count = len(pack.puzzles)
    return (f"{pack.path}: an older Ridge saved {'this puzzle' if count == 1 else f'these {count} puzzles'} "
            f"under the course's chapter id '{OLD_CHAPTER['id']}'; shown in your own chapter "
            f"'{pack.chapter.title}' (the file is unchanged: set its chapter id to \"{pack.chapter.id}\" "
            "to end this note)")


def _clash(pack, taken: dict[str, Puzzle], chapter_ids: set[str], joining: bool = False) -> PackError | None:
    """Why a checked player pack cannot load beside those already loaded: a chapter id already
    used (unless it is `joining` the player's chapter), or a puzzle id already used."""
    if pack.chapter.id in chapter_ids and not joining:
        return PackError(f"chapter id '{pack.chapter.id}' is already a chapter: give yours its own id",
                         path=str(pack.path), field="chapter.id")
    clash = next((p for p in pack.puzzles if p.id in taken), None)
    if clash is not None:
        first = taken[clash.id]
        return PackError(f"duplicate id: already used at {first.source}:{first.line}",
                         path=clash.source, line=clash.line, puzzle=clash.id, field="id")
    return None


def packs() -> list:
    """The built-in packs (LoadedPack), loaded and validated once (the first problem raises), then
    the player's own that pass the check."""
    global _PACKS, _PUZZLES
    found = _PACKS
    if found is None:
        with _LOADING:  # one load at a time: a second thread waits for the first one's packs
            if _PACKS is None:
                _PACKS, _PUZZLES = _load()
            found = _PACKS
    return found


def _load() -> tuple[list, dict[str, Puzzle]]:
    """The packs and the puzzles by id, read afresh (call with `_LOADING` held)."""
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
    loaded += _player_packs(puzzles, {pack.chapter.id for pack in loaded})
    return loaded, puzzles


def builtin() -> dict[str, Puzzle]:
    """Pack puzzles by id: the built-in ones in course order, then the player's own."""
    packs()
    return _PUZZLES


def chapters() -> list:
    """The chapter specs (id, title, briefing, expects), in course order, then the player's own
    (once each, though two packs may fill one)."""
    found: dict = {}
    for pack in packs():
        found.setdefault(pack.chapter.id, pack.chapter)
    return list(found.values())


def chapter(module: str):
    return next((p.chapter for p in packs() if p.chapter.id == module), None)


def in_module(module: str) -> list[Puzzle]:
    return [p for p in builtin().values() if p.module == module]


def get(puzzle_id: str) -> Puzzle:
    """Any puzzle by id; RidgeError (one line) for an unknown one."""
    from puzzles import generator

    if generator.is_generated_id(puzzle_id):
        if puzzle_id not in _KEYS or puzzle_id not in _GENERATED:
            from puzzles import load_generator

            # a load chapter's recipe (gen-tails-..., gen-split-...), else the steady-state one
            made = (load_generator.from_id if load_generator.is_load_id(puzzle_id) else generator.from_id)(puzzle_id)
            _remember(made.puzzle, made.key)
        return _GENERATED[puzzle_id]
    puzzles = builtin()
    if puzzle_id not in puzzles:
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
    """The engine's key for a puzzle (cached for built-in and looked-up generated puzzles).

    A built-in steady-state puzzle's key is its pack's puzzle's, whichever copy is asked about, as
    when every such key was computed at load; a load puzzle's is kept only when asked for the
    pack's own puzzle (a copy with other traffic gets its own)."""
    found = _KEYS.get(puzzle.id)
    pack_puzzle = (_PUZZLES or {}).get(puzzle.id)
    known = pack_puzzle is not None or puzzle.id in _GENERATED
    if found is not None and known:
        return found
    if pack_puzzle is not None and pack_puzzle.load is None:
        found = _KEYS[puzzle.id] = compute_key(pack_puzzle)
        return found
    key = compute_key(puzzle)
    if known and puzzle.load is not None and pack_puzzle is puzzle:
        _KEYS[puzzle.id] = key   # a built-in load puzzle's key, kept once computed
    return key
