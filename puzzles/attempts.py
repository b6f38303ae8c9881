"""What one attempt records, built once for every mode: the puzzle, the mode, the locked-in
prediction, the graded outcome, the key it was judged against, and where a generated puzzle came
from, as the plain fields `saves.model.AttemptIn` validates.

Every mode (the campaign, `ridge answer`, drill, exam, hot-seat, match, the live host) hands its
`puzzles.grading.Grade` here, so an attempt means the same thing whichever screen wrote it:
- the certainty is the one graded (a blank certainty was graded, and is recorded, as low);
- the key is the one the prediction was judged against (the bottleneck of the puzzle's objective);
- a generated puzzle always keeps its provenance (seed, difficulty, index, read from its id), so
  it can be made again; a built-in puzzle has none;
- the napkin yes/no is kept among the estimates as 1 (yes) or 0 (no), the save format's way.
Imports no Textual and no saves: `saves` validates and writes what this returns.

Scores are derived, never trusted (DESIGN.md "Saves"). An attempt keeps, beside the outcome, the
key it was judged against in full (the accepted bands and reasons too), the engine version that
keyed it and a fingerprint of the two. On load `supported_outcome` re-grades the prediction
against that recorded key, never against today's: when the engine re-keys a puzzle, a learner's
past answers keep the score they earned, and an outcome the prediction does not earn under its
own key never counts. A record whose fingerprint does not match its key counts not at all.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from engine.ids import Outcome

KEY_FORMAT = "ridge-key/1"  # what a fingerprint covers; bump it if key_fields changes shape


def generator_ref(puzzle) -> dict[str, int] | None:
    """{seed, difficulty, index} of a generated puzzle (from its id), None for a built-in one."""
    if not puzzle.generated:
        return None
    from puzzles.generator import parse_id

    seed, difficulty, index = parse_id(puzzle.id)
    return {"seed": seed, "difficulty": difficulty, "index": index}


def prediction_fields(grade) -> dict[str, Any]:
    """The locked-in prediction as the save holds it."""
    from puzzles.scoring import SPEC_FIELD

    p = grade.prediction
    estimates = {str(k): float(v) for k, v in p.estimates.items()}
    if p.spec_helps in ("yes", "no"):
        estimates[SPEC_FIELD] = 1.0 if p.spec_helps == "yes" else 0.0
    return {"bottleneck": str(p.bottleneck), "lever": str(p.lever), "gain_band": str(p.gain_band),
            "reason": str(p.reason), "certainty": str(grade.certainty), "estimates": estimates}


def key_fields(grade) -> dict[str, Any]:
    """The key the prediction was judged against, with every band and reason it accepted, so the
    outcome can be graded again from the record alone."""
    from puzzles.grading import accepted_bands, objective_bottleneck
    from puzzles.reasons import accepted_reasons

    from puzzles.grading import REASON
    from puzzles.scoring import SPEC_FIELD

    key = grade.key
    verdict = objective_bottleneck(key)
    values = {}
    for part in grade.parts:
        if part.counts == REASON and (part.estimate is not None or part.name == SPEC_FIELD):
            truth = part.engine
            if part.name == SPEC_FIELD:
                truth = {"yes": 1.0, "no": 0.0}.get(truth)
            values[part.estimate or part.name] = -1.0 if truth is None else float(truth)
    return {"bottleneck": str(verdict), "best_lever": str(key.best_lever),
            "gain_band": str(key.gain_band), "reason": str(key.reason or ""),
            "bands": sorted(accepted_bands(key)), "reasons": sorted(accepted_reasons(key.solution, verdict)),
            "reason_asked": grade.part("reason") is not None, "reason_values": values}


@lru_cache(maxsize=1)
def engine_version() -> str:
    """The version of Ridge that keys puzzles now (recorded with every attempt)."""
    from importlib import metadata

    try:
        return f"ridge {metadata.version('ridge')}"
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "ridge unknown"


def fingerprint(engine: str, key: Mapping[str, Any]) -> str:
    """sha256 (hex, 32 characters) of the engine version and the key's canonical JSON."""
    body = json.dumps(dict(key), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{KEY_FORMAT}\n{engine}\n{body}".encode("utf-8")).hexdigest()[:32]


def _possible(known: bool | None) -> tuple[bool, ...]:
    return (known,) if known is not None else (True, False)


def supported_outcome(prediction: Mapping[str, Any], key: Mapping[str, Any] | None, outcome: str) -> str:
    """The outcome a recorded attempt counts at: `outcome` when grading `prediction` against
    `key` (the key it was answered under) can give it, else the worst outcome it can give.

    Each half of the grade is decided from the record where it can be: the answer (bottleneck,
    lever, band among the accepted `bands`) and the reason (the reason id among the accepted
    `reasons`). What the record cannot decide (numeric estimates, whose true values are not kept;
    a key from before the accepted bands and reasons were kept) may go either way. With no key
    at all (version 1 saves kept none) nothing can be checked: the recorded outcome stands."""
    from puzzles.scoring import outcome_for

    if not key:
        return outcome
    if key.get("reason_values") is not None and key.get("bands"):
        return _graded_again(prediction, key)
    band = str(prediction.get("gain_band", ""))
    bands = key.get("bands")
    if bands:
        band_right: bool | None = band in bands
    else:  # an older key: its own band is right; a neighbour may have been accepted
        band_right = True if band == key.get("gain_band") else None
    fixed = (prediction.get("bottleneck") == key.get("bottleneck")
             and prediction.get("lever") == key.get("best_lever"))
    answer = False if not fixed or band_right is False else band_right
    reason_id = str(prediction.get("reason", ""))
    estimates = bool(prediction.get("estimates"))

    def reasons_for(right: bool) -> set[bool]:
        if not reason_id:  # no reason asked (the answer decides), or left blank (wrong); or estimates
            return {right, False} | ({True} if estimates else set())
        accepted = key.get("reasons")
        if accepted:
            return {False} if reason_id not in accepted else ({True, False} if estimates else {True})
        return {True, False} if reason_id != key.get("reason") or estimates else {True}

    options = {str(outcome_for(a, r)) for a in _possible(answer) for r in reasons_for(a)}
    if outcome in options:
        return outcome
    order = [str(o) for o in (Outcome.MISSED, Outcome.CLOSE, Outcome.LUCKY, Outcome.CLEARED)]
    return min(options, key=order.index)


def _graded_again(prediction: Mapping[str, Any], key: Mapping[str, Any]) -> str:
    """The outcome `prediction` earns against a key that kept everything its grade was made of
    (`key_fields`): the same rules as `puzzles.grading.grade`, decided from the record alone."""
    from puzzles.scoring import SPEC_FIELD, estimate_right, outcome_for

    answer = (prediction.get("bottleneck") == key.get("bottleneck")
              and prediction.get("lever") == key.get("best_lever")
              and prediction.get("gain_band") in key["bands"])
    said = prediction.get("estimates") or {}
    parts = [str(prediction.get("reason", "")) in key.get("reasons", ())] if key.get("reason_asked") else []
    for name, truth in key["reason_values"].items():
        value = said.get(name)
        parts.append(value == truth if name == SPEC_FIELD else estimate_right(value, truth if truth > 0 else None))
    return str(outcome_for(answer, all(parts) if parts else answer))


def attempt_fields(puzzle, grade, *, mode: str, locked_at: _dt.datetime, hints_used: int = 0,
                   seconds: float | None = None) -> dict[str, Any]:
    """One attempt's fields, ready for `saves.model.AttemptIn.model_validate`."""
    fields: dict[str, Any] = {
        "puzzle_id": puzzle.id, "module": puzzle.module, "mode": mode,
        "prediction": prediction_fields(grade), "outcome": str(grade.outcome),
        "hints_used": int(hints_used), "locked_at": locked_at,
        "seconds_taken": None if seconds is None else round(max(0.0, float(seconds)), 3),
        "key": key_fields(grade),
    }
    ref = generator_ref(puzzle)
    if ref is not None:
        fields["generator"] = ref
    return fields
