"""Fuzzing match result files: a damaged or hostile file is turned away with one line (a
MatchFileError), never another exception; one that is accepted still verifies and regrades.

Would have caught: result files read without a size cap (/dev/zero), deep nesting overflowing
the parser, and edited answers or outcomes being believed.
"""
from __future__ import annotations

import datetime as dt
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hostile_inputs import COUNTS, FUZZ, assert_one_line, byte_damage, damage, toml_literal
from puzzles.generator import from_id
from puzzles.grading import grade, objective_bottleneck
from puzzles.match import MatchCode
from puzzles.questions import make_item
from saves.match import MatchFileError, answer_record, read_result, result_doc, write_result

START = dt.datetime(2026, 3, 2, 12, 0, tzinfo=dt.timezone.utc)
CODE = MatchCode(42, 2, 2)
TMP = Path(tempfile.mkdtemp(prefix="ridge-fuzz-match-"))


def _answers() -> list[dict]:
    out = []
    for n, pid in enumerate(CODE.puzzle_ids()):
        gen = from_id(pid)
        key = gen.key
        item = make_item(gen.puzzle, key)
        p = {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain_band": key.gain_band,
             "reason": key.reason, "certainty": "high",
             "estimates": {e: key.estimates[e] for e in gen.puzzle.estimates}}
        graded = grade(item.puzzle, item.key, p, **item.asks)
        out.append(answer_record(pid, graded, 30.0, START + dt.timedelta(minutes=n + 1)))
    return out


GOOD = TMP / "good.toml"
write_result(GOOD, result_doc(CODE, "Ada", "Red", START, _answers()))
TEXT = GOOD.read_text(encoding="utf-8")
SLOTS = [m.start(1) for m in re.finditer(r"^\s*[\w.\"-]+ = (.+)$", TEXT, re.MULTILINE)]


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
    text = TEXT
    for index, literal in sorted(edits, reverse=True):
        start = SLOTS[index]
        end = text.index("\n", start)
        text = text[:start] + literal + text[end:]
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
