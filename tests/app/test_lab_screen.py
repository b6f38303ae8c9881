"""The Lab screen at 80×24: predict, lock in, watch the quick run, and see results beside the guess."""
from textual.widgets import DataTable, Input, RadioSet, Static

from app.game import make_app
from app.screens.lab import LabScreen
from helpers.pilot import settled


def _LabApp():
    """The game's app showing only the lab, on its quick run."""
    return make_app(solo=lambda: LabScreen(quick=True), strict=True, cursor_blink=False, ready_exit=False)


async def test_predict_lock_in_and_see_results():
    app = _LabApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, LabScreen)
        await pilot.click("#pred-ratio")
        await pilot.press(*"2.5")
        screen.query_one("#pred-gap", Input).focus()
        await pilot.press(*"40")
        screen.query_one("#pred-gain", RadioSet).focus()
        await pilot.press("down", "enter")  # the second choice: paged allocation
        await pilot.press("ctrl+l")
        assert screen.prediction is not None and screen.prediction.most_gain_from == "paged-allocation"
        assert screen.query_one("#pred-ratio", Input).disabled  # the lock-in is final
        await settled(pilot)
        assert screen.error is None
        assert screen.result is not None and screen.result["identical_outputs"] is True
        table = screen.query_one("#compare", DataTable)
        assert table.row_count == 3
        assert table.get_row_at(0)[1] == "2.50×"
        assert "ms" in str(screen.query_one("#plot", Static).render())
        await pilot.press("escape")


async def test_bad_prediction_is_one_line_and_nothing_runs():
    app = _LabApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        screen.query_one("#pred-ratio", Input).value = "3"
        await pilot.press("ctrl+l")
        assert screen.prediction is None
        assert "utilisation gap" in str(screen.query_one("#form-error", Static).render())
