"""A load puzzle played through the app, as the map's chapters 11 and 12 offer it: the puzzle, the
lock-in and the reveal. Its key's solutions are load runs, not steady-state solutions, so the
reveal's table of fidelities lays out the runs under this traffic (the floor's and the realistic
one) and says where the measured run is judged; no measured worker is started for it. (The
reveal of every load puzzle crashed on that table until it did.)"""
from __future__ import annotations

import pytest

from app import labels
from app.game import make_app
from app.screens.puzzle import PuzzleScreen
from helpers.forms import fill_right
from helpers.pilot import settle, until

pytestmark = pytest.mark.ui


def block_text(screen, selector: str) -> str:
    block = screen.query_one(selector)
    return "\n".join(str(line) for line in block.lines(block.content_size.width or 100))


@pytest.mark.parametrize("pid, label", [("load-and-tails-02", "goodput per GPU"),
                                        ("splitting-the-work-06", "GPUs for the SLOs")])
async def test_a_load_puzzle_reveals_its_runs_at_each_fidelity(tmp_path, pid, label):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.bank_ready, "the packs")
        app.push_screen(PuzzleScreen(pid))
        await settle(pilot)
        fill_right(app.screen, app)
        await settle(pilot, "l")
        await settle(pilot, "y")
        await until(pilot, lambda: app.screen.id == "reveal", "the reveal")
        key = app.screen.locked.key
        table = block_text(app.screen, "#fidelities")
        lines = table.splitlines()
        assert lines[0].split() == ["floor", "realistic"], table
        assert lines[1].startswith(label), table
        assert "a load run's measured step times are judged by" in " ".join(lines), table
        assert labels.bottleneck(key.bottleneck) in " ".join(table.split()), table   # in words, not the id
        assert not any(worker.group == "measured" for worker in app.workers)
        chart = block_text(app.screen, "#lever-chart")
        best = next(line for line in chart.splitlines() if "★" in line)
        assert f"×{key.band_gain:.2f}" in best, chart
        assert (tmp_path / "Ada.attempts").is_dir()   # the attempt was saved
