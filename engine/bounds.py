"""Bounds on everything that comes from outside: numbers, text, file sizes and nesting depth.

Every input surface (flags, config.json, catalogs, packs, saves, match files) calls these, so a
hostile or broken input becomes one RidgeError line naming the field, never a traceback, a
non-finite result or a process that eats memory. Pure Python and cheap to import: `ridge solve`
loads it on every run.
"""
from __future__ import annotations

import math
import os

from engine.errors import RidgeError
from engine.text import (_STRIP, MAX_REFUSAL, MAX_SHOWN, clean_text, escaped_text,  # noqa: F401 - re-exported
                         has_controls, one_line, refusal, shown)

# Bytes read from one input file at most: real inputs are far smaller (a config.json is a few
# KiB, a catalog or pack tens of KiB, a save segment of 32 attempts about 20 KiB).
MAX_CONFIG_BYTES = 1 << 20
MAX_CATALOG_BYTES = 4 << 20
MAX_PACK_BYTES = 8 << 20
MAX_SAVE_BYTES = 16 << 20
MAX_DEPTH = 32  # nesting of arrays and tables; real files use three or four levels



def is_ascii_whole(text: str, most_digits: int = 18) -> bool:
    """`text` is a whole number as a player types it: an optional sign, then 1 to `most_digits`
    ASCII digits. Checked by hand rather than by a regular expression, because `ridge solve` reads
    its numeric flags with this and compiling a pattern costs more than the whole check."""
    body = text[1:] if text[:1] in ("+", "-") else text
    return 0 < len(body) <= most_digits and body.isascii() and body.isdigit()


def is_ascii_decimal(text: str, exponent_digits: int = 4) -> bool:
    """`text` is decimal notation in ASCII: an optional sign, digits with at most one point (at
    least one digit), then optionally e or E, a sign and 1 to `exponent_digits` digits. No 'nan',
    'inf', underscores, spaces or other scripts' digits, all of which float() would read."""
    if not text.isascii():
        return False
    mantissa, e, exponent = (text[1:] if text[:1] in ("+", "-") else text).lower().partition("e")
    if e:
        exponent = exponent[1:] if exponent[:1] in ("+", "-") else exponent
        if not (len(exponent) <= exponent_digits and exponent.isdigit()):
            return False
    whole, _, fraction = mantissa.partition(".")
    return (whole + fraction).isdigit()


def ascii_number(text: str) -> float:
    """`text` as a number written in ASCII digits (float() also reads '١٢', '１２' and 'nan');
    ValueError otherwise. Callers strip thousands separators first if they allow them."""
    if not is_ascii_decimal(text):
        raise ValueError(f"not a number in digits 0-9: {text!r}")
    return float(text)


def number(value: object, where: str, *, low: float | None = None, high: float | None = None,
           integer: bool = False, low_open: bool = False) -> float | int:
    """`value` checked to be a finite number (whole when `integer`) within [low, high];
    otherwise RidgeError naming `where`. Booleans are not numbers; floats that are whole
    are accepted as integers (JSON writers emit 32.0)."""
    kind = "a whole number" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RidgeError(f"{where} must be {kind}, got {shown(repr(value), 60)}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RidgeError(f"{where} must be a finite number, got {value}")
        if integer:
            if not value.is_integer():
                raise RidgeError(f"{where} must be a whole number, got {value}")
            value = int(value)
    elif not integer:
        if abs(value) > 1e300:
            raise RidgeError(f"{where} is far too large ({len(str(abs(value)))} digits)")
    too_small = low is not None and (value <= low if low_open else value < low)
    too_big = high is not None and value > high
    if too_small or too_big:
        if low is not None and high is not None:
            bound = f"between {low:g} and {high:g}" if not low_open else f"above {low:g} and at most {high:g}"
        elif low is not None:
            bound = f"above {low:g}" if low_open else f"at least {low:g}"
        else:
            bound = f"at most {high:g}"
        digits = len(str(abs(value))) if isinstance(value, int) else 0
        if digits > 30:
            got = f"a number with {digits} digits"
        else:
            got = f"{value:g}" if isinstance(value, float) else str(value)
        raise RidgeError(f"{where} must be {bound}, got {got}")
    return value


class NotAFile(OSError):
    """The path names a folder, device, pipe or socket: `kind` says which."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"is {kind}, not a file")
        self.kind = kind


class TooLarge(OSError):
    """The file holds more than the cap allows."""


def read_regular(path: str | os.PathLike[str], limit: int, head: bool = False) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (with `head`, just its
    first `limit` bytes). Opened without blocking and checked before reading, so a pipe never
    hangs the read and /dev/zero never fills memory. Raises FileNotFoundError, NotAFile,
    TooLarge or another OSError (ValueError for a NUL in the path)."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a pipe"), (stat.S_ISSOCK, "a socket"))
            raise NotAFile(next((k for test, k in kinds if test(mode)), "a device"))
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if size > limit:
        if head:
            return data[:limit]
        raise TooLarge(f"larger than {limit // 1024:,} KiB")
    return data


def read_capped(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """The bytes of the file at `path`, refusing folders, devices and pipes and anything larger
    than `limit` (see read_regular), as one RidgeError line naming the file."""
    name = shown(os.fspath(path))
    try:
        return read_regular(path, limit)
    except FileNotFoundError:
        raise RidgeError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise RidgeError(f"{name}: is a folder, not a {what}") from None
    except NotAFile as exc:
        raise RidgeError(f"{name}: is {exc.kind}, not a {what}") from None
    except TooLarge as exc:
        raise RidgeError(f"{name}: {exc}; not a {what}") from None
    except OSError as exc:
        raise RidgeError(f"{name}: cannot read: {exc.strerror or type(exc).__name__}") from None
    except ValueError as exc:  # an embedded NUL in the path
        raise RidgeError(f"{name}: not a usable path ({exc})") from None


def decode_utf8(data: bytes, name: object) -> str:
    """`data` as UTF-8 text, or RidgeError naming the line where it stops being UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise RidgeError(f"{shown(name)}: line {line}: not UTF-8 text") from None


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets inside strings ignored).
    Checked before parsing, because the parser recurses once per level."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def data_depth(value: object, limit: int = MAX_DEPTH) -> int:
    """How deeply lists and dicts nest in parsed data, walked without recursion; stops counting
    once past `limit`."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def load_toml_text(text: str, name: object) -> dict:
    """Parse TOML with its depth bounded: RidgeError for invalid TOML or nesting past MAX_DEPTH."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RidgeError(f"{shown(name)}: not valid TOML: {one_line(exc, 200)}") from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        raise RidgeError(f"{shown(name)}: not valid TOML ({type(exc).__name__}: "
                         "nested or sized past its limits)") from None
    if data_depth(data) > MAX_DEPTH:
        raise RidgeError(f"{shown(name)}: nested more than {MAX_DEPTH} levels deep")
    return data


def finite_tree(value: object) -> bool:
    """True when no float anywhere in `value` (nested lists, tuples and dicts) is NaN or infinite."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True


# What a real transformer can be, generously: a catalog entry or config.json outside these is a
# typo or an attack, and would otherwise make the arithmetic overflow or run for ever.
MODEL_LIMITS = {
    "layers": (1, 10_000), "hidden": (1, 1_000_000), "intermediate": (0, 10_000_000),
    "heads": (1, 100_000), "kv_heads": (1, 100_000), "head_dim": (1, 100_000),
    "vocab": (1, 100_000_000), "context": (1, 1_000_000_000), "norms_per_layer": (0, 16),
    "sliding_window": (0, 1_000_000_000), "sliding_layers": (0, 10_000),
    "experts": (0, 100_000), "experts_per_token": (0, 100_000),
    "expert_intermediate": (0, 10_000_000), "shared_experts": (0, 1_000), "dense_layers": (0, 10_000),
    "q_lora_rank": (0, 100_000), "kv_lora_rank": (0, 100_000), "qk_nope_head_dim": (0, 100_000),
    "qk_rope_head_dim": (0, 100_000), "v_head_dim": (0, 100_000),
    "published_params": (0, 10**15), "published_active": (0, 10**15),
}
GPU_LIMITS = {"memory_gib": (0.0, 1e6), "bandwidth_tbps": (0.0, 1e4), "peak_tflops": (0.0, 1e7)}


def check_model_fields(fields: dict, prefix: str, label) -> None:
    """RidgeError unless `fields` (ModelSpec field names) describe a model that can exist:
    sizes in range, KV heads dividing the heads, experts per token between 1 and the experts,
    dense layers within the layer count. Messages start with `prefix` (the file) and name a
    field as `label(field)`, the way its file spells it."""
    for name, (low, high) in MODEL_LIMITS.items():
        if name in fields:
            fields[name] = number(fields[name], prefix + label(name), low=low, high=high, integer=True)
    heads, kv_heads = fields.get("heads", 1), fields.get("kv_heads", 1)
    if not fields.get("kv_lora_rank"):
        if kv_heads > heads:
            raise RidgeError(f"{prefix}{label('kv_heads')} ({kv_heads}) cannot exceed {label('heads')} ({heads})")
        if heads % kv_heads:
            raise RidgeError(f"{prefix}{label('kv_heads')} ({kv_heads}) must divide {label('heads')} ({heads}) evenly")
    experts, per_token = fields.get("experts", 0), fields.get("experts_per_token", 0)
    if experts:
        if not 1 <= per_token <= experts:
            raise RidgeError(f"{prefix}{label('experts_per_token')} must be between 1 and {label('experts')} "
                             f"({experts}), got {per_token}")
        if not fields.get("expert_intermediate"):
            raise RidgeError(f"{prefix}{label('expert_intermediate')} must be positive for a mixture of experts")
    elif per_token:
        raise RidgeError(f"{prefix}{label('experts_per_token')} is {per_token} but the model has no experts")
    if fields.get("sliding_layers", 0) > fields.get("layers", 0):
        raise RidgeError(f"{prefix}{label('sliding_layers')} ({fields['sliding_layers']}) cannot exceed "
                         f"{label('layers')} ({fields.get('layers')})")
    if fields.get("dense_layers", 0) > fields.get("layers", 0):
        raise RidgeError(f"{prefix}{label('dense_layers')} ({fields['dense_layers']}) cannot exceed "
                         f"{label('layers')} ({fields.get('layers')})")
    if fields.get("kv_lora_rank") and not fields.get("v_head_dim"):
        raise RidgeError(f"{prefix}{label('v_head_dim')} must be positive for latent attention")


def first_control(value: object, allow: str = "\n\t") -> tuple[str, str] | None:
    """(dotted key, the character as U+XXXX) of the first string in parsed data that holds a
    control character other than those in `allow`, or None. For authored files (packs), where
    a terminal escape in a title is refused rather than silently changed."""
    stack: list[tuple[str, object]] = [("", value)]
    keep = set(map(ord, allow))
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            for ch in item:
                if ord(ch) in _STRIP and ord(ch) not in keep:
                    return where or "(top level)", f"U+{ord(ch):04X}"
        elif isinstance(item, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in reversed(list(item.items())))
            for k in item:
                if isinstance(k, str) and has_controls(k):
                    return f"{where}.{shown(repr(k), 40)}" if where else shown(repr(k), 40), "in a key"
        elif isinstance(item, list):
            stack.extend((f"{where}.{i}", v) for i, v in reversed(list(enumerate(item))))
    return None


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Append `text` to the regular file at `path` (created if missing), never blocking on a pipe
    and never writing into a device: OSError (NotAFile) for anything but a regular file."""
    import stat

    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotAFile("not a regular file")
        data = text.encode("utf-8", "replace")
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)
