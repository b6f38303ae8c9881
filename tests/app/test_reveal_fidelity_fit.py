"""The reveal's "floor beside the realistic figure" table is laid out in words for the width it
has: each cell wraps inside its column, no line is wider than the block (so none wraps back to
its left edge), and the realistic column starts at the same place on every row."""
from __future__ import annotations

import pytest

from app.game import make_app
from app.screens.reveal import fidelity_lines
from helpers.pilot import settle, until
from helpers.forms import fill_right


async def _first_puzzle_to_its_reveal(pilot, app) -> None:
    """Continue -> the briefing -> the first puzzle, answered right and locked in."""
    await settle(pilot)
    await until(pilot, lambda: app.bank_ready, "the packs")
    await settle(pilot, "c")
    await settle(pilot, "s")
    fill_right(app.screen, app)
    await settle(pilot, "l")
    await settle(pilot, "y")


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_fidelity_table_fits_its_block(tmp_path, size):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=size) as pilot:
        await _first_puzzle_to_its_reveal(pilot, app)
        await until(pilot, lambda: app.screen.query("#fidelities"), "the reveal's fidelity table")
        block = app.screen.query_one("#fidelities")
        width = block.content_size.width
        lines = block.lines(width)
        assert lines and all(len(line) <= width for line in lines), "\n".join(lines)
        table = lines[:next((i for i, line in enumerate(lines) if line.startswith("corrections")), len(lines))]
        start = table[0].index("floor")
        assert all(line[start - 1] == " " for line in table if len(line) >= start), "\n".join(table)
        bounds = next(line for line in table if line.startswith("what bounds"))
        assert "decode: weight read" in bounds or "decode:" in bounds  # in words, not the id


def test_narrow_layout_wraps_within_columns():
    rows = [("what bounds it", "prefill: compute-bound", "prefill: compute-bound"), ("TTFT", "214.3 ms", "214.9 ms")]
    lines = fidelity_lines((rows, ["per-step overhead: a long note about what it changed in the figures"]), 40)
    assert all(len(line) <= 40 for line in lines)
    table = lines[:next(i for i, line in enumerate(lines) if line.startswith("corrections"))]
    assert all(not line or line.startswith(" ") or line.split()[0] in {"what", "it", "TTFT"} for line in table), lines


async def test_the_lever_chart_shows_the_realistic_gains_that_key_the_band(tmp_path):
    """The chart beside the answer ranks the levers by the gain the band is keyed on, not by the
    floor's ceiling (which reads "FP8 doubles" where it does not): the first puzzle's best lever
    gains 2.80x at the floor and 2.78x realistic."""
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await _first_puzzle_to_its_reveal(pilot, app)
        await until(pilot, lambda: app.screen.query("#lever-chart"), "the reveal's lever chart")
        key = app.screen.locked.key
        assert f"{key.gain:.2f}" != f"{key.band_gain:.2f}", "pick a puzzle whose floor and realistic gains differ"
        chart = app.screen.query_one("#lever-chart")
        assert chart.title == "Every lever, ranked by its realistic gain"
        text = "\n".join(str(line) for line in chart.lines(chart.content_size.width or 60))
        best_line = next(line for line in text.splitlines() if "★" in line)
        assert f"×{key.band_gain:.2f}" in best_line and f"×{key.gain:.2f}" not in text, text
