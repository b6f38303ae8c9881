"""A live match's lobby on disk: one SQLite file (standard library, write-ahead log) per match.

It holds what must survive the host being killed: the match's settings and pin, its phase and
open question with that question's deadline, every player (nickname and token) and every locked
prediction with the host time it arrived. Scores are not stored: the room derives them from the
predictions. Each change is one short transaction, committed before the player hears back, so
an answer the host accepted is on disk (the WAL survives a killed process; `synchronous=FULL`
also survives a power cut).

Where: `<data folder>/lobby/<match>.sqlite`. A match that finished is kept under a dated name
when the same match is hosted again. The facilitator's report of a match goes to
`<data folder>/reports/<lobby file's name>/`.

A lobby that cannot be used (damaged, foreign, a full disk, a folder Ridge may not write) raises
LobbyError with one line saying which file and why; nothing already in it is changed.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
BUSY_SECONDS = 10.0  # a write waits this long for a busy lobby (a loaded machine) before it fails
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS players (
    token TEXT PRIMARY KEY, name TEXT NOT NULL, folded TEXT NOT NULL UNIQUE,
    joined REAL NOT NULL, removed INTEGER NOT NULL DEFAULT 0, seat TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS answers (
    idx INTEGER NOT NULL, token TEXT NOT NULL, prediction TEXT NOT NULL, received REAL NOT NULL,
    late INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (idx, token));
"""


class LobbyError(Exception):
    """A lobby file that cannot be used; the message says why, in one line (of at most 300
    characters, control characters written out, as every refusal)."""

    def __init__(self, message: str) -> None:
        from engine.bounds import refusal

        super().__init__(refusal(message))


@dataclass(frozen=True)
class Player:
    token: str
    name: str
    joined: float
    removed: bool = False
    seat: str = ""  # a hash of the secret the player's browser (or terminal) keeps, for rejoining


@dataclass(frozen=True)
class Locked:
    """One locked prediction as stored."""

    index: int
    token: str
    prediction: dict
    received: float
    late: bool


def lobby_path(folder: Path, match_id: str) -> Path:
    return Path(folder) / "lobby" / f"{match_id}.sqlite"


def kept_lobby(text: str, folder: Path) -> Path:
    """The lobby file a host names for a kept match's report: the path itself when it exists,
    else a bare name (with or without .sqlite) in the data folder's lobby/."""
    path = Path(text)
    if not path.exists() and "/" not in text and "\\" not in text:
        path = lobby_path(folder, text.removesuffix(".sqlite"))
    return path


def report_folder(folder: Path, lobby: Path) -> Path:
    """Where the report of the match kept in `lobby` is written, inside the host's data folder."""
    return Path(folder) / "reports" / Path(lobby).stem


def _why(exc: BaseException) -> str:
    """A storage failure in words a host can act on."""
    text = str(getattr(exc, "strerror", None) or exc)
    if "full" in text.lower():
        return f"the disk is full ({text})"
    if "readonly" in text.lower() or "permission" in text.lower() or "unable to open" in text.lower():
        return f"Ridge may not write there ({text})"
    return text


class LobbyStore:
    """The durable lobby. Every method is one transaction; readers see committed state only."""

    def __init__(self, path: Path | str, existing: bool = False) -> None:
        """Open (or, unless `existing`, create) the lobby at `path`."""
        self.path = Path(path)
        if existing and not self.path.is_file():
            raise LobbyError(f"{self.path}: no such lobby file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LobbyError(f"{self.path.parent}: cannot make the lobby folder: {_why(exc)}") from None
        try:
            if existing:
                with open(self.path, "rb") as head:
                    if head.read(16) != b"SQLite format 3\x00":
                        raise LobbyError(f"{self.path}: not a lobby file (not SQLite)")
            self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                      timeout=BUSY_SECONDS)
            if existing and self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None:
                self.db.close()
                raise LobbyError(f"{self.path}: not a Ridge lobby (it has no match in it)")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute(f"PRAGMA busy_timeout={int(BUSY_SECONDS * 1000)}")
            self.db.executescript(_SCHEMA)
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(players)")}
            if "seat" not in columns:  # a lobby written before seats existed
                self.db.execute("ALTER TABLE players ADD COLUMN seat TEXT NOT NULL DEFAULT ''")
            version = self.get("schema_version")
        except sqlite3.OperationalError as exc:
            raise LobbyError(f"{self.path}: cannot open the lobby: {_why(exc)}") from None
        except sqlite3.DatabaseError as exc:
            raise LobbyError(f"{self.path}: not a usable lobby file ({exc})") from None
        except OSError as exc:
            raise LobbyError(f"{self.path}: cannot read the lobby: {_why(exc)}") from None
        except ValueError as exc:  # a meta value that is not JSON: hand-edited or foreign
            raise LobbyError(f"{self.path}: damaged lobby file ({exc})") from None
        if version is None:
            self.set("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise LobbyError(f"{self.path}: lobby format {version!r}; this Ridge reads format {SCHEMA_VERSION}")

    def close(self) -> None:
        self.db.close()

    # -- settings and phase -------------------------------------------------------------------
    def get(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def set(self, key: str, value: Any) -> None:
        self.set_many({key: value})

    def set_many(self, values: dict[str, Any]) -> None:
        with self._tx():
            self.db.executemany("INSERT INTO meta (key, value) VALUES (?, ?) "
                                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                                [(k, json.dumps(v)) for k, v in values.items()])

    def meta(self) -> dict[str, Any]:
        try:
            return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}
        except (ValueError, TypeError, sqlite3.DatabaseError) as exc:
            raise LobbyError(f"{self.path}: damaged lobby file (its settings: {exc})") from None

    # -- players ------------------------------------------------------------------------------
    def add_player(self, token: str, name: str, folded: str, joined: float, seat: str = "") -> bool:
        """False when the (folded) name is already taken: the UNIQUE column decides, so two joins
        racing for one name cannot both win."""
        try:
            with self._tx():
                self.db.execute("INSERT INTO players (token, name, folded, joined, seat) VALUES (?, ?, ?, ?, ?)",
                                (token, name, folded, joined, seat))
        except sqlite3.IntegrityError:
            return False
        return True

    def remove_player(self, token: str) -> None:
        with self._tx():
            self.db.execute("UPDATE players SET removed = 1 WHERE token = ?", (token,))

    def players(self) -> list[Player]:
        try:
            rows = self.db.execute("SELECT token, name, joined, removed, seat FROM players ORDER BY joined, rowid")
            return [Player(str(t), str(n), float(j), bool(r), str(seat)) for t, n, j, r, seat in rows]
        except (ValueError, TypeError, sqlite3.DatabaseError) as exc:
            raise LobbyError(f"{self.path}: damaged lobby file (its players: {exc})") from None

    # -- answers ------------------------------------------------------------------------------
    def lock(self, index: int, token: str, prediction: dict, received: float, late: bool = False) -> bool:
        """Record a prediction; False when this player already has one for this question (the
        primary key decides, so a second answer can never replace the first)."""
        try:
            with self._tx():
                self.db.execute("INSERT INTO answers (idx, token, prediction, received, late) VALUES (?, ?, ?, ?, ?)",
                                (index, token, json.dumps(prediction, sort_keys=True), received, int(late)))
        except sqlite3.IntegrityError:
            return False
        return True

    def answers(self, index: int | None = None) -> list[Locked]:
        sql = "SELECT idx, token, prediction, received, late FROM answers"
        try:
            rows = self.db.execute(sql + " WHERE idx = ? ORDER BY received" if index is not None
                                   else sql + " ORDER BY idx, received", () if index is None else (index,))
            found = [Locked(int(i), t, json.loads(p), float(r), bool(late)) for i, t, p, r, late in rows]
        except (ValueError, TypeError, sqlite3.DatabaseError) as exc:
            raise LobbyError(f"{self.path}: damaged lobby file (its answers: {exc})") from None
        if any(not isinstance(a.prediction, dict) for a in found):
            raise LobbyError(f"{self.path}: damaged lobby file (an answer is not a prediction)")
        return found

    # -- plumbing -----------------------------------------------------------------------------
    def _tx(self):
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self):
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise LobbyError(f"cannot write the lobby: {_why(exc)}") from None
        return self.db

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.OperationalError as exc:
                self._rollback()
                raise LobbyError(f"cannot write the lobby: {_why(exc)}") from None
        self._rollback()
        if isinstance(value, sqlite3.OperationalError):
            raise LobbyError(f"cannot write the lobby: {_why(value)}") from None

    def _rollback(self) -> None:
        try:
            self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # nothing was open: the failed statement already ended it


def archive(path: Path) -> Path:
    """Move a finished match's lobby aside (with its WAL files) so the same match can start
    afresh; returns where it went."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.stem}-{stamp}{path.suffix}")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.stem}-{stamp}-{n}{path.suffix}")
        n += 1
    try:
        with sqlite3.connect(str(path)) as db:  # fold the WAL back into the file first
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    except sqlite3.DatabaseError:
        pass
    os.replace(path, target)
    for extra in ("-wal", "-shm"):
        side = Path(str(path) + extra)
        if side.exists():
            side.unlink()
    return target
