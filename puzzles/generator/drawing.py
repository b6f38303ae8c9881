"""Drawing puzzles: a target dealt by the seed, recipe draws aimed at it until one is kept (or,
after a bounded number of tries, any draw the level accepts), then the card around the key."""
from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from engine.analysis import analyze
from engine.errors import RidgeError

from puzzles.generator import card
from puzzles.generator.aim import REPORT, Skip, deployment
from puzzles.generator.checks import keyed
from puzzles.generator.ids import check_request, parse_id, puzzle_id
from puzzles.generator.levels import LEVELS, Level, target_for
from puzzles.generator.recipes import RECIPES, r_any
from puzzles.generator.words import hints, scenario, title
from puzzles.keys import Key, objective_bottleneck
from puzzles.puzzle import Puzzle

TARGET_TRIES = 40       # recipe draws per puzzle (each one an `analyze`)
SOLVE_TRIES = 10        # full solves per puzzle before falling back
FALLBACK_TRIES = 400


@dataclass(frozen=True)
class Generated:
    puzzle: Puzzle
    key: Key
    target: tuple | None      # the (verdict, lever) aimed at; None when it fell back
    draws: int


def _try(rng, difficulty: int, level: Level, recipe, target):
    """One draw: (deployment, offered levers, key, ruled out) when `checks.keyed` keeps it, else
    None, and whether a solve ran. `target` (verdict, lever) or None; the verdict is checked
    before the (dearer) solve, on the report that aimed the draw where the recipe aimed it."""
    try:
        fields = recipe(rng, level)
        ruled_out = fields.pop("_ruled_out", {})
        report = fields.pop(REPORT, None) or analyze(deployment(fields))
    except (Skip, RidgeError):
        return None, False
    if target is not None and objective_bottleneck(report) != target[0]:
        return None, False
    target_lever = target[1] if target else None
    offered = tuple(x for x in card.offered_levers(rng, difficulty, target_lever) if x not in ruled_out)
    key, solved = keyed(report.deployment, report, offered, ruled_out, target_lever, level)
    return ((report.deployment, offered, key, ruled_out) if key else None), solved


def make(seed: int, difficulty: int, index: int) -> Generated:
    """The puzzle at (seed, difficulty, index), with its key. Deterministic on every machine."""
    if difficulty not in LEVELS:
        raise RidgeError(f"difficulty must be 1 to 5, got {difficulty}")
    rng = random.Random(f"{seed}:{difficulty}:{index}")
    level = LEVELS[difficulty]
    target = target_for(seed, difficulty, index)
    recipe = RECIPES[target]
    found = None
    draws = solves = 0
    while draws < TARGET_TRIES and solves < SOLVE_TRIES:
        draws += 1
        found, solved = _try(rng, difficulty, level, recipe, target)
        solves += solved
        if found:
            break
    hit = target if found else None
    tries = 0
    while not found:
        tries += 1
        if tries > FALLBACK_TRIES:
            raise RidgeError(f"could not draw an unambiguous puzzle for {puzzle_id(seed, difficulty, index)}")
        found, _ = _try(rng, difficulty, level, r_any, None)
    draws += tries
    dep, offered, key, ruled_out = found
    pid = puzzle_id(seed, difficulty, index)
    estimates, candidates = card.asks(rng, difficulty, key), card.reasons(rng, key)
    note = " ".join(why[0].upper() + why[1:] + "." for why in ruled_out.values())
    puzzle = Puzzle(
        id=pid, module="generated", title=title(dep), difficulty=difficulty,
        scenario=scenario(rng, dep, note), objective=dep.objective, deployment=dep, levers=offered,
        estimates=estimates, reasons=candidates, hints=hints(key), expect=None, source="generator",
        ruled_out=dict(ruled_out),
    )
    return Generated(puzzle, key, hit, draws)


def from_id(text: str) -> Generated:
    seed, difficulty, index = parse_id(text)
    return make(seed, difficulty, index)


def iter_generated(seed: int, count: int, difficulty: int | None = None, start: int = 0) -> Iterator[Generated]:
    """`generate`, one puzzle at a time, so a caller printing them holds only one in memory."""
    check_request(seed, count, start)
    for i in range(start, start + count):
        yield make(seed, difficulty if difficulty is not None else 1 + i % 5, i)


def generate(seed: int, count: int, difficulty: int | None = None, start: int = 0) -> list[Generated]:
    """`count` puzzles from index `start`; without a difficulty they cycle through levels 1-5."""
    check_request(seed, count, start)
    return list(iter_generated(seed, count, difficulty, start))


