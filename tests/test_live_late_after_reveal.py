"""A late lock is what a player had filled in when the time ran out. One sent after that player
has read the question's reveal would be a copy of the answer: it is refused and nothing is kept,
so the reveal keeps saying "unanswered" (the spread and outcomes stay honest)."""
from __future__ import annotations

from app import labels
from saves.room import Room, Settings
from puzzles import generator
from puzzles.live import LiveRefusal
from tests.live_helpers import right_prediction


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _body(index, p):
    return {"index": index, "bottleneck": p["bottleneck"], "lever": p["lever"], "gain": p["gain_band"],
            "reason": p["reason"], "certainty": p["certainty"], "estimates": p["estimates"]}


def _row(room, name):
    return next(p for p in room.reveal(0)["players"] if p["name"] == name)


def test_a_late_lock_after_reading_the_reveal_is_not_kept(tmp_path):
    clock = Clock()
    made = generator.generate(5, 1, None)
    room = Room(Settings(seed=5, count=1, pin="4321", seconds=30), tmp_path, labels, clock=clock, made=made)
    try:
        peek, slow = room.join("4321", "peek"), room.join("4321", "slow")
        room.start()
        clock.now += 31
        room.tick()
        assert room.phase == "closed"
        room.reveal(0, viewer=peek)  # reads the answer first ...
        for token in (peek, slow):
            try:
                room.answer(token, _body(0, right_prediction(made[0])))
            except LiveRefusal as refused:
                assert refused.status == 409
                assert ("nothing is kept" in refused.message) == (token == peek), refused.message
            else:
                raise AssertionError("a late answer was accepted")
        assert _row(room, "peek")["outcome"] == "unanswered" and not _row(room, "peek").get("late")
        assert _row(room, "slow")["late"] and _row(room, "slow")["points"] == 0  # ... the other's late lock stays
    finally:
        room.close()
