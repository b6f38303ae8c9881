"""Benchmarks of the game, run by hand (not in CI): `.venv/bin/python bench/bench_app.py`.

1. Cold start. Each run is a fresh process on a pseudo-terminal (80×24), timed from spawn until
   it exits by itself once its first screen is drawn and taking keys. Ridge exits when the home
   screen shows the player (RIDGE_EXIT_WHEN_READY=1) and, separately, when the chapters have
   loaded as well (=loaded); a bare Textual app started the same way exits from its first
   refresh. Runs alternate between the three, and the medians are compared: the target is that
   Ridge's interactive home screen costs at most 2× the bare app's start.
2. Lock-in to reveal. Through Pilot, over the built-in packs: the time from the key that confirms
   a lock-in to the end of the first frame that shows the whole reveal as it finally stands
   (target: under 100 ms), beside the time the same app takes to switch to a trivial screen, as
   the floor on this machine, and the process CPU time spent (which other load on the machine
   does not inflate). "Shows" is judged from what the app sends to the terminal, not from the
   app's own callbacks: every update is played onto a shadow screen of cells (text and style),
   and the reveal counts as drawn at the first frame whose cells equal those it settles on
   (footer keys, scrollbar and all). Headless runs skip turning an update into terminal bytes,
   so that work is done here too, inside the timing; the shadow screen's own cost is not.
"""
from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import pty
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

BARE = """
from textual.app import App
from textual.widgets import Footer, Header, Static

class Bare(App):
    def compose(self):
        yield Header()
        yield Static("hello")
        yield Footer()

    def on_mount(self):
        self.call_after_refresh(self.exit)

Bare().run()
"""

RIDGE = """
import sys
from app.game import make_app
make_app(save_dir=sys.argv[1], profile="bench").run()
"""


def _timed_run(code: str, args: list[str], env: dict[str, str]) -> float:
    """Seconds from spawn to exit of `python -c code args` on an 80×24 pseudo-terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))

    def drain() -> None:
        while True:
            try:
                if not os.read(master, 65536):
                    return
            except OSError:
                return

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    start = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-c", code, *args], stdin=slave, stdout=slave, stderr=slave,
                            cwd=ROOT, env=env, close_fds=True)
    code_ = proc.wait(timeout=60)
    elapsed = time.perf_counter() - start
    os.close(slave)
    os.close(master)
    if code_ != 0:
        raise SystemExit(f"benchmark run failed with exit status {code_}")
    return elapsed


def cold_start(runs: int) -> dict[str, list[float]]:
    save_dir = tempfile.mkdtemp(prefix="ridge-bench-")
    base_env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT)}
    base_env.pop("TEXTUAL", None)
    # one untimed run of each, so the measured ones all find warm file caches and compiled .pyc
    _timed_run(BARE, [], base_env)
    _timed_run(RIDGE, [save_dir], {**base_env, "RIDGE_EXIT_WHEN_READY": "loaded"})
    times: dict[str, list[float]] = {"bare": [], "ridge": [], "ridge-loaded": []}
    for _ in range(runs):
        times["bare"].append(_timed_run(BARE, [], base_env))
        times["ridge"].append(_timed_run(RIDGE, [save_dir], {**base_env, "RIDGE_EXIT_WHEN_READY": "1"}))
        times["ridge-loaded"].append(_timed_run(RIDGE, [save_dir], {**base_env, "RIDGE_EXIT_WHEN_READY": "loaded"}))
    return times


class FrameRecorder:
    """Plays every update the app sends to the terminal onto a shadow screen of (character,
    style) cells, and records each frame with its wall and CPU time. The time spent keeping the
    shadow screen is taken off the times of the frames that follow, so it does not count."""

    def __init__(self, app) -> None:
        self.app = app
        self.frames: list[tuple[object, float, float, tuple]] = []
        self._cells: list[list[tuple[str, object]]] = []
        self._spent_wall = self._spent_cpu = 0.0
        self._display = app._display
        app._display = self._record  # every frame of the top screen goes through App._display

    def start(self) -> tuple[float, float]:
        """Forget earlier frames; the (wall, CPU) time from which the next frames are measured."""
        self.frames.clear()
        self._spent_wall = self._spent_cpu = 0.0
        return time.perf_counter(), time.process_time()

    def _record(self, screen, update) -> None:
        from textual._compositor import CompositorUpdate

        self._display(screen, update)
        if update is None or self.app._batch_count or not isinstance(update, CompositorUpdate):
            return
        update.render_segments(self.app.console)  # the bytes a terminal driver would write
        wall, cpu = time.perf_counter(), time.process_time()
        self._play(update)
        self.frames.append((screen, wall - self._spent_wall, cpu - self._spent_cpu,
                            tuple(tuple(row) for row in self._cells)))
        self._spent_wall += time.perf_counter() - wall
        self._spent_cpu += time.process_time() - cpu

    def _play(self, update) -> None:
        """Apply the update's cursor moves and styled text to the shadow screen."""
        from rich.cells import cell_len
        from rich.segment import ControlType

        width, height = self.app.size
        if len(self._cells) != height or (self._cells and len(self._cells[0]) != width):
            self._cells = [[(" ", None)] * width for _ in range(height)]
        x = y = 0
        console = self.app.console
        for segment in update.__rich_console__(console, console.options):
            if segment.control:
                for code in segment.control:
                    if code[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = code[1], code[2]
                continue
            for char in segment.text:
                if char == "\n":
                    x, y = 0, y + 1
                    continue
                cells = cell_len(char)
                if 0 <= y < height:
                    for i in range(cells):
                        if 0 <= x + i < width:
                            self._cells[y][x + i] = (char if i == 0 else "", segment.style)
                x += cells

    def first_final(self, kind: type, since: tuple[float, float]) -> tuple[float, float]:
        """(wall ms, CPU ms) from `since` to the first frame of a `kind` screen that already
        shows what its last frame shows."""
        frames = [f for f in self.frames if isinstance(f[0], kind)]
        final = frames[-1][3]
        _, wall, cpu, _ = next(f for f in frames if f[3] == final)
        return (wall - since[0]) * 1000, (cpu - since[1]) * 1000


async def _settled(pilot, recorder: FrameRecorder, quiet: float = 0.15) -> None:
    """Wait until workers are done and no frame has been drawn for `quiet` seconds (or give up
    after about three seconds, should something keep drawing)."""
    for _ in range(20):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        count = len(recorder.frames)
        await asyncio.sleep(quiet)
        await pilot.pause()
        if len(recorder.frames) == count:
            return


async def _lock_in_to_reveal(rounds: int, size: tuple[int, int]) -> tuple[list[float], list[float], list[float]]:
    sys.path.insert(0, str(ROOT))
    from textual.screen import Screen
    from textual.widgets import Footer, Header, Input, Select, Static

    from app.game import make_app
    from app.screens.puzzle import PuzzleScreen
    from app.screens.reveal import RevealScreen

    class Plain(Screen):
        def compose(self):
            yield Header()
            yield Static("plain")
            yield Footer()

    reveal_ms: list[float] = []
    reveal_cpu_ms: list[float] = []
    plain_ms: list[float] = []
    app = make_app(save_dir=tempfile.mkdtemp(prefix="ridge-bench-"), profile="bench", cursor_blink=False,
                   ready_exit=False)
    async with app.run_test(size=size) as pilot:
        recorder = FrameRecorder(app)
        await pilot.pause()
        while app.session is None or not app.bank_ready:
            await pilot.pause()
        ids = [pid for ch in app.session.chapters for pid in ch.puzzle_ids]
        for pid in ids[:rounds]:
            screen = PuzzleScreen(pid)
            app.push_screen(screen)
            await pilot.pause()
            await app.workers.wait_for_complete()
            key = app.bank.key(screen.puzzle)
            screen.query_one("#bottleneck").value = key.bottleneck
            screen.query_one("#lever").value = key.best_lever
            screen.query_one("#band").value = key.gain_band
            screen.query_one("#reason").value = screen.puzzle.reasons[0]
            for name in screen.puzzle.estimates:
                screen.query_one(f"#est-{name}", Input).value = "1"
            screen.query_one("#certainty").value = "low"
            await pilot.pause()
            await pilot.press("l")
            await _settled(pilot, recorder)
            since = recorder.start()
            await pilot.press("y")
            while not isinstance(app.screen, RevealScreen):
                await pilot.pause()
            await _settled(pilot, recorder)
            wall, cpu = recorder.first_final(RevealScreen, since)
            reveal_ms.append(wall)
            reveal_cpu_ms.append(cpu)
            plain = Plain()
            since = recorder.start()
            app.switch_screen(plain)
            await _settled(pilot, recorder)
            plain_ms.append(recorder.first_final(Plain, since)[0])
            app.pop_screen()
            await _settled(pilot, recorder)
    return reveal_ms, reveal_cpu_ms, plain_ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="cold starts of each kind (default 7)")
    parser.add_argument("--rounds", type=int, default=8, help="lock-ins per terminal size (default 8)")
    args = parser.parse_args()

    times = cold_start(args.runs)
    bare = statistics.median(times["bare"])
    ridge = statistics.median(times["ridge"])
    loaded = statistics.median(times["ridge-loaded"])
    print(f"cold start, median of {args.runs} on an 80x24 pty:")
    print(f"  bare Textual app          {bare * 1000:7.0f} ms")
    print(f"  ridge, home interactive   {ridge * 1000:7.0f} ms   ratio {ridge / bare:.2f}x  (target <= 2x)")
    print(f"  ridge, chapters loaded    {loaded * 1000:7.0f} ms   ratio {loaded / bare:.2f}x")

    for size in ((80, 24), (120, 40)):
        reveal_ms, cpu_ms, plain_ms = asyncio.run(_lock_in_to_reveal(args.rounds, size))
        print(f"lock-in to drawn reveal at {size[0]}x{size[1]}, {len(reveal_ms)} puzzles: "
              f"median {statistics.median(reveal_ms):.0f} ms (best {min(reveal_ms):.0f}, worst {max(reveal_ms):.0f}; "
              f"target < 100 ms), of which CPU {statistics.median(cpu_ms):.0f} ms; "
              f"a trivial screen switch here: {statistics.median(plain_ms):.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
