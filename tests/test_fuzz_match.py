"""Fuzzing match result files: a damaged or hostile file is turned away with one line (a
MatchFileError), never another exception; one that is accepted still verifies and regrades.

Would have caught: result files read without a size cap (/dev/zero), deep nesting overflowing
the parser, and edited answers or outcomes being believed.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hostile_inputs import COUNTS, FUZZ, assert_one_line, byte_damage, damage, edit_values, toml_literal, value_slots
from saves.match import MatchFileError, read_result, result_doc, write_result
from test_match import CODE, START, answers

TMP = Path(tempfile.mkdtemp(prefix="ridge-fuzz-match-"))


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
        return
    event("accepted")
    assert result.player == "Ada" and str(result.code) == str(CODE)


@settings(max_examples=150, suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.lists(st.tuples(st.sampled_from(range(len(SLOTS))), toml_literal), min_size=1, max_size=2))
def test_edited_result_values(edits):
    COUNTS["match file"] += 1
    text = edit_values(TEXT, SLOTS, edits)
    _read(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=100, suppress_health_check=list(HealthCheck), **FUZZ)
@given(byte_damage)
def test_damaged_result_files(steps):
    COUNTS["match file"] += 1
    _read(damage(TEXT.encode(), steps))


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
