"""Text as a message may echo it: one line, no control character a terminal would act on, a long
value shortened in the middle, and a refusal held to 300 characters. Imports nothing from
Ridge, so `engine.errors` can shape every refusal with it and `engine.bounds` re-exports it."""
from __future__ import annotations

# Control characters (C0, DEL, C1) and the invisible bidirectional overrides that can make a
# terminal show something other than what a file says.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *map(ord, _BIDI)]
_STRIP = dict.fromkeys(_CONTROLS)
_SPACE = {**_STRIP, **dict.fromkeys(map(ord, "\t\n\r\v\f"), " ")}
MAX_SHOWN = 160  # characters of an echoed value shown in a message
MAX_REFUSAL = 300  # characters of a whole refusal line (DESIGN.md: one line, at most 300)


def clean_text(text: object) -> str:
    """`text` without control characters (terminal escapes, bidi overrides); line breaks and
    tabs become spaces, so a name prints as what it says, on one line."""
    return str(text).translate(_SPACE).translate(_STRIP)


def has_controls(text: str) -> bool:
    return text != text.translate(_STRIP)


def shown(value: object, limit: int = MAX_SHOWN) -> str:
    """A value as an error message may echo it: one line, no control characters, shortened in
    the middle when long (a 10,000-character path stays readable)."""
    text = clean_text(value)
    if len(text) <= limit:
        return text
    head = max(1, limit * 2 // 3)
    tail = max(1, limit - head - 1)
    return f"{text[:head]}…{text[-tail:]}"


def escaped_text(text: object) -> str:
    """`text` with line breaks and tabs as spaces and every other control character written out
    (ESC as \\x1b, a bidi override as \\u202e), so a refusal shows what was typed without a
    terminal acting on it."""
    def visible(ch: str) -> str:
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return "".join(visible(ch) if ord(ch) in _STRIP and ch not in "\t\n\r\v\f" else ch
                   for ch in str(text)).translate(_SPACE)


def refusal(message: object) -> str:
    """A refusal as it is shown: one line of at most MAX_REFUSAL characters, control
    characters written out."""
    return one_line(message, MAX_REFUSAL, escape=True)


def one_line(message: object, limit: int = 1000, *, escape: bool = False) -> str:
    """A whole message made fit for one terminal line: every long word shortened by `shown`.
    With `escape`, control characters are written out (`escaped_text`) instead of dropped."""
    words = (escaped_text(message) if escape else clean_text(message)).split(" ")
    text = " ".join(w if len(w) <= MAX_SHOWN else shown(w) for w in words)
    return shown(text, limit)


def aligned(name: str, value: str, width: int = 62, indent: int = 13) -> str:
    """`name` then `value` as plain text, the value wrapped under itself, never back under the
    name (a confirmation's summary of an answer, the rows of a projected card)."""
    import textwrap

    return textwrap.fill(value, width=width, initial_indent=f"{name:<{indent}}",
                         subsequent_indent=" " * indent, break_on_hyphens=False)
