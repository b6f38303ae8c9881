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

# Suffixes a number may carry: (scale, dimension). Decimal prefixes for bytes and FLOPs, binary
# for *iB. A dimension is (bytes, seconds, FLOPs) exponents, so `140 GB / 3.35 TB/s` is in seconds
# and the result can be read back as `41.79 ms`. "FLOPs" counts operations; "FLOPS" is a rate.
_B, _S, _F, _BPS, _FPS, _NONE = (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, -1, 0), (0, -1, 1), (0, 0, 0)
DIMENSIONED: dict[str, tuple[float, tuple[int, int, int]]] = {
    "k": (1e3, _NONE), "K": (1e3, _NONE), "M": (1e6, _NONE), "G": (1e9, _NONE), "T": (1e12, _NONE),
    "P": (1e15, _NONE),
    "KB": (1e3, _B), "kB": (1e3, _B), "MB": (1e6, _B), "GB": (1e9, _B), "TB": (1e12, _B), "PB": (1e15, _B),
    "KiB": (2.0**10, _B), "MiB": (2.0**20, _B), "GiB": (2.0**30, _B), "TiB": (2.0**40, _B),
    "KB/s": (1e3, _BPS), "MB/s": (1e6, _BPS), "GB/s": (1e9, _BPS), "TB/s": (1e12, _BPS),
    "FLOP": (1.0, _F), "FLOPs": (1.0, _F), "FLOPS": (1.0, _FPS),
    "GFLOPS": (1e9, _FPS), "TFLOPS": (1e12, _FPS), "PFLOPS": (1e15, _FPS), "TFLOP/s": (1e12, _FPS),
    "s": (1.0, _S), "ms": (1e-3, _S), "us": (1e-6, _S), "µs": (1e-6, _S), "ns": (1e-9, _S),
    "%": (1e-2, _NONE), "x": (1.0, _NONE),
}
UNITS: dict[str, float] = {word: scale for word, (scale, _dim) in DIMENSIONED.items()}
AMBIGUOUS = {
    "B": "'B' could mean billion or bytes: write 70e9 for 70 billion, or GB for bytes",
    "b": "'b' could mean billion or bits: write 70e9 for 70 billion",
}

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?)
  | (?P<op>\*\*|[-+*/^()×÷])
  | (?P<word>[A-Za-zµ_][A-Za-z0-9µ_]*(?:/s)?|%)
  | (?P<other>.)
    """,
    re.VERBOSE,
)


Dim = "tuple[int, ...] | None"  # (bytes, seconds, FLOPs) exponents; None when units were mixed


class NapkinError(ValueError):
    """Input the napkin refuses, with the 0-based column where the trouble starts."""

    def __init__(self, message: str, column: int = 0) -> None:
        from engine.bounds import one_line  # the offending text may hold escapes or be very long

        super().__init__(one_line(message, 300))
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
    def parse(self) -> tuple[float, Dim]:
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

    def sum(self) -> tuple[float, Dim]:
        value, dim = self.product()
        while self.at_op("+", "-"):
            op = self.take()[1]
            right, right_dim = self.product()
            value = _check(value + right if op == "+" else value - right)
            dim = dim if dim == right_dim else None  # mixed units: the sum has none we can name
        return value, dim

    def product(self) -> tuple[float, Dim]:
        value, dim = self.unary()
        while self.at_op("*", "/", "×", "÷"):
            _, op, column = self.take()
            right, right_dim = self.unary()
            if op in ("*", "×"):
                value = _check(value * right, column)
                dim = _combine(dim, right_dim, 1)
            else:
                if right == 0:
                    raise NapkinError(f"division by zero (column {column + 1})", column)
                value = _check(value / right, column)
                dim = _combine(dim, right_dim, -1)
        return value, dim

    def unary(self) -> tuple[float, Dim]:
        if self.at_op("-", "+"):
            op = self.take()[1]
            self.enter()
            value, dim = self.unary()
            self.depth -= 1
            return (-value if op == "-" else value), dim
        return self.power()

    def power(self) -> tuple[float, Dim]:
        base, dim = self.atom()
        if self.at_op("**", "^"):
            column = self.take()[2]
            self.enter()
            exponent, exp_dim = self.unary()
            self.depth -= 1
            if abs(exponent) > MAX_EXPONENT:
                raise NapkinError(f"exponent {exponent:g} is too large (at most {MAX_EXPONENT:g})", column)
            if base < 0 and not float(exponent).is_integer():
                raise NapkinError(f"a negative number to a fractional power (column {column + 1})", column)
            if base == 0 and exponent < 0:
                raise NapkinError(f"zero to a negative power (column {column + 1})", column)
            try:
                value = _check(math.pow(base, exponent), column)
            except OverflowError:
                raise NapkinError(f"the result is too large (column {column + 1})", column) from None
            if dim == _NONE and exp_dim == _NONE:
                return value, _NONE
            if dim is not None and exp_dim == _NONE and float(exponent).is_integer():
                return value, tuple(int(e * exponent) for e in dim)
            return value, None
        return base, dim

    def atom(self) -> tuple[float, Dim]:
        token = self.peek()
        if token is None:
            raise NapkinError("the sum ends too early", self.end_column())
        kind, text, column = token
        if kind == "number":
            self.take()
            value = float(text.replace("_", ""))
            if not math.isfinite(value):
                raise NapkinError(f"{text} is too large a number", column)
            return self.units(value, _NONE)
        if kind == "op" and text == "(":
            self.take()
            self.enter()
            value, dim = self.sum()
            self.depth -= 1
            if not self.at_op(")"):
                raise NapkinError(f"a '(' at column {column + 1} is never closed", column)
            self.take()
            return self.units(value, dim)
        if kind == "word":
            if text in AMBIGUOUS:
                raise NapkinError(AMBIGUOUS[text], column)
            if text in UNITS:
                raise NapkinError(f"'{text}' needs a number before it (column {column + 1})", column)
            raise NapkinError(f"names such as '{text}' are not allowed: only numbers and + - * / ** ( )", column)
        if kind == "other":
            raise NapkinError(f"'{text}' is not arithmetic (column {column + 1})", column)
        raise NapkinError(f"unexpected '{text}' (column {column + 1})", column)

    def units(self, value: float, dim: Dim) -> tuple[float, Dim]:
        token = self.peek()
        if token is not None and token[0] == "word":
            _, word, column = token
            if word in AMBIGUOUS:
                raise NapkinError(AMBIGUOUS[word], column)
            if word in DIMENSIONED:
                self.take()
                scale, unit_dim = DIMENSIONED[word]
                if word == "%":
                    return value / 100.0, dim
                return _check(value * scale, column), _combine(dim, unit_dim, 1)
            raise NapkinError(f"'{word}' is not a unit the napkin knows (column {column + 1})", column)
        return value, dim

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise NapkinError(f"too deeply nested (at most {MAX_DEPTH} levels)", 0)


def _check(value: float, column: int = 0) -> float:
    if not math.isfinite(value):
        raise NapkinError("the result is too large to be a number", column)
    return value


def _combine(left, right, sign: int):
    """The dimension of a product (sign 1) or quotient (sign -1); None stays None."""
    if left is None or right is None:
        return None
    return tuple(a + sign * b for a, b in zip(left, right))


def measure(text: str) -> tuple[float, str]:
    """The value of one napkin sum and the unit it comes out in (`"s"`, `"B/s"`, `""` for a plain
    number, or `""` when units were mixed), or NapkinError saying why it is refused."""
    if not isinstance(text, str):
        raise NapkinError("the napkin reads text", 0)
    if len(text) > MAX_LENGTH:
        raise NapkinError(f"too long: at most {MAX_LENGTH} characters", MAX_LENGTH)
    value, dim = _Parser(text.rstrip()).parse()  # leading spaces kept, so columns match what was typed
    return value, unit_name(dim)


def evaluate(text: str) -> float:
    """The value of one napkin sum, or NapkinError saying why it is refused."""
    return measure(text)[0]


_BASE_UNITS = (("B", 0), ("s", 1), ("FLOP", 2))
_NAMED = {(1, -1, 0): "B/s", (0, -1, 1): "FLOP/s", (-1, 0, 1): "FLOP/B"}


def unit_name(dim) -> str:
    """`(1, -1, 0)` → "B/s": the unit of a dimension, "" for a plain number or mixed units."""
    if dim is None or not any(dim):
        return ""
    if tuple(dim) in _NAMED:
        return _NAMED[tuple(dim)]

    def part(name: str, exp: int) -> str:
        return name if exp == 1 else f"{name}^{exp}"

    top = "·".join(part(name, dim[i]) for name, i in _BASE_UNITS if dim[i] > 0)
    bottom = "·".join(part(name, -dim[i]) for name, i in _BASE_UNITS if dim[i] < 0)
    return f"{top or '1'}/{bottom}" if bottom else top


_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"),
       (1e-6, "µ"), (1e-9, "n"))


def format_number(value: float, unit: str = "") -> str:
    """A result as a player reads it: plain digits for everyday sizes, else scientific, then its
    unit, plus an SI-prefixed form where that reads better (`0.04179 s  ≈ 41.79 ms`,
    `4.209e+10  ≈ 42.09 G`). A plain number below 0.1 gets no prefix: "milli" of nothing reads
    as nonsense."""
    if value == 0:
        return f"0 {unit}" if unit else "0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e6:
        plain = f"{value:,.6g}" if magnitude >= 1000 else f"{value:.6g}"
    else:
        plain = f"{value:.4e}"
    shown = f"{plain} {unit}" if unit else plain
    if (1.0 if unit else 0.1) <= magnitude < 1000:
        return shown
    if not unit and magnitude < 1:
        return shown
    for scale, prefix in _SI:
        if magnitude >= scale:
            if scale != 1.0:
                return f"{shown}  ≈ {value / scale:.4g} {prefix}{unit}"
            return shown
    return shown
