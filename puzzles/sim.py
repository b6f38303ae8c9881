"""Predict first in the simulator: the player's bottleneck, best lever and gain band judged by the
one grader against the key the puzzles would compute for the simulator's deployment. The
simulator asks no reason and no certainty, so the outcome here is cleared (the answer right) or
missed."""
from __future__ import annotations

from weakref import WeakKeyDictionary

from engine.errors import RidgeError
from engine.ids import GainBand, Lever, Verdict
from engine.levers import LEVERS
from engine.sim.result import Result
from puzzles.grading import grade
from puzzles.keys import Key, key_from_solution, solve_both
from puzzles.puzzle import Puzzle

_KEYS: WeakKeyDictionary[Result, Key] = WeakKeyDictionary()


def sim_key(result: Result) -> Key:
    """The answer key the puzzles module would compute for this deployment (the floor's figures,
    the band keyed on the realistic gain), whatever fidelity the simulator shows; kept with the
    result, since a result never changes."""
    if result not in _KEYS:
        levers = tuple(lv.name for lv in result.solution.levers)
        _KEYS[result] = key_from_solution(*solve_both(result.deployment, levers))
    return _KEYS[result]


def sim_puzzle(result: Result) -> Puzzle:
    """The simulator's deployment as a puzzle the grader can judge: every lever on offer."""
    dep = result.deployment
    return Puzzle(id="simulator", module="clearing-test", title="the simulator's deployment", difficulty=3,
                  scenario="", objective=dep.objective, deployment=dep, levers=tuple(LEVERS), estimates=(),
                  reasons=(), hints=())


def grade_prediction(result: Result | None, bottleneck: str, lever: str, band: str):
    """Grade bottleneck, best lever and gain band by the one grader (`puzzles.grading.grade`):
    RidgeError for an id the game does not know, or before there is a result; a verdict that
    cannot bound the objective is simply wrong."""
    if result is None:
        raise RidgeError("there is no result to grade against yet")
    for what, value, known in (("bottleneck", bottleneck, Verdict), ("lever", lever, Lever), ("gain band", band, GainBand)):
        if value not in list(known):
            raise RidgeError(f"{what} must be one of {', '.join(known)}, got {value!r}")
    prediction = {"bottleneck": bottleneck, "lever": lever, "gain_band": band, "certainty": "low"}
    return grade(sim_puzzle(result), sim_key(result), prediction, ask_reason=False, strict=False)


def grade_lines(g, words) -> list[str]:
    """The simulator's verdict on a locked prediction: cleared or missed, the part that decided
    it, then every part judged (`words` gives an id's words by kind)."""
    from engine.ids import Outcome
    from puzzles.grading import decided_text, part_lines

    head = "✓ Cleared" if g.outcome == Outcome.CLEARED else "✗ Missed"
    return [f"{head}. {decided_text(g, words)}", *part_lines(g, words)]


def knee_lines(guess: float, curve, short) -> list[str]:
    """The Load tab's verdict on the player's knee against the engine's (its knee, or its
    capacity where the curve has none): right within the estimates' factor of 1.5. `short`
    writes a rate as the plots do."""
    from puzzles.grading import estimate_right

    truth = curve.knee_qps if curve.knee_qps is not None else curve.saturation_qps
    verdict = "✓ right" if estimate_right(guess, truth) else "✗ off"
    return [f"{verdict}: your knee {short(guess)} req/s, the engine's {short(truth)} req/s "
            "(right within a factor of 1.5)", ""]
