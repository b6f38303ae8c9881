"""The hand-written number checks in engine/bounds.py accept exactly what the regular expressions
they replaced accepted. The patterns live here as the reference: numeric flags, catalogs and the
simulator's fields all read numbers through these two functions, so a text one accepts and the
other refuses would change what a player may type."""
from __future__ import annotations

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


@settings(max_examples=examples(3000))
@given(numberish)
def test_the_checks_accept_what_the_patterns_accepted(text):
    assert is_ascii_whole(text) == bool(WHOLE.fullmatch(text)), text
    for digits, pattern in DECIMAL.items():
        assert is_ascii_decimal(text, digits) == bool(pattern.fullmatch(text)), (text, digits)


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
