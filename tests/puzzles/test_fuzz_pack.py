"""Fuzzing puzzle packs: a damaged or hostile pack gives PackError lines (one line each, naming
the file) and never another exception; what loads holds no control character to print.

Would have caught: a pack read without a size cap (/dev/zero), nesting deep enough to overflow
the parser's stack, and a terminal escape in a title or briefing reaching the screen.
"""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from helpers.hunt import examples

from engine.bounds import has_controls
from engine.errors import RidgeError
from helpers.hostile import COUNTS, FUZZ, assert_one_line, byte_damage, damage, edit_values, toml_literal, value_slots
from puzzles.schema import load_pack
from helpers.scratch import scratch_dir

PACK = Path(__file__).resolve().parents[2] / "puzzles" / "packs" / "intensity.toml"
TEXT = PACK.read_text(encoding="utf-8")
SLOTS = value_slots(TEXT)
TMP = Path(scratch_dir("ridge-fuzz-pack-"))
escape = st.sampled_from(['"\\u001b]0;pwned\\u0007"', '"\\u009b2J"', '"a\\u202eb"', '"ok"'])


def _load(raw: bytes) -> None:
    path = TMP / "intensity.toml"
    path.write_bytes(raw)
    problems: list = []
    try:
        loaded = load_pack(path, problems=problems)
    except RidgeError as exc:  # only without a problems list, but never anything else
        assert_one_line(exc)
        return
    for problem in problems:
        assert_one_line(problem)
    event("refused" if problems else "loaded")
    if loaded is None:
        return
    for puzzle in loaded.puzzles:
        for text in (puzzle.title, puzzle.scenario, *puzzle.hints):
            assert not has_controls(text.replace("\n", " ").replace("\t", " ")), repr(text[:80])


@settings(max_examples=examples(150), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.lists(st.tuples(st.sampled_from(range(len(SLOTS))), escape | toml_literal), min_size=1, max_size=2))
def test_edited_pack_values(edits):
    COUNTS["pack"] += 1
    text = edit_values(TEXT, SLOTS, edits)
    _load(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=examples(100), suppress_health_check=list(HealthCheck), **FUZZ)
@given(byte_damage)
def test_damaged_pack_files(steps):
    COUNTS["pack"] += 1
    _load(damage(TEXT.encode(), steps))
