"""A fixed match (its code and start) and every player's answers to it, right, medium or wrong."""
from __future__ import annotations

import datetime as dt

from puzzles.generator import from_id
from puzzles.grading import grade, objective_bottleneck
from puzzles.match import MatchCode
from puzzles.questions import make_item
from puzzles.reasons import accepted_reasons
from saves.match import answer_record

START = dt.datetime(2026, 3, 2, 12, 0, tzinfo=dt.timezone.utc)
CODE = MatchCode(42, 2, 3)


def answers(style: str, seconds: float = 30.0) -> list[dict]:
    """Answers to every puzzle of CODE: 'right' (the engine's answer) or 'wrong' (a missed one)."""
    out = []
    for n, pid in enumerate(CODE.puzzle_ids()):
        gen = from_id(pid)
        key = gen.key
        item = make_item(gen.puzzle, key)
        p = {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain_band": key.gain_band,
             "reason": key.reason, "certainty": "high",
             "estimates": {e: key.estimates[e] for e in gen.puzzle.estimates}}
        if style == "medium":
            p["certainty"] = "medium"
        if style == "wrong":
            p["bottleneck"] = next(v for v in ("decode-kv", "decode-weights", "prefill-compute", "prefill-weights")
                                   if v != objective_bottleneck(key))
            p["lever"] = next(lv for lv in gen.puzzle.levers if lv != key.best_lever)
            held = accepted_reasons(key.solution, objective_bottleneck(key))
            p["reason"] = next(r for r in gen.puzzle.reasons if r not in held)   # one that does not decide
        graded = grade(item.puzzle, item.key, p, **item.asks)
        out.append(answer_record(pid, graded, seconds, START + dt.timedelta(minutes=n + 1)))
    return out
