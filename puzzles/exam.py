"""The clearing test: a fixed-length exam of mixed deployments, no hints, a pass mark, a report.

Each of the `EXAM_LENGTH` items is one deployment and asks three questions:

1. the bottleneck;
2. the best lever together with the rough size of its gain (both must be right);
3. one of the four napkin questions (`puzzles.questions`), taken in turn, so a 12-item exam asks
   each of them three times: intensity and the ridge, max concurrency, whether speculative
   decoding helps at this batch, and the cost per million output tokens (on a cost item, where the
   best lever is the change that moves the cost most).

The player also says how sure they are, which sets the points the save records; it does not
change the pass mark. An exam passes when at least `PASS_SHARE` of all its questions are right.
Every answer is judged against the engine's key with the tolerances in `RULES`.

The deployments are generated puzzles at difficulties 2-4, chosen deterministically from the
seed, keyed by the engine as every other puzzle, and never one the player has answered before
(`build`'s `seen`): the exam promises deployments not seen before, so it draws none from the
campaign's `clearing-test` chapter (which may have been played with hints and reveals). Its
answers are recorded with the mode "exam" under generated ids, which belong to no chapter, so
they count toward no chapter's progress; `sittings` reads the exam's own history back from them.
`report_markdown` writes every answer beside the engine's and its reasoning, for keeping or
sharing. Imports no Textual.
"""
from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from engine.errors import RidgeError
from engine.ids import Outcome

from puzzles import generator
from puzzles.grading import ESTIMATE_TOLERANCE as TOLERANCE
from puzzles.grading import Grade, decided_text, objective_bottleneck, plain_words
from puzzles.grading import grade as grade_one
from puzzles.keys import shown_gain
from puzzles.puzzle import OBJECTIVE_TEXT
from puzzles.questions import (NAPKIN_IDS, QUESTIONS, SPEC_FIELD, SPEC_HELPS_ABOVE, Item, distance_text, make_item,
                               suitable, truth_text)

EXAM_LENGTH = 12
PASS_SHARE = 0.75
DIFFICULTIES = (2, 3, 4)
SCAN_LIMIT = 600
MODE = "exam"  # the mode its answers are recorded with
PARTS = ("bottleneck", "lever", "napkin")
PART_TITLES = {"bottleneck": "Bottleneck", "lever": "Best lever and its gain", "napkin": "Napkin question"}

RULES = (
    "Bottleneck: what bounds the item's objective, exactly as the engine finds it.",
    "Best lever and its gain: the engine's best lever, and the band its gain falls in (a "
    "neighbouring band also counts when the gain is within 10% of the edge between them).",
    f"Numbers (intensity, ridge, max concurrency, cost): within a factor of {TOLERANCE:g} of the "
    "engine's value either way, on a log scale. Intensity and ridge must both be within it.",
    f"Speculative decoding helps when it improves the goal by more than {SPEC_HELPS_ABOVE:g}x; "
    "the exam only asks where the answer is clear.",
)


def pass_mark(length: int = EXAM_LENGTH) -> int:
    """Questions needed to pass an exam of `length` items."""

    return math.ceil(PASS_SHARE * len(PARTS) * length - 1e-9)


def rules_text(length: int = EXAM_LENGTH) -> str:
    """The rules as the start screen and the report state them."""
    total = len(PARTS) * length
    return (f"{length} deployments, three questions each ({total} in all), no hints. You pass with "
            f"{pass_mark(length)} or more right ({PASS_SHARE:.0%}).")


def build(seed: int, length: int = EXAM_LENGTH, seen: Collection[str] = ()) -> list[Item]:
    """The exam for `seed`: `length` generated items, the napkin questions in turn, no hints,
    none of them a puzzle whose id is in `seen` (the ids the player has answered)."""
    if length < 1 or length > 60:
        raise RidgeError(f"an exam has 1 to 60 items, got {length}")
    seen = frozenset(seen)
    kinds = [NAPKIN_IDS[i % len(NAPKIN_IDS)] for i in range(length)]
    slots: list[Item | None] = [None] * length
    index = 0
    while any(s is None for s in slots) and index < SCAN_LIMIT:
        difficulty = DIFFICULTIES[index % len(DIFFICULTIES)]
        gen = generator.make(seed, difficulty, index)
        index += 1
        if gen.puzzle.id in seen:
            continue
        for i, kind in enumerate(kinds):
            if slots[i] is None and suitable(kind, gen.puzzle, gen.key):
                slots[i] = make_item(gen.puzzle, gen.key, kind, ask_reason=False)
                break
    if any(s is None for s in slots):  # pragma: no cover - the generator always supplies enough

        raise RidgeError(f"could not draw a full exam from seed {seed}")
    return [s for s in slots if s is not None]


@dataclass(frozen=True)
class Sitting:
    """One earlier exam, read back from the answers it recorded."""

    seed: int | None
    started: _dt.datetime
    answered: int
    cleared: int
    points: int


def sittings(attempts: Iterable) -> list[Sitting]:
    """The exams a player sat, oldest first: their recorded answers (mode "exam"), grouped by the
    exam seed in their generated ids (an answer from before exams were all generated is its
    day's own sitting)."""
    groups: dict[object, list] = {}
    for attempt in attempts:
        if getattr(attempt, "mode", None) != MODE:
            continue
        ref = getattr(attempt, "generator", None)
        groups.setdefault(ref.seed if ref is not None else attempt.locked_at.date(), []).append(attempt)
    found = [Sitting(seed if isinstance(seed, int) else None, min(a.locked_at for a in group), len(group),
                     sum(a.outcome == Outcome.CLEARED for a in group), sum(a.points for a in group))
             for seed, group in groups.items()]
    return sorted(found, key=lambda s: s.started)


def sitting_line(sitting: Sitting, tz: _dt.tzinfo | None = None) -> str:
    """One earlier sitting in words."""
    when = sitting.started.astimezone(tz) if tz is not None else sitting.started.astimezone()
    return (f"{when.strftime('%Y-%m-%d %H:%M')}: {sitting.answered} answered, {sitting.cleared} cleared, "
            f"{sitting.points:+d} points")


def history_text(name: str, attempts: Iterable, tz: _dt.tzinfo | None = None) -> str:
    """The exam's own history, as its set-up shows it: `name`'s last five sittings, or where they
    will appear (exam answers count toward no chapter of the campaign, and it says so)."""
    past = sittings(attempts) if name else []
    if not past:
        return "Your earlier sittings appear here. Exam answers count toward no chapter of the campaign."
    lines = [f"{name}'s earlier sittings (they count toward no chapter of the campaign):"]
    lines += [f"  {sitting_line(sitting, tz)}" for sitting in past[-5:]]
    return "\n".join(lines)


def part_marks(judged: Grade) -> dict[str, bool]:
    """The item's three questions, right or wrong."""
    return {"bottleneck": judged.right("bottleneck"), "lever": judged.right("lever") and judged.right("gain_band"),
            "napkin": judged.napkin_right}


@dataclass(frozen=True)
class ExamResult:
    """A finished (or abandoned) exam: each item with its prediction and grade."""

    seed: int
    items: tuple[Item, ...]
    predictions: tuple[dict, ...]
    judged: tuple[Grade, ...]
    length: int = EXAM_LENGTH

    @property
    def right(self) -> int:
        return sum(sum(part_marks(j).values()) for j in self.judged)

    @property
    def total(self) -> int:
        return len(PARTS) * self.length

    @property
    def share(self) -> float:
        return self.right / self.total if self.total else 0.0

    @property
    def passed(self) -> bool:
        return len(self.judged) == self.length and self.right >= pass_mark(self.length)

    def by_part(self) -> dict[str, int]:
        out = {part: 0 for part in PARTS}
        for j in self.judged:
            for part, right in part_marks(j).items():
                out[part] += right
        return out

    def by_napkin(self) -> dict[str, tuple[int, int]]:
        """napkin id -> (right, asked)."""
        out: dict[str, list[int]] = {}
        for item, j in zip(self.items, self.judged):
            cell = out.setdefault(item.napkin or "", [0, 0])
            cell[0] += j.napkin_right
            cell[1] += 1
        return {k: (v[0], v[1]) for k, v in out.items()}


def grade(seed: int, items: list[Item], predictions: list[dict], length: int | None = None,
          words: Callable[[str, str], str] | None = None) -> ExamResult:
    """Grade every answered item by the one grader (answers may stop early: the rest count as
    wrong). `words` is accepted for older callers; the report takes its own."""
    judged = tuple(grade_one(item.puzzle, item.key, p, **item.asks) for item, p in zip(items, predictions))
    return ExamResult(seed, tuple(items[:len(judged)]), tuple(predictions[:len(judged)]), judged,
                      length if length is not None else len(items))


# --- the report ----------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def report_markdown(result: ExamResult, player: str, when: _dt.datetime,
                    words: Callable[[str, str], str] = plain_words) -> str:
    """The whole exam as Markdown: the result, the rules, a summary table, then every item with
    the player's answers beside the engine's and the engine's reasoning."""
    verdict = "PASSED" if result.passed else "NOT PASSED"
    unfinished = len(result.judged) < result.length
    lines = [
        f"# Ridge clearing test: {player}",
        "",
        f"{when.strftime('%Y-%m-%d %H:%M %Z').strip()} · exam seed {result.seed} · {result.length} deployments · no hints",
        "",
        f"**{verdict}**: {result.right} of {result.total} questions right ({result.share:.0%}); "
        f"the pass mark is {pass_mark(result.length)} ({PASS_SHARE:.0%}).",
    ]
    if unfinished:
        lines += ["", f"The exam was stopped after {len(result.judged)} of {result.length} items; "
                      "the rest count as wrong."]
    parts = result.by_part()
    lines += ["", "| Question | Right |", "|---|---|"]
    for part in PARTS:
        lines.append(f"| {PART_TITLES[part]} | {parts[part]} of {len(result.judged)} |")
    for napkin, (right, asked) in result.by_napkin().items():
        if napkin:
            lines.append(f"| · {QUESTIONS[napkin].title} | {right} of {asked} |")
    lines += ["", "## How answers are judged", ""] + [f"- {rule}" for rule in RULES]
    lines += ["", "## Summary", "", "| # | Deployment | Bottleneck | Lever and gain | Napkin | Outcome |",
              "|---|---|---|---|---|---|"]
    for n, (item, j) in enumerate(zip(result.items, result.judged), 1):
        marks = part_marks(j)
        tick = {True: "✓", False: "✗"}
        lines.append(f"| {n} | {_cell(item.puzzle.title)} | {tick[marks['bottleneck']]} | "
                     f"{tick[marks['lever']]} | {tick[marks['napkin']]} | {j.outcome} |")
    for n, (item, p, j) in enumerate(zip(result.items, result.predictions, result.judged), 1):
        lines += ["", *item_markdown(n, item, p, j, words)]
    lines.append("")
    return "\n".join(lines)


def item_markdown(n: int, item: Item, p: dict, j: Grade, words: Callable[[str, str], str] = plain_words) -> list[str]:
    """One item of the report: the deployment, a table of answers, and the engine's reasoning."""
    key, puzzle = item.key, item.puzzle
    marks = part_marks(j)
    tick = {True: "✓", False: "✗"}
    gain = shown_gain(key) if key.gain is not None else "makes it fit"
    question = item.question
    lines = [f"## {n}. {puzzle.title}", "",
             f"{key.derivation[0] if key.derivation else puzzle.title}. Goal: "
             f"{OBJECTIVE_TEXT.get(puzzle.objective, puzzle.objective)}.", ""]
    if question is not None:
        lines += [f"Napkin question: {question.prompt}", ""]
    lines += ["| Question | Your answer | The engine | |", "|---|---|---|---|",
              f"| Bottleneck | {_cell(words('bottleneck', p.get('bottleneck', '')))} | "
              f"{_cell(words('bottleneck', objective_bottleneck(key)))} | {tick[marks['bottleneck']]} |",
              f"| Best lever | {_cell(words('lever', p.get('lever', '')))} | {_cell(words('lever', key.best_lever))} | "
              f"{tick[j.right('lever')]} |",
              f"| Its gain | {_cell(words('band', p.get('gain_band', '')))} | "
              f"{_cell(words('band', key.gain_band))} ({gain}) | {tick[j.right('gain_band')]} |"]
    estimates = p.get("estimates") or {}
    for name in puzzle.estimates:
        value = estimates.get(name)
        said = "(blank)" if value is None else f"{value:,.4g}"
        lines.append(f"| {name.replace('_', ' ')} | {said} | {_cell(truth_text(item, name))} | "
                     f"{tick[j.right(f'estimate:{name}')]} |")
    if j.part(SPEC_FIELD) is not None:
        lines.append(f"| Speculative decoding helps? | {p.get(SPEC_FIELD) or '(blank)'} | "
                     f"{_cell(truth_text(item, SPEC_FIELD))} | {tick[j.right(SPEC_FIELD)]} |")
    lines.append(f"| Certainty | {p.get('certainty') or '(blank: counted as low)'} | | |")
    lines += ["", f"Outcome: **{j.outcome}** ({j.points:+d} points). Bottleneck {tick[marks['bottleneck']]}, "
                  f"lever and gain {tick[marks['lever']]}, napkin {tick[marks['napkin']]}. "
                  f"{decided_text(j, words)}", "",
              "Reasoning:", "",
              f"- What decides it: {key.deciding}.",
              f"- Where it sits: {distance_text(item)}."]
    if item.napkin == "napkin-spec" and item.spec_gain is not None:
        helps = "helps" if item.spec_helps else "does not help"
        lines.append(f"- Speculative decoding {helps} here: it changes the goal by {item.spec_gain:.2f}x "
                     f"at a batch of {key.solution.report.batch}.")
    lines += ["", "```", *key.derivation, "```"]
    return lines


def report_name(when: _dt.datetime) -> str:
    """The report's file name: clearing-test-<local date>.md."""
    return f"clearing-test-{when.strftime('%Y-%m-%d')}.md"
