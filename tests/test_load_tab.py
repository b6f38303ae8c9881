"""The simulator's Load tab at 80x24, driven by Pilot: the curves come from a worker and fit the
column, the SLO fields move the SLO lines, and predict-first asks for the knee before showing
them (and again after any edit)."""
from __future__ import annotations

from textual.widgets import Input, Static

from app.game import make_app
from app.screens.simulator import SimulatorScreen
from app.widgets.picker import Picker
from pilot_wait import until
from puzzles.sim import sim_key

SIZE = (80, 24)


def SimApp(predict_first: bool):
    return make_app(strict=True, cursor_blink=False,
                    solo=lambda: SimulatorScreen(predict_first=predict_first))


def load_text(screen) -> str:
    found = screen.query("#out-load")
    return str(found.first(Static).content) if found else ""


async def curves(pilot, screen) -> str:
    await until(pilot, lambda: "Time to first token against" in load_text(screen), "the load curves")
    return load_text(screen)


async def test_the_load_tab_draws_latency_goodput_and_the_queue_within_the_column():
    app = SimApp(predict_first=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("t")
        text = await curves(pilot, screen)
        for words in ("P50 (median) at each rate", "P99 at each rate", "TTFT SLO 2.00 s", "TPOT SLO 200.0 ms",
                      "knee ≈", "steady-state capacity", "Goodput against the offered rate", "Queue over one run"):
            assert words in text, words
        width = screen.query_one("#out-load").content_region.width
        assert max(len(line) for line in text.splitlines()) <= width
        assert screen.sim.cached_load_curve().knee_qps <= screen.sim.cached_load_curve().saturation_qps * 1.15


async def test_the_slo_fields_move_the_slo_lines_and_a_bad_value_is_said_inline():
    app = SimApp(predict_first=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("t")
        await curves(pilot, screen)
        field = screen.query_one("#load-ttft", Input)
        field.value = "0.5"
        await until(pilot, lambda: "TTFT SLO 500.0 ms" in load_text(screen), "the new TTFT SLO line")
        field.value = "soon"
        error = screen.query_one("#load-error", Static)
        await until(pilot, lambda: error.display and "positive number" in str(error.content), "the inline error")
        assert "TTFT SLO 500.0 ms" in load_text(screen)   # the last good curves stay


async def test_predict_first_asks_for_the_knee_before_the_curves_and_again_after_an_edit():
    app = SimApp(predict_first=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        key = sim_key(screen.sim.result)
        screen.query_one("#sim-guess-bottleneck", Picker).value = key.bottleneck
        screen.query_one("#sim-guess-lever", Picker).value = key.best_lever
        screen.query_one("#sim-guess-band", Picker).value = key.gain_band
        await until(pilot, lambda: screen.check_action("lock_in", ()), "armed for lock-in")
        await pilot.press("l")
        await until(pilot, lambda: screen.results_visible, "the results after lock-in")
        await pilot.press("t")
        await until(pilot, lambda: "Predict first" in load_text(screen), "the knee question")
        assert "Time to first token against" not in load_text(screen)
        knee = screen.query_one("#load-knee", Input)
        knee.focus()
        await pilot.press("1", "0", "enter")
        text = await curves(pilot, screen)
        assert text.startswith(("✓ right: your knee 10 req/s", "✗ off: your knee 10 req/s"))
        assert "your knee 10 req/s" in text
        screen.edit("prompt", "1024")
        await until(pilot, lambda: screen.sim.knee_guess() is None, "a new deployment forgets the knee")


async def test_the_queue_is_drawn_when_requests_wait_and_said_in_a_line_when_none_do():
    app = SimApp(predict_first=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("t")
        text = await curves(pilot, screen)
        assert "No request waited at" in text and "requests waiting at" not in text   # 90% of capacity
        screen.query_one("#load-rate", Input).value = "12"    # past the 10.1 req/s capacity
        await until(pilot, lambda: "requests waiting at 12 req/s" in load_text(screen), "the queue's chart")
        assert "No request waited" not in load_text(screen)
