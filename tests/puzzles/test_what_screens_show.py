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
    outcome=_marked("outcome"), outcome_symbol=lambda identifier: identifier[0], tidy=_marked("tidy"),
    estimate_with_unit=_marked("estimate-with-unit"), bottleneck_question=_marked("question"))


@pytest.fixture(scope="module")
def kv01():
    puzzle = bank.get("kv-cache-01")
    return puzzle, bank.key(puzzle)


def _answer(puzzle, key, **changes):
    values = dict(bottleneck=objective_bottleneck(key), lever=key.best_lever, gain_band=key.gain_band,
                  reason=key.reason, certainty="high", estimates={n: key.estimates[n] for n in puzzle.estimates})
    values.update(changes)
    return Prediction(**values)


# --- the reveal ------------------------------------------------------------------------------------

def test_the_takeaway_names_the_bound_the_winner_and_the_runner_up(kv01):
    from puzzles.reveal import takeaway_lines

    puzzle, key = kv01
    first, second = takeaway_lines(key, puzzle.objective, WORDS)
    assert first.startswith(f"Bound by <bottleneck:{key.bottleneck}>")
    assert second.startswith(f"So <lever:{key.best_lever}> wins: ")
    ranked = [lv for lv in key.levers if lv.gain is not None and lv.name != key.best_lever]
    assert (f"the next best, <lever:{ranked[0].name}>" in second) or "no other lever moves it" in second


def test_the_comparison_rows_mark_each_part_and_the_deciding_one(kv01):
    from puzzles.reveal import comparison_rows

    puzzle, key = kv01
    wrong = next(lv for lv in puzzle.levers if lv != key.best_lever)
    judged = grade(puzzle, key, _answer(puzzle, key, lever=wrong))
    rows = comparison_rows({"certainty": "high"}, key, judged, WORDS)
    assert rows[0] == ("", "You", "The engine", "")
    assert rows[-1][0] == "Certainty"
    lever_row = next(row for row in rows if f"<lever:{wrong}>" == row[1])
    assert lever_row[2] == f"<lever:{key.best_lever}>" and lever_row[3].startswith("✗")
    assert any("◆" in row[3] for row in rows[1:-1]), "the part that decided the outcome is marked"


def test_why_not_leaves_out_the_true_verdict_and_the_keyed_reason(kv01):
    from puzzles.reveal import why_not_lines

    puzzle, key = kv01
    verdicts, reasons = why_not_lines(puzzle, key, WORDS)
    assert len(verdicts) == len([v for v in puzzle.verdicts if v != objective_bottleneck(key)])
    assert len(reasons) == len([r for r in puzzle.reasons if r != key.reason])


def test_a_retried_puzzle_says_when_it_comes_back():
    from puzzles.reveal import retry_note

    assert retry_note(0, WORDS) == "Queued: it comes back next."
    assert retry_note(2, WORDS) == "Queued: it comes back after 2 other puzzles."


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


# --- hot-seat --------------------------------------------------------------------------------------

def test_the_hotseat_reveal_and_board_rank_each_players_grade(kv01):
    from puzzles.boards import hotseat_board, hotseat_reveal_lines

    puzzle, key = kv01
    wrong = next(lv for lv in puzzle.levers if lv != key.best_lever)
    judged = {"Ada": grade(puzzle, key, _answer(puzzle, key)),
              "Grace": grade(puzzle, key, _answer(puzzle, key, lever=wrong))}
    lines = hotseat_reveal_lines(key, ["Ada", "Grace"], judged, WORDS)
    assert lines[1].startswith(f"Best lever  <lever:{key.best_lever}>, <band:{key.gain_band}>")
    ada = next(line for line in lines if line.startswith("Ada "))
    grace = next(line for line in lines if line.startswith("Grace "))
    assert f"<outcome:{Outcome.CLEARED}>" in ada and "✗" not in ada
    assert f"<outcome:{judged['Grace'].outcome}>" in grace and "✗" in grace
    turn = types.SimpleNamespace
    board = hotseat_board(["Ada", "Grace"], [{name: turn(judged=j) for name, j in judged.items()}])
    assert [s.entry.player for s in board.players] == ["Ada", "Grace"]
    assert board.players[0].entry.score == 30 and board.players[1].entry.score < 0


# --- the drill -------------------------------------------------------------------------------------

def test_the_drill_set_up_says_what_is_due_and_what_comes_first():
    import datetime as dt

    from puzzles.drill import reachable, today_lines

    now = dt.datetime(2026, 3, 2, 9, tzinfo=dt.timezone.utc)
    lines = today_lines(None, 2, now)
    assert lines[0].endswith(f"(of {len(reachable(2))} concepts)")
    assert lines[-1].startswith("First up: ") and lines[-1].count(" · ") == 2
    refused = today_lines(None, 2, now, problem="the exam date is in the past")
    assert refused[-2] == "✗ the exam date is in the past"
    planned = today_lines(None, 2, now, exam=dt.date(2026, 3, 20))
    assert len(planned) == len(lines) + 1 and planned[-1] == lines[-1]


def test_the_drill_summary_lists_each_answer_and_when_it_comes_back():
    import datetime as dt

    from puzzles.drill import Answered, after_lines, summary_rows

    answered = [Answered("kv-cache", "gen-1", Outcome.CLEARED, 20, "in 3 days", False),
                Answered("batching", "gen-2", Outcome.MISSED, -60, "in 10 minutes", True)]
    rows = summary_rows(answered, WORDS.outcome)
    assert rows[0].split() == ["#", "Concept", "Outcome", "Pts", "Next", "review"]
    assert f"<outcome:{Outcome.CLEARED}>" in rows[1] and rows[1].rstrip().endswith("+20  in 3 days")
    assert rows[2].endswith("-60  in 10 minutes  (timed out)")
    now = dt.datetime(2026, 3, 2, 9, tzinfo=dt.timezone.utc)
    assert len(after_lines(None, 2, {}, now)) == 2


# --- the confirmation before a lock-in (the campaign's puzzle and every timed mode ask it alike) -----

def test_the_lock_in_summary_lists_every_part_and_what_a_blank_counts_as():
    from puzzles.reveal import lock_summary

    answer = {"bottleneck": "b", "lever": "l", "gain_band": "g", "reason": "", "certainty": "",
              "estimates": {"intensity": 57.0}}
    text = lock_summary(answer, WORDS.words)
    assert text.splitlines()[:3] == ["Bottleneck   <bottleneck:b>", "Best lever   <lever:l>", "Its gain     <band:g>"]
    assert "Because" not in text and "Estimate     <estimate:intensity> ≈ 57" in text
    assert "Certainty    (blank: counts as low)" in text and "Hints" not in text
    assert text.endswith("\n\nOnce locked in, this answer cannot change.")
    hinted = lock_summary({**answer, "reason": "r", "certainty": "high"}, WORDS.words, hints=2, hint_cost=3)
    assert "Because      <reason:r>" in hinted and "Hints taken  2 (−6 points)" in hinted


# --- a live match: the host's projector and the terminal player -----------------------------------

def test_who_answered_what_is_grouped_in_the_graders_order_then_late_and_unanswered():
    from puzzles.live import LATE, NO_ANSWER
    from puzzles.live_views import who_lines

    players = [{"name": "Eve", "outcome": NO_ANSWER}, {"name": "Bo", "outcome": Outcome.MISSED},
               {"name": "Al", "outcome": LATE}, {"name": "Cy", "outcome": Outcome.CLEARED},
               {"name": "Di", "outcome": Outcome.CLEARED}]
    assert who_lines(players, WORDS) == ["c cleared (2): Cy, Di", "m missed (1): Bo", "⊘ late (1): Al",
                                         "· no answer (1): Eve"]
    assert who_lines([], WORDS) == ["No one answered."]


def test_the_players_board_shows_the_top_and_their_own_row_below_it():
    from puzzles.live_views import board_text, podium_text

    rows = [{"rank": n, "name": f"P{n}", "points": 100 - n, "cleared": 1} for n in range(1, 9)]
    text = board_text({"players": rows}, me="P7", top=3).splitlines()
    assert [line.split()[1] for line in text[:3]] == ["P1", "P2", "P3"]
    assert text[3] == "  …" and text[4].startswith("  7. P7") and text[4].endswith("◀ you")
    assert len(board_text({"players": rows}, me="P2", top=3).splitlines()) == 3
    assert board_text({}) == "No one on the board yet."
    assert podium_text({"players": rows}).splitlines() == ["1st  P1  99 pts", "2nd  P2  98 pts", "3rd  P3  97 pts"]


def test_the_projected_answer_and_spread_fit_their_pane():
    from puzzles.live_views import answer_lines, spread_lines

    answer = {"bottleneck": "b", "best_lever": "l", "gain_band": "g", "reason": "r", "deciding": "x " * 40}
    lines = answer_lines(answer, WORDS, width=40)
    assert lines[:3] == ["Bottleneck  <bottleneck:b>", "Best lever  <lever:l> (<band:g>)", "Because     r"]
    assert all(len(line) <= 40 for line in lines)
    spread = {"locked": 3, "bottleneck": {"b": 2 / 3}, "lever": {"l": 1.0}}
    wide, narrow = spread_lines(spread, WORDS, 80), spread_lines(spread, WORDS, 30)
    assert wide[0] == "3 locked in on time" and wide[3].endswith(" 67%") and len(narrow) == len(wide) + 2
    assert all(len(line) <= 30 for line in narrow)


def test_every_clock_counts_a_started_second_whole():
    from engine.units import countdown

    assert [countdown(s) for s in (0, 0.2, 59.5, 60, 90.01)] == ["0:00", "0:01", "1:00", "1:00", "1:31"]


# --- the prediction form a card asks for -----------------------------------------------------------

def test_the_form_offers_the_puzzles_own_choices_and_the_live_card_the_same():
    from puzzles import live
    from puzzles.cards import card_form_spec, form_spec, puzzle_json

    puzzle = bank.get("two-phases-02")
    spec = form_spec(puzzle, WORDS)
    assert spec.bottlenecks == tuple(puzzle.verdicts) and spec.levers == tuple(puzzle.levers)
    assert spec.bottleneck_question == f"<question:{puzzle.objective}>"
    assert [rid for rid, _ in spec.reasons] == list(puzzle.reasons)
    assert spec.estimate_labels == {e: f"<estimate-with-unit:{e}>" for e in puzzle.estimates}
    assert form_spec(puzzle, WORDS, ask_reason=False).reasons == ()
    card = card_form_spec(live.public_card(puzzle_json(puzzle), 0), WORDS)
    assert (card.bottlenecks, card.levers, card.bands) == (spec.bottlenecks, spec.levers, spec.bands)
    assert [rid for rid, _ in card.reasons] == [rid for rid, _ in spec.reasons]


# --- the exam's set-up -----------------------------------------------------------------------------

def test_the_exam_set_up_lists_the_last_five_sittings_or_says_where_they_will_show():
    import datetime as dt

    from puzzles.exam import history_text

    assert history_text("Ada", ()).startswith("Your earlier sittings appear here.")
    day = dt.datetime(2026, 3, 2, 9, tzinfo=dt.timezone.utc)
    answers = [types.SimpleNamespace(mode="exam", outcome=Outcome.CLEARED, points=20,
                                     locked_at=day + dt.timedelta(days=n)) for n in range(1, 8)]  # one sitting a day
    text = history_text("Ada", answers, dt.timezone.utc).splitlines()
    assert text[0].startswith("Ada's earlier sittings") and len(text) == 6
    assert text[-1].startswith("  2026-03-09 09:00: 1 answered, 1 cleared, +20 points")
