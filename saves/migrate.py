"""Upgrading older save files. Version 1 was one flat file per player with every attempt inline,
flat prediction fields and stored `score` / `points` totals; version 2 derives totals instead and
splits attempts into chained segment files; version 3 hangs the chain from the profile's identity,
records the history's end in the header, marks every file as Ridge's and gives each attempt its
key's fingerprint, so outcomes are graded again from the record (`puzzles.attempts`).

An upgraded attempt keeps the key it was answered under, as recorded, fingerprinted with the
engine named `LEGACY_ENGINE`: its outcome then counts when its prediction can earn it against that
key. A version 1 attempt recorded no key, so nothing can be checked: its outcome stands.

A migration keeps the original byte for byte as `<name>.v1-backup.toml` (dated if that name is
taken by a different file), writes the new attempt files, and only then replaces `<name>.toml`:
a crash at any point leaves the version 1 file in charge, and the next load migrates again.

This module only translates (`upgrade_v1`) and names the backup (`backup_path`); the store does
the writing, in that order, under the profile's lock, so the two modules never import each other.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from puzzles.scoring import CERTAINTIES, OUTCOMES
from saves.model import LEGACY_ENGINE, AttemptIn, Id, LockTime, Prediction, Scalar, Text, UtcTime
from saves.tomlio import validation_error

_V1 = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


class V1Attempt(BaseModel):
    """An attempt as version 1 wrote it."""

    model_config = _V1
    puzzle: Id
    module: Id
    answered_at: LockTime
    bottleneck: Text = ""
    lever: Text = ""
    gain: Text = ""
    reason: Text = ""
    certainty: Literal[CERTAINTIES]  # type: ignore[valid-type]
    outcome: Literal[OUTCOMES]  # type: ignore[valid-type]
    points: int  # stored by version 1, never trusted: version 2 derives points
    hints: Annotated[int, Field(ge=0, le=1000)] = 0
    seconds: Annotated[float, Field(ge=0, le=1e9)] | None = None


class V1File(BaseModel):
    """`<name>.toml` as version 1 wrote it."""

    model_config = _V1
    schema_version: Literal[1]
    player: Text
    created: UtcTime
    score: int  # a stored total: dropped
    streak: int = 0  # likewise
    settings: dict[Id, Scalar] = Field(default_factory=dict)
    attempts: list[V1Attempt] = Field(default_factory=list)


def parse_v1(path: Path, data: dict[str, Any], text: str) -> V1File:
    """The validated version 1 file, or SaveError naming the line and field."""
    try:
        return V1File.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, text, data, exc) from None


def upgrade_attempt(old: V1Attempt) -> AttemptIn:
    """A version 1 attempt in version 2 terms (mode unknown then: campaign; no answer key kept)."""
    from puzzles.attempts import fingerprint

    return AttemptIn(
        puzzle_id=old.puzzle, module=old.module, mode="campaign", outcome=old.outcome,
        prediction=Prediction(bottleneck=old.bottleneck, lever=old.lever, gain_band=old.gain,
                              reason=old.reason, certainty=old.certainty),
        hints_used=old.hints, locked_at=old.answered_at, seconds_taken=old.seconds,
        engine=LEGACY_ENGINE, fingerprint=fingerprint(LEGACY_ENGINE, {}))


def upgrade_v2_attempt(old: AttemptIn) -> AttemptIn:
    """A version 2 attempt with its recorded key fingerprinted (unlinked: the store re-links)."""
    from puzzles.attempts import fingerprint

    key = old.key.to_doc() if old.key is not None else {}
    fields = {n: getattr(old, n) for n in AttemptIn.model_fields}
    return AttemptIn.model_validate({**fields, "engine": LEGACY_ENGINE,
                                     "fingerprint": fingerprint(LEGACY_ENGINE, key)})


def backup_path(folder: Path, name: str, original: bytes) -> Path | None:
    """Where to keep the original; None when an identical backup is already there."""
    path = folder / f"{name}.v1-backup.toml"
    if path.exists():
        if path.read_bytes() == original:
            return None
        when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
        path = folder / f"{name}.v1-backup-{when}.toml"
    return path


def upgrade_v1(path: Path, data: dict[str, Any], text: str) -> V1Upgrade:
    """A version 1 file's attempts in today's terms, with its creation time and settings
    (nothing is written here; the store links and writes them)."""
    old = parse_v1(path, data, text)
    return V1Upgrade([upgrade_attempt(a) for a in old.attempts], old.created, dict(old.settings))


@dataclass(frozen=True)
class V1Upgrade:
    attempts: list[AttemptIn]
    created: _dt.datetime
    settings: dict[str, Any]
