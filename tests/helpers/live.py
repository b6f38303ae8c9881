"""Shared by the live-play tests: start a headless host on a free loopback port, wait on its
output and its API (conditions, never fixed sleeps), and play bots that know the right answer."""
from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from app.live.client import LobbyClient, LobbyRefused, LobbyUnreachable

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60.0  # every wait gives up after this long: a hang fails, it never blocks the suite


class Clock:
    """A clock the test moves by hand (`clock.now += 61`); rooms read it instead of the time."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Host:
    """A `ridge host --headless` process and the lines it prints."""

    def __init__(self, save_dir: Path, port: int | None = None, seed: int = 5, count: int = 3, pin: str = "4321",
                 seconds: float = 30, lobby_seconds: float = 1, reveal_seconds: float = 0.5, extra=()) -> None:
        self.port = port or free_port()
        self.args = [sys.executable, "-m", "app", "host", "--seed", str(seed), "--count", str(count), "--headless",
                     "--port", str(self.port), "--pin", pin, "--seconds", str(seconds), "--save-dir", str(save_dir),
                     "--lobby-seconds", str(lobby_seconds), "--reveal-seconds", str(reveal_seconds), *extra]
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []

    def start(self) -> str:
        env = {k: v for k, v in os.environ.items() if k != "RIDGE_SAVE_DIR"}
        self.lines = queue.Queue()
        self.seen = []
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=str(ROOT), env=env)
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()
        return self.wait_line(lambda line: line.startswith("lobby "))

    def _read(self, stream, lines: queue.Queue) -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def _drain(self, stream) -> None:
        self.stderr = stream.read()

    def wait_line(self, test, limit: float = LIMIT) -> str:
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the host never printed the line; it printed {self.seen}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"the host exited; it printed {self.seen}")
            self.seen.append(line)
            if test(line):
                return line

    def kill(self) -> None:
        """SIGKILL: nothing gets a chance to tidy up."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=LIMIT)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hang is a failure, but never leave it running
            self.proc.kill()
            self.proc.wait(timeout=LIMIT)
            raise AssertionError("the host did not stop within 20 s of SIGTERM")


def wait_for(check, what: str, limit: float = LIMIT, every: float = 0.05):
    """Poll `check()` until it returns something true; fail naming `what` after `limit` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            value = check()
        except LobbyUnreachable:
            value = None
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def right_prediction(made) -> dict:
    """The key's own answer, stated with high certainty."""
    from puzzles.grading import objective_bottleneck

    key, puzzle = made.key, made.puzzle
    return {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain_band": key.gain_band, "reason": key.reason,
            "certainty": "high", "estimates": {e: key.estimates[e] for e in puzzle.estimates}}


def wrong_prediction(made) -> dict:
    """A confident answer that is wrong in every part."""
    from puzzles.grading import objective_bottleneck

    key, puzzle = made.key, made.puzzle
    card_ask = __import__("puzzles.cards", fromlist=["puzzle_json"]).puzzle_json(puzzle)["ask"]
    other = lambda options, right: next(o for o in options if o != right)  # noqa: E731
    return {"bottleneck": other(card_ask["bottleneck"], objective_bottleneck(key)), "lever": other(card_ask["lever"], key.best_lever),
            "gain_band": other(card_ask["gain_band"], key.gain_band), "reason": other(card_ask["reason"], key.reason),
            "certainty": "high", "estimates": {e: key.estimates[e] * 50 for e in puzzle.estimates}}


def refused(call) -> LobbyRefused:
    try:
        call()
    except LobbyRefused as exc:
        return exc
    raise AssertionError("the host accepted what it should refuse")


__all__ = ["Host", "LobbyClient", "LobbyRefused", "free_port", "wait_for", "right_prediction", "wrong_prediction",
           "refused"]


class ScreenHost(Host):
    """`ridge host` with its screen (the projector), in a pseudo-terminal of `size` columns x
    rows: the test presses the host's keys (`press("s")`) as a facilitator would."""

    def __init__(self, save_dir: Path, size: tuple[int, int] = (120, 40), **kw) -> None:
        super().__init__(save_dir, **kw)
        self.args = [a for a in self.args if a != "--headless"]
        self.size = size
        self.master: int | None = None
        self.screen = bytearray()

    def start(self) -> str:
        import fcntl
        import pty
        import re
        import struct
        import termios

        master, slave = pty.openpty()
        cols, rows = self.size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("RIDGE_SAVE_DIR", "NO_COLOR")}
        env.update(TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows))
        self.proc = subprocess.Popen(self.args, stdin=slave, stdout=slave, stderr=slave, cwd=str(ROOT), env=env,
                                     start_new_session=True)
        os.close(slave)
        self.master = master
        self.screen = bytearray()
        threading.Thread(target=self._drain_pty, args=(master,), daemon=True).start()
        found = wait_for(lambda: re.search(rb"lobby (http://\S+) pin (\d+)", bytes(self.screen)), "the lobby line")
        return f"lobby {found.group(1).decode()} pin {found.group(2).decode()}"

    def _drain_pty(self, master: int) -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.screen += chunk
            del self.screen[:-200_000]

    def press(self, key: str) -> None:
        os.write(self.master, key.encode())

    def kill(self) -> None:
        super().kill()
        self._close_pty()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.press("\x11")  # ctrl+q
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=LIMIT)
        self._close_pty()

    def _close_pty(self) -> None:
        if self.master is not None:
            try:
                os.close(self.master)
            except OSError:
                pass
            self.master = None
