"""The clearing test's napkin questions, and judging one item of a drill, exam or competition.

An item is a puzzle plus, optionally, one napkin question the player answers unaided:

- `napkin-intensity`: the decode step's arithmetic intensity and the hardware's ridge point, both
  in FLOP per byte; how far the deployment sits from the ridge is their ratio.
- `napkin-concurrency`: how many sequences fit in the KV cache at once (max concurrency).
- `napkin-spec`: at this batch, would speculative decoding (a 4-token draft) improve the puzzle's
  goal? Yes or no.
- `napkin-cost`: dollars per million output tokens. These items always have the cost objective,
  so the puzzle's best lever is the single change that moves the cost most.

Numbers are judged on a log scale, right within a factor of `TOLERANCE` either way (the same rule
as `puzzles.grading`). Speculative decoding counts as helping when its gain is above
`SPEC_HELPS_ABOVE`; an item only asks when the gain is clearly on one side of that line.

`judge` grades a prediction that may have gaps (a drill's timer can run out part-way): a missing
part is simply wrong, and a missing certainty counts as low. The outcome follows the game's rule:
the answer (bottleneck, best lever, gain band) and the reason (the reason id when asked, every
estimate asked, the yes/no) give cleared, lucky, close or missed. Imports no Textual.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from engine.analysis import analyze
from engine.levers import evaluate_lever

from puzzles import fmt
from puzzles.grading import ESTIMATE_TOLERANCE, band_right, estimate_right, outcome_for
from puzzles.keys import Key
from puzzles.puzzle import Puzzle
from puzzles.scoring import CERTAINTIES, points

TOLERANCE = ESTIMATE_TOLERANCE
SPEC_HELPS_ABOVE = 1.05   # a gain above this counts as "helps"
SPEC_CLEAR = 1.07         # asked only when the gain is at least this factor away from that line
SPEC_FIELD = "spec_helps"
SPEC_CHOICES = (("yes", "yes, it improves the goal here"), ("no", "no, not at this batch"))


@dataclass(frozen=True)
class NapkinQuestion:
    id: str
    title: str
    prompt: str
    estimates: tuple[str, ...] = ()
    yes_no: bool = False


QUESTIONS: dict[str, NapkinQuestion] = {
    "napkin-intensity": NapkinQuestion(
        "napkin-intensity", "Intensity and the ridge",
        "Work out the decode step's arithmetic intensity and this hardware's ridge point (both in "
        "FLOP per byte): their ratio is how far the deployment sits from the ridge.",
        estimates=("intensity", "ridge")),
    "napkin-concurrency": NapkinQuestion(
        "napkin-concurrency", "Max concurrency",
        "From the card alone: how many sequences fit in the KV cache at once?",
        estimates=("max_concurrency",)),
    "napkin-spec": NapkinQuestion(
        "napkin-spec", "Speculative decoding at this batch",
        "If this deployment drafted 4 tokens per step, would that improve its goal at this batch?",
        yes_no=True),
    "napkin-cost": NapkinQuestion(
        "napkin-cost", "Cost per million output tokens",
        "What does a million output tokens cost here? Your best lever is your answer to which "
        "single change moves that cost most.",
        estimates=("cost_per_million_output_tokens",)),
}
NAPKIN_IDS = tuple(QUESTIONS)


def spec_gain(puzzle: Puzzle) -> float | None:
    """The gain speculative decoding would give on the puzzle's objective (None when the
    deployment does not fit or already speculates)."""
    dep = puzzle.deployment
    if dep.spec_k:
        return None
    base = analyze(dep)
    if not base.fits:
        return None
    return evaluate_lever(dep, base, "speculative-decoding").gain


def suitable(question_id: str, puzzle: Puzzle, key: Key) -> bool:
    """True when this puzzle gives `question_id` a clear, computable answer."""
    report = key.solution.report
    if not report.fits:
        return False
    if question_id == "napkin-intensity":
        return bool(report.intensity and report.intensity > 0 and report.ridge > 0)
    if question_id == "napkin-concurrency":
        return bool(report.max_concurrency and report.max_concurrency >= 1)
    if question_id == "napkin-cost":
        cost = report.cost_per_million_output_tokens
        return puzzle.objective == "cost" and cost is not None and math.isfinite(cost) and cost > 0
    if question_id == "napkin-spec":
        gain = spec_gain(puzzle)
        return gain is not None and abs(math.log(gain / SPEC_HELPS_ABOVE)) >= math.log(SPEC_CLEAR)
    return False


@dataclass(frozen=True)
class Item:
    """One question set: the puzzle (its `estimates` replaced by the napkin question's, when that
    asks for numbers), the engine's key, the napkin question id (or None) and, for the yes/no,
    the engine's speculative-decoding gain."""

    puzzle: Puzzle
    key: Key
    napkin: str | None = None
    spec_gain: float | None = None
    ask_reason: bool = True

    @property
    def question(self) -> NapkinQuestion | None:
        return QUESTIONS.get(self.napkin) if self.napkin else None

    @property
    def spec_helps(self) -> bool | None:
        return None if self.spec_gain is None else self.spec_gain > SPEC_HELPS_ABOVE


def make_item(puzzle: Puzzle, key: Key, napkin: str | None = None, ask_reason: bool = True) -> Item:
    """An item for `puzzle`; with a napkin question its estimates are the question's."""
    gain = None
    if napkin is not None:
        question = QUESTIONS[napkin]
        if question.estimates or question.yes_no:
            puzzle = dataclasses.replace(puzzle, estimates=question.estimates)
        if question.yes_no:
            gain = spec_gain(puzzle)
    return Item(puzzle, key, napkin, gain, ask_reason)


@dataclass(frozen=True)
class Judged:
    """The grade of one item: outcome, points, each part right or wrong, what was left blank,
    the certainty used, and short feedback lines."""

    outcome: str
    points: int
    answer_right: bool
    reason_right: bool
    parts: dict[str, bool]
    blanks: tuple[str, ...]
    certainty: str
    feedback: tuple[str, ...] = field(default=())

    @property
    def napkin_right(self) -> bool:
        napkin = [v for k, v in self.parts.items() if k.startswith("estimate:") or k == SPEC_FIELD]
        return all(napkin) if napkin else True


def _text(kind: str, ident: str) -> str:
    return ident or "(blank)"


def judge(item: Item, prediction: dict, hints_used: int = 0, words=_text) -> Judged:
    """Grade `prediction` (ids as the prediction form gives them, plus `spec_helps` 'yes'/'no')
    against the item's key. Blank parts are wrong; a blank certainty counts as low.
    `words(kind, id)` turns ids into the words feedback uses (kind: bottleneck, lever, band, reason)."""
    key, puzzle = item.key, item.puzzle
    p = {k: prediction.get(k) or "" for k in ("bottleneck", "lever", "gain_band", "reason", "certainty")}
    estimates = dict(prediction.get("estimates") or {})
    blanks = [name for name in ("bottleneck", "lever", "gain_band") if not p[name]]
    parts: dict[str, bool] = {
        "bottleneck": p["bottleneck"] == key.bottleneck,
        "lever": p["lever"] == key.best_lever,
        "gain_band": bool(p["gain_band"]) and band_right(p["gain_band"], key),
    }
    if item.ask_reason and puzzle.reasons:
        parts["reason"] = p["reason"] == key.reason
        if not p["reason"]:
            blanks.append("reason")
    for name in puzzle.estimates:
        value = estimates.get(name)
        parts[f"estimate:{name}"] = estimate_right(value, key.estimates.get(name))
        if value is None:
            blanks.append(name)
    question = item.question
    if question is not None and question.yes_no:
        said = str(prediction.get(SPEC_FIELD) or "")
        parts[SPEC_FIELD] = said in ("yes", "no") and (said == "yes") == bool(item.spec_helps)
        if said not in ("yes", "no"):
            blanks.append(SPEC_FIELD)
    certainty = p["certainty"] if p["certainty"] in CERTAINTIES else "low"
    if not p["certainty"]:
        blanks.append("certainty")
    answer_right = parts["bottleneck"] and parts["lever"] and parts["gain_band"]
    reason_parts = [v for k, v in parts.items() if k not in ("bottleneck", "lever", "gain_band")]
    reason_right = all(reason_parts) if reason_parts else answer_right
    outcome = outcome_for(answer_right, reason_right)
    return Judged(outcome, points(outcome, certainty, hints_used), answer_right, reason_right, parts,
                  tuple(blanks), certainty, tuple(feedback_lines(item, p, estimates, prediction, parts, words)))


def truth_text(item: Item, name: str) -> str:
    """The engine's value for an estimate or the yes/no, in words."""
    if name == SPEC_FIELD:
        gain = item.spec_gain
        verdict = "yes" if item.spec_helps else "no"
        return f"{verdict} (speculating gains {fmt.gain(gain)} on the goal)"
    return fmt.value(name, item.key.estimates.get(name))


def feedback_lines(item: Item, p: dict, estimates: dict, prediction: dict, parts: dict, words=_text) -> list[str]:
    """One line per part: ✓ or ✗, what was said, and the engine's answer when different."""
    key = item.key
    gain = fmt.gain(key.gain) if key.gain is not None else "it makes the deployment fit"
    rows = [
        ("bottleneck", "Bottleneck", words("bottleneck", p["bottleneck"]), words("bottleneck", key.bottleneck)),
        ("lever", "Best lever", words("lever", p["lever"]), words("lever", key.best_lever)),
        ("gain_band", "Its gain", words("band", p["gain_band"]), f"{words('band', key.gain_band)} ({gain})"),
    ]
    if "reason" in parts:
        rows.append(("reason", "Because", words("reason", p["reason"]), words("reason", key.reason)))
    lines = []
    for part, title, said, truth in rows:
        mark = "✓" if parts[part] else "✗"
        lines.append(f"{mark} {title}: {said}" + ("" if parts[part] else f" → engine: {truth}"))
    for name in item.puzzle.estimates:
        value = estimates.get(name)
        said = "(blank)" if value is None else fmt.value(name, value)
        mark = "✓" if parts[f"estimate:{name}"] else "✗"
        ratio = f", {value / key.estimates[name]:.2f}×" if value and key.estimates.get(name) else ""
        lines.append(f"{mark} {name.replace('_', ' ')}: {said} → engine: {truth_text(item, name)}{ratio}")
    if SPEC_FIELD in parts:
        said = str(prediction.get(SPEC_FIELD) or "(blank)")
        mark = "✓" if parts[SPEC_FIELD] else "✗"
        lines.append(f"{mark} speculative decoding helps? {said} → engine: {truth_text(item, SPEC_FIELD)}")
    lines.append(f"What decides it: {key.deciding}.")
    return lines


def distance_text(item: Item) -> str:
    """How far the deployment sits from the ridge, in words with numbers."""
    r = item.key.solution.report
    if not r.fits or not r.intensity:
        return "the deployment does not fit, so it has no decode intensity"
    ratio = r.ridge / r.intensity
    if ratio >= 1:
        return (f"intensity {fmt.num(r.intensity)} against a ridge of {fmt.num(r.ridge)}: "
                f"{ratio:.1f}× below the ridge, so decode waits on memory")
    return (f"intensity {fmt.num(r.intensity)} against a ridge of {fmt.num(r.ridge)}: "
            f"{1 / ratio:.1f}× past the ridge, so decode waits on arithmetic")
