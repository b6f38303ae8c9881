"""How long the serving simulator takes from an edited input to redrawn results and plots.

Run by hand: `.venv/bin/python bench/bench_simulator.py [--rounds N] [--width W] [--height H]`.
Not part of the test suite. Target (issue 6): under 50 ms with 1,000-point curves. Three figures:

1. model: one edit (`Simulator.edit`: parse, validate, analyse, solve every lever) plus all four
   1,000-point curves through `engine.grid` plus the text of all six tabs — everything a redraw
   could need, even though the screen only draws the visible tab;
2. the same split into its parts (edit, curves, text), to see where the time goes;
3. pilot: in a headless app at 120×40 (the app factory's solo simulator), a key posted to the app
   for a focused number field (as the terminal driver delivers keys), until the next frame
   composed after the screen has handled it and redrawn the visible tab, for each tab in turn;
   and the handler's own time (`SimulatorScreen.last_redraw_seconds`). Pilot's own
   `press()` + `pause()` is not used for timing: it waits for the CPU to go idle, which adds
   about 100 ms even to an app holding a single Input.

Each figure is printed as median and 95th percentile in milliseconds, with PASS/MISS against 50 ms.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from app import plots as sp  # noqa: E402
from engine.sim.result import changed_inputs  # noqa: E402
from engine.sim.state import Simulator  # noqa: E402

TARGET_MS = 50.0
CONCURRENCIES = ("64", "128", "200", "256", "320", "400", "512", "700")


def summary(name: str, seconds: list[float], target: float | None = TARGET_MS) -> None:
    ms = sorted(s * 1e3 for s in seconds)
    median = statistics.median(ms)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    verdict = "" if target is None else ("  PASS" if p95 < target else "  MISS")
    goal = "" if target is None else f"  (target < {target:g} ms)"
    print(f"{name:<52} median {median:7.2f} ms   p95 {p95:7.2f} ms{goal}{verdict}")


def all_text(sim: Simulator, width: int, height: int) -> int:
    """Every tab's lines for the current result; returns the line count (so nothing is skipped)."""
    lines = sp.results_lines(sim.result, width)
    lines += sp.roofline_lines(sim.roofline(), width, height)
    lines += sp.spec_lines(sim.spec(), width, height)
    lines += sp.concurrency_lines(sim.concurrency_curve(), width, height)
    lines += sp.cost_tpot_lines(sim.cost_tpot(), width, height)
    lines += sp.compare_lines(sim.pinned, sim.result, sim.comparison(),
                              changed_inputs(sim.pinned, sim.result) if sim.pinned else [], width)
    return len(lines)


def bench_model(rounds: int, width: int, height: int) -> None:
    sim = Simulator()
    sim.pin()
    all_text(sim, width, height)  # warm imports and caches
    whole, edits, curves, texts = [], [], [], []
    for i in range(rounds):
        value = CONCURRENCIES[i % len(CONCURRENCIES)]
        if sim.raw["concurrency"] == value:
            value = str(int(value) + 1)
        t0 = time.perf_counter()
        sim.edit("concurrency", value)
        t1 = time.perf_counter()
        for data in (sim.roofline(), sim.spec(), sim.concurrency_curve(), sim.cost_tpot()):
            assert data is not None
        t2 = time.perf_counter()
        all_text(sim, width, height)
        t3 = time.perf_counter()
        whole.append(t3 - t0)
        edits.append(t1 - t0)
        curves.append(t2 - t1)
        texts.append(t3 - t2)
    points = len(sim.spec().concurrency)
    print(f"model level, {rounds} edits of 'in flight', {points}-point curves, text {width}x{height}:")
    summary("  edit + 4 curves + all 6 tabs' text", whole)
    summary("    edit (parse, validate, analyse, solve levers)", edits, None)
    summary("    4 curves through engine.grid", curves, None)
    summary("    text of all 6 tabs", texts, None)


async def bench_pilot(rounds: int) -> None:
    from textual import events

    from app.screens.simulator import TABS, SimulatorScreen
    from harness import FrameRecorder, bench_app

    def solo_simulator(tab: str):
        """The simulator as `ridge` runs it alone (the app factory's solo mode), opening on `tab`."""
        return bench_app(strict=True, solo=lambda: SimulatorScreen(predict_first=False, initial_tab=tab,
                                                                   pack_path="/dev/null/unused.toml"))

    print(f"pilot level, headless app at 120x40, {rounds} keystrokes per tab, key sent -> next frame composed:")
    every: list[float] = []
    handler: list[float] = []
    for tab_id, title in TABS:
        app = solo_simulator(tab_id)
        wall = []
        async with app.run_test(size=(120, 40)) as pilot:
            frames = FrameRecorder(app, cells=False)  # only when each frame went out
            screen = app.screen
            screen.query_one("#in-concurrency").focus()
            await pilot.pause()
            for i in range(rounds):
                key = events.Key("1", "1") if i % 2 == 0 else events.Key("backspace", None)
                t0 = time.perf_counter()
                app.post_message(key)  # as the terminal driver delivers a key
                frame = None
                while frame is None:
                    await asyncio.sleep(0.0005)
                    done = screen.last_edit_finished
                    if done > t0:
                        frame = next((f[1] for f in frames.frames if f[1] > done), None)
                    if time.perf_counter() - t0 > 5:
                        raise RuntimeError("no frame within 5 s")
                wall.append(frame - t0)
                handler.append(screen.last_redraw_seconds)
                assert screen.sim.errors == {}, screen.sim.errors
        every += wall
        summary(f"  keystroke -> frame with the '{title}' tab redrawn", wall)
    summary("  all tabs: keystroke -> frame", every)
    summary("  all tabs: the screen's handler alone (edit + draw)", handler)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="edits timed at model level (default 200)")
    parser.add_argument("--pilot-rounds", type=int, default=30, help="keystrokes per tab in the app (default 30)")
    parser.add_argument("--width", type=int, default=86, help="text width of the plots (default 86, as at 120 columns)")
    parser.add_argument("--height", type=int, default=16, help="plot height in rows (default 16)")
    args = parser.parse_args()
    bench_model(args.rounds, args.width, args.height)
    asyncio.run(bench_pilot(args.pilot_rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
