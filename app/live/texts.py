"""Words for live play that the player page, the terminal player, the projector and the report
share, so each says a thing the same way: option ids in the game's words, a player's judged
parts, and the report's files. No Textual here: a headless host uses it too."""
from __future__ import annotations

from pathlib import Path

from app import labels
from engine.ids import Certainty

CERTAINTY_WORDS = {Certainty.LOW: "low: a guess", Certainty.MEDIUM: "medium: fairly sure",
                   Certainty.HIGH: "high: I would bet on it"}


def card_words(card: dict) -> dict:
    """Each id the card's form offers, by kind, in the words the game shows."""
    ask = card.get("ask") or {}
    return {"bottleneck": {b: labels.bottleneck(b) for b in ask.get("bottleneck") or ()},
            "lever": {v: labels.lever(v) for v in ask.get("lever") or ()},
            "gain": {g: labels.band(g) for g in ask.get("gain_band") or ()},
            "reason": {r: (card.get("reason_texts") or {}).get(r) or labels.reason(r) for r in ask.get("reason") or ()},
            "estimate": {e: labels.estimate_with_unit(e) for e in ask.get("estimates") or ()},
            "certainty": {str(c): w for c, w in CERTAINTY_WORDS.items()},
            "objective": labels.objective(card.get("objective", ""))}


def verdict_line(outcome: str, points: int) -> str:
    """A player's result on one question in words and a symbol (never colour alone)."""
    from puzzles.live import LATE, NO_ANSWER

    if outcome == NO_ANSWER:
        return "· No answer locked in · 0 points"
    if outcome == LATE:
        return "⊘ LATE · 0 points: it reached the host after the close"
    return f"{labels.outcome_symbol(outcome)} {outcome.upper()} · {points:+d} points"


def part_lines(me: dict, answer: dict) -> list[str]:
    """What decided this player's outcome and every part judged, yours beside the engine's."""
    from puzzles.grading import Part, decided_line, lines_for_parts
    from puzzles.keys import gain_words

    parts = [Part.from_json(row) for row in me.get("parts") or () if isinstance(row, dict)]
    if not parts:
        return []
    gain = gain_words(answer.get("gain"), answer.get("band_gain"))
    return [labels.humanize(line) for line in
            [decided_line(me["outcome"], parts, labels.words), *lines_for_parts(parts, gain, labels.words)]]


def write_report(report, folder: Path) -> tuple[Path, ...]:
    """The facilitator's report as files in `folder`: report.md, questions.csv, concepts.csv and
    players.csv (a spreadsheet opens each); returns their paths, the Markdown first."""
    from puzzles import live
    from puzzles.drill import CONCEPT_TITLES
    from saves.atomic import make_dir, write_atomic

    make_dir(folder)
    files = {"report.md": live.report_markdown(report, labels.words, CONCEPT_TITLES),
             "questions.csv": live.questions_csv(report),
             "concepts.csv": live.concepts_csv(report),
             "players.csv": live.results_csv(list(report.rows), report.count)}
    paths = []
    for name, text in files.items():
        write_atomic(folder / name, text)
        paths.append(folder / name)
    return tuple(paths)
