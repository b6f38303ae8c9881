"""Derived figures (score, mastery, streaks, calibration) and history exports."""
from __future__ import annotations

import csv
import datetime as dt
import io
import re

from helpers.saves_worker import sample_attempt
from saves.chain import GENESIS
from saves.export import COLUMNS, to_csv, to_markdown
from saves.model import Attempt, Profile
from puzzles.stats import derive

UTC = dt.timezone.utc


def _chain(*attempts):
    out, prev = [], GENESIS
    for seq, a in enumerate(attempts, start=1):
        linked = Attempt.link(a, seq, prev)
        out.append(linked)
        prev = linked.hash
    return tuple(out)


def _a(outcome, certainty, hints=0, puzzle="kv-cache-01", module="kv-cache", at=None,
       reason="kv-bytes-per-token", **kw):
    base = sample_attempt(0, module=module, outcome=outcome)
    if outcome in ("cleared", "close") and reason != "kv-bytes-per-token":
        kw.setdefault("key", {**base.key.model_dump(), "reasons": [reason, "kv-bytes-per-token"]})
    return sample_attempt(
        0, module=module, puzzle_id=puzzle, outcome=outcome, hints_used=hints,
        prediction={**base.prediction.model_dump(), "certainty": certainty,
                    "reason": reason if reason != "kv-bytes-per-token" else base.prediction.reason},
        locked_at=at or dt.datetime(2026, 3, 1, 12, tzinfo=UTC), **kw)


def test_score_and_outcomes_come_from_the_points_table():
    attempts = _chain(_a("cleared", "high"), _a("missed", "high"), _a("lucky", "low", hints=1),
                      _a("close", "medium"))
    stats = derive(attempts)
    assert stats.attempts == 4
    assert stats.score == 30 - 60 + (5 - 3) - 5
    assert stats.by_outcome == {"cleared": 1, "lucky": 1, "close": 1, "missed": 1}
    assert stats.hints_used == 1
    assert derive(Profile(name="p", created=dt.datetime.now(UTC), attempts=attempts)) == stats


def test_calibration_counts_each_certainty():
    stats = derive(_chain(_a("cleared", "high"), _a("missed", "high"), _a("cleared", "low")))
    cal = stats.to_json()["calibration"]
    assert cal["high"] == {"count": 2, "cleared": 1, "share_cleared": 0.5}
    assert cal["low"] == {"count": 1, "cleared": 1, "share_cleared": 1.0}
    assert cal["medium"] == {"count": 0, "cleared": 0, "share_cleared": None}


def test_mastery_uses_each_puzzles_latest_attempt():
    stats = derive(_chain(
        _a("missed", "low", puzzle="kv-1"), _a("cleared", "low", puzzle="kv-1"),  # now cleared
        _a("cleared", "low", puzzle="kv-2"), _a("missed", "low", puzzle="kv-2"),  # now missed
        _a("cleared", "low", puzzle="in-1", module="intensity")))
    assert stats.mastery == {"intensity": 1.0, "kv-cache": 0.5}
    kv = stats.by_module["kv-cache"]
    assert (kv.attempts, kv.puzzles, kv.cleared_latest) == (4, 2, 1)


def test_streaks_count_local_days_across_midnight():
    minus5 = dt.timezone(dt.timedelta(hours=-5))
    at = [dt.datetime(2026, 3, 10, 4, 30, tzinfo=UTC),   # 9 March, 23:30 local
          dt.datetime(2026, 3, 11, 4, 0, tzinfo=UTC),    # 10 March, 23:00 local
          dt.datetime(2026, 3, 11, 6, 0, tzinfo=UTC)]    # 11 March, 01:00 local
    attempts = _chain(*(_a("cleared", "low", at=t) for t in at))
    evening = dt.datetime(2026, 3, 12, 3, 0, tzinfo=UTC)  # 11 March, 22:00 local
    local = derive(attempts, now=evening, tz=minus5)
    assert local.streak_days == 3 == local.longest_streak_days
    assert list(local.outcomes_over_time) == ["2026-03-09", "2026-03-10", "2026-03-11"]
    assert derive(attempts, now=evening, tz=UTC).streak_days == 2  # UTC days: 10th and 11th
    next_day = evening + dt.timedelta(days=1)  # 12 March local: yesterday still counts
    assert derive(attempts, now=next_day, tz=minus5).streak_days == 3
    assert derive(attempts, now=next_day + dt.timedelta(days=1), tz=minus5).streak_days == 0


def test_an_empty_history_has_zero_figures():
    data = derive([]).to_json()
    assert (data["attempts"], data["score"], data["streak_days"]) == (0, 0, 0)


def _profile():
    attempts = _chain(_a("cleared", "high"), _a("missed", "medium", hints=2, reason="a|b"),
                      _a("lucky", "low", key=None, seconds_taken=None))
    return Profile(name="ann", created=dt.datetime.now(UTC), attempts=attempts)


def test_csv_export_has_a_row_per_attempt_with_derived_points():
    rows = list(csv.DictReader(io.StringIO(to_csv(_profile()))))
    assert tuple(rows[0]) == COLUMNS
    assert [r["seq"] for r in rows] == ["1", "2", "3"]
    assert [int(r["points"]) for r in rows] == [30, -26, 5]
    assert rows[0]["locked_at"] == "2026-03-01T12:00:00Z"
    assert rows[2]["key_lever"] == "" and rows[2]["seconds_taken"] == ""


def test_markdown_export_is_a_table():
    lines = to_markdown(_profile()).splitlines()
    assert lines[0] == "# Ridge history: ann"
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + 3
    cells = [re.split(r"(?<!\\)\|", line)[1:-1] for line in table]
    assert all(len(row) == len(COLUMNS) for row in cells)
    assert cells[3][COLUMNS.index("reason")].strip() == "a\\|b"


def test_one_streak_with_freezes_for_every_screen():
    """Seven days in a row bank a freeze, a missed eighth day spends it: stats (home, `ridge
    stats`) and the drill's line count the same streak, which the old stats count reset to 1."""
    from puzzles.streak import streak_for

    start = dt.datetime(2026, 3, 1, 12, tzinfo=UTC)
    days = [*range(7), 8]
    attempts = _chain(*(_a("cleared", "low", at=start + dt.timedelta(days=d)) for d in days))
    now = start + dt.timedelta(days=8, hours=1)
    stats = derive(attempts, now=now, tz=UTC)
    assert stats.streak == streak_for(attempts, now, UTC)
    assert (stats.streak_days, stats.streak.frozen_days) == (8, (dt.date(2026, 3, 8),))
    assert stats.to_json()["streak_freezes"] == 0
