"""The save model: what the files hold, validated strictly (unknown keys and wrong types are errors).

Schema version 3 (version 2 is still read, and upgraded by `SaveStore` once, see `saves.migrate`).
Nothing here is a trusted total: points, scores and mastery are derived from the attempts by
`puzzles.stats`, and every outcome is graded again from the prediction and the recorded key
(`Profile.counted_attempts`). Every file Ridge writes names itself on its first line
(`ridge = "profile"`, `"attempts"`, `"settings"`), so a foreign file that happens to carry one of
Ridge's names is told apart and never rewritten. Times are timezone-aware and stored in UTC.
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

SCHEMA_VERSION = 3
READS = (2, 3)  # versions read as they are; version 1 is migrated (saves.migrate)
MARKER = "ridge"  # the key every Ridge file starts with; its value says which kind of file
LEGACY_ENGINE = "before ridge-key/1"  # the engine named on attempts upgraded from version 2
MODES = ("campaign", "drill", "exam", "match", "cli", "simulator", "hotseat")
INT64 = 2**63 - 1
# fsrs Card.to_dict() keys; those holding None are dropped on write and restored on read.
CARD_KEYS = ("card_id", "state", "step", "stability", "difficulty", "due", "last_review")

_NO_CONTROL = r"^[^\x00-\x1f\x7f]*$"
Id = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=_NO_CONTROL)]
Text = Annotated[str, StringConstraints(max_length=256, pattern=_NO_CONTROL)]
Hash = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Fingerprint = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]
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
    bands: list[Text] = Field(default_factory=list, max_length=8)  # every band accepted (version 3)
    reasons: list[Text] = Field(default_factory=list, max_length=32)  # every reason accepted (version 3)
    # What the reason half was graded on (from Ridge 0.1 schema 3 on): whether a reason id was asked,
    # and the engine's value of each estimate (the napkin yes/no as 1 or 0) that counted toward the
    # reason, -1 where the engine had none; with them an outcome is graded again exactly.
    reason_asked: bool | None = None
    reason_values: dict[Id, Finite] | None = Field(default=None, max_length=64)

    def to_doc(self) -> dict[str, Any]:
        doc = self.model_dump()
        for name in ("bands", "reasons"):
            if doc[name]:
                doc[name] = list(doc[name])
            else:
                del doc[name]
        for name in ("reason_asked", "reason_values"):  # absent from older keys: their fingerprints hold
            if doc[name] is None:
                del doc[name]
        return doc


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
    engine: Text = ""  # the engine version that keyed it (empty before version 3)
    fingerprint: Fingerprint | None = None  # of engine and key: `puzzles.attempts.fingerprint`

    def fingerprint_matches(self) -> bool:
        """The recorded key is the one the fingerprint was made of (False with no fingerprint)."""
        from puzzles.attempts import fingerprint  # only when a score is derived: opening a player stays light

        return self.fingerprint is not None and self.fingerprint == fingerprint(
            self.engine, self.key.to_doc() if self.key is not None else {})

    def regraded(self, legacy: bool = False) -> AttemptIn | None:
        """This attempt at the outcome its prediction earns against its own recorded key
        (`puzzles.attempts.supported_outcome`); None when its fingerprint does not match, so it
        does not count at all. `legacy`: read from a version 2 history that was not upgraded
        (damaged), whose attempts had no fingerprint to check."""
        from puzzles.attempts import supported_outcome

        if not (legacy and self.fingerprint is None) and not self.fingerprint_matches():
            return None
        key = self.key.to_doc() if self.key is not None else None
        outcome = supported_outcome(self.prediction.model_dump(), key, self.outcome)
        return self if outcome == self.outcome else self.model_copy(update={"outcome": outcome})

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
            rec["key"] = self.key.to_doc()
        if self.engine:
            rec["engine"] = self.engine
        if self.fingerprint is not None:
            rec["fingerprint"] = self.fingerprint
        return rec


class Attempt(AttemptIn):
    """A recorded attempt: its place in the profile's history and its link in the hash chain."""

    seq: Annotated[int, Field(ge=1, le=INT64)]
    prev_hash: Hash
    hash: Hash

    @classmethod
    def link(cls, attempt: AttemptIn, seq: int, prev_hash: str) -> Attempt:
        """`attempt` as number `seq` of a history whose last hash is `prev_hash`; one that does
        not name its engine is fingerprinted here with the engine running now."""
        fields = {name: getattr(attempt, name) for name in AttemptIn.model_fields}
        if attempt.fingerprint is None:
            from puzzles.attempts import engine_version, fingerprint

            fields["engine"] = engine_version()
            fields["fingerprint"] = fingerprint(fields["engine"], attempt.key.to_doc() if attempt.key else {})
            attempt = AttemptIn.model_validate(fields)
        body = attempt.to_record()
        body["seq"] = seq
        return cls.model_validate({**fields, "seq": seq, "prev_hash": prev_hash,
                                   "hash": chain_hash(prev_hash, body)})


class SegmentFile(BaseModel):
    """`<name>.attempts/NNNNNN.toml`: a bounded run of a profile's attempts, in order."""

    model_config = _STRICT
    ridge: Literal["attempts"] | None = None  # required from version 3 (`_check_marker`)
    schema_version: Literal[READS]  # type: ignore[valid-type]
    profile: Text
    count: Count  # how many attempts the writer put here: a deleted last one shows
    attempts: list[Attempt] = Field(min_length=1)


class ProfileHeaderV2(BaseModel):
    """`<name>.toml` as version 2 wrote it (read, then upgraded once)."""

    model_config = _STRICT
    schema_version: Literal[2]
    created: UtcTime
    settings: dict[Id, Scalar] = Field(default_factory=dict)
    review: dict[Id, dict[Id, Scalar]] = Field(default_factory=dict)


class ProfileHeader(BaseModel):
    """`<name>.toml`: who the profile is (its name, a random id and when it began: the chain's
    first link hangs from them, so a history copied from another profile does not verify), where
    its history ends (the last seq and hash, so a history cut short shows), its settings and its
    spaced-repetition cards."""

    model_config = _STRICT
    ridge: Literal["profile"]
    schema_version: Literal[3]
    id: Fingerprint
    created: UtcTime
    last_seq: Count = 0
    last_hash: Hash
    settings: dict[Id, Scalar] = Field(default_factory=dict)
    review: dict[Id, dict[Id, Scalar]] = Field(default_factory=dict)

    def origin(self, name: str) -> str:
        """The hash the profile's first attempt links to."""
        return origin_hash(name, self.id, self.created)

    def to_doc(self) -> dict[str, Any]:
        doc: dict[str, Any] = {MARKER: self.ridge, "schema_version": self.schema_version, "id": self.id,
                               "created": stamp(self.created), "last_seq": self.last_seq,
                               "last_hash": self.last_hash}
        if self.settings:
            doc["settings"] = dict(self.settings)
        if self.review:
            doc["review"] = {k: dict(v) for k, v in self.review.items()}
        return doc


def origin_hash(name: str, profile_id: str, created: _dt.datetime) -> str:
    """The first link of a profile's chain: its name, id and creation time, hashed."""
    return chain_hash(GENESIS, {"profile": name, "id": profile_id, "created": stamp(created)})


class FolderSettings(BaseModel):
    """`settings.toml` in the save folder: which profile was used last. A version 2 file (no
    marker, nothing but these two keys) is still Ridge's; anything else is refused, never
    rewritten."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)
    ridge: Literal["settings"] | None = None
    schema_version: Literal[READS] = SCHEMA_VERSION  # type: ignore[valid-type]
    last_profile: Text | None = None

    def to_doc(self) -> dict[str, Any]:
        doc = {MARKER: "settings", "schema_version": SCHEMA_VERSION}
        return {**doc, "last_profile": self.last_profile} if self.last_profile else doc


@dataclass(frozen=True)
class Profile:
    """One player's loaded save: validated attempts (oldest first), settings, review cards."""

    name: str
    created: _dt.datetime
    attempts: tuple[Attempt, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    review: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    origin: str = GENESIS  # the hash the first attempt links to (GENESIS for version 2)
    last: tuple[int, str] | None = None  # (seq, hash) the header records as the history's end

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
        """Breaks in the attempts' hash chain, from the profile's origin to the end its header
        records (empty when the history is as it was recorded)."""
        return list(self._chain_problems)

    @cached_property
    def _chain_problems(self) -> tuple[ChainProblem, ...]:
        problems = verify_chain([a.to_record() for a in self.attempts], prev_hash=self.origin, first_seq=1)
        if self.attempts and self.attempts[0].seq == 1 and self.attempts[0].prev_hash != self.origin:
            problems.insert(0, ChainProblem(0, self.attempts[0].seq, "copied",
                                            "the history does not start from this profile: it was copied "
                                            "from another one"))
        hashes = {0: self.origin, **{a.seq: a.hash for a in self.attempts}}
        tail = tail_problem(self.attempts[-1].seq if self.attempts else 0, hashes, self.last)
        if tail is not None:
            problems.append(ChainProblem(len(self.attempts), None, "deleted", tail))
        return tuple(problems)

    def counted_attempts(self) -> tuple[Attempt, ...]:
        """The attempts a score may count, each at the outcome its own prediction earns against
        the key it was answered under (`AttemptIn.regraded`): never one edited by hand (contents
        that do not match their hash, a forged link, a repeated seq), one whose key does not match
        its fingerprint, nor any of a history copied from another profile. Attempts around a
        deletion are genuine and still count (and nothing is appended until it is dealt with)."""
        return self._counted

    @cached_property
    def _counted(self) -> tuple[Attempt, ...]:
        problems = self._chain_problems
        if any(p.kind == "copied" for p in problems):
            return ()
        edited = {p.index for p in problems if p.kind == "edited"}
        out = []
        for i, a in enumerate(self.attempts):
            graded = a.regraded(legacy=self.last is None) if i not in edited else None
            if graded is not None:
                out.append(graded)
        return tuple(out)

    def regraded_count(self) -> int:
        """Attempts whose stored outcome is not what their prediction earns (counted as earned)."""
        stored = {a.seq: a.outcome for a in self.attempts}
        return sum(stored.get(a.seq) != a.outcome for a in self._counted)


def tail_problem(last_seq: int, hash_at: Mapping[int, str], recorded: tuple[int, str] | None) -> str | None:
    """What is wrong with a history whose last attempt is `last_seq` (`hash_at`: seq -> hash, for
    the attempts at hand; seq 0 is the origin) when its header recorded `recorded` as its end;
    None when they agree, or when the header records nothing (version 2). Attempts past the
    header's end are appends cut off before the header was written: not damage."""
    if recorded is None:
        return None
    want_seq, want_hash = recorded
    if last_seq < want_seq:
        missing = f"attempt {want_seq} is" if last_seq + 1 == want_seq else f"attempts {last_seq + 1}-{want_seq} are"
        return f"the profile's header says its history ends at attempt {want_seq}; {missing} gone"
    if want_seq in hash_at and hash_at[want_seq] != want_hash:
        return f"attempt {want_seq} is not the one the profile's header recorded as its last"
    return None


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
