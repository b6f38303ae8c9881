"""What a reveal says about one locked-in answer, worked out without a screen: the two lines to
remember, the rows of the player's answer beside the engine's, the floor | realistic | measured
table, and why the other verdicts and reasons do not hold here.

These are rules of the game's feedback (which lever counts as the runner-up, which gain keys the
band, which parts are marked as deciding), so a test reads them without Textual. The words are
the caller's: the app hands in its labels module, which has every function `Words` names.
"""
from __future__ import annotations

from typing import Protocol

from engine.ids import Objective, Verdict


class Words(Protocol):
    """The words the game shows for ids (the app's labels module is one: a module can be a Protocol)."""

    def bottleneck(self, identifier: str) -> str: ...

    def lever(self, identifier: str) -> str: ...

    def band(self, identifier: str) -> str: ...

    def outcome(self, identifier: str) -> str: ...

    def estimate_short(self, identifier: str) -> str: ...

    def humanize(self, text: str) -> str: ...

    def plural(self, count: int, word: str) -> str: ...

    def words(self, kind: str, identifier: str) -> str: ...


OBJECTIVE_NOUNS = {Objective.COST: "the cost per million output tokens", Objective.TPOT: "the time per output token",
                   Objective.TTFT: "the time to first token", Objective.STALL: "the longest stall",
                   Objective.P99_TTFT: "the P99 time to first token", Objective.P99_TPOT: "the P99 time per output token",
                   Objective.GOODPUT: "goodput per GPU", Objective.GPUS_FOR_SLO: "the GPUs the SLOs need"}

_VERDICT_IDS = frozenset(str(v) for v in Verdict)   # a table cell that is a verdict id


def takeaway_lines(key, objective: str, words: Words) -> list[str]:
    """Two lines to remember from this deployment: what bounds it, with the number that shows
    it, and the lever that wins, by how much, against the next best."""
    from puzzles.keys import realistic_gain
    from puzzles.reasons import reason_fact

    bound = f"Bound by {words.bottleneck(key.bottleneck)}"
    lines = [f"{bound} — {words.humanize(reason_fact(key.reason, key.solution))}." if key.reason else f"{bound}."]
    ranked = [lv for lv in key.levers if lv.gain is not None]
    best = next((lv for lv in ranked if lv.name == key.best_lever), None)
    runner = next((lv for lv in ranked if lv.name != key.best_lever), None)
    noun = OBJECTIVE_NOUNS.get(objective, "the objective")
    if best is not None:  # the realistic gains where the engine has them: the figures that key the band
        gain = key.band_gain if key.band_gain is not None else best.gain
        after = realistic_gain(key, runner.name) if runner is not None else None
        after = runner.gain if after is None and runner is not None else after
        line = f"So {words.lever(best.name)} wins: {gain:.2f}× on {noun}"
        if runner is None or after <= 1.005:
            line += "; no other lever moves it."
        else:
            line += f"; the next best, {words.lever(runner.name)}, gives {after:.2f}×."
        lines.append(line)
    return lines


def retry_note(ahead: int, words: Words) -> str:
    """When a puzzle put back for later comes round again."""
    if ahead == 0:
        return "Queued: it comes back next."
    return f"Queued: it comes back after {words.plural(ahead, 'other puzzle')}."


def comparison_rows(prediction: dict, key, grade, words: Words) -> list[tuple[str, str, str, str]]:
    """(part, yours, the engine's, mark) for every part judged, estimates included: ✓ right,
    ✗ wrong, ◆ beside the mark of a part that decided the outcome."""
    from puzzles.grading import PART_TITLES, value_text

    rows = [("", "You", "The engine", "")]
    for part in grade.parts:
        title = words.estimate_short(part.estimate) if part.estimate else PART_TITLES.get(part.name, part.name)
        engine = value_text(part, part.engine, words.words)
        if part.name == "gain_band" and getattr(key, "gain", None):
            real = getattr(key, "band_gain", None)
            engine += (f" ({real:.2f}×; floor {key.gain:.2f}×)" if real is not None and real != key.gain
                       else f" ({key.gain:.2f}×)")
        if part.estimate is not None and part.engine is not None:
            engine = f"{part.engine:,.4g}"
        yours = ("—" if part.yours is None else f"{part.yours:,.4g}") if part.estimate is not None \
            else value_text(part, part.yours, words.words)
        rows.append((title, yours, engine, ("✓" if part.right else "✗") + ("◆" if part.decided else "")))
    rows.append(("Certainty", prediction["certainty"], "", ""))
    return rows


def measured_start(key) -> str | None:
    """What the measured column shows before its worker answers: PENDING when the worker will
    fill it, else why it stays empty (None when there is no table)."""
    solution = getattr(key, "realistic", None) or getattr(key, "solution", None)
    if solution is None:
        return None
    from puzzles.reasons import is_load

    if is_load(solution):   # its measured run is judged by `ridge puzzles check`, not drawn here
        return key.measured_reason
    from engine.compare import measured_placeholder

    return measured_placeholder(solution.report.deployment)


def fidelity_table(key, words: Words, measured=None) -> tuple[list[tuple[str, ...]], list[str]] | None:
    """The floor, the realistic figure and, once known, the measured one side by side, for the
    objective and every lever, and what moved them, in words (None when the key has no solution
    to compare). `measured` is the measured Solution, or the line the column shows instead."""
    solution = getattr(key, "solution", None)
    if solution is None:
        return None
    from engine.compare import correction_lines, fidelity_rows, measured_lines, realistic_of
    from puzzles.reasons import is_load

    if is_load(solution):   # a load puzzle: its runs under this traffic, one column a fidelity
        from puzzles.load_reasons import fidelity_rows as load_rows

        real = key.realistic or solution
        table = load_rows(key)
    else:
        real = getattr(key, "realistic", None) or realistic_of(solution)
        table = fidelity_rows(real, measured)
    # a verdict by its label (humanize swaps only the hyphenated ids: not 'queueing' or 'preemption')
    rows = [tuple(words.bottleneck(cell) if cell in _VERDICT_IDS else words.humanize(cell) for cell in row)
            for row in table]
    levers = {lv.name for lv in real.levers}
    rows = [tuple(words.lever(cell) if cell in levers else cell for cell in row) for row in rows]
    notes = [words.humanize(line) for line in correction_lines(real.report)]
    notes += [words.humanize(line) for line in measured_lines(measured)]
    return rows, notes


def why_not_lines(puzzle, key, words: Words) -> tuple[list[str], list[str]]:
    """Why each other verdict does not hold here, and what each other offered reason
    measures for this deployment (so a wrong pick can be checked against the numbers)."""
    from puzzles.explain import why_not_verdict
    from puzzles.grading import objective_bottleneck
    from puzzles.reasons import REASONS, reason_fact

    truth = objective_bottleneck(key)
    verdicts = [words.humanize(why_not_verdict(v, key, truth)) for v in puzzle.verdicts if v != truth]
    reasons = [f"‘{REASONS.get(r, r)}’: {words.humanize(reason_fact(r, key.solution))}"
               for r in getattr(puzzle, "reasons", ()) if r != key.reason]
    return verdicts, reasons


def lock_summary(prediction: dict, words, hints: int = 0, hint_cost: int = 0) -> str:
    """The answer about to be locked in, a row per part (each value wrapped under itself), for the
    confirmation every mode asks before a lock-in; `words` gives an id's words by kind (the app's
    `labels.words`). A blank certainty is said to count as low, as the grader counts it."""
    from engine.text import aligned

    p = prediction
    rows = [("Bottleneck", words("bottleneck", p.get("bottleneck", ""))),
            ("Best lever", words("lever", p.get("lever", ""))),
            ("Its gain", words("band", p.get("gain_band", "")))]
    if p.get("reason"):
        rows.append(("Because", words("reason", p["reason"])))
    for est, value in (p.get("estimates") or {}).items():
        rows.append(("Estimate", f"{words('estimate', est)} ≈ {value:,.4g}"))
    if p.get("spec_helps"):
        rows.append(("Speculation", f"helps? {p['spec_helps']}"))
    rows.append(("Certainty", p.get("certainty") or "(blank: counts as low)"))
    if hints:
        rows.append(("Hints taken", f"{hints} (−{hints * hint_cost} points)"))
    return "\n".join(aligned(name, value) for name, value in rows) + "\n\nOnce locked in, this answer cannot change."
