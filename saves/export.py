"""A player's history as CSV or Markdown, one row per attempt, points derived (never stored)."""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

from saves.model import Attempt, Profile

COLUMNS = ("seq", "locked_at", "puzzle_id", "module", "mode", "bottleneck", "lever", "gain_band",
           "reason", "certainty", "outcome", "points", "hints_used", "seconds_taken",
           "key_bottleneck", "key_lever", "key_gain_band", "key_reason")
FORMATS = ("csv", "md")


def rows(attempts: Iterable[Attempt]) -> list[dict[str, Any]]:
    """One flat dict per attempt, keyed by COLUMNS ("" where a value is absent)."""
    out = []
    for a in attempts:
        p, k = a.prediction, a.key
        out.append({
            "seq": a.seq, "locked_at": a.locked_at.isoformat().replace("+00:00", "Z"),
            "puzzle_id": a.puzzle_id, "module": a.module, "mode": a.mode,
            "bottleneck": p.bottleneck, "lever": p.lever, "gain_band": p.gain_band,
            "reason": p.reason, "certainty": p.certainty, "outcome": a.outcome,
            "points": a.points, "hints_used": a.hints_used,
            "seconds_taken": "" if a.seconds_taken is None else a.seconds_taken,
            "key_bottleneck": k.bottleneck if k else "", "key_lever": k.best_lever if k else "",
            "key_gain_band": k.gain_band if k else "", "key_reason": k.reason if k else "",
        })
    return out


def _cell(value: Any) -> Any:
    """Text a spreadsheet would run as a formula gets a leading apostrophe."""
    if isinstance(value, str) and value[:1] in ("=", "+", "@", "\t", "\r"):
        return "'" + value
    return value


def to_csv(profile: Profile) -> str:
    """The history as CSV with a header row."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows(profile.attempts):
        writer.writerow({k: _cell(v) for k, v in row.items()})
    return buf.getvalue()


def _md(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("|", "\\|")


def to_markdown(profile: Profile) -> str:
    """The history as a Markdown table under a heading naming the player."""
    lines = [f"# Ridge history: {_md(profile.name)}", "",
             f"{len(profile.attempts)} attempts.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows(profile.attempts):
        lines.append("| " + " | ".join(_md(row[c]) for c in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def is_export(head: bytes) -> bool:
    """True when a file starts as an export Ridge writes (its CSV header row, or its Markdown
    heading): the one kind of file an export may replace without --force."""
    csv_head = (",".join(COLUMNS) + "\n").encode()
    return head.startswith(csv_head) or head.startswith(b"# Ridge history: ")


def export(profile: Profile, fmt: str) -> str:
    """The history in `fmt` ("csv" or "md")."""
    if fmt == "csv":
        return to_csv(profile)
    if fmt == "md":
        return to_markdown(profile)
    raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
