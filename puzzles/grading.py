"""THE grader: one locked-in prediction against the engine's key. Every mode calls `grade` (the
campaign, `ridge answer`, the drill, the exam, hot-seat, match files, the simulator and the live
host); nothing else decides an outcome.

What is judged, part by part (each part says what you said, what the engine says, and whether it
is right; `Grade.parts`):

- the answer: the bottleneck (what bounds the puzzle's objective: `objective_bottleneck`), the
  best lever, and the band of its gain. A gain within 10% of a band edge accepts both bands.
- the reason: the reason id, right when it holds and decides here (`reasons.accepted_reasons`:
  the key's reason, the bottleneck's own quantity, or the best lever's mechanism), plus every
  estimate that IS the reason in numbers: one that quantifies an accepted reason
  (`reasons.MEASURES`), the napkin question a drill or exam item asks, or any estimate when no
  reason id is asked. Estimates are right within a factor of 1.5 either way, on a log scale.
- a check on your working: any other estimate. It is marked and shown beside the engine's value,
  and costs nothing: a wrong one never changes the outcome or the points.

    right answer + right reason  -> cleared
    right answer + wrong reason  -> lucky
    wrong answer + right reason  -> close
    neither                      -> missed

The parts that decided the outcome are marked `decided`: the reason for cleared (it made the
answer more than lucky) or lucky, the wrong answer parts for close, every wrong part for missed.
Points come from `puzzles.scoring.points` (certainty-based marking, less a cost per hint).

`strict=True` (the command line, the JSON API) refuses, in one line, anything the puzzle does not
offer. `strict=False` (timed modes, where the clock can stop a half-filled form) grades blanks
and unknown ids as wrong, and a blank certainty as low.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine import bands as engine_bands
from engine.errors import RidgeError
from engine.ids import Certainty, GainBand, Lever, Outcome, Verdict

from puzzles import fmt
from puzzles.explain import band_text, lever_story, why_not_verdict
from puzzles.keys import Key, shown_gain
from puzzles.puzzle import ESTIMATE_NAMES, Puzzle
from puzzles.questions import QUESTIONS, SPEC_FIELD, SPEC_HELPS_ABOVE
from puzzles.reasons import MEASURES, REASONS, Reason, accepted_reasons, reason_fact
from puzzles.scoring import ESTIMATE_TOLERANCE, estimate_right, outcome_for, points

ANSWER, REASON, CHECK = "answer", "reason", "check"
ANSWER_PARTS = ("bottleneck", "lever", "gain_band")


_ENUMS = {"bottleneck": Verdict, "lever": Lever, "gain_band": GainBand, "reason": Reason, "certainty": Certainty}
_KNOWN = {name: frozenset(enum) for name, enum in _ENUMS.items()}


@dataclass(frozen=True)
class Prediction:
    """A locked-in answer: choices by id (blank "" when not given), a certainty level, numeric
    estimates by name and, for the napkin yes/no, `spec_helps` ("yes", "no" or "")."""

    bottleneck: Verdict | str = ""
    lever: Lever | str = ""
    gain_band: GainBand | str = ""
    reason: Reason | str = ""
    certainty: Certainty | str = ""
    estimates: Mapping[str, float] = field(default_factory=dict)
    spec_helps: str = ""

    @classmethod
    def of(cls, value: Prediction | Mapping[str, Any]) -> Prediction:
        """A Prediction from itself or from a form's dict of ids (None and missing are blank)."""
        if isinstance(value, Prediction):
            value = {**value.to_json(), SPEC_FIELD: value.spec_helps, "estimates": value.estimates}
        text = {k: str(value.get(k) or "") for k in
                ("bottleneck", "lever", "gain_band", "reason", "certainty", SPEC_FIELD)}
        for name, enum in _ENUMS.items():   # ids the game knows become its enums; others stay text (graded wrong)
            if text[name] in _KNOWN[name]:
                text[name] = enum(text[name])
        estimates = value.get("estimates") or {}
        return cls(estimates=dict(estimates) if isinstance(estimates, Mapping) else {}, **text)

    def to_json(self) -> dict:
        out = {"bottleneck": str(self.bottleneck), "lever": str(self.lever), "gain_band": str(self.gain_band),
               "reason": str(self.reason), "certainty": str(self.certainty), "estimates": dict(self.estimates)}
        if self.spec_helps:
            out[SPEC_FIELD] = self.spec_helps
        return out


@dataclass(frozen=True)
class Part:
    """One part judged: its name (`bottleneck`, `lever`, `gain_band`, `reason`, `estimate:<name>`,
    `spec_helps`), what you said (None when blank), the engine's value, whether yours is right,
    what it counts toward (answer, reason, or a check that changes nothing), whether it decided
    the outcome, and a note on how it was judged."""

    name: str
    yours: Any
    engine: Any
    right: bool
    counts: str
    decided: bool = False
    note: str = ""

    @property
    def estimate(self) -> str | None:
        """The estimate's name for an estimate part, else None."""
        return self.name.split(":", 1)[1] if self.name.startswith("estimate:") else None

    @property
    def ratio(self) -> float | None:
        """Yours over the engine's, for a number given and positive."""
        if not isinstance(self.yours, (int, float)) or not isinstance(self.engine, (int, float)):
            return None
        return self.yours / self.engine if self.yours > 0 and self.engine > 0 else None

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Part:
        """A part back from its JSON row (what the live host sends a player after the close)."""
        return cls(str(row.get("name", "")), row.get("yours"), row.get("engine"), bool(row.get("right")),
                   str(row.get("counts", REASON)), bool(row.get("decided")), str(row.get("note", "")))

    def to_json(self) -> dict:
        engine = self.engine if not isinstance(self.engine, float) or math.isfinite(self.engine) else None
        out = {"name": self.name, "yours": self.yours, "engine": engine, "right": self.right,
               "decided": self.decided, "counts": self.counts}
        if self.note:
            out["note"] = self.note
        if self.estimate is not None:
            out.update(ratio=self.ratio, tolerance=ESTIMATE_TOLERANCE)
        return out


@dataclass(frozen=True)
class Grade:
    """The one result of grading: outcome, points, the certainty used, every part judged, what
    was left blank, feedback lines in the engine's words, named misconceptions, and the key."""

    outcome: Outcome
    points: int
    certainty: Certainty
    parts: tuple[Part, ...]
    blanks: tuple[str, ...]
    feedback: tuple[str, ...]
    misconceptions: tuple
    key: Any = field(repr=False)
    prediction: Prediction = field(default_factory=Prediction, repr=False)

    def part(self, name: str) -> Part | None:
        return next((p for p in self.parts if p.name == name), None)

    def right(self, name: str) -> bool:
        part = self.part(name)
        return bool(part and part.right)

    @property
    def marks(self) -> dict[str, bool]:
        """Each part's name -> right."""
        return {p.name: p.right for p in self.parts}

    @property
    def answer_right(self) -> bool:
        return all(p.right for p in self.parts if p.counts == ANSWER)

    @property
    def reason_right(self) -> bool:
        return self.outcome in (Outcome.CLEARED, Outcome.CLOSE)

    @property
    def decided(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.decided)

    @property
    def estimates(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.estimate is not None)

    @property
    def napkin_right(self) -> bool:
        """Every estimate and the yes/no right (true when none was asked)."""
        return all(p.right for p in self.parts if p.estimate is not None or p.name == SPEC_FIELD)

    def to_json(self) -> dict:
        key = self.key
        return {
            "outcome": str(self.outcome), "points": self.points, "certainty": str(self.certainty),
            "answer_right": self.answer_right, "reason_right": self.reason_right,
            "parts": [p.to_json() for p in self.parts],
            "decided": [p.name for p in self.decided],
            "estimates": [p.to_json() for p in self.estimates],
            "blanks": list(self.blanks),
            "feedback": list(self.feedback), "misconceptions": [m.to_json() for m in self.misconceptions],
            "key": {"bottleneck": objective_bottleneck(key), "best_lever": key.best_lever,
                    "gain_band": key.gain_band, "reason": key.reason, "gain": key.gain,
                    "deciding": key.deciding},
        }


# --- the rules, one function each --------------------------------------------------------------


def accepted_bands(key) -> frozenset[str]:
    """Every band the key accepts (`puzzles.keys`: the realistic gain's band, and its neighbour
    within 10% of an edge). A key without that list (a hand-made one) accepts its own band and
    what `engine.bands` accepts for its gain."""
    bands = getattr(key, "gain_bands", None)
    if bands:
        return frozenset(str(b) for b in bands)
    return frozenset({str(key.gain_band), *engine_bands.bands_for(key.gain)})


def band_right(chosen: str, key) -> bool:
    """The key's band, or its neighbour when the true gain is within 10% of their shared edge."""
    return chosen in accepted_bands(key)


def objective_bottleneck(key) -> Verdict:
    """The bottleneck a key is judged on: what bounds its puzzle's objective (the key holds the
    engine's `Report.objective_bottleneck`, DESIGN.md "What the bottleneck question asks")."""
    return Verdict(key.bottleneck)


def estimate_counts(name: str, reasons: frozenset[str], asks_reason: bool, napkin: tuple[str, ...]) -> str:
    """Whether an estimate is part of the reason (it quantifies an accepted reason, it is the
    napkin question asked, or no reason id is asked) or only a check on the working."""
    if not asks_reason or name in napkin or any(name in MEASURES.get(r, ()) for r in reasons):
        return REASON
    return CHECK


def validate_prediction(puzzle: Puzzle, prediction: Prediction, asks_reason: bool = True) -> None:
    """Raise RidgeError (one line) for any choice the puzzle does not offer."""
    verdicts = puzzle.verdicts
    if prediction.bottleneck not in verdicts:
        raise RidgeError(f"bottleneck must be one of {', '.join(verdicts)} for a {puzzle.objective} puzzle, "
                         f"got '{prediction.bottleneck}'")
    if prediction.lever not in puzzle.levers:
        raise RidgeError(f"lever must be one of this puzzle's: {', '.join(puzzle.levers)}; got '{prediction.lever}'")
    if prediction.gain_band not in list(GainBand):
        raise RidgeError(f"gain band must be one of {', '.join(GainBand)}, got '{prediction.gain_band}'")
    if asks_reason and puzzle.reasons and prediction.reason not in puzzle.reasons:
        raise RidgeError(f"reason must be one of this puzzle's: {', '.join(puzzle.reasons)}; got '{prediction.reason}'")
    if prediction.certainty not in list(Certainty):
        raise RidgeError(f"certainty must be one of {', '.join(Certainty)}, got '{prediction.certainty}'")
    for name, value in prediction.estimates.items():
        if name not in ESTIMATE_NAMES:
            raise RidgeError(f"unknown estimate '{name}' (known: {', '.join(ESTIMATE_NAMES)})")
        if name not in puzzle.estimates:
            asked = ", ".join(puzzle.estimates) or "none"
            raise RidgeError(f"this puzzle does not ask for {name} (it asks for: {asked})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise RidgeError(f"estimate {name} must be a finite number, got {value!r}")


# --- the grader ----------------------------------------------------------------------------------

def grade(puzzle: Puzzle, key, prediction: Prediction | Mapping[str, Any], hints_used: int = 0, *,
          napkin: str | None = None, spec_gain: float | None = None, ask_reason: bool = True,
          strict: bool = True) -> Grade:
    """Grade one prediction against `key` (the engine's key for `puzzle`). `napkin` names the
    napkin question a drill or exam item adds (its estimates, or the yes/no with `spec_gain`,
    the engine's gain from speculating); `ask_reason=False` when the mode asks no reason id."""
    from puzzles.misconceptions import detect

    p = Prediction.of(prediction)
    asks_reason = ask_reason and bool(puzzle.reasons)
    if strict:
        validate_prediction(puzzle, p, asks_reason)
    verdict = objective_bottleneck(key)
    reasons = accepted_reasons(key.solution, verdict)
    question = QUESTIONS.get(napkin) if napkin else None
    napkin_estimates = tuple(question.estimates) if question else ()
    blanks = [name for name in ANSWER_PARTS if not getattr(p, name)]

    bands = accepted_bands(key)
    band_note = ""
    if len(bands) > 1:
        band_note = "the gain is within 10% of a band edge, so the neighbouring band counts too"
    parts = [
        Part("bottleneck", p.bottleneck or None, verdict, p.bottleneck == verdict, ANSWER),
        Part("lever", p.lever or None, key.best_lever, p.lever == key.best_lever, ANSWER),
        Part("gain_band", p.gain_band or None, key.gain_band, p.gain_band in bands, ANSWER, note=band_note),
    ]
    if asks_reason:
        note = "" if p.reason == key.reason or p.reason not in reasons else "it also holds and decides here"
        parts.append(Part("reason", p.reason or None, key.reason, p.reason in reasons, REASON, note=note))
        if not p.reason:
            blanks.append("reason")
    for name in puzzle.estimates:
        value = p.estimates.get(name)
        counts = estimate_counts(name, reasons, asks_reason, napkin_estimates)
        note = ("it quantifies the deciding reason, so it counts toward the reason" if counts == REASON
                else "a check on your working: it does not change the outcome")
        parts.append(Part(f"estimate:{name}", value, key.estimates.get(name), estimate_right(value, key.estimates.get(name)),
                          counts, note=note))
        if value is None:
            blanks.append(name)
    if question is not None and question.yes_no:
        helps = None if spec_gain is None else spec_gain > SPEC_HELPS_ABOVE
        engine = None if helps is None else ("yes" if helps else "no")
        said = p.spec_helps if p.spec_helps in ("yes", "no") else None
        parts.append(Part(SPEC_FIELD, said, engine, said is not None and said == engine, REASON))
        if said is None:
            blanks.append(SPEC_FIELD)
    certainty = Certainty(p.certainty) if p.certainty in list(Certainty) else Certainty.LOW
    if not p.certainty:
        blanks.append("certainty")

    answer_right = all(x.right for x in parts if x.counts == ANSWER)
    reason_parts = [x for x in parts if x.counts == REASON]
    reason_right = all(x.right for x in reason_parts) if reason_parts else answer_right
    outcome = outcome_for(answer_right, reason_right)
    parts = [_with_decided(x, outcome, bool(reason_parts)) for x in parts]
    misconceptions = tuple(detect(puzzle, key, p))
    feedback = tuple(_feedback(key, p, verdict, parts, outcome))
    return Grade(outcome=outcome, points=points(outcome, certainty, hints_used), certainty=certainty,
                 parts=tuple(parts), blanks=tuple(blanks), feedback=feedback, misconceptions=misconceptions,
                 key=key, prediction=p)


def _with_decided(part: Part, outcome: Outcome, has_reason: bool) -> Part:
    """Mark the parts that set the outcome: the reason for cleared and lucky (the right ones for
    cleared, the wrong ones for lucky), the wrong answer parts for close, every wrong part for
    missed. With no reason asked, cleared is decided by the answer itself."""
    if outcome == Outcome.CLEARED:
        decided = part.counts == (REASON if has_reason else ANSWER)
    elif outcome == Outcome.LUCKY:
        decided = part.counts == REASON and not part.right
    elif outcome == Outcome.CLOSE:
        decided = part.counts == ANSWER and not part.right
    else:
        decided = part.counts != CHECK and not part.right
    if not decided:
        return part
    return Part(part.name, part.yours, part.engine, part.right, part.counts, True, part.note)


# --- words -----------------------------------------------------------------------------------------

OUTCOME_TEXT = {
    Outcome.CLEARED: "Cleared: the right answer for the right reason.",
    Outcome.LUCKY: "Lucky: the right answer, but not for the reason that decides it.",
    Outcome.CLOSE: "Close: the reasoning holds, but part of the answer drawn from it is wrong.",
    Outcome.MISSED: "Missed: neither the answer nor the reason.",
}

PART_TITLES = {"bottleneck": "Bottleneck", "lever": "Best lever", "gain_band": "Its gain", "reason": "Because",
               SPEC_FIELD: "Speculative decoding helps?"}


def plain_words(kind: str, ident: str) -> str:
    """Ids as the engine's own text names them (screens pass `app.labels.words` instead)."""
    if not ident:
        return "(blank)"
    return REASONS.get(ident, ident) if kind == "reason" else str(ident)


def part_title(part: Part, words: Callable[[str, str], str] = plain_words) -> str:
    if part.estimate is not None:
        return words("estimate", part.estimate)
    return PART_TITLES.get(part.name, part.name)


def value_text(part: Part, value: Any, words: Callable[[str, str], str] = plain_words) -> str:
    """A part's value (yours or the engine's) in words: ids through `words`, numbers with units."""
    if value is None:
        return "(blank)"
    if part.estimate is not None:
        return fmt.value(part.estimate, value)
    kind = {"bottleneck": "bottleneck", "lever": "lever", "gain_band": "band", "reason": "reason"}.get(part.name)
    return words(kind, str(value)) if kind else str(value)


_DECIDED_NAMES = {"bottleneck": "the bottleneck", "lever": "the best lever", "gain_band": "the gain band",
                  "reason": "the reason", SPEC_FIELD: "whether speculative decoding helps"}


def decided_text(grade: Grade, words: Callable[[str, str], str] = plain_words) -> str:
    """One line naming the part(s) that decided the outcome."""
    return decided_line(grade.outcome, grade.parts, words)


def decided_line(outcome: str, parts: Sequence[Part], words: Callable[[str, str], str] = plain_words) -> str:
    """`decided_text` for an outcome and its parts (as a JSON reader rebuilds them)."""
    names = [f"your estimate of {part_title(p, words)}" if p.estimate is not None else _DECIDED_NAMES.get(p.name, p.name)
             for p in parts if p.decided]
    said = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    if outcome == Outcome.CLEARED:
        return f"Decided by {said or 'the answer'}: right, so the right answer is cleared."
    if outcome == Outcome.LUCKY:
        return f"Decided by {said}: wrong, so the right answer is only lucky."
    if outcome == Outcome.CLOSE:
        return f"Decided by {said}: wrong, though the reasoning holds."
    return f"Decided by {said or 'every part'}: wrong."


def part_lines(grade: Grade, words: Callable[[str, str], str] = plain_words) -> list[str]:
    """One line per part judged: ✓ or ✗, yours, the engine's, and how it counted; ◆ marks a part
    that decided the outcome."""
    return lines_for_parts(grade.parts, _gain_words(grade.key), words)


def _gain_words(key) -> str:
    """The best lever's gain as the reveal states it (the realistic figure, the floor's as its
    ceiling); a hand-made key without them shows its one gain."""

    if isinstance(key, Key):
        return shown_gain(key)
    return fmt.gain(key.gain) if key.gain is not None else "it makes the deployment fit"


def lines_for_parts(parts: Sequence[Part], gain_value: float | str | None,
                    words: Callable[[str, str], str] = plain_words) -> list[str]:
    """`part_lines` for parts and the best lever's gain, a number or the words for it (as a JSON
    reader rebuilds them)."""
    lines = []
    for part in parts:
        mark = "✓" if part.right else "✗"
        decided = " ◆" if part.decided else ""
        line = f"{mark}{decided} {part_title(part, words)}: {value_text(part, part.yours, words)}"
        if part.estimate is not None:
            ratio = f", {part.ratio:.2f}×" if part.ratio else ""
            line += f" → engine: {value_text(part, part.engine, words)}{ratio}"
            if part.counts == CHECK:
                line += " (a check on your working; it does not change the outcome)"
        elif part.name == "gain_band":
            if isinstance(gain_value, str):
                gain = gain_value
            else:
                gain = fmt.gain(gain_value) if gain_value is not None else "it makes the deployment fit"
            line += f" → engine: {value_text(part, part.engine, words)} ({gain})"
            if part.note:
                line += f"; {part.note}"
        elif part.name == SPEC_FIELD:
            line += f" → engine: {part.engine}"
        elif not part.right or part.note:
            line += f" → engine: {value_text(part, part.engine, words)}"
            if part.note:
                line += f" ({part.note})"
        lines.append(line)
    return lines


def reveal_lines(grade: Grade, words: Callable[[str, str], str] = plain_words) -> list[str]:
    """The compact reveal every quick mode shows: what decided it, each part, what decides it."""
    return [decided_text(grade, words), *part_lines(grade, words), f"What decides it: {grade.key.deciding}."]


def _feedback(key, p: Prediction, verdict: Verdict, parts: list[Part], outcome: Outcome) -> list[str]:
    """The engine's explanation, part by part, with this deployment's numbers."""
    by_name = {x.name: x for x in parts}
    lines = [OUTCOME_TEXT[outcome]]
    if p.bottleneck == verdict:
        lines.append(f"Bottleneck right: {why_not_verdict(verdict, key, verdict)}.")
    elif p.bottleneck:
        lines.append(f"Bottleneck: you said {why_not_verdict(p.bottleneck, key, verdict)}.")
    if by_name["lever"].right:
        lines.append(f"Lever right: {lever_story(key.best_lever, key)}.")
    else:
        if p.lever:
            lines.append(f"Lever: you chose {lever_story(p.lever, key)}.")
        lines.append(f"The best offered is {lever_story(key.best_lever, key)}.")
    gain = _gain_words(key) if key.gain is not None else "unbounded (it makes the deployment fit)"
    if by_name["gain_band"].right:
        note = "" if p.gain_band == key.gain_band else f" (next to {band_text(key.gain_band)}, and the gain is near the edge)"
        lines.append(f"Gain band right: {key.best_lever} gains {gain}{note}.")
    elif p.gain_band in list(GainBand):
        lines.append(f"Gain band: you said {band_text(p.gain_band)}; {key.best_lever} gains {gain}, "
                     f"which is {band_text(key.gain_band)}.")
    reason = by_name.get("reason")
    if reason is not None:
        if reason.right and p.reason == key.reason:
            lines.append(f"Reason right: {key.deciding}.")
        elif reason.right:
            lines.append(f"Reason right: '{REASONS[p.reason]}' holds and decides here "
                         f"({reason_fact(p.reason, key.solution)}). The key names {key.deciding}.")
        elif p.reason in REASONS:
            lines.append(f"Reason: you picked '{REASONS[p.reason]}', but here {reason_fact(p.reason, key.solution)}. "
                         f"What decides it: {key.deciding}.")
    for part in parts:
        if part.estimate is None:
            continue
        name, truth = part.estimate, part.engine
        counts = ("it counts toward the reason" if part.counts == REASON
                  else "a check on your working, so it does not change the outcome")
        if part.yours is None:
            lines.append(f"Estimate {name}: not given; it is {fmt.value(name, truth)} ({counts}).")
            continue
        verdict_word = "right" if part.right else "wrong"
        lines.append(f"Estimate {name}: you said {fmt.value(name, part.yours)}, the engine has "
                     f"{fmt.value(name, truth)} ({part.ratio:.2f}x; {verdict_word}: the tolerance is a factor of "
                     f"{ESTIMATE_TOLERANCE:g} either way on a log scale; {counts})." if part.ratio else
                     f"Estimate {name}: you said {fmt.value(name, part.yours)}, the engine has "
                     f"{fmt.value(name, truth)} ({verdict_word}; {counts}).")
    return lines
