"""The save model: what the files hold, validated strictly (unknown keys and wrong types are errors).

Schema version 2. Nothing here is a trusted total: points, scores and mastery are derived from
the attempts by `puzzles.stats`. Times are timezone-aware and stored in UTC.
"""
from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StringConstraints

from puzzles.scoring import CERTAINTIES, OUTCOMES, points
from saves.chain import GENESIS, ChainProblem, chain_hash, verify_chain
from saves.errors import SaveError
from saves.tomlio import stamp

SCHEMA_VERSION = 2
MODES = ("campaign", "drill", "exam", "match", "cli", "simulator", "hotseat")
INT64 = 2**63 - 1
# fsrs Card.to_dict() keys; those holding None are dropped on write and restored on read.
CARD_KEYS = ("card_id", "state", "step", "stability", "difficulty", "due", "last_review")

_NO_CONTROL = r"^[^\x00-\x1f\x7f]*$"
Id = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=_NO_CONTROL)]
Text = Annotated[str, StringConstraints(max_length=256, pattern=_NO_CONTROL)]
Hash = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Count = Annotated[int, Field(ge=0, le=INT64)]
Finite = Annotated[float, Field(ge=-1e300, le=1e300)]
Scalar = StrictBool | Annotated[int, Field(ge=-INT64 - 1, le=INT64)] | Finite | Annotated[
    str, StringConstraints(max_length=65536, pattern=_NO_CONTROL)]


def _utc(moment: _dt.datetime) -> _dt.datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("needs a UTC offset, like 2026-11-30T12:45:01Z")
    return moment.astimezone(_dt.timezone.utc)


def _utc_ms(moment: _dt.datetime) -> _dt.datetime:
    return _utc(moment).replace(microsecond=moment.microsecond // 1000 * 1000)


UtcTime = Annotated[_dt.datetime, AfterValidator(_utc)]
LockTime = Annotated[_dt.datetime, AfterValidator(_utc_ms)]

# defer_build: a model's validator is built when it first validates, not on import. Opening the
# game validates the header and the folder settings (and a returning player's segments), so the
# answer's models are built at the first answer rather than before the first frame (~8 ms).
_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


class Prediction(BaseModel):
    """What the player locked in. Parts a mode does not ask for stay empty."""

    model_config = _STRICT
    bottleneck: Text = ""
    lever: Text = ""
    gain_band: Text = ""
    reason: Text = ""
    certainty: Literal[CERTAINTIES]  # type: ignore[valid-type]
    estimates: dict[Id, Finite] = Field(default_factory=dict, max_length=64)


class AnswerKey(BaseModel):
    """The engine's answer when the attempt was graded, kept for exports and reports."""

    model_config = _STRICT
    bottleneck: Text
    best_lever: Text
    gain_band: Text
    reason: Text = ""


class GeneratorRef(BaseModel):
    """Where a generated puzzle came from, so it can be made again."""

    model_config = _STRICT
    seed: Annotated[int, Field(ge=-INT64 - 1, le=INT64)]
    difficulty: Annotated[int, Field(ge=0, le=1000)]
    index: Count


class AttemptIn(BaseModel):
    """One graded, locked-in answer, as a caller hands it to `SaveStore.record_attempt`."""

    model_config = _STRICT
    puzzle_id: Id
    module: Id
    mode: Literal[MODES]  # type: ignore[valid-type]
    prediction: Prediction
    outcome: Literal[OUTCOMES]  # type: ignore[valid-type]
    hints_used: Annotated[int, Field(ge=0, le=1000)] = 0
    locked_at: LockTime
    seconds_taken: Annotated[float, Field(ge=0, le=1e9)] | None = None
    key: AnswerKey | None = None
    generator: GeneratorRef | None = None

    @property
    def points(self) -> int:
        """Points earned, always derived from the outcome, certainty and hints."""
        return points(self.outcome, self.prediction.certainty, self.hints_used)

    def to_record(self) -> dict[str, Any]:
        """The plain dict written to TOML (and hashed): no None values, times in UTC."""
        rec: dict[str, Any] = {}
        if isinstance(self, Attempt):
            rec["seq"] = self.seq
        rec.update(puzzle_id=self.puzzle_id, module=self.module, mode=self.mode,
                   outcome=self.outcome, hints_used=self.hints_used, locked_at=stamp(self.locked_at))
        if self.seconds_taken is not None:
            rec["seconds_taken"] = self.seconds_taken
        if isinstance(self, Attempt):
            rec["prev_hash"] = self.prev_hash
            rec["hash"] = self.hash
        if self.generator is not None:
            rec["generator"] = self.generator.model_dump()
        pred = self.prediction.model_dump()
        if not pred["estimates"]:
            del pred["estimates"]
        rec["prediction"] = pred
        if self.key is not None:
            rec["key"] = self.key.model_dump()
        return rec


class Attempt(AttemptIn):
    """A recorded attempt: its place in the profile's history and its link in the hash chain."""

    seq: Annotated[int, Field(ge=1, le=INT64)]
    prev_hash: Hash
    hash: Hash

    @classmethod
    def link(cls, attempt: AttemptIn, seq: int, prev_hash: str) -> Attempt:
        """`attempt` as number `seq` of a history whose last hash is `prev_hash`."""
        body = attempt.to_record()
        body["seq"] = seq
        fields = {name: getattr(attempt, name) for name in AttemptIn.model_fields}
        return cls.model_validate({**fields, "seq": seq, "prev_hash": prev_hash,
                                   "hash": chain_hash(prev_hash, body)})


class SegmentFile(BaseModel):
    """`<name>.attempts/NNNNNN.toml`: a bounded run of a profile's attempts, in order."""

    model_config = _STRICT
    schema_version: Literal[2]
    profile: Text
    count: Count  # how many attempts the writer put here: a deleted last one shows
    attempts: list[Attempt] = Field(min_length=1)


class ProfileHeader(BaseModel):
    """`<name>.toml`: when the profile began, its settings and its spaced-repetition cards."""

    model_config = _STRICT
    schema_version: Literal[2]
    created: UtcTime
    settings: dict[Id, Scalar] = Field(default_factory=dict)
    review: dict[Id, dict[Id, Scalar]] = Field(default_factory=dict)

    def to_doc(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"schema_version": self.schema_version, "created": stamp(self.created)}
        if self.settings:
            doc["settings"] = dict(self.settings)
        if self.review:
            doc["review"] = {k: dict(v) for k, v in self.review.items()}
        return doc


class FolderSettings(BaseModel):
    """`settings.toml` in the save folder: which profile was used last."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True, defer_build=True)
    schema_version: Literal[2] = 2
    last_profile: Text | None = None


@dataclass(frozen=True)
class Profile:
    """One player's loaded save: validated attempts (oldest first), settings, review cards."""

    name: str
    created: _dt.datetime
    attempts: tuple[Attempt, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    review: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def review_card(self, concept_id: str) -> dict[str, Any] | None:
        """The stored card for `concept_id` as fsrs `Card.from_dict` wants it (None restored)."""
        card = self.review.get(concept_id)
        if card is None:
            return None
        return {**{k: None for k in CARD_KEYS}, **card}

    def review_cards(self) -> dict[str, dict[str, Any]]:
        """Every stored review card, keyed by concept id, None values restored."""
        return {cid: self.review_card(cid) or {} for cid in self.review}

    def chain_problems(self) -> list[ChainProblem]:
        """Breaks in the attempts' hash chain (empty when the history is as it was recorded)."""
        return list(self._chain_problems)

    @cached_property
    def _chain_problems(self) -> tuple[ChainProblem, ...]:
        return tuple(verify_chain([a.to_record() for a in self.attempts], prev_hash=GENESIS, first_seq=1))

    def counted_attempts(self) -> tuple[Attempt, ...]:
        """The attempts a score may count: every one except those edited by hand (contents that
        do not match their hash, a forged link, a repeated seq), which are flagged and never
        counted. Attempts around a deletion are genuine and still count."""
        edited = {p.index for p in self._chain_problems if p.kind == "edited"}
        return tuple(a for i, a in enumerate(self.attempts) if i not in edited) if edited else self.attempts


# Profile names double as file names, so they are kept short and plain.
_NAME = re.compile(r"^[\w\- ]{1,32}$")
RESERVED = {"settings", "catalog", "logs", "con", "prn", "aux", "nul",
            *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def is_profile_name(name: str) -> bool:
    """True for 1-32 letters, digits, spaces, hyphens or underscores, not reserved."""
    return (bool(_NAME.match(name)) and name == name.strip()
            and name.casefold() not in RESERVED)


def check_profile_name(name: object) -> str:
    """`name` normalised (NFC), or a SaveError saying what a profile name may hold."""
    if not isinstance(name, str):
        raise SaveError("a profile name must be text")
    norm = unicodedata.normalize("NFC", name)
    if not is_profile_name(norm):
        if norm.strip().casefold() in RESERVED:
            raise SaveError(f"{name!r} is reserved; choose another profile name")
        raise SaveError(f"bad profile name {name!r}: use 1-32 letters, digits, spaces, '-' or '_' "
                        "(no leading or trailing space)")
    return norm


def clean_card(card: Mapping[str, Any]) -> dict[str, Any]:
    """A review card without its None values (TOML has no null)."""
    return {k: v for k, v in card.items() if v is not None}
