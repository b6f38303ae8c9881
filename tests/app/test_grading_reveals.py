"""The grading contract on screen, through Pilot: the hot-seat and drill reveals show the estimate
that decided "lucky" (yours beside the engine's), and a TTFT puzzle's form asks what bounds the
time to first token, offering only the verdicts that can."""
from __future__ import annotations

import datetime as dt

from textual.screen import Screen
from app.widgets.picker import Picker

from app.screens.drill import DrillScreen
from app.screens.hotseat import HotseatScreen
from app import labels
from app.game import make_app
from app.screens.rounds import RevealPanel
from puzzles import drill, fmt
from helpers.forms import fill, lock_in
from puzzles.grading import objective_bottleneck
from helpers.pilot import settle, settled

NOW = dt.datetime(2026, 3, 2, 18, 0, tzinfo=dt.timezone.utc)


def text(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


def seed_with_a_deciding_estimate(difficulty: int = 3) -> int:
    """A hot-seat seed whose first puzzle asks one estimate, and that estimate is its reason."""
    from puzzles.generator import make
    from puzzles.grading import estimate_counts
    from puzzles.reasons import accepted_reasons

    for seed in range(1, 500):
        gen = make(seed, difficulty, 0)
        held = accepted_reasons(gen.key.solution, objective_bottleneck(gen.key))
        if len(gen.puzzle.estimates) == 1 and estimate_counts(gen.puzzle.estimates[0], held, True, ()) == "reason":
            return seed
    raise AssertionError("no such seed")


async def test_the_hotseat_reveal_shows_the_estimate_that_decided_lucky(tmp_path):
    """Ada answers everything as the engine does; Grace too, but her one estimate is three times
    off, and it is the quantity that decides. Her row says lucky, and the reveal says why, with
    both numbers."""
    seed = seed_with_a_deciding_estimate()
    app = make_app(solo=lambda: HotseatScreen(players=["Ada", "Grace"], seed=seed, difficulty=3, count=1),
                  save_dir=tmp_path, clock=lambda: NOW, strict=True, cursor_blink=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        item = screen.items[0]
        (name,) = item.puzzle.estimates
        words = labels.estimate(name)
        for factor in (1.0, 3.0):
            await settle(pilot, "enter")
            await fill(pilot, screen, item, factor)
            await lock_in(pilot)
        assert screen.phase == "final"
        reveal = text(screen, "#hotseat-reveal")
        grace = reveal[reveal.index("Grace"):]
        assert grace.splitlines()[0].split()[1:3] == ["~", "lucky"]
        assert f"Decided by your estimate of {words}: wrong, so the right answer is only lucky." in grace
        truth = item.key.estimates[name]
        assert f"✗ ◆ {words}: {fmt.value(name, 3 * truth)} → engine: {fmt.value(name, truth)}" in grace
        ada = reveal[reveal.index("Ada"):reveal.index("Grace")]
        assert "cleared" in ada and f"✓ ◆ {words}: {fmt.value(name, truth)}" in ada


async def test_the_drill_reveal_shows_the_estimate_that_decided_lucky(tmp_path, monkeypatch):
    plan = drill.plan_round(["napkin-concurrency"], 1, seed=5, length=1)
    monkeypatch.setattr(drill, "plan_round", lambda *args, **kwargs: plan)
    app = make_app(solo=lambda: DrillScreen(seed=5, length=1, difficulty=1, tz=dt.timezone.utc), save_dir=tmp_path,
                  profile="Ada", clock=lambda: NOW, strict=True, cursor_blink=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        await settle(pilot, "s")
        item = screen.planned[0].item
        assert item.puzzle.estimates == ("max_concurrency",)
        await fill(pilot, screen, item, estimate_factor=3.0)
        await screen.lock_answer(timed_out=False)
        await settle(pilot)
        assert screen.phase == "reveal"
        assert screen.query_one(RevealPanel).judged.outcome == "lucky"
        lines = text(screen, "#reveal-lines")
        assert lines.splitlines()[0] == ("Decided by your estimate of max concurrent sequences: wrong, so the "
                                         "right answer is only lucky.")
        truth = item.key.estimates["max_concurrency"]
        assert f"✗ ◆ max concurrent sequences: {3 * truth:,.0f} → engine: {truth:,.0f}, 3.00×" in lines


async def test_a_ttft_form_asks_what_bounds_the_time_to_first_token():
    from puzzles.cards import form_spec
    from app.widgets.form import PredictionForm
    from puzzles import bank

    puzzle = bank.get("two-phases-02")
    assert puzzle.objective == "ttft"

    class FormScreen(Screen):
        def compose(self):
            yield PredictionForm(form_spec(puzzle, labels), cursor_blink=False, id="form")

    app = make_app(solo=FormScreen, strict=True, cursor_blink=False)
    async with app.run_test(size=(80, 40)) as pilot:
        await settled(pilot)
        field = app.query_one("#field-bottleneck")
        assert str(field.query_one(".field-label").render()) == "What bounds the time to first token here?"
        offered = [value for _, value in app.query_one("#bottleneck", Picker).options]
        assert offered == ["does-not-fit", "prefill-compute", "prefill-weights"]
        assert "both bands count" in str(app.query_one("#field-band").query(".field-note").first().render())


def test_the_live_reveal_names_the_deciding_estimate_from_the_hosts_json():
    """The host sends each player's graded parts after the close; the player's reveal rebuilds
    them and shows what decided the outcome, yours beside the engine's."""
    import json

    from app.labels import part_lines as _part_lines
    from puzzles import bank
    from puzzles.live import score

    puzzle = bank.get("kv-cache-02")
    key = bank.key(puzzle)
    truth = key.estimates["max_concurrency"]
    prediction = {"bottleneck": key.bottleneck, "lever": key.best_lever, "gain_band": key.gain_band,
                  "reason": key.reason, "certainty": "medium", "estimates": {"max_concurrency": truth * 2}}
    graded = score(puzzle, key, prediction)
    me = json.loads(json.dumps({"name": "Ada", "outcome": graded.outcome, "points": graded.points,
                                "parts": list(graded.parts)}))   # as it crosses the wire
    lines = _part_lines(me, {"gain": key.gain})
    assert graded.outcome == "lucky"
    assert lines[0] == "Decided by your estimate of max concurrent sequences: wrong, so the right answer is only lucky."
    assert any(line.startswith("✗ ◆ max concurrent sequences:") and "→ engine:" in line for line in lines)
