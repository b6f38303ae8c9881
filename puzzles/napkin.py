"""The napkin calculator: plain arithmetic, parsed by hand, never handed to `eval`.

Accepted: numbers (`42`, `3.35`, `141e9`, `1_000`, `.5`), the operators `+ - * / ** ^` (and the
`×` and `÷` signs), parentheses, unary minus, and a unit or scale suffix after a number or a
closing parenthesis (`80 GiB`, `3.35 TB/s`, `42 ms`, `70%`). Anything else — a name, a call, a
quote, an attribute, an exponent big enough to stall the machine — is refused with a NapkinError
whose message says what was wrong and where. Every result is a finite float.
"""
from __future__ import annotations

import math
import re

MAX_LENGTH = 300
MAX_DEPTH = 40
MAX_EXPONENT = 1000.0

# Suffixes a number may carry. Decimal prefixes for bytes and FLOPs, binary for *iB.
UNITS: dict[str, float] = {
    "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
    "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
    "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40,
    "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
    "FLOP": 1.0, "FLOPs": 1.0, "FLOPS": 1.0,
    "GFLOPS": 1e9, "TFLOPS": 1e12, "PFLOPS": 1e15, "TFLOP/s": 1e12,
    "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9,
    "%": 1e-2, "x": 1.0,
}
AMBIGUOUS = {
    "B": "'B' could mean billion or bytes: write 70e9 for 70 billion, or GB for bytes",
    "b": "'b' could mean billion or bits: write 70e9 for 70 billion",
}

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)
  | (?P<op>\*\*|[-+*/^()×÷])
  | (?P<word>[A-Za-zµ_][A-Za-z0-9µ_]*(?:/s)?|%)
  | (?P<other>.)
    """,
    re.VERBOSE,
)


class NapkinError(ValueError):
    """Input the napkin refuses, with the 0-based column where the trouble starts."""

    def __init__(self, message: str, column: int = 0) -> None:
        super().__init__(message)
        self.column = column


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        assert match is not None  # the `other` branch matches any one character
        kind = match.lastgroup or ""
        if kind != "space":
            out.append((kind, match.group(), pos))
        pos = match.end()
    return out


class _Parser:
    """Recursive descent: sum > product > unary > power > atom, with `**` binding tightest."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.index = 0
        self.depth = 0

    # -- token helpers -------------------------------------------------------------------
    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def at_op(self, *ops: str) -> bool:
        token = self.peek()
        return token is not None and token[0] == "op" and token[1] in ops

    def end_column(self) -> int:
        return len(self.text)

    # -- grammar -------------------------------------------------------------------------
    def parse(self) -> float:
        if not self.tokens:
            raise NapkinError("type a sum, such as 141e9 / 3.35e12", 0)
        value = self.sum()
        token = self.peek()
        if token is not None:
            kind, text, column = token
            if kind == "word":
                raise NapkinError(f"'{text}' is not a unit the napkin knows (column {column + 1})", column)
            if kind == "other":
                raise NapkinError(f"'{text}' is not arithmetic (column {column + 1})", column)
            raise NapkinError(f"unexpected '{text}' (column {column + 1})", column)
        return value

    def sum(self) -> float:
        value = self.product()
        while self.at_op("+", "-"):
            op = self.take()[1]
            right = self.product()
            value = _check(value + right if op == "+" else value - right)
        return value

    def product(self) -> float:
        value = self.unary()
        while self.at_op("*", "/", "×", "÷"):
            _, op, column = self.take()
            right = self.unary()
            if op in ("*", "×"):
                value = _check(value * right, column)
            else:
                if right == 0:
                    raise NapkinError(f"division by zero (column {column + 1})", column)
                value = _check(value / right, column)
        return value

    def unary(self) -> float:
        if self.at_op("-", "+"):
            op = self.take()[1]
            self.enter()
            value = self.unary()
            self.depth -= 1
            return -value if op == "-" else value
        return self.power()

    def power(self) -> float:
        base = self.atom()
        if self.at_op("**", "^"):
            column = self.take()[2]
            self.enter()
            exponent = self.unary()
            self.depth -= 1
            if abs(exponent) > MAX_EXPONENT:
                raise NapkinError(f"exponent {exponent:g} is too large (at most {MAX_EXPONENT:g})", column)
            if base < 0 and not float(exponent).is_integer():
                raise NapkinError(f"a negative number to a fractional power (column {column + 1})", column)
            if base == 0 and exponent < 0:
                raise NapkinError(f"zero to a negative power (column {column + 1})", column)
            try:
                return _check(math.pow(base, exponent), column)
            except OverflowError:
                raise NapkinError(f"the result is too large (column {column + 1})", column) from None
        return base

    def atom(self) -> float:
        token = self.peek()
        if token is None:
            raise NapkinError("the sum ends too early", self.end_column())
        kind, text, column = token
        if kind == "number":
            self.take()
            value = float(text.replace("_", ""))
            if not math.isfinite(value):
                raise NapkinError(f"{text} is too large a number", column)
            return self.units(value)
        if kind == "op" and text == "(":
            self.take()
            self.enter()
            value = self.sum()
            self.depth -= 1
            if not self.at_op(")"):
                raise NapkinError(f"a '(' at column {column + 1} is never closed", column)
            self.take()
            return self.units(value)
        if kind == "word":
            if text in AMBIGUOUS:
                raise NapkinError(AMBIGUOUS[text], column)
            if text in UNITS:
                raise NapkinError(f"'{text}' needs a number before it (column {column + 1})", column)
            raise NapkinError(f"names such as '{text}' are not allowed: only numbers and + - * / ** ( )", column)
        if kind == "other":
            raise NapkinError(f"'{text}' is not arithmetic (column {column + 1})", column)
        raise NapkinError(f"unexpected '{text}' (column {column + 1})", column)

    def units(self, value: float) -> float:
        token = self.peek()
        if token is not None and token[0] == "word":
            _, word, column = token
            if word in AMBIGUOUS:
                raise NapkinError(AMBIGUOUS[word], column)
            if word in UNITS:
                self.take()
                if word == "%":
                    return value / 100.0
                return _check(value * UNITS[word], column)
            raise NapkinError(f"'{word}' is not a unit the napkin knows (column {column + 1})", column)
        return value

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise NapkinError(f"too deeply nested (at most {MAX_DEPTH} levels)", 0)


def _check(value: float, column: int = 0) -> float:
    if not math.isfinite(value):
        raise NapkinError("the result is too large to be a number", column)
    return value


def evaluate(text: str) -> float:
    """The value of one napkin sum, or NapkinError saying why it is refused."""
    if not isinstance(text, str):
        raise NapkinError("the napkin reads text", 0)
    if len(text) > MAX_LENGTH:
        raise NapkinError(f"too long: at most {MAX_LENGTH} characters", MAX_LENGTH)
    return _Parser(text.strip()).parse()


_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "milli"),
       (1e-6, "micro"), (1e-9, "nano"))


def format_number(value: float) -> str:
    """A result as a player reads it: plain digits for everyday sizes, else scientific, plus an
    SI-prefixed form (`4.209e+10  ≈ 42.09 G`)."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e6:
        plain = f"{value:,.6g}" if magnitude >= 1000 else f"{value:.6g}"
    else:
        plain = f"{value:.4e}"
    if 0.1 <= magnitude < 1000:
        return plain
    for scale, prefix in _SI:
        if magnitude >= scale:
            if prefix and scale != 1.0:
                return f"{plain}  ≈ {value / scale:.4g} {prefix}"
            return plain
    return plain
