"""The hand-written number checks in engine/bounds.py accept exactly what the regular expressions
they replaced accepted. The patterns live here as the reference: numeric flags, catalogs and the
simulator's fields all read numbers through these two functions, so a text one accepts and the
other refuses would change what a player may type."""
from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from helpers.hunt import examples

from engine.bounds import ascii_number, is_ascii_decimal, is_ascii_whole

WHOLE = re.compile(r"[+-]?[0-9]{1,18}")
DECIMAL = {n: re.compile(rf"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{{1,{n}}})?") for n in (3, 4)}

# Number-ish text: the characters the grammar turns on, digits of other scripts, and spaces.
_CHARS = list("0123456789+-.eE _xni") + ["١", "２", "²", "\n", "\t"]
numberish = st.one_of(
    st.text(alphabet=st.sampled_from(_CHARS), max_size=24),
    st.text(max_size=12),
    st.builds(lambda sign, a, dot, b, e, esign, c: sign + a + dot + b + e + esign + c,
              st.sampled_from(["", "+", "-"]), st.text("0123456789", max_size=20), st.sampled_from(["", "."]),
              st.text("0123456789", max_size=4), st.sampled_from(["", "e", "E"]), st.sampled_from(["", "+", "-"]),
              st.text("0123456789", max_size=6)),
)


def _agree(text: str) -> None:
    assert is_ascii_whole(text) == bool(WHOLE.fullmatch(text)), text
    for digits, pattern in DECIMAL.items():
        assert is_ascii_decimal(text, digits) == bool(pattern.fullmatch(text)), (text, digits)


@settings(max_examples=examples(600))
@given(numberish)
def test_the_checks_accept_what_the_patterns_accepted(text):
    """Drawn texts, the searching half: any characters, and numbers built from parts. The
    enumeration below checks the grammar's short texts and its limits exhaustively; 600 draws
    beside it (a draw costs ~0.7 ms of hypothesis's bookkeeping, a check 4 us) catch ten planted
    faults that 3,000 draws alone caught nine of (a doubled exponent sign went unseen)."""
    _agree(text)


# One character of each kind the grammar tells apart: digits, signs, the point, both exponent
# letters, a space, an underscore, a letter of 'nan'/'inf', other scripts' digits and a newline.
_KINDS = ["0", "7", "+", "-", ".", "e", "E", " ", "_", "n", "١", "２", "²", "\n"]


def _short_texts():
    """Every text of up to four characters over _KINDS (41,371 texts)."""
    for length in range(5):
        yield from map("".join, itertools.product(_KINDS, repeat=length))


def _texts_at_the_limits():
    """Every number shape with digit counts on both sides of each limit (18 and 19 digits of a
    whole number; 3, 4 and 5 exponent digits), empty parts and doubled signs."""
    signs = ["", "+", "-", "++", "+-"]
    for sign, whole, point, fraction, e, esign, exponent in itertools.product(
            signs, [0, 1, 17, 18, 19, 25], ["", "."], [0, 1, 3], ["", "e", "E"], signs, [0, 1, 3, 4, 5]):
        yield sign + "9" * whole + point + "5" * fraction + e + esign + "1" * exponent


def test_the_checks_accept_what_the_patterns_accepted_for_every_short_text_and_limit():
    for text in itertools.chain(_short_texts(), _texts_at_the_limits()):
        _agree(text)


@pytest.mark.parametrize("text, whole, decimal", [
    ("12", True, True), ("+7", True, True), ("-0", True, True), ("9" * 18, True, True), ("9" * 19, False, True),
    ("", False, False), ("+", False, False), (".", False, False), (".5", False, True), ("5.", False, True),
    ("1e3", False, True), ("1E-999", False, True), ("1e1000", False, False), ("1e", False, False),
    ("١٢", False, False), ("１２", False, False), ("²", False, False), ("1_000", False, False),
    (" 12", False, False), ("12\n", False, False), ("nan", False, False), ("inf", False, False),
    ("1.2.3", False, False), ("+-1", False, False), ("0x10", False, False),
])
def test_named_texts(text, whole, decimal):
    assert (is_ascii_whole(text), is_ascii_decimal(text, 3)) == (whole, decimal)


def test_ascii_number_still_refuses_what_float_would_read():
    assert ascii_number("2.5e1") == 25.0
    for text in ("١٢", "nan", " 1", "1_0"):
        with pytest.raises(ValueError):
            ascii_number(text)
