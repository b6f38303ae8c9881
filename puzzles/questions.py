"""The clearing test's napkin questions, and judging one item of a drill, exam or competition.

An item is a puzzle plus, optionally, one napkin question the player answers unaided:

- `napkin-intensity`: the decode step's arithmetic intensity and the hardware's ridge point, both
  in FLOP per byte. The ridge asked for is the course's, from the 16-bit (BF16) peak, whatever
  the card's precision (`ridge_16bit`), and the question says so: on an 8-bit card the engine's
  own ridge uses the 8-bit peak, twice as high, and a course answer was graded wrong against it.
- `napkin-concurrency`: how many sequences fit in the KV cache at once (max concurrency).
- `napkin-spec`: at this batch, would speculative decoding (a 4-token draft) improve the puzzle's
  goal? Yes or no.
- `napkin-cost`: dollars per million output tokens. These items always have the cost objective,
  so the puzzle's best lever is the single change that moves the cost most.

On a load puzzle (drills only): `napkin-littles-law` (requests in the system), `napkin-utilisation`
(arrival rate over capacity) and `napkin-knee` (the capacity in requests per second, past which
the queue never drains).

Speculative decoding counts as helping when its gain is above `SPEC_HELPS_ABOVE`; an item only
asks when the gain is clearly on one side of that line. An item is graded by the one grader,
`puzzles.grading.grade(item.puzzle, item.key, prediction, **item.asks)`: the napkin question is
part of the reason. Imports no Textual.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from engine.analysis import analyze
from engine.ids import Lever, Objective
from engine.levers import evaluate_lever

from puzzles import fmt
from puzzles.keys import Key
from puzzles.puzzle import Puzzle
from puzzles.scoring import SPEC_FIELD

SPEC_HELPS_ABOVE = 1.05   # a gain above this counts as "helps"
SPEC_CLEAR = 1.07         # asked only when the gain is at least this factor away from that line
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
        "Work out the decode step's arithmetic intensity and this hardware's ridge point, both in "
        "FLOP per byte. Take the ridge as the course defines it: the GPU's 16-bit (BF16) peak over "
        "its memory bandwidth, whatever precision the card runs in.",
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
NAPKIN_IDS = tuple(QUESTIONS)   # the clearing test's four, taken in turn by an exam

# Napkin questions of a load run (drilled on generated load puzzles, never in the exam): Little's
# law, how close the traffic is to capacity, and the rate past which the queue never drains.
QUESTIONS.update({
    "napkin-littles-law": NapkinQuestion(
        "napkin-littles-law", "Little's law",
        "On average, how many requests are in the system (queued or running)? Little's law: the arrival "
        "rate times the time each request spends there.",
        estimates=("mean_in_system",)),
    "napkin-utilisation": NapkinQuestion(
        "napkin-utilisation", "Utilisation",
        "What share of the fleet's steady-state capacity does this traffic ask for (arrival rate over the "
        "requests per second the fleet can finish)?",
        estimates=("utilisation",)),
    "napkin-knee": NapkinQuestion(
        "napkin-knee", "Where the knee is",
        "Past what arrival rate, in requests per second, does the queue never drain? (The knee of the "
        "latency curve sits just below it.)",
        estimates=("saturation_qps",)),
})
LOAD_NAPKIN_IDS = ("napkin-littles-law", "napkin-utilisation", "napkin-knee")


def spec_gain(puzzle: Puzzle) -> float | None:
    """The gain speculative decoding would give on the puzzle's objective (None when the
    deployment does not fit or already speculates)."""
    dep = puzzle.deployment
    if dep.spec_k:
        return None
    base = analyze(dep)
    if not base.fits:
        return None
    return evaluate_lever(dep, base, Lever.SPECULATIVE_DECODING).gain


def suitable(question_id: str, puzzle: Puzzle, key: Key) -> bool:
    """True when this puzzle gives `question_id` a clear, computable answer (a load question
    only on a load puzzle, and the others only on a steady-state one)."""
    if (question_id in LOAD_NAPKIN_IDS) != (getattr(puzzle, "load", None) is not None):
        return False
    if question_id in LOAD_NAPKIN_IDS:
        value = key.estimates.get(QUESTIONS[question_id].estimates[0])
        return value is not None and math.isfinite(value) and value > 0
    report = key.solution.report
    if not report.fits:
        return False
    if question_id == "napkin-intensity":
        return bool(report.intensity and report.intensity > 0 and report.ridge > 0)
    if question_id == "napkin-concurrency":
        return bool(report.max_concurrency and report.max_concurrency >= 1)
    if question_id == "napkin-cost":
        cost = report.cost_per_million_output_tokens
        return puzzle.objective == Objective.COST and cost is not None and math.isfinite(cost) and cost > 0
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

    @property
    def asks(self) -> dict:
        """What this item asks, as `puzzles.grading.grade`'s keywords (timed: blanks allowed)."""
        return {"napkin": self.napkin, "spec_gain": self.spec_gain, "ask_reason": self.ask_reason,
                "strict": False}


def ridge_16bit(report) -> float:
    """The ridge point the course defines: the GPU's dense 16-bit (BF16) peak over its memory
    bandwidth, in FLOP per byte (the engine's `ridge` uses the peak of the precision it computes
    in, which on an 8-bit card is twice this)."""
    gpu = report.deployment.gpu
    return gpu.peak_flops("bf16") / gpu.bandwidth_bytes_per_s


def make_item(puzzle: Puzzle, key: Key, napkin: str | None = None, ask_reason: bool = True) -> Item:
    """An item for `puzzle`; with a napkin question its estimates are the question's, and the
    ridge question is keyed with the ridge it names (`ridge_16bit`)."""
    gain = None
    if napkin is not None:
        question = QUESTIONS[napkin]
        if question.estimates or question.yes_no:
            puzzle = dataclasses.replace(puzzle, estimates=question.estimates)
        if question.yes_no:
            gain = spec_gain(puzzle)
        if "ridge" in question.estimates:
            key = dataclasses.replace(key, estimates={**key.estimates, "ridge": ridge_16bit(key.solution.report)})
    return Item(puzzle, key, napkin, gain, ask_reason)


def truth_text(item: Item, name: str) -> str:
    """The engine's value for an estimate or the yes/no, in words."""
    if name == SPEC_FIELD:
        gain = item.spec_gain
        verdict = "yes" if item.spec_helps else "no"
        return f"{verdict} (speculating gains {fmt.gain(gain)} on the goal)"
    return fmt.value(name, item.key.estimates.get(name))


def distance_text(item: Item) -> str:
    """How far the deployment sits from the ridge, in words with numbers."""
    r = item.key.solution.report
    if not r.fits or not r.intensity:
        return "the deployment does not fit, so it has no decode intensity"
    ratio = r.ridge / r.intensity
    ridge = f"a ridge of {fmt.num(r.ridge)}"
    course = ridge_16bit(r)
    if abs(r.ridge / course - 1) > 0.01:  # it computes in 8 bits: name both peaks
        ridge = (f"its {r.compute_precision.upper()} ridge of {fmt.num(r.ridge)} (the 16-bit ridge is "
                 f"{fmt.num(course)})")
    where = (f"{ratio:.1f}× below the ridge, so decode waits on memory" if ratio >= 1
             else f"{1 / ratio:.1f}× past the ridge, so decode waits on arithmetic")
    return f"intensity {fmt.num(r.intensity)} against {ridge}: {where}"
