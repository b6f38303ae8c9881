"""The campaign's order without Textual: untried first in the earliest open chapter, then tried
but not cleared, and puzzles put off come back last, in the order they were put off."""
from __future__ import annotations

from puzzles.campaign import next_puzzle, returns_after

CHAPTERS = [("a1", "a2"), ("b1", "b2")]


def test_untried_first_then_not_cleared_then_the_next_chapter():
    assert next_puzzle(CHAPTERS, {}, []) == "a1"
    assert next_puzzle(CHAPTERS, {"a1": ["missed"]}, []) == "a2"
    assert next_puzzle(CHAPTERS, {"a1": ["missed"], "a2": ["cleared"]}, []) == "a1"
    assert next_puzzle(CHAPTERS, {"a1": ["missed", "cleared"], "a2": ["lucky", "cleared"]}, []) == "b1"
    done = {p: ["cleared"] for ids in CHAPTERS for p in ids}
    assert next_puzzle(CHAPTERS, done, []) is None


def test_a_puzzle_put_off_comes_back_after_every_other_open_one():
    assert next_puzzle(CHAPTERS, {}, ["a1"]) == "a2"
    assert next_puzzle(CHAPTERS, {}, ["a1"], exclude=("a2", "b1", "b2")) == "a1"
    assert next_puzzle(CHAPTERS, {}, ["a1"], within=("b1", "b2"), exclude=("b1", "b2")) is None
    assert returns_after(CHAPTERS, {}, ["b2", "a1"], "a1") == 3   # a2, b1, then b2 put off earlier
