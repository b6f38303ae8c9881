"""What the screens show, worked out without Textual (issue 26: the rules moved down from app/):
the reveal's takeaway, rows and reasons, the stats' calibration verdicts, and the other summaries
each mode draws. The words are a stand-in that marks every id it is given, so a test sees which
id went where without the app's labels."""
from __future__ import annotations

import types

import pytest

from engine.ids import Certainty, Outcome
from puzzles import bank
from puzzles.grading import Prediction, grade, objective_bottleneck
from puzzles.stats import Calibration, calibration_lines, calibration_verdict, outcome_lines


def _marked(kind):
    return lambda identifier: f"<{kind}:{identifier}>"


WORDS = types.SimpleNamespace(
    bottleneck=_marked("bottleneck"), lever=_marked("lever"), band=_marked("band"),
    estimate_short=_marked("estimate"), humanize=lambda text: text,
    plural=lambda count, word: f"{count} {word}{'' if count == 1 else 's'}",
    words=lambda kind, identifier: f"<{kind}:{identifier}>" if identifier else "(blank)",
    outcome=_marked("outcome"), outcome_symbol=lambda identifier: identifier[0])


@pytest.fixture(scope="module")
def kv01():
    puzzle = bank.get("kv-cache-01")
    return puzzle, bank.key(puzzle)


def _answer(puzzle, key, **changes):
    values = dict(bottleneck=objective_bottleneck(key), lever=key.best_lever, gain_band=key.gain_band,
                  reason=key.reason, certainty="high", estimates={n: key.estimates[n] for n in puzzle.estimates})
    values.update(changes)
    return Prediction(**values)


# --- stats -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("level, count, share, verdict", [
    (Certainty.HIGH, 4, 0.0, "too few to say (4 of 5)"),
    (Certainty.HIGH, 10, 0.7, "over-confident: say medium more often"),
    (Certainty.HIGH, 10, 0.9, "well judged"),
    (Certainty.MEDIUM, 10, 0.5, "over-confident: say low more often"),
    (Certainty.MEDIUM, 10, 0.9, "under-confident: high would pay"),
    (Certainty.MEDIUM, 10, 0.7, "well judged"),
    (Certainty.LOW, 10, 0.7, "under-confident: medium would pay"),
    (Certainty.LOW, 10, 0.5, "well judged"),
])
def test_calibration_judges_each_level_against_where_it_pays(level, count, share, verdict):
    assert calibration_verdict(level, count, share) == verdict


def test_calibration_rows_follow_the_levels_in_order():
    rows = calibration_lines({Certainty.HIGH: Calibration(10, 7)})
    assert [row.split()[0] for row in rows] == ["certainty", "low", "medium", "high"]
    assert "always" in rows[1] and "too few to say (0 of 5)" in rows[1]
    assert rows[3].split()[1:5] == ["10", "70%", "80%", "over-confident:"]


def test_outcomes_over_time_keep_the_last_days_with_their_symbols():
    days = {f"2026-01-{d:02d}": {Outcome.CLEARED: 2, Outcome.MISSED: 1} for d in range(1, 21)}
    lines = outcome_lines(days, WORDS.outcome_symbol)
    assert len(lines) == 14 and lines[0].startswith("2026-01-07  ccm ")
    assert lines[-1].endswith("2 cleared, 1 missed")
    assert outcome_lines({}, WORDS.outcome_symbol) == ["No attempts yet: your results will build up here, day by day."]
