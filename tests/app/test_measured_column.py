"""The measured column of the reveal and the simulator: shown at once as pending, filled by a
worker when the kernels answer, and naming why where an accelerator has none."""
from __future__ import annotations

import threading

import pytest

from app import labels
from app.screens.reveal import fidelity_lines
from engine import compare
from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from helpers.pilot import settle, until
from helpers.snapshots import build_app
from helpers.forms import fill_right
from helpers.sim import SimApp
from puzzles.reveal import fidelity_table, measured_start

CAT = builtin_catalog()


def gate(monkeypatch):
    """Hold every measurement until the test lets it go: proof that no screen waits for it."""
    release = threading.Event()
    real = compare.measure

    def held(solution):
        release.wait(120)
        return real(solution)

    monkeypatch.setattr(compare, "measure", held)
    return release


def block_text(screen, selector: str) -> str:
    block = screen.query_one(selector)
    return "\n".join(str(line) for line in block.lines(block.content_size.width or 100))


@pytest.mark.slow
async def test_the_reveal_shows_its_measured_column_when_the_worker_answers(tmp_path, monkeypatch):
    release = gate(monkeypatch)
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: app.bank_ready, "the packs")
        await pilot.press("c")
        await until(pilot, lambda: app.screen.id != "home", "the puzzle")
        await pilot.press("s")
        await pilot.pause()
        fill_right(app.screen, app)
        await pilot.press("l", "y")
        await until(pilot, lambda: app.screen.query("#fidelities"), "the reveal")
        await until(pilot, lambda: "measuring" in block_text(app.screen, "#fidelities"), "the pending column")
        assert block_text(app.screen, "#fidelities").splitlines()[0].split() == ["floor", "realistic", "measured"]
        release.set()
        await app.workers.wait_for_complete()
        await until(pilot, lambda: "measuring" not in block_text(app.screen, "#fidelities"), "the measured figures")
        text = block_text(app.screen, "#fidelities")
        from engine import measured

        if measured.unavailable():
            assert measured.unavailable()[:40] in text.replace("\n", " ")
        else:
            objective = text.splitlines()[1].split()   # TPOT: floor, realistic, measured
            assert "aiconfigurator-core 0.12.0" in text and objective[-1] == "ms" and objective[0] == "TPOT"


def test_an_uncovered_accelerator_says_so_in_the_column():
    from engine.levers import solve
    from puzzles.keys import key_from_solution

    dep = build_deployment(CAT, "llama-3-8b", "l4", concurrency=4, fidelity="realistic")
    real = solve(dep)
    key = key_from_solution(real.floor, real)
    start = measured_start(key)
    assert start == "no measured kernels for this accelerator"
    lines = fidelity_lines(fidelity_table(key, labels, start), 90)
    assert "measured" in lines[0] and any("no measured kernels" in line for line in lines)


@pytest.mark.slow
async def test_the_simulator_fills_its_measured_column_in_a_worker(monkeypatch):
    release = gate(monkeypatch)
    app = SimApp(predict_first=False)
    async with app.run_test(size=(140, 48)) as pilot:
        await until(pilot, lambda: app.screen.query("#tab-results Static"), "the results")
        screen = app.screen
        await until(pilot, lambda: "measuring" in "\n".join(screen.tab_lines("tab-results", 100, 20)),
                    "the pending column")
        release.set()
        await app.workers.wait_for_complete()
        await until(pilot, lambda: "measuring" not in "\n".join(screen.tab_lines("tab-results", 100, 20)),
                    "the measured figures")
        text = "\n".join(screen.tab_lines("tab-results", 100, 20))
        assert "floor" in text and "realistic" in text and "measured" in text
