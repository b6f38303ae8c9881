"""The whole history checked before anything is appended to it, so a new answer never papers over
a damaged one.

Before an attempt is recorded, every segment file must be in place (numbered 1..N), each must
hold as many attempts as it says (`count`), and the hash chain must run unbroken from the first
attempt to the last. Re-reading every segment would make recording cost grow with the history,
so a segment that is no longer written to ("closed": every one but the last) is read in full
once, and then sealed: its size, modification and change times and inode, with the seq and hash
it ends on, are kept in `.verified.json` beside the segments. A later append only compares those
with `os.stat`; any change to a closed file (an edit, a deletion, a copy over it) changes its
change time, so it is read and checked again. The last segment is read in full every time, as
recording always did. The seals are a cache, never trusted over the files: a missing or damaged
seal file only means reading more. `ridge saves check` ignores them and checks everything.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from engine.bounds import read_regular
from saves import atomic
from saves.chain import GENESIS, verify_chain
from saves.errors import SaveError

SEALS = ".verified.json"
_STAT_KEYS = ("size", "mtime_ns", "ctime_ns", "ino")


def _stat(path: Path) -> dict[str, int]:
    st = os.stat(path)
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "ino": st.st_ino}


def _read_seals(folder: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(read_regular(folder / SEALS, 1 << 20))  # a pipe or device is no cache
        seals = data["segments"]
        return {k: v for k, v in seals.items() if isinstance(v, dict)} if isinstance(seals, dict) else {}
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return {}


def damaged(name: str, where: str, detail: str, path: Path | None = None) -> SaveError:
    """The one line a damaged history gives: what is wrong, and where to look next."""
    return SaveError(f"{name}'s history is damaged ({where}: {detail}); new answers are not recorded "
                     "until it is dealt with: run `ridge saves check` to see every problem", path=path)


def check_before_append(store, name: str, segments: list[Path], origin: str = GENESIS,
                        recorded: tuple[int, str] | None = None) -> tuple[dict[str, Any], str]:
    """Verify `name`'s whole history (its `segments`, in order, at least one) from `origin`, the
    hash its first attempt links to, to `recorded`, the (seq, hash) its header says it ends at;
    return the last segment's (data, text), already read and validated, for the append.
    SaveError if damaged, copied from another profile or cut short."""
    from saves.model import tail_problem

    folder = store.segments_dir(name)
    rel = lambda p: p.relative_to(store.dir).as_posix()  # noqa: E731
    seals = _read_seals(folder)
    for missing, detail in missing_segments(folder, segments, seals):
        raise damaged(name, rel(missing), detail, missing)
    changed = False
    prev_hash, next_seq = origin, 1
    ends: dict[int, str] = {0: origin}
    for path in segments[:-1]:
        try:
            stat = _stat(path)
        except OSError as exc:
            raise damaged(name, rel(path), exc.strerror or "cannot be read", path) from None
        seal = seals.get(path.name)
        if not (seal and all(seal.get(k) == stat[k] for k in _STAT_KEYS)
                and seal.get("first_seq") == next_seq and seal.get("prev_hash") == prev_hash):
            data, _ = _read(store, name, path)
            last = _verified(name, rel(path), path, data["attempts"], data.get("count"), prev_hash, next_seq)
            seal = {**stat, "first_seq": next_seq, "prev_hash": prev_hash,
                    "last_seq": last["seq"], "last_hash": last["hash"]}
            seals[path.name] = seal
            changed = True
        prev_hash, next_seq = seal["last_hash"], seal["last_seq"] + 1
        ends[seal["last_seq"]] = seal["last_hash"]
    path = segments[-1]
    data, text = _read(store, name, path, keep=True)  # the next append finds it unparsed if unchanged
    _verified(name, rel(path), path, data["attempts"], data.get("count"), prev_hash, next_seq)
    ends.update((r["seq"], r["hash"]) for r in data["attempts"])
    tail = tail_problem(data["attempts"][-1]["seq"], ends, recorded)
    if tail:
        raise damaged(name, rel(folder), tail, folder)
    if changed:
        keep = {p.name for p in segments[:-1]}
        try:
            atomic.write_atomic(folder / SEALS, json.dumps(
                {"segments": {k: v for k, v in seals.items() if k in keep}}, indent=0))
        except SaveError:
            pass  # only a cache: the next append reads those segments again
    return data, text


def missing_segments(folder: Path, segments: list[Path], seals: dict | None = None) -> list[tuple[Path, str]]:
    """(segment file, what is wrong) for every segment file that should be there and is not: a
    gap in the numbering, or segments after one that was sealed (a segment is sealed only once
    a later one exists, so a sealed last segment means the ones after it were deleted)."""
    numbers = [int(p.stem) for p in segments]
    found = [(folder / f"{n:06d}.toml", "this segment file is missing")
             for n in range(1, (max(numbers) if numbers else 0) + 1) if n not in set(numbers)]
    if seals is None:
        seals = _read_seals(folder)
    sealed = [int(k[:-5]) for k in seals if k.endswith(".toml") and k[:-5].isdigit() and k[:-5].isascii()]
    last = max(numbers, default=0)
    if sealed and max(sealed) >= last:
        found.append((folder / f"{max(sealed) + 1:06d}.toml",
                      f"segment {max(sealed):06d} was closed, but the segments after it are gone"))
    return found


def _read(store, name: str, path: Path, keep: bool = False) -> tuple[dict[str, Any], str]:
    try:
        return store._read_segment(path, keep)
    except SaveError as exc:
        message = str(exc)
        prefix = f"{exc.path}: "
        detail = message[len(prefix):] if exc.path and message.startswith(prefix) else message
        raise damaged(name, path.relative_to(store.dir).as_posix(), detail, path) from None


def _verified(name: str, where: str, path: Path, records: list[dict[str, Any]], stated: object,
              prev_hash: str, first_seq: int) -> dict[str, Any]:
    """The segment's last record, once its count and its links from `prev_hash` hold."""
    if not records:
        raise damaged(name, where, "it holds no attempts", path)
    if stated != len(records):
        raise damaged(name, where, f"it was written with {stated} attempts but holds {len(records)}", path)
    if first_seq == 1 and records[0].get("seq") == 1 and records[0].get("prev_hash") != prev_hash:
        raise damaged(name, where, "the history does not start from this profile: it was copied from another one", path)
    problems = verify_chain(records, prev_hash=prev_hash, first_seq=first_seq)
    if problems:
        first = problems[0]
        at = f"attempt {first.seq}: " if first.seq is not None else ""
        raise damaged(name, where, f"{at}{first.kind}: {first.detail}", path)
    return records[-1]


def ensure_intact(store, name: str) -> None:
    """SaveError (the same line an append would give) when `name`'s history is damaged; the app
    calls this when it opens a player, so it can ask before setting the files aside instead of
    failing at the first answer. Cheap: closed segments are checked by their seals."""
    with store._locked(name):
        header = store._read_header(name)  # upgrades an older profile first
        segments = store._segments(name)
        if header is not None and (segments or header.last_seq):
            if not segments:
                raise damaged(name, store.segments_dir(name).name,
                              f"the profile's header says its history ends at attempt {header.last_seq}; "
                              "the attempts folder is gone")
            check_before_append(store, name, segments, header.origin(name),
                                (header.last_seq, header.last_hash))
