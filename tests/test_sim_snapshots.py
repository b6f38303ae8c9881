"""Snapshots of the serving simulator at 80×24 (it must fit and scroll) and 120×40 (it should look
good). The app has no blinking cursor and a fixed pack path, so the pictures are deterministic."""
from __future__ import annotations

from app.widgets.picker import Picker

from test_simulator_pilot import SimApp
from pilot_wait import settled
from puzzles.sim import sim_key


def test_predict_first_form_80x24(snap_compare):
    assert snap_compare(SimApp(), terminal_size=(80, 24))


def test_results_80x24(snap_compare):
    # the results' measured column is filled by a worker: the picture waits for it
    assert snap_compare(SimApp(predict_first=False), terminal_size=(80, 24), run_before=settled)


def test_spec_tab_80x24(snap_compare):
    assert snap_compare(SimApp(predict_first=False, tab="tab-spec"), terminal_size=(80, 24))


def test_graded_prediction_120x40(snap_compare):
    async def lock_in(pilot):
        screen = pilot.app.screen
        key = sim_key(screen.sim.result)
        screen.query_one("#sim-guess-bottleneck", Picker).value = key.bottleneck
        screen.query_one("#sim-guess-lever", Picker).value = "speculative-decoding"
        screen.query_one("#sim-guess-band", Picker).value = key.gain_band
        await settled(pilot)
        await pilot.press("l")
        await settled(pilot)

    assert snap_compare(SimApp(), terminal_size=(120, 40), run_before=lock_in)


def test_roofline_120x40(snap_compare):
    assert snap_compare(SimApp(predict_first=False, tab="tab-roofline"), terminal_size=(120, 40))


def test_compare_120x40(snap_compare):
    async def pin_and_change(pilot):
        await pilot.press("p")
        screen = pilot.app.screen
        screen.query_one("#in-weights", Picker).value = "fp8"
        await settled(pilot)

    assert snap_compare(SimApp(predict_first=False, tab="tab-compare"), terminal_size=(120, 40),
                        run_before=pin_and_change)
