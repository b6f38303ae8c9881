"""The drill screen through Pilot at 80×24: a one-question round where the time runs out."""
from __future__ import annotations

import datetime as dt

from app.widgets.picker import Picker

from app.screens.drill import DrillScreen
from app.game import make_app
from app.screens.rounds import RevealPanel
from saves.store import SaveStore
from pilot_wait import settled

NOW = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.timezone.utc)


async def _settle(pilot, *keys):
    if keys:
        await pilot.press(*keys)
    await settled(pilot)  # a condition, not one pause: see tests/pilot_wait.py


async def test_a_timed_out_question_locks_in_what_is_filled(tmp_path):
    app = make_app(solo=lambda: DrillScreen(seed=7, length=1, difficulty=1, tz=dt.timezone.utc), save_dir=tmp_path,
                  profile="Ada", clock=lambda: NOW, strict=True, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, DrillScreen) and screen.phase == "setup"
        assert "Reviews today: 0 of 20" in str(screen.query_one("#drill-today").render())
        await _settle(pilot, "s")
        assert screen.phase == "question"
        item = screen.planned[0].item
        screen.query_one("#bottleneck", Picker).value = item.key.bottleneck
        await screen.time_up()
        await _settle(pilot)
        assert screen.phase == "reveal"
        panel = screen.query_one(RevealPanel)
        assert "bottleneck" not in panel.judged.blanks and "lever" in panel.judged.blanks
        assert "ran out" in str(screen.query_one("#reveal-notes").render())
        await _settle(pilot, "n")
        assert screen.phase == "summary"
        assert "timed out" in str(screen.query_one("#drill-table").render())
    profile = SaveStore(tmp_path).load("Ada")
    assert [a.mode for a in profile.attempts] == ["drill"]
    assert profile.attempts[0].prediction.bottleneck == item.key.bottleneck
    assert screen.planned[0].concept in profile.review
