"""Reading TOML files into plain data, and turning what goes wrong into one clear SaveError line."""
from __future__ import annotations

import datetime as _dt
import re
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from engine.bounds import MAX_DEPTH, MAX_SAVE_BYTES, NotAFile, TooLarge, data_depth, read_regular
from saves.errors import SaveError

MAX_BYTES = MAX_SAVE_BYTES


class Stamp(_dt.datetime):
    """A UTC time that tomli-w writes as ISO-8601 with a `T` and a `Z`: 2026-11-30T12:45:01.510Z."""

    def __str__(self) -> str:
        digits = 3 if self.microsecond % 1000 == 0 else 6
        return (f"{self.year:04d}-{self.month:02d}-{self.day:02d}T{self.hour:02d}:{self.minute:02d}"
                f":{self.second:02d}" + f".{self.microsecond:06d}"[: digits + 1] + "Z")


def stamp(moment: _dt.datetime) -> Stamp:
    """`moment` (timezone-aware) in UTC, written by tomli-w in ISO-8601 form."""
    u = moment.astimezone(_dt.timezone.utc)
    return Stamp(u.year, u.month, u.day, u.hour, u.minute, u.second, u.microsecond,
                 tzinfo=_dt.timezone.utc)


def dumps(doc: dict[str, Any]) -> str:
    """TOML text for `doc` (tomli-w; None values must already be dropped)."""
    return tomli_w.dumps(doc)


def read_toml(path: Path) -> tuple[dict[str, Any], str] | None:
    """(data, text) of the TOML file at `path`, None if it does not exist; SaveError if unreadable."""
    raw = read_bytes(path)
    return None if raw is None else parse_toml(path, raw)


def read_bytes(path: Path) -> bytes | None:
    """The bytes of the save file at `path`, None if it does not exist; SaveError if unreadable."""
    try:
        return read_regular(path, MAX_BYTES)  # capped, and never blocks on a pipe
    except FileNotFoundError:
        return None
    except NotAFile as exc:
        raise SaveError(f"{path}: is {exc.kind}, so not a Ridge save", path=path) from None
    except TooLarge:
        raise SaveError(f"{path}: larger than {MAX_BYTES >> 20} MiB, so not a Ridge save", path=path) from None
    except OSError as exc:
        raise SaveError(f"could not read {path}: {exc.strerror or exc}", path=path) from None


def parse_toml(path: Path, raw: bytes) -> tuple[dict[str, Any], str]:
    """(data, text) parsed from `raw`, the bytes of `path`, or SaveError naming the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SaveError(f"{path}: line {line}: not UTF-8 text", path=path, line=line) from None
    try:
        data = tomllib.loads(text)
        if data_depth(data) > MAX_DEPTH:
            raise SaveError(f"{path}: nested more than {MAX_DEPTH} levels deep, so not a Ridge save", path=path)
        return data, text
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column \d+\)", msg)
        line = int(m.group(1)) if m else None
        if line is None and "end of document" in msg:
            line = text.count("\n") + 1
        where = f"line {line}: " if line else ""
        reason = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", msg)
        raise SaveError(f"{path}: {where}not valid TOML ({reason[:80]})", path=path,
                        line=line) from None
    except (RecursionError, ValueError, OverflowError, MemoryError) as exc:
        raise SaveError(f"{path}: not valid TOML ({type(exc).__name__})", path=path) from None


LIST_KEY = "attempts"  # the array of tables whose entries errors are reported by seq
_MESSAGES = {"missing": "missing", "extra_forbidden": "unknown field"}


def _line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line of the field at `loc` in `text` (the TOML we are explaining)."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    if len(loc) >= 2 and loc[0] == LIST_KEY and isinstance(loc[1], int):
        header = re.compile(rf"^\s*\[\[\s*{LIST_KEY}\s*\]\]")
        starts = [i for i, line in enumerate(lines) if header.match(line)]
        if loc[1] >= len(starts):
            return None
        start = starts[loc[1]]
        end = starts[loc[1] + 1] if loc[1] + 1 < len(starts) else len(lines)
    keys = [part for part in loc if isinstance(part, str) and part != LIST_KEY]
    if not keys:
        return start + 1 if start else None
    name = re.escape(keys[-1])
    key = re.compile(rf'^\s*"?{name}"?\s*=|[{{,]\s*{name}\s*=')
    for i in range(start, end):
        if key.search(lines[i]):
            return i + 1
    return start + 1 if start else None


def validation_error(path: Path, text: str, data: Any, exc: Any) -> SaveError:
    """One SaveError line for a pydantic ValidationError `exc` on `data` read from `path`."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    parts: list[str] = []
    if len(loc) >= 2 and loc[0] == LIST_KEY and isinstance(loc[1], int):
        seq = None
        try:
            seq = data[LIST_KEY][loc[1]].get("seq")
        except (AttributeError, IndexError, KeyError, TypeError):
            pass
        label = seq if isinstance(seq, int) and not isinstance(seq, bool) else f"#{loc[1] + 1}"
        parts.append(f"attempt {label}")
        field = ".".join(str(p) for p in loc[2:])
    else:
        field = ".".join(str(p) for p in loc)
    msg = _MESSAGES.get(first.get("type", "")) or first.get("msg", "invalid")
    if first.get("type") not in ("missing", "extra_forbidden") and "input" in first:
        shown = repr(first["input"])
        msg += f" (found {shown[:40]}{'…' if len(shown) > 40 else ''})"
    if field:
        parts.append(f"{field}: {msg}")
    else:
        parts.append(msg)
    line = _line_of(text, loc)
    where = f"line {line}: " if line else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    text_line = f"{path}: {where}{', '.join(parts)}{more}".replace("\n", " ")
    return SaveError(text_line, path=path, line=line)
