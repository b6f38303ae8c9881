"""Fuzzing match result files: a damaged or hostile file is turned away with one line (a
MatchFileError), never another exception; one that is accepted still verifies and regrades.

Would have caught: result files read without a size cap (/dev/zero), deep nesting overflowing
the parser, and edited answers or outcomes being believed.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from helpers.hunt import examples

from helpers.hostile import COUNTS, FUZZ, assert_one_line, byte_damage, damage, edit_values, toml_literal, value_slots
from helpers.match import CODE, START, answers
from saves.match import MESSAGE_LIMIT, MatchFileError, read_result, result_doc, write_result
from helpers.scratch import scratch_dir

TMP = Path(scratch_dir("ridge-fuzz-match-"))


GOOD = TMP / "good.toml"
write_result(GOOD, result_doc(CODE, "Ada", "Red", START, answers("right")))  # test_match's answers
TEXT = GOOD.read_text(encoding="utf-8")
SLOTS = value_slots(TEXT)


def _read(raw: bytes) -> None:
    path = TMP / "result.toml"
    path.write_bytes(raw)
    try:
        result = read_result(path)
    except MatchFileError as exc:
        event("refused")
        assert_one_line(exc)
        assert len(str(exc)) <= MESSAGE_LIMIT == 300, len(str(exc))
        return
    event("accepted")
    assert result.player == "Ada" and str(result.code) == str(CODE)


@settings(max_examples=examples(150), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.lists(st.tuples(st.sampled_from(range(len(SLOTS))), toml_literal), min_size=1, max_size=2))
def test_edited_result_values(edits):
    COUNTS["match file"] += 1
    text = edit_values(TEXT, SLOTS, edits)
    _read(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=examples(100), suppress_health_check=list(HealthCheck), **FUZZ)
@given(byte_damage)
def test_damaged_result_files(steps):
    COUNTS["match file"] += 1
    _read(damage(TEXT.encode(), steps))


@pytest.mark.parametrize("slot", [0, 8])
@pytest.mark.parametrize("literal", ["'" + "y" * 3000 + "'", "9" * 3000, "[" + ", ".join(["1"] * 800) + "]"],
                         ids=["text", "number", "list"])
def test_a_long_edited_value_is_refused_in_one_short_line(slot, literal):
    """What hypothesis once found by chance and then replayed from its database on every run: a
    3,000-character format (slot 0) or answer number (slot 8) echoed whole, a 3,054-character
    refusal."""
    path = TMP / "long.toml"
    path.write_text(edit_values(TEXT, SLOTS, [(slot, literal)]), encoding="utf-8")
    with pytest.raises(MatchFileError) as refused:
        read_result(path)
    assert_one_line(refused.value)
    assert len(str(refused.value)) <= MESSAGE_LIMIT


def test_the_untouched_file_is_accepted():
    result = read_result(GOOD)
    assert result.player == "Ada" and len(result.answers) == CODE.count
    for hostile in ("/dev/zero", str(TMP)):
        try:
            read_result(hostile)
        except MatchFileError as exc:
            assert_one_line(exc)
        else:  # pragma: no cover
            raise AssertionError(hostile)
