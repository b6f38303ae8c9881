"""The hash chain that makes edits to a history evident.

Each record carries `prev_hash` (the previous record's `hash`, or GENESIS for the first) and
`hash` = sha256 over `prev_hash` and a canonical JSON form of the record's other fields. Changing,
removing or reordering a record breaks the chain at that point. It is tamper *evidence*: someone
who recomputes every hash after an edit is not caught (that would need a secret key).

Pure functions over plain dicts, so competition result files can reuse them.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

GENESIS = "0" * 64
_SKIP = ("hash", "prev_hash")


def _json_default(value: object) -> str:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise TypeError("a chained record's times need a UTC offset")
        return value.astimezone(_dt.timezone.utc).isoformat()
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    raise TypeError(f"cannot hash a value of type {type(value).__name__}")


def canonical(record: Mapping[str, object]) -> str:
    """The record without `hash` and `prev_hash`, as sorted compact JSON (times in UTC)."""
    body = {k: v for k, v in record.items() if k not in _SKIP}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=_json_default)


def chain_hash(prev_hash: str, record: Mapping[str, object]) -> str:
    """sha256 hex of `prev_hash`, a newline, and the record's canonical form."""
    return hashlib.sha256(f"{prev_hash}\n{canonical(record)}".encode("utf-8")).hexdigest()


def _seq(record: Mapping[str, object]) -> int | None:
    seq = record.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


@dataclass(frozen=True)
class ChainProblem:
    """One break in a chain: the record's position in the list, its seq, and what is wrong."""

    index: int
    seq: int | None
    kind: str  # "edited", "deleted" or "reordered"
    detail: str


def verify_chain(records: Sequence[Mapping[str, object]], *, prev_hash: str | None = GENESIS,
                 first_seq: int | None = 1) -> list[ChainProblem]:
    """Every break in `records`, which should run seq first_seq, first_seq+1, ... from `prev_hash`.

    Pass `prev_hash=None` / `first_seq=None` when the records start mid-chain and their first link
    cannot be checked. Where a record sits: a repeated seq is "edited", one out of place
    "reordered", a gap before it "deleted". What it holds: a hash that does not match its contents,
    or (when it is in place) its link to the record before, is "edited". A record can have both.
    """
    seqs = [_seq(record) for record in records]
    counts: dict[int, int] = {}
    for seq in seqs:
        if seq is not None:
            counts[seq] = counts.get(seq, 0) + 1
    problems: list[ChainProblem] = []
    prev, expected = prev_hash, first_seq
    for index, (record, seq) in enumerate(zip(records, seqs)):
        place: tuple[str, str] | None = None
        if seq is None:
            place = ("edited", "its seq is missing or not a whole number")
        elif counts[seq] > 1:
            place = ("edited", f"attempt {seq} appears {counts[seq]} times")
        elif expected is not None and seq != expected and expected in counts:
            place = ("reordered", f"expected attempt {expected} here")
        elif expected is not None and seq > expected:
            missing = f"attempt {expected}" if seq == expected + 1 else f"attempts {expected}-{seq - 1}"
            place = ("deleted", f"{missing} missing before it")
        elif expected is not None and seq < expected:
            place = ("reordered", f"expected attempt {expected} here")
        if place:
            problems.append(ChainProblem(index, seq, *place))
        stored_prev, stored_hash = record.get("prev_hash"), record.get("hash")
        try:
            actual = chain_hash(str(stored_prev), record)
        except (TypeError, ValueError):
            actual = None
        if actual is None or actual != stored_hash:
            problems.append(ChainProblem(index, seq, "edited", "its contents do not match its hash"))
        elif place is None and prev is not None and stored_prev != prev:
            problems.append(ChainProblem(index, seq, "edited",
                                         "its link to the attempt before it does not match"))
        prev = stored_hash if isinstance(stored_hash, str) else None
        expected = seq + 1 if seq is not None else None
    return problems
