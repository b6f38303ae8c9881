"""SaveStore: the one way in and out of a save folder (layout and guarantees: see `saves`)."""
from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from saves import atomic
from saves.chain import GENESIS, verify_chain
from saves.errors import SaveError
from saves.history import check_before_append, damaged, missing_segments
from saves.locations import data_dir
from saves.model import (INT64, MARKER, READS, SCHEMA_VERSION, Attempt, AttemptIn, FolderSettings,
                         Profile, ProfileHeader, ProfileHeaderV2, SegmentFile, check_profile_name,
                         clean_card, is_profile_name, origin_hash, tail_problem)
from saves.tomlio import dumps, parse_toml, read_bytes, read_toml, stamp, validation_error

SEGMENT_SIZE = 32  # attempts per segment file: bounds the cost of recording one
SETTINGS_FILE = "settings.toml"
# The first lines of a segment as `_write_segment` writes them; group 2 is the count.
_SEGMENT_HEAD = re.compile(r'\A(ridge = "attempts"\nschema_version = 3\nprofile = "[^"\\\n]*"\n)count = (\d+)\n')
# What each of Ridge's files says it is on its first line (model.MARKER).
_KINDS = {ProfileHeader: "profile", SegmentFile: "attempts", ProfileHeaderV2: None}


class NotUpgraded(SaveError):
    """A version 2 history that does not verify: it is read as it is (edits not counted) and
    never upgraded, since upgrading re-links the chain and would hide the damage."""


@dataclass(frozen=True)
class Problem:
    """Something `check` found: the file (relative to the save folder), the attempt, what is wrong."""

    file: str
    seq: int | None
    kind: str  # "edited", "deleted", "reordered", "copied", "orphaned" or "bad-file"
    detail: str

    def __str__(self) -> str:
        where = f"attempt {self.seq}: " if self.seq is not None else ""
        return f"{self.file}: {where}{self.kind}: {self.detail}"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "seq": self.seq, "kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class CheckReport:
    """What `SaveStore.check_report` looked at, and every problem it found."""

    profiles: list[str]
    attempts: int
    problems: list[Problem]


def _now() -> _dt.datetime:
    now = _dt.datetime.now(_dt.timezone.utc)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


class SaveStore:
    """Profiles in one save folder. Every write is atomic and made under the profile's lock."""

    def __init__(self, save_dir: Path | str | None = None, *, segment_size: int = SEGMENT_SIZE,
                 lock_timeout: float = 30.0):
        self.dir = data_dir(save_dir)
        self.segment_size = segment_size
        self.lock_timeout = lock_timeout
        # path -> (the file's exact bytes, the validated header, settings or open segment they
        # hold): those files are still read every time, but parsed again only when their bytes
        # differ from the last ones read or written here. Recording an attempt then parses no
        # whole file (it parsed three), and anything another process or a person changed is
        # parsed and checked afresh, since changed bytes never match.
        self._known: dict[Path, tuple[bytes, Any]] = {}

    # -- where things are ---------------------------------------------------------------------

    def header_path(self, name: str) -> Path:
        return self.dir / f"{name}.toml"

    def segments_dir(self, name: str) -> Path:
        return self.dir / f"{name}.attempts"

    def _lock(self, stem: str) -> atomic.FileLock:
        return atomic.FileLock(self.dir / f".{stem}.lock", self.lock_timeout)

    @contextmanager
    def _locked(self, name: str) -> Iterator[None]:
        atomic.make_dir(self.dir)
        with self._lock(name):
            yield

    def _segments(self, name: str) -> list[Path]:
        """The profile's segment files in order (temporary files left by a crash are skipped)."""
        try:
            entries = os.listdir(self.segments_dir(name))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SaveError(f"could not list {self.segments_dir(name)}: {exc.strerror or exc}",
                            path=self.segments_dir(name)) from None
        numbered = sorted((int(e[:-5]), e) for e in entries
                          if e.endswith(".toml") and e[:-5].isdigit() and e[:-5].isascii())
        return [self.segments_dir(name) / e for _, e in numbered]

    @staticmethod
    def _sweep_temps(folder: Path, *targets: str) -> None:
        """Remove temporary files a killed writer left for `targets` (all of them when none are
        named); only called with the lock that guards those targets held."""
        try:
            entries = os.listdir(folder)
        except OSError:
            return
        for entry in entries:
            if entry.endswith(atomic.TEMP_SUFFIX) and (
                    not targets or any(atomic.is_temp_of(entry, t) for t in targets)):
                path = folder / entry
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)

    # -- profiles -------------------------------------------------------------------------------

    def profiles(self) -> list[str]:
        """Names of the profiles in the folder, sorted (empty when the folder does not exist)."""
        try:
            entries = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise SaveError(f"could not read the save folder {self.dir}: {exc.strerror or exc}",
                            path=self.dir) from None
        names = [e[:-5] for e in entries if e.endswith(".toml") and is_profile_name(e[:-5])]
        return sorted(names, key=lambda n: (n.casefold(), n))

    def _resolve(self, name: object) -> str:
        """`name` checked, matched case-insensitively to an existing profile if there is one."""
        name = check_profile_name(name)
        if self.header_path(name).exists():
            return name
        folded = name.casefold()
        for existing in self.profiles():
            if existing.casefold() == folded:
                return existing
        return name

    def create_profile(self, name: str) -> Profile:
        """A new, empty profile; SaveError if the name is not allowed or already taken."""
        name = check_profile_name(name)
        with self._locked(name):
            taken = [p for p in self.profiles() if p.casefold() == name.casefold()]
            if taken:
                raise SaveError(f"a profile named {taken[0]!r} already exists in {self.dir}")
            header = self._new_header(name)
        self.remember_last(name)
        return Profile(name=name, created=header.created)

    def _new_header(self, name: str, created: _dt.datetime | None = None,
                    settings: Mapping[str, Any] | None = None, review: Mapping[str, Any] | None = None,
                    write: bool = True) -> ProfileHeader:
        """A fresh identity for `name` (a random id), with an empty history; written unless told."""
        created = created or _now()
        profile_id = os.urandom(16).hex()
        header = ProfileHeader(ridge="profile", schema_version=SCHEMA_VERSION, id=profile_id, created=created,
                               last_seq=0, last_hash=origin_hash(name, profile_id, created),
                               settings=dict(settings or {}), review=dict(review or {}))
        if write:
            self._write_header(name, header)
        return header

    def _unchanged(self, path: Path, raw: bytes) -> Any:
        """What `path` held when its bytes were last `raw` here (see `_known`), else None."""
        known = self._known.get(path)
        return known[1] if known is not None and known[0] == raw else None

    def _write_header(self, name: str, header: ProfileHeader) -> None:
        path, raw = self.header_path(name), dumps(header.to_doc()).encode("utf-8")
        self._known.pop(path, None)
        atomic.write_atomic(path, raw)
        self._known[path] = (raw, header)  # what reading `raw` back gives (tests/saves check it)

    def _read_header(self, name: str) -> ProfileHeader | None:
        """The validated header, None if the profile does not exist, upgrading a version 1 or 2
        profile first (NotUpgraded for a version 2 history that does not verify).

        Call with the profile's lock held (an upgrade writes).
        """
        path = self.header_path(name)
        raw = read_bytes(path)
        if raw is None:
            return None
        if (known := self._unchanged(path, raw)) is not None:
            return known
        got = parse_toml(path, raw)
        version = got[0].get("schema_version")
        if _is_int(version) and version in (1, 2):
            if version == 1:
                self._migrate_v1(name, *got)
            else:
                self._migrate_v2(name, *got)
            got = read_toml(path)
            if got is None:  # pragma: no cover - the migration has just written it
                raise SaveError(f"{path}: vanished during migration", path=path)
            return self._validate_header(path, *got)
        header = self._validate_header(path, *got)
        self._known[path] = (raw, header)
        return header

    def _migrate_v1(self, name: str, data: dict[str, Any], text: str) -> None:
        """Turn profile `name`'s version 1 file into the current version; lock held. The original
        is kept first, then the history, and the header last: the switch to the new version."""
        from saves.migrate import backup_path, upgrade_v1

        path = self.header_path(name)
        old = upgrade_v1(path, data, text)
        header = self._new_header(name, old.created, old.settings, write=False)
        history = _relink(old.attempts, header.origin(name))
        original = path.read_bytes()
        backup = backup_path(self.dir, name, original)
        if backup is not None:
            atomic.write_atomic(backup, original)
        self._write_history(name, history)
        self._write_header(name, _ended(header, history))

    def _migrate_v2(self, name: str, data: dict[str, Any], text: str) -> None:
        """Upgrade a version 2 profile once; lock held. Its history must verify from the start
        (else NotUpgraded). Each attempt is re-linked from the profile's new identity and keeps
        its key with a fingerprint (`saves.migrate.upgrade_v2_attempt`); the version 2 files are
        kept as `<name>.v2-backup.toml` and `<name>.v2-backup.attempts`, and the header is
        written last, so a crash at any point leaves version 2 in charge and the next load
        upgrades again."""
        from saves.migrate import upgrade_v2_attempt

        path = self.header_path(name)
        old = self._validated(ProfileHeaderV2, path, data, text)
        final, kept = self.segments_dir(name), self.dir / f"{name}.v2-backup.attempts"
        if kept.is_dir():  # an upgrade was cut off: the kept folder is the version 2 history
            if final.exists():
                shutil.rmtree(final)
            os.replace(kept, final)
        attempts = self._verified_v2(name)
        header = self._new_header(name, old.created, old.settings, old.review, write=False)
        history = _relink([upgrade_v2_attempt(a) for a in attempts], header.origin(name))
        backup = self.dir / f"{name}.v2-backup.toml"
        original = path.read_bytes()
        if not (backup.exists() and backup.read_bytes() == original):
            atomic.write_atomic(backup, original)
        self._write_history(name, history, keep_old_as=kept)
        self._write_header(name, _ended(header, history))

    def _verified_v2(self, name: str) -> list[Attempt]:
        """Every attempt of a version 2 history, or NotUpgraded when it does not verify."""
        rel = lambda p: p.relative_to(self.dir).as_posix()  # noqa: E731
        segments = self._segments(name)
        for seg, detail in missing_segments(self.segments_dir(name), segments):
            raise NotUpgraded(str(damaged(name, rel(seg), detail)))
        attempts: list[Attempt] = []
        for seg in segments:
            got = read_toml(seg)
            if got is None:
                raise NotUpgraded(str(damaged(name, rel(seg), "vanished while being read")))
            try:
                segment = self._validate_segment(seg, *got)
            except SaveError as exc:
                raise NotUpgraded(str(damaged(name, rel(seg), _strip(exc)))) from None
            if segment.count != len(segment.attempts):
                raise NotUpgraded(str(damaged(name, rel(seg), f"it was written with {segment.count} "
                                              f"attempts but holds {len(segment.attempts)}")))
            attempts.extend(segment.attempts)
        problems = verify_chain([a.to_record() for a in attempts], prev_hash=GENESIS, first_seq=1)
        if problems:
            first = problems[0]
            raise NotUpgraded(str(damaged(name, f"{name}.attempts", f"attempt {first.seq}: {first.kind}: {first.detail}")))
        return attempts

    @staticmethod
    def _validated(model, path: Path, data: dict[str, Any], text: str):
        """`data` as `model` (a header or a segment), after the marker and version checks;
        SaveError names the file, line and field when it does not validate."""
        _check_version(path, data)
        _check_marker(path, data, _KINDS.get(model))
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise validation_error(path, text, data, exc) from None

    @classmethod
    def _validate_header(cls, path: Path, data: dict[str, Any], text: str) -> ProfileHeader:
        return cls._validated(ProfileHeader, path, data, text)

    def _header_for_write(self, name: str) -> ProfileHeader:
        """The header (created when missing); call with the profile's lock held."""
        header = self._read_header(name)
        return header if header is not None else self._new_header(name)

    def _read_segment(self, path: Path, keep: bool = False) -> tuple[dict[str, Any], str]:
        """(data, text) of a segment file, validated; SaveError if it is damaged. Parsed only when
        its bytes differ from the last ones read or written here (`_known`, which holds it after
        this read with `keep`: the open segment, not the closed ones); callers never change what
        they are given."""
        raw = read_bytes(path)
        if raw is None:
            raise SaveError(f"{path}: vanished while being read", path=path)
        if (known := self._unchanged(path, raw)) is not None:
            return known
        got = parse_toml(path, raw)
        self._validate_segment(path, *got)
        if keep:
            self._known[path] = (raw, got)
        return got

    @classmethod
    def _validate_segment(cls, path: Path, data: dict[str, Any], text: str) -> SegmentFile:
        return cls._validated(SegmentFile, path, data, text)

    def load(self, name: str) -> Profile:
        """The profile `name`, validated. Never moves or rewrites a file, but upgrades an older
        version once (keeping the originals as `<name>.v1-backup.toml`, `<name>.v2-backup.*`); a
        version 2 history that does not verify is read as it is. SaveError names the file at fault."""
        name = self._resolve(name)
        path = self.header_path(name)
        got = read_toml(path)
        if got is None:
            listing = ", ".join(self.profiles()) or "none"
            raise SaveError(f"no profile named {name!r} in {self.dir} (profiles: {listing})")
        version = got[0].get("schema_version")
        if _is_int(version) and version in (1, 2):
            try:
                with self._locked(name):
                    header = self._read_header(name)
            except NotUpgraded:
                return self._load_v2(name, path, *got)
            assert header is not None
        else:
            header = self._validate_header(path, *got)
        return Profile(name=name, created=header.created, attempts=self._attempts(name),
                       settings=header.settings, review=header.review, origin=header.origin(name),
                       last=(header.last_seq, header.last_hash))

    def _attempts(self, name: str) -> tuple[Attempt, ...]:
        """Every attempt in `name`'s segment files, each file validated."""
        attempts: list[Attempt] = []
        for seg in self._segments(name):
            got = read_toml(seg)
            if got is None:
                raise SaveError(f"{seg}: vanished while being read", path=seg)
            attempts.extend(self._validate_segment(seg, *got).attempts)
        return tuple(attempts)

    def _load_v2(self, name: str, path: Path, data: dict[str, Any], text: str) -> Profile:
        """A version 2 profile as it is (its history damaged, so not upgraded)."""
        header = self._validated(ProfileHeaderV2, path, data, text)
        return Profile(name=name, created=header.created, attempts=self._attempts(name),
                       settings=header.settings, review=header.review)

    def record_attempt(self, profile_name: str, attempt: AttemptIn | Mapping[str, Any]) -> Attempt:
        """Append `attempt` to the profile (created if missing). Durable when it returns; safe
        against other processes recording to the same profile at the same time. Refused (one
        line) when the header or the history does not verify: nothing is appended to damage."""
        if not isinstance(attempt, AttemptIn):
            try:
                attempt = AttemptIn.model_validate(attempt)
            except ValidationError as exc:
                err = exc.errors(include_url=False)[0]
                field = ".".join(str(p) for p in err.get("loc", ()))
                raise SaveError(f"attempt not recorded: {field}: {err.get('msg')}") from None
        name = self._resolve(profile_name)
        with self._locked(name):
            header = self._header_for_write(name)
            origin, recorded = header.origin(name), (header.last_seq, header.last_hash)
            folder = self.segments_dir(name)
            self._sweep_temps(self.dir, f"{name}.toml", folder.name)
            self._sweep_temps(folder)
            segments = self._segments(name)
            if segments:
                path = segments[-1]
                data, text = check_before_append(self, name, segments, origin, recorded)  # never papers over damage
                last = data["attempts"][-1]
                if last["seq"] >= INT64:
                    raise SaveError(f"{path}: attempt numbers are used up (last is {last['seq']})",
                                    path=path)
                new = Attempt.link(attempt, last["seq"] + 1, last["hash"])
                if len(data["attempts"]) >= self.segment_size:
                    self._known.pop(path, None)  # closed: from now on its seal stands for it
                    path = folder / f"{int(path.stem) + 1:06d}.toml"
                    self._write_segment(path, name, [new.to_record()])
                else:
                    self._append_to_segment(path, name, data, text, new)
            else:
                problem = tail_problem(0, {0: origin}, recorded)
                if problem:
                    raise damaged(name, folder.name, problem, folder)
                atomic.make_dir(folder)
                new = Attempt.link(attempt, 1, origin)
                self._write_segment(folder / f"{1:06d}.toml", name, [new.to_record()])
            self._write_header(name, header.model_copy(update={"last_seq": new.seq, "last_hash": new.hash}))
        self.remember_last(name)
        return new

    def _write_segment(self, path: Path, name: str, records: list[dict[str, Any]]) -> None:
        doc = {MARKER: "attempts", "schema_version": SCHEMA_VERSION, "profile": name,
               "count": len(records), "attempts": records}
        self._known.pop(path, None)
        atomic.write_atomic(path, dumps(doc))

    def _append_to_segment(self, path: Path, name: str, data: dict[str, Any], text: str,
                           new: Attempt) -> None:
        """Rewrite a (validated) segment with `new` added. When the file has the shape this
        module writes, its text is kept as it is and the new table appended, which is cheaper
        than writing it all again and keeps any comments; otherwise it is written afresh."""
        count = len(data["attempts"])
        m = _SEGMENT_HEAD.match(text)
        if m and int(m.group(2)) == count and data.get("count") == count:
            body = text[m.end():].rstrip("\n")
            table = dumps({"attempts": [new.to_record()]})
            new_text = f"{m.group(1)}count = {count + 1}\n{body}\n\n{table}"
            raw = new_text.encode("utf-8")
            self._known.pop(path, None)
            atomic.write_atomic(path, raw)
            # What parsing the whole new file gives: the same document with the new count and one
            # more [[attempts]] table, parsed from its own text (so its times read back as they
            # will next time); the next append then parses nothing (tests/saves check it).
            added = parse_toml(path, table.encode("utf-8"))[0]["attempts"]
            self._known[path] = (raw, ({**data, "count": count + 1, "attempts": [*data["attempts"], *added]},
                                       new_text))
            return
        records = [{**rec, "locked_at": stamp(rec["locked_at"])}  # keep the T...Z form for times already there
                   for rec in data["attempts"]]
        self._write_segment(path, name, [*records, new.to_record()])

    def _write_history(self, name: str, attempts: list[Attempt], keep_old_as: Path | None = None) -> None:
        """Write a whole history as fresh segment files (used by migration); lock held. An
        attempts folder already there is moved to `keep_old_as`, or (a version 1 upgrade that
        was cut off: the version 1 file still rules) removed."""
        final = self.segments_dir(name)
        staging = self.dir / atomic.temp_name(final.name)
        atomic.make_dir(staging)
        for start in range(0, len(attempts), self.segment_size):
            chunk = [a.to_record() for a in attempts[start:start + self.segment_size]]
            self._write_segment(staging / f"{start // self.segment_size + 1:06d}.toml", name, chunk)
        if final.exists():
            if keep_old_as is not None:
                os.replace(final, keep_old_as)
            else:
                shutil.rmtree(final)
        os.replace(staging, final)
        atomic.fsync_dir(self.dir)

    def update_settings(self, name: str, **values: Any) -> dict[str, Any]:
        """Set profile settings (a value of None removes the key); returns all settings."""
        name = self._resolve(name)
        with self._locked(name):
            header = self._header_for_write(name)
            settings = {**header.settings, **values}
            settings = {k: v for k, v in settings.items() if v is not None}
            new = self._revalidate(header, settings=settings)
            self._write_header(name, new)
        return dict(new.settings)

    def save_review_state(self, name: str, concept_id: str, card: Mapping[str, Any]) -> None:
        """Store a spaced-repetition card (fsrs `Card.to_dict()`) for `concept_id`."""
        name = self._resolve(name)
        with self._locked(name):
            header = self._header_for_write(name)
            review = {**header.review, concept_id: clean_card(card)}
            self._write_header(name, self._revalidate(header, review=review))

    @staticmethod
    def _revalidate(header: ProfileHeader, **changes: Any) -> ProfileHeader:
        data = {**header.model_dump(), **changes}
        try:
            return ProfileHeader.model_validate(data)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in err.get("loc", ()))
            raise SaveError(f"not saved: {field}: {err.get('msg')}") from None

    def quarantine(self, name: str) -> list[Path]:
        """Move a damaged profile's files aside under dated names; returns where they went.

        The UI calls this only after telling the player; the name is then free for a fresh start.
        """
        name = check_profile_name(name)
        when = _now().strftime("%Y%m%dT%H%M%S")
        moved: list[Path] = []
        with self._locked(name):
            suffix, n = f"damaged-{when}", 1
            while (self.dir / f"{name}.{suffix}.toml").exists() or (
                    self.dir / f"{name}.{suffix}.attempts").exists():
                n += 1
                suffix = f"damaged-{when}-{n}"
            for src, dst in ((self.header_path(name), self.dir / f"{name}.{suffix}.toml"),
                             (self.segments_dir(name), self.dir / f"{name}.{suffix}.attempts")):
                if src.exists():
                    os.replace(src, dst)
                    moved.append(dst)
            atomic.fsync_dir(self.dir)
        return moved

    # -- the folder's settings -----------------------------------------------------------------

    def _read_folder_settings(self) -> FolderSettings:
        path = self.dir / SETTINGS_FILE
        raw = read_bytes(path)
        if raw is None:
            return FolderSettings()
        if (known := self._unchanged(path, raw)) is not None:
            return known
        settings = self._parse_folder_settings(path, raw)
        self._known[path] = (raw, settings)
        return settings

    @staticmethod
    def _parse_folder_settings(path: Path, raw: bytes) -> FolderSettings:
        got = parse_toml(path, raw)
        data = got[0]
        legacy = set(data) <= {"schema_version", "last_profile"} and data.get("schema_version") == 2
        if data.get(MARKER) != "settings" and not legacy:
            raise SaveError(f"{path}: not Ridge's settings file (it has no `ridge = \"settings\"` line), "
                            "so Ridge leaves it as it is", path=path)
        try:
            return FolderSettings.model_validate(data)
        except ValidationError as exc:
            raise validation_error(path, got[1], data, exc) from None

    def _folder_settings(self) -> FolderSettings | None:
        """settings.toml, or None when it is damaged (it is only a convenience)."""
        try:
            return self._read_folder_settings()
        except SaveError:
            return None

    def has_profile(self, name: str) -> bool:
        """True when a profile is saved under `name`, in any case (two names never differ by case alone)."""
        return name.casefold() in {n.casefold() for n in self.profiles()}

    def load_if_any(self, name: str) -> Profile | None:
        """`name`'s profile when one is saved, else None: a name typed in a mode's set-up has no
        save until its first answer is recorded."""
        return self.load(name) if self.has_profile(name) else None

    def last_profile(self) -> str | None:
        """The profile used last in this folder, if settings.toml names one that exists."""
        settings = self._folder_settings()
        name = settings.last_profile if settings else None
        if name and is_profile_name(name) and self.header_path(name).exists():
            return name
        return None

    def remember_last(self, name: str) -> None:
        """Note `name` in settings.toml as the profile used last (skipped if that file is damaged)."""
        current = self._folder_settings()
        if current is None or current.last_profile == name:
            return  # damaged settings are never overwritten; unchanged ones need no write
        with self._lock("settings"):
            self._sweep_temps(self.dir, SETTINGS_FILE)
            current = self._folder_settings()
            if current is None or current.last_profile == name:
                return
            doc = current.model_copy(update={"last_profile": name}).to_doc()
            atomic.write_atomic(self.dir / SETTINGS_FILE, dumps(doc))

    def choose_profile(self, requested: str | None = None) -> str | None:
        """The profile a command means: `requested`, else the only one, else the last used.

        None when the folder has no profiles; SaveError when several exist and none was named.
        """
        if requested is not None:
            return self._resolve(requested)
        names = self.profiles()
        if not names:
            return None
        if len(names) == 1:
            return names[0]
        last = self.last_profile()
        if last in names:
            return last
        raise SaveError(f"{len(names)} profiles in {self.dir} ({', '.join(names)}); "
                        "choose one with --profile NAME")

    # -- checking -------------------------------------------------------------------------------

    def check(self) -> list[Problem]:
        """Every problem in the folder: damaged files, and attempts edited, deleted or reordered."""
        return self.check_report().problems

    def check_report(self) -> CheckReport:
        """`check`, with the profiles and the number of attempts looked at. Writes nothing."""
        problems: list[Problem] = []
        names = self.profiles()
        total = 0
        try:
            self._read_folder_settings()
        except SaveError as exc:
            problems.append(Problem(SETTINGS_FILE, None, "bad-file", _strip(exc)))
        for name in names:
            count, found = self._check_profile(name)
            total += count
            problems.extend(found)
        problems.extend(self._orphans(names))
        return CheckReport(names, total, problems)

    def _orphans(self, names: list[str]) -> list[Problem]:
        """An attempts folder whose profile header is gone: its answers belong to nobody."""
        try:
            entries = sorted(os.listdir(self.dir))
        except OSError:
            return []
        found = []
        for entry in entries:
            stem = entry[:-len(".attempts")]
            if entry.endswith(".attempts") and is_profile_name(stem) and stem not in names \
                    and (self.dir / entry).is_dir():
                files = len(self._segments(stem))
                found.append(Problem(entry, None, "orphaned", f"{files} attempt file(s) but no profile "
                                     f"{stem}.toml: the header was deleted or moved"))
        return found

    def _check_profile(self, name: str) -> tuple[int, list[Problem]]:
        problems: list[Problem] = []
        rel = lambda p: p.relative_to(self.dir).as_posix()  # noqa: E731
        path = self.header_path(name)
        # version 2: the chain starts at GENESIS, no end recorded; a header that does not read: unknown
        origin: str | None = GENESIS
        recorded: tuple[int, str] | None = None
        try:
            got = read_toml(path)
            if got is not None and _is_v1(got[0]):
                from saves.migrate import parse_v1

                v1 = parse_v1(path, *got)
                return len(v1.attempts), []  # no chain before version 2; migrated on next load
            if got is not None and got[0].get("schema_version") == 2:
                self._validated(ProfileHeaderV2, path, *got)
            elif got is not None:
                header = self._validate_header(path, *got)
                origin, recorded = header.origin(name), (header.last_seq, header.last_hash)
        except SaveError as exc:
            problems.append(Problem(rel(path), None, "bad-file", _strip(exc)))
            origin = None
        # Runs of records whose links can be checked; a damaged file breaks the run.
        runs: list[list[tuple[Path, dict[str, Any]]]] = [[]]
        count = 0
        segments = self._segments(name)
        for seg, detail in missing_segments(self.segments_dir(name), segments):
            problems.append(Problem(rel(seg), None, "deleted", detail))
        for seg in segments:
            data: dict[str, Any] | None = None
            try:
                got = read_toml(seg)
                if got is not None:
                    data = got[0]
                    self._validate_segment(seg, *got)
            except SaveError as exc:
                problems.append(Problem(rel(seg), None, "bad-file", _strip(exc)))
            records = data.get("attempts") if isinstance(data, dict) else None
            if not (isinstance(records, list) and all(
                    isinstance(r, dict) and _is_int(r.get("seq")) for r in records)):
                runs.append([])
                continue
            count += len(records)
            runs[-1].extend((seg, r) for r in records)
            stated = data.get("count") if isinstance(data, dict) else None
            if _is_int(stated) and stated != len(records):
                kind = "deleted" if stated > len(records) else "edited"
                problems.append(Problem(rel(seg), None, kind, f"the file was written with "
                                        f"{stated} attempts but holds {len(records)}"))
        for i, run in enumerate(runs):
            first = i == 0
            if first and origin and run and run[0][1].get("seq") == 1 and run[0][1].get("prev_hash") != origin:
                problems.append(Problem(rel(run[0][0]), run[0][1].get("seq"), "copied",
                                        "the history does not start from this profile: it was copied "
                                        "from another one"))
            for cp in verify_chain([r for _, r in run], prev_hash=origin if first else None,
                                   first_seq=1 if first else None):
                problems.append(Problem(rel(run[cp.index][0]), cp.seq, cp.kind, cp.detail))
        records = [r for run in runs for _, r in run]
        if len(runs) == 1 and origin:  # the history reads whole: does it end where the header says?
            hashes = {0: origin, **{r["seq"]: r.get("hash") for r in records}}
            tail = tail_problem(records[-1]["seq"] if records else 0, hashes, recorded)
            if tail:
                problems.append(Problem(rel(self.segments_dir(name)), None, "deleted", tail))
        return count, problems


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_v1(data: dict[str, Any]) -> bool:
    version = data.get("schema_version")
    return _is_int(version) and version == 1


def _check_version(path: Path, data: dict[str, Any]) -> None:
    """SaveError unless `data` says it is written in a schema version read here."""
    version = data.get("schema_version")
    if MARKER not in data and "schema_version" not in data:
        raise SaveError(f"{path}: not a Ridge save (no `ridge =` or `schema_version =` line), so Ridge "
                        "leaves it as it is", path=path)
    if not _is_int(version):
        raise SaveError(f"{path}: schema_version is missing or not a whole number", path=path)
    if version > SCHEMA_VERSION:
        raise SaveError(f"{path}: written by a newer Ridge (schema {version}); this one reads up "
                        f"to {SCHEMA_VERSION}", path=path)
    if version not in READS:
        raise SaveError(f"{path}: unknown schema_version {version}", path=path)


def _check_marker(path: Path, data: dict[str, Any], kind: str | None) -> None:
    """From version 3 every file says what it is: a profile, attempts or settings. A file
    without the right marker is someone else's, and is refused, never rewritten."""
    if kind is None or data.get("schema_version", SCHEMA_VERSION) < 3 and MARKER not in data:
        return
    found = data.get(MARKER)
    if found != kind:
        said = f"says ridge = {found!r}" if found is not None else "has no `ridge =` line"
        raise SaveError(f"{path}: not a Ridge {kind} file (it {said}), so Ridge leaves it as it is", path=path)


def _relink(attempts: list[AttemptIn], origin: str) -> list[Attempt]:
    """`attempts` chained afresh from `origin`, numbered from 1 (used by upgrades)."""
    history: list[Attempt] = []
    prev = origin
    for seq, attempt in enumerate(attempts, start=1):
        fields = {n: getattr(attempt, n) for n in AttemptIn.model_fields}
        linked = Attempt.link(AttemptIn.model_validate(fields), seq, prev)
        history.append(linked)
        prev = linked.hash
    return history


def _ended(header: ProfileHeader, history: list[Attempt]) -> ProfileHeader:
    """`header` recording the end of `history`."""
    if not history:
        return header
    return header.model_copy(update={"last_seq": history[-1].seq, "last_hash": history[-1].hash})


def _strip(exc: SaveError) -> str:
    """A SaveError's line without the file name in front (a Problem names the file itself)."""
    message = str(exc)
    prefix = f"{exc.path}: "
    return message[len(prefix):] if exc.path and message.startswith(prefix) else message
