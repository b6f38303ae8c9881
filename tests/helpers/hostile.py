"""Hypothesis strategies for hostile input, shared by the tests/test_fuzz_*.py files: the values a
reliability pass throws at every surface (non-finite and enormous numbers, wrong types, deep
nesting, control characters, other scripts' digits) and byte-level damage to a valid file.

Every fuzz test counts what it tried in COUNTS, keyed by surface; `pytest -s` prints the
counts into the file named by RIDGE_FUZZ_COUNTS when the session ends.
"""
from __future__ import annotations

import atexit
import collections
import os

from hypothesis import strategies as st

from engine.bounds import finite_tree

COUNTS: collections.Counter[str] = collections.Counter()
# In the suite every fuzz test is derandomized with no example database, so it finds the same
# inputs on every machine and run (a random find that fails on one machine only is a flaky
# suite). RIDGE_HUNT=N hunts instead: random inputs, N times the examples (`examples`).
HUNT = int(os.environ.get("RIDGE_HUNT", "0") or 0)
FUZZ = dict(deadline=None) if HUNT else dict(deadline=None, derandomize=True, database=None)


def examples(n: int) -> int:
    """`n` examples in the suite; N times as many when hunting (RIDGE_HUNT=N)."""
    return n * HUNT if HUNT else n


def _report() -> None:
    if COUNTS and os.environ.get("RIDGE_FUZZ_COUNTS"):
        with open(os.environ["RIDGE_FUZZ_COUNTS"], "a", encoding="utf-8") as fh:
            for surface, n in sorted(COUNTS.items()):
                fh.write(f"{surface} {n}\n")


atexit.register(_report)

CONTROL = "\x00\x07\x08\x1b\x7f\x9b\u202e\u2066\r\n\t"
ODD_DIGITS = ["١٢", "１２", "۴", "߃", "𝟚", "²", "1_000", " 12 ", "+7", "0x10", "1e3", "٣.٥"]
NUMBER_TEXT = ["0", "-0", "1", "-1", "0.0", "1e308", "-1e308", "1e309", "1e-320", "nan", "NaN", "inf",
               "-inf", "Infinity", "9" * 25, "9" * 400, "4096", "4097", ".5", "5.", "1e", "--1", ""]

hostile_text = st.one_of(
    st.text(max_size=20),
    st.text(alphabet=st.sampled_from(list(CONTROL) + list("ab-_.[]")), max_size=20),
    st.sampled_from(ODD_DIGITS + NUMBER_TEXT),
    st.just("x" * 5000),
)

hostile_json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10**18, max_value=10**400),
              st.floats(allow_nan=True, allow_infinity=True), hostile_text),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)

# TOML literals (as text) for a value slot
toml_literal = st.one_of(
    st.sampled_from(["nan", "+nan", "-nan", "inf", "-inf", "+inf", "0", "-1", "1e308", "1e-308", "true",
                     "9" * 19, "-9223372036854775809", "9223372036854775807", "0x7fffffffffffffff",
                     '"x"', '"\\u001b[2J"', '"\\u0007"', '"\\u202e"', '""', "[]", "[1, [2]]", "{ a = 1 }",
                     "1979-05-27", "'" + "y" * 3000 + "'", "[" * 40 + "]" * 40, "0.5", "3.35", "80"]),
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)

byte_damage = st.lists(st.tuples(st.sampled_from(["truncate", "insert", "overwrite", "delete-line"]),
                                 st.floats(0, 1), st.binary(min_size=1, max_size=8)), min_size=1, max_size=3)


def damage(raw: bytes, steps) -> bytes:
    """`raw` after the byte-level `steps` (truncation, inserted or overwritten bytes, a lost line)."""
    for kind, where, blob in steps:
        at = int(where * len(raw))
        if kind == "truncate":
            raw = raw[:at]
        elif kind == "insert":
            raw = raw[:at] + blob + raw[at:]
        elif kind == "overwrite":
            raw = raw[:at] + blob + raw[at + len(blob):]
        else:
            lines = raw.split(b"\n")
            if lines:
                del lines[int(where * (len(lines) - 1))]
            raw = b"\n".join(lines)
    return raw


def assert_one_line(message: object) -> None:
    """What every refusal must be: one line, short, with no control character to rewrite the screen."""
    text = str(message)
    assert text and "\n" not in text and "\r" not in text, repr(text[:300])
    assert len(text) <= 300, len(text)
    assert "\x1b" not in text and "\x07" not in text, repr(text[:300])


finite_everywhere = finite_tree  # one rule: engine.bounds.finite_tree


def value_slots(text: str) -> list[int]:
    """Where each `key = value` line's value starts in a TOML text, for `edit_values`."""
    import re

    return [m.start(1) for m in re.finditer(r"^\s*[\w.\"-]+ = (.+)$", text, re.MULTILINE)]


def edit_values(text: str, slots: list[int], edits) -> str:
    """`text` with the values at `slots[i]` replaced by literals, for each (i, literal) in `edits`."""
    for index, literal in sorted(edits, reverse=True):  # from the end, so earlier offsets hold
        start = slots[index]
        text = text[:start] + literal + text[text.index("\n", start):]
    return text
