"""What the app benchmarks share (bench_app, bench_feel, bench_simulator): the cold start on a
pseudo-terminal, the app made by the one factory, a shadow of the terminal to tell when a screen
is drawn, and the waits between interactions. Run nothing here directly.

Cold start. Each run is a fresh `python -c` process on an 80×24 pseudo-terminal, timed from
spawn until the terminal has received the frame that shows what the player waits for: for a bare
Textual app (title bar, a word, footer), that word; for Ridge, started as a player starts it
(`ridge play --save-dir DIR --profile bench`; a new player, or one with `attempts` answers), the
home screen naming the player ("home") and then the next puzzle in Continue ("loaded": the packs
are in). The bench then sends
ctrl+q, which must end the process: proof that the app takes keys. What follows is not counted:
Textual's input thread polls every 0.1 s, so quitting alone costs 100-200 ms whatever the app
(an earlier version timed to the exit, which hid that much of any gap, and let Ridge quit before
the player's line had reached the terminal). Runs alternate between the two apps, after one
untimed run of each, and share a bytecode cache (PYTHONDONTWRITEBYTECODE is dropped: a player's
Python keeps compiled modules, so the bench's should too).
"""
from __future__ import annotations

import asyncio
import fcntl
import functools
import os
import pty
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BARE = """
from textual.app import App
from textual.widgets import Footer, Header, Static

class Bare(App):
    def compose(self):
        yield Header()
        yield Static("hello")
        yield Footer()

Bare().run()
"""

RIDGE = """
import sys
from app.cli import main
sys.exit(main(["play", "--save-dir", sys.argv[1], "--profile", "bench"]))
"""

# What each moment looks like on the terminal (text of the screen, as the app writes it).
BARE_DRAWN = b"hello"
HOME_DRAWN = b"Playing as bench"  # the home screen's player line, once the save is open
LOADED_DRAWN = b"(chapter "  # Continue names the next puzzle's chapter once the packs are in
QUIT_KEY = b"\x11"  # ctrl+q: both apps quit on it
GIVE_UP_SECONDS = 60.0


@dataclass(frozen=True)
class Start:
    """One cold start: milliseconds from spawn to each marker seen on the terminal, and the CPU
    time all the process's threads had used by then (which load elsewhere hardly inflates; None
    where Linux's /proc/PID/task/*/schedstat cannot be read)."""

    drawn_ms: dict[bytes, float]
    cpu_ms: dict[bytes, float | None]


def _cpu_ms(pid: int) -> float | None:
    """CPU milliseconds used so far by every thread of process `pid` (Linux only)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        total = 0
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e6


def _start_once(code: str, args: list[str], env: dict[str, str], markers: list[bytes]) -> Start:
    """Spawn `python -c code args` on an 80×24 pty, note when each marker first arrives (in
    order), then send ctrl+q and wait for the process to end."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdin=slave, stdout=slave, stderr=slave,
                            cwd=ROOT, env=env, close_fds=True)
    os.close(slave)
    seen: dict[bytes, float] = {}
    cpu: dict[bytes, float | None] = {}
    tail = b""
    pending = list(markers)
    try:
        while True:
            if time.perf_counter() - start > GIVE_UP_SECONDS:
                raise SystemExit(f"cold start: never saw {pending[0]!r} on the terminal "
                                 f"(has the screen's text changed? see bench/harness.py)")
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # the child has gone
                data = b""
            if not data:
                break
            now = time.perf_counter()
            tail = tail[-64:] + data
            while pending and pending[0] in tail:
                cpu[pending[0]] = _cpu_ms(proc.pid)
                seen[pending.pop(0)] = (now - start) * 1000
                if not pending:
                    os.write(master, QUIT_KEY)
        _, status = os.waitpid(proc.pid, 0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    if pending:
        raise SystemExit(f"cold start: the app ended before {pending[0]!r} was drawn")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"cold start: the app exited with status {os.waitstatus_to_exitcode(status)}")
    return Start(seen, cpu)


def returning_player(save_dir: str, attempts: int) -> None:
    """Give the bench's player `attempts` recorded answers (over the built-in puzzles, every
    outcome and certainty), so a cold start reads and derives a history as a returning player's."""
    import datetime as dt

    from puzzles import bank
    from puzzles.scoring import CERTAINTIES, OUTCOMES
    from saves.store import SaveStore

    store = SaveStore(save_dir)
    puzzles = list(bank.builtin().values())
    start = dt.datetime(2026, 11, 1, 9, tzinfo=dt.timezone.utc)
    for i in range(attempts):
        puzzle = puzzles[i % len(puzzles)]
        store.record_attempt("bench", {
            "puzzle_id": puzzle.id, "module": puzzle.module, "mode": "campaign",
            "prediction": {"certainty": CERTAINTIES[i % len(CERTAINTIES)]},
            "outcome": OUTCOMES[i % len(OUTCOMES)], "locked_at": start + dt.timedelta(hours=7 * i)})


def cold_start(runs: int, attempts: int = 0) -> dict[str, list[float] | list[Start]]:
    """`runs` cold starts of each app, alternating, Ridge's player having `attempts` answers
    recorded. Returns the milliseconds to "bare", "home" and "loaded", and the raw "bare-starts"
    / "ridge-starts" (with their CPU times)."""
    with tempfile.TemporaryDirectory(prefix="ridge-bench-") as save_dir, \
            tempfile.TemporaryDirectory(prefix="ridge-pyc-") as pycache:
        if attempts:
            returning_player(save_dir, attempts)
        env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": pycache}
        for name in ("TEXTUAL", "PYTHONDONTWRITEBYTECODE", "RIDGE_EXIT_WHEN_READY", "RIDGE_SAVE_DIR"):
            env.pop(name, None)
        bare_run = (BARE, [], env, [BARE_DRAWN])
        ridge_run = (RIDGE, [save_dir], env, [HOME_DRAWN, LOADED_DRAWN])
        _start_once(*bare_run)  # untimed: fills the bytecode cache and makes the player's save
        _start_once(*ridge_run)
        bare: list[Start] = []
        ridge: list[Start] = []
        for _ in range(runs):
            bare.append(_start_once(*bare_run))
            ridge.append(_start_once(*ridge_run))
    return {"bare": [s.drawn_ms[BARE_DRAWN] for s in bare],
            "home": [s.drawn_ms[HOME_DRAWN] for s in ridge],
            "loaded": [s.drawn_ms[LOADED_DRAWN] for s in ridge],
            "bare-starts": bare, "ridge-starts": ridge}


def cold_start_lines(runs: int, label: str = "", attempts: int = 0) -> list[str]:
    """The cold-start figures as a note can quote them: median (min-max) ms, the ratio of medians
    to the bare app (target <= 1.5x for the home screen), and the CPU used by then."""
    import statistics

    before = load_average()
    times = cold_start(runs, attempts)
    after = load_average()
    bare = statistics.median(times["bare"])
    player = f"a player with {attempts} answers" if attempts else "a new player"

    def cpu(starts: list[Start], marker: bytes) -> list[float]:
        return [s.cpu_ms[marker] for s in starts if s.cpu_ms.get(marker) is not None]

    bare_cpu = cpu(times["bare-starts"], BARE_DRAWN)
    lines = [f"cold start{f' ({label})' if label else ''}, {runs} runs each on an 80x24 pty, {player}, "
             f"spawn to drawn (load average {before} -> {after}):",
             f"  {'bare Textual app':<25} {spread(times['bare'])}"
             + (f", CPU {spread(bare_cpu)}" if bare_cpu else "")]
    for name, title, marker, target in (("home", "ridge, home shows player", HOME_DRAWN, "  (target <= 1.5x)"),
                                        ("loaded", "ridge, chapters loaded", LOADED_DRAWN, "")):
        ratio = statistics.median(times[name]) / bare
        used = cpu(times["ridge-starts"], marker)
        by_cpu = (f", CPU {spread(used)}", f" (CPU {statistics.median(used) / statistics.median(bare_cpu):.2f}x)") \
            if used and bare_cpu else ("", "")
        lines.append(f"  {title:<25} {spread(times[name])}{by_cpu[0]}   ratio {ratio:.2f}x{by_cpu[1]}{target}")
    return lines


def load_average() -> str:
    """The machine's 1-minute load average, to print beside every timed figure."""
    return f"{os.getloadavg()[0]:.2f}"


def spread(values: list[float], unit: str = "ms") -> str:
    """`median (min-max)` of `values`, rounded to whole units: the form a note can quote."""
    import statistics

    return f"{statistics.median(values):.0f} {unit} ({min(values):.0f}-{max(values):.0f})"


# -- the app, through Pilot ------------------------------------------------------------------
def bench_app(**options):
    """Ridge from its one factory (as the command line makes it), on a fresh save folder, with
    the cursor not blinking (so frames come only from what the bench does)."""
    from app.game import make_app

    options.setdefault("save_dir", tempfile.mkdtemp(prefix="ridge-bench-"))
    options.setdefault("warm", True)  # as `ridge play` runs
    return make_app(profile="bench", cursor_blink=False, **options)


async def wait_for_player(pilot) -> None:
    """Wait until the home screen has opened the player's save and the packs are loaded."""
    app = pilot.app
    while app.session is None or not app.bank_ready:
        await pilot.pause()


@functools.cache
def plain_screen_type() -> type:
    """A trivial screen (title bar, a word, the footer): switching to it is the floor a machine
    sets on any screen change, against which the interactions are given as ratios."""
    from textual.screen import Screen
    from textual.widgets import Footer, Header, Static

    class Plain(Screen):
        def compose(self):
            yield Header()
            yield Static("plain")
            yield Footer()

    return Plain


def fill_answer(screen, key) -> None:
    """Put the engine's answer (`key`) into a puzzle screen's form, at low certainty, through the
    widgets' public values (whatever kind of picker each part uses)."""
    screen.query_one("#bottleneck").value = key.bottleneck
    screen.query_one("#lever").value = key.best_lever
    screen.query_one("#band").value = key.gain_band
    if screen.query("#reason"):
        screen.query_one("#reason").value = screen.puzzle.reasons[0]
    for name in screen.puzzle.estimates:
        screen.query_one(f"#est-{name}").value = "1"
    screen.query_one("#certainty").value = "low"


def is_a(screen, kind: type | str) -> bool:
    """Whether `screen` is a `kind`: a class, or a class's name, so a bench can wait for a screen
    without importing its module first (which would take that import out of the first timing)."""
    if isinstance(kind, str):
        return any(cls.__name__ == kind for cls in type(screen).__mro__)
    return isinstance(screen, kind)


class FrameRecorder:
    """Notes every frame the app sends to the terminal, with its wall and CPU time, and (unless
    `cells=False`) plays it onto a shadow screen of (character, style) cells, so the bench can
    tell the first frame that already shows what a screen settles on. The shadow's own cost is
    taken off the times of the frames that follow.

    It wraps the private `App._display` and reads `App._batch_count`, on purpose: Textual has no
    public hook for "a frame went to the terminal" (headless runs never even turn an update into
    bytes, so that is done here, inside the timing), and `_display` is the one place every frame
    of the top screen passes. Everything else in the benchmarks uses public API."""

    def __init__(self, app, cells: bool = True) -> None:
        self.app = app
        self.cells = cells
        self.frames: list[tuple[object, float, float, tuple]] = []
        self._cells: list[list[tuple[str, object]]] = []
        self._spent_wall = self._spent_cpu = 0.0
        self._display = app._display
        app._display = self._record

    def start(self) -> tuple[float, float]:
        """Forget earlier frames; the (wall, CPU) time from which the next frames are measured."""
        self.frames.clear()
        self._spent_wall = self._spent_cpu = 0.0
        return time.perf_counter(), time.process_time()

    def _record(self, screen, update) -> None:
        from textual._compositor import CompositorUpdate

        if not self.cells:
            if update is not None:
                self.frames.append((screen, time.perf_counter(), time.process_time(), ()))
            self._display(screen, update)
            return
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

    def first_final(self, kind: type | str, since: tuple[float, float]) -> tuple[float, float]:
        """(wall ms, CPU ms) from `since` to the first frame of a `kind` screen (see `is_a`) that
        already shows what its last frame shows."""
        frames = [f for f in self.frames if is_a(f[0], kind)]
        final = frames[-1][3]
        _, wall, cpu, _ = next(f for f in frames if f[3] == final)
        return (wall - since[0]) * 1000, (cpu - since[1]) * 1000


async def settled(pilot, recorder: FrameRecorder, quiet: float = 0.15) -> None:
    """Wait until workers are done (all but a question waiting on the player's answer, which would
    wait for ever: `app.screens.base.wait_for_work`) and no frame has been drawn for `quiet` seconds (or
    give up after about three seconds, should something keep drawing)."""
    from app.screens.base import wait_for_work

    for _ in range(20):
        await wait_for_work(pilot.app)
        await pilot.pause()
        count = len(recorder.frames)
        await asyncio.sleep(quiet)
        await pilot.pause()
        if len(recorder.frames) == count:
            return
