"""Grading one locked-in prediction against the engine's key: right for the right reason?

The answer is right when the bottleneck and the best lever match the key and the gain band
matches, or is the neighbouring band while the true gain is within 10% of the edge between them.
The reason is right when the reason id matches AND every estimate the puzzle asks for is within
tolerance. Estimates are judged on a log scale: right when |ln(estimate / truth)| <= ln(1.5),
i.e. within a factor of 1.5 either way (the feedback states this tolerance).

    right answer + right reason  -> cleared
    right answer + wrong reason  -> lucky
    wrong answer + right reason  -> close
    neither                      -> missed

Points come from `puzzles.scoring.points` (certainty-based marking, less a cost per hint).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.analysis import VERDICTS
from engine.errors import RidgeError
from engine.levers import GAIN_BANDS

from puzzles import fmt
from puzzles.explain import band_text, lever_story, why_not_verdict
from puzzles.keys import BAND_EDGES, Key
from puzzles.misconceptions import detect
from puzzles.puzzle import ESTIMATE_NAMES, Puzzle
from puzzles.reasons import REASONS, reason_fact
from puzzles.scoring import CERTAINTIES, points

ESTIMATE_TOLERANCE = 1.5      # a factor either way, judged on a log scale
BAND_EDGE_TOLERANCE = 1.10    # a neighbouring band counts when the gain is within 10% of the edge


@dataclass(frozen=True)
class Prediction:
    """A locked-in answer: choices by id, a certainty level, and numeric estimates by name."""

    bottleneck: str
    lever: str
    gain_band: str
    reason: str
    certainty: str
    estimates: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"bottleneck": self.bottleneck, "lever": self.lever, "gain_band": self.gain_band,
                "reason": self.reason, "certainty": self.certainty, "estimates": dict(self.estimates)}


@dataclass(frozen=True)
class EstimateResult:
    name: str
    value: float | None
    truth: float
    right: bool

    @property
    def ratio(self) -> float | None:
        return None if not self.value or self.value <= 0 else self.value / self.truth

    def to_json(self) -> dict:
        return {"name": self.name, "value": self.value, "truth": self.truth, "ratio": self.ratio,
                "right": self.right, "tolerance": ESTIMATE_TOLERANCE}


@dataclass(frozen=True)
class Grade:
    outcome: str
    points: int
    answer_right: bool
    reason_right: bool
    parts: dict
    estimates: tuple
    feedback: tuple
    misconceptions: tuple
    key: Key = field(repr=False)

    def to_json(self) -> dict:
        return {
            "outcome": self.outcome, "points": self.points, "answer_right": self.answer_right,
            "reason_right": self.reason_right, "parts": dict(self.parts),
            "estimates": [e.to_json() for e in self.estimates],
            "feedback": list(self.feedback), "misconceptions": [m.to_json() for m in self.misconceptions],
            "key": {"bottleneck": self.key.bottleneck, "best_lever": self.key.best_lever,
                    "gain_band": self.key.gain_band, "reason": self.key.reason, "gain": self.key.gain,
                    "deciding": self.key.deciding},
        }


def outcome_for(answer_right: bool, reason_right: bool) -> str:
    if answer_right:
        return "cleared" if reason_right else "lucky"
    return "close" if reason_right else "missed"


def estimate_right(value: float | None, truth: float) -> bool:
    """Within a factor of ESTIMATE_TOLERANCE of the truth, on a log scale."""
    if value is None or truth is None or value <= 0 or truth <= 0 or not math.isfinite(value):
        return False
    return abs(math.log(value / truth)) <= math.log(ESTIMATE_TOLERANCE) + 1e-12


def band_right(chosen: str, key: Key) -> bool:
    """The key's band, or its neighbour when the true gain is within 10% of their shared edge."""
    if chosen == key.gain_band:
        return True
    if key.gain is None or chosen not in GAIN_BANDS:
        return False
    i, j = GAIN_BANDS.index(chosen), GAIN_BANDS.index(key.gain_band)
    if abs(i - j) != 1:
        return False
    edge = BAND_EDGES[min(i, j)]
    return abs(math.log(key.gain / edge)) <= math.log(BAND_EDGE_TOLERANCE)


def validate_prediction(puzzle: Puzzle, prediction: Prediction) -> None:
    """Raise RidgeError (one line) for any choice the puzzle does not offer."""
    if prediction.bottleneck not in VERDICTS:
        raise RidgeError(f"bottleneck must be one of {', '.join(VERDICTS)}, got {prediction.bottleneck!r}")
    if prediction.lever not in puzzle.levers:
        raise RidgeError(f"lever must be one of this puzzle's: {', '.join(puzzle.levers)}; got {prediction.lever!r}")
    if prediction.gain_band not in GAIN_BANDS:
        raise RidgeError(f"gain band must be one of {', '.join(GAIN_BANDS)}, got {prediction.gain_band!r}")
    if prediction.reason not in puzzle.reasons:
        raise RidgeError(f"reason must be one of this puzzle's: {', '.join(puzzle.reasons)}; got {prediction.reason!r}")
    if prediction.certainty not in CERTAINTIES:
        raise RidgeError(f"certainty must be one of {', '.join(CERTAINTIES)}, got {prediction.certainty!r}")
    for name, value in prediction.estimates.items():
        if name not in ESTIMATE_NAMES:
            raise RidgeError(f"unknown estimate '{name}' (known: {', '.join(ESTIMATE_NAMES)})")
        if name not in puzzle.estimates:
            asked = ", ".join(puzzle.estimates) or "none"
            raise RidgeError(f"this puzzle does not ask for {name} (it asks for: {asked})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise RidgeError(f"estimate {name} must be a finite number, got {value!r}")


def grade(puzzle: Puzzle, key: Key, prediction: Prediction, hints_used: int = 0) -> Grade:
    """Grade one prediction: outcome, points, per-part correctness, feedback and misconceptions."""
    validate_prediction(puzzle, prediction)
    parts = {
        "bottleneck": prediction.bottleneck == key.bottleneck,
        "lever": prediction.lever == key.best_lever,
        "gain_band": band_right(prediction.gain_band, key),
        "reason": prediction.reason == key.reason,
    }
    results = []
    for name in puzzle.estimates:
        truth = key.estimates[name]
        value = prediction.estimates.get(name)
        right = estimate_right(value, truth)
        parts[f"estimate:{name}"] = right
        results.append(EstimateResult(name, value, truth, right))
    answer_right = parts["bottleneck"] and parts["lever"] and parts["gain_band"]
    reason_right = parts["reason"] and all(e.right for e in results)
    outcome = outcome_for(answer_right, reason_right)
    misconceptions = tuple(detect(puzzle, key, prediction))
    feedback = tuple(_feedback(puzzle, key, prediction, parts, results, outcome))
    return Grade(outcome=outcome, points=points(outcome, prediction.certainty, hints_used),
                 answer_right=answer_right, reason_right=reason_right, parts=parts,
                 estimates=tuple(results), feedback=feedback, misconceptions=misconceptions, key=key)


_OUTCOME_TEXT = {
    "cleared": "Cleared: the right answer for the right reason.",
    "lucky": "Lucky: the right answer, but not for the reason that decides it.",
    "close": "Close: the reasoning holds, but the answer drawn from it is off.",
    "missed": "Missed: neither the answer nor the reason.",
}


def _feedback(puzzle: Puzzle, key: Key, p: Prediction, parts: dict, results: list, outcome: str) -> list[str]:
    lines = [_OUTCOME_TEXT[outcome]]
    if parts["bottleneck"]:
        lines.append(f"Bottleneck right: {why_not_verdict(key.bottleneck, key)}.")
    else:
        lines.append(f"Bottleneck: you said {why_not_verdict(p.bottleneck, key)}.")
    if parts["lever"]:
        lines.append(f"Lever right: {lever_story(key.best_lever, key)}.")
    else:
        lines.append(f"Lever: you chose {lever_story(p.lever, key)}.")
        lines.append(f"The best offered is {lever_story(key.best_lever, key)}.")
    gain = fmt.gain(key.gain) if key.gain is not None else "unbounded (it makes the deployment fit)"
    if parts["gain_band"]:
        note = "" if p.gain_band == key.gain_band else f" (next to {band_text(key.gain_band)}, and the gain is near the edge)"
        lines.append(f"Gain band right: {key.best_lever} gains {gain}{note}.")
    else:
        lines.append(f"Gain band: you said {band_text(p.gain_band)}; {key.best_lever} gains {gain}, "
                     f"which is {band_text(key.gain_band)}.")
    if parts["reason"]:
        lines.append(f"Reason right: {key.deciding}.")
    else:
        lines.append(f"Reason: you picked '{REASONS[p.reason]}', but here {reason_fact(p.reason, key.solution)}. "
                     f"What decides it: {key.deciding}.")
    for e in results:
        if e.value is None:
            lines.append(f"Estimate {e.name}: not given; it is {fmt.value(e.name, e.truth)}.")
            continue
        verdict = "right" if e.right else "wrong"
        lines.append(f"Estimate {e.name}: you said {fmt.value(e.name, e.value)}, the engine has "
                     f"{fmt.value(e.name, e.truth)} ({e.ratio:.2f}x; {verdict}: the tolerance is a factor of "
                     f"{ESTIMATE_TOLERANCE:g} either way on a log scale).")
    return lines
