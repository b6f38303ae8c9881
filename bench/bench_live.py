"""Capacity of one live host, on loopback, with the host's screen running (in a pseudo-terminal).

    .venv/bin/python bench/bench_live.py [--sizes 30,100,200] [--questions 3] [--find]

For each room size N: starts `ridge host` with its screen, joins N players over real HTTP (each
holds the player page's event stream, /api/events, as a browser does), and plays whole questions
the way a room does: the bench presses the host's keys (s, then n after each reveal); every
player answers at a random moment in its first 3 s, then reads the reveal and the board.

Prints per size: the answer round trip (p50/p99/max, from sending the POST to its reply), the time
from the host's key to each player's stream carrying the new question (p50/p99/max), answers lost
(accepted but missing from the reveal; must be 0), and the host's peak memory (VmHWM). The
targets: answer p99 < 200 ms, question p99 < 1 s, memory < 150 MiB. With --find it goes on
doubling past the largest size until a target fails and reports the largest room that met them.
The players run in this one process (asyncio + aiohttp) on the same 2 cores as the host, so the
figures include their cost too.
"""
from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import pty
import random
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
PIN = "2468"
ANSWER_P99_MS, QUESTION_P99_S, MEMORY_MIB = 200.0, 1.0, 150.0


class ScreenHost:
    """`ridge host` with its screen in a pty; `press` types the host's keys."""

    def __init__(self, save: str, players: int, questions: int) -> None:
        self.args = [sys.executable, "-m", "app", "host", "--seed", "7", "--count", str(questions), "--port", "0",
                     "--pin", PIN, "--seconds", "60", "--max-players", str(players + 5), "--save-dir", save]
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = dict(os.environ, TERM="xterm-256color")
        env.pop("RIDGE_SAVE_DIR", None)
        self.proc = subprocess.Popen(self.args, stdin=slave, stdout=slave, stderr=slave, cwd=str(ROOT), env=env,
                                     start_new_session=True)
        os.close(slave)
        self.master, self.out = master, bytearray()
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + 60
        while not (found := re.search(rb"lobby (http://\S+) pin", bytes(self.out))):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit(f"the host did not start: {bytes(self.out)[-500:]!r}")
            time.sleep(0.05)
        self.url = found.group(1).decode()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.out += chunk
            del self.out[:-100_000]

    def press(self, key: str) -> float:
        os.write(self.master, key.encode())
        return time.perf_counter()

    def peak_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        self.press("\x11")
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        os.close(self.master)


def answer_for(made) -> dict:
    from puzzles.grading import objective_bottleneck

    key = made.key
    return {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain": key.gain_band, "reason": key.reason,
            "certainty": "medium", "estimates": {e: key.estimates[e] for e in made.puzzle.estimates}}


class Room:
    """What the bench's players saw."""

    def __init__(self, n: int, questions: int) -> None:
        self.n, self.questions = n, questions
        self.opened: dict[int, float] = {}              # question -> when its key was pressed
        self.arrived: dict[int, list[float]] = {i: [] for i in range(questions)}
        self.closed_seen: dict[int, int] = {i: 0 for i in range(questions)}
        self.done_seen = 0
        self.answer_ms: list[float] = []
        self.refused = 0
        self.sent: list[tuple[str, int]] = []
        self.changed = asyncio.Event()


async def player(session, url: str, name: str, made: list, room: Room, ready: asyncio.Event) -> str:
    async with session.post(url + "/api/join", json={"pin": PIN, "name": name}) as r:
        token = (await r.json())["token"]
    headers = {"X-Ridge-Token": token}
    seen: set[tuple[str, int]] = set()
    async with session.get(url + "/api/events", headers=headers) as stream:
        ready.set()
        buffer = b""
        async for chunk in stream.content.iter_any():
            buffer += chunk
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                lines = block.decode().split("\n")
                if not lines[0].startswith("event: state"):
                    continue
                state = json.loads(lines[1][len("data: "):])
                phase, index = state["phase"], state["index"]
                if (phase, index) in seen:
                    continue
                seen.add((phase, index))
                if phase == "question":
                    room.arrived[index].append(time.perf_counter())
                    asyncio.create_task(answer(session, url, headers, name, index, made, room))
                elif phase == "closed":
                    asyncio.create_task(read_reveal(session, url, headers, index, room))
                elif phase == "done":
                    room.done_seen += 1
                    room.changed.set()
                    return token
    return token


async def answer(session, url, headers, name, index, made, room: Room) -> None:
    await asyncio.sleep(random.uniform(0, 3))
    start = time.perf_counter()
    async with session.post(url + "/api/answer", json={"index": index, **answer_for(made[index])}, headers=headers) as r:
        status = r.status
        await r.read()
    room.answer_ms.append(1000 * (time.perf_counter() - start))
    room.sent.append((name, index))
    if status != 200:
        room.refused += 1


async def read_reveal(session, url, headers, index, room: Room) -> None:
    for path in (f"/api/reveal?index={index}", "/api/board"):
        async with session.get(url + path, headers=headers) as r:
            await r.read()
    room.closed_seen[index] += 1
    room.changed.set()


async def until(room: Room, check, limit: float = 120.0) -> bool:
    deadline = time.monotonic() + limit
    while not check():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        room.changed.clear()
        try:
            await asyncio.wait_for(room.changed.wait(), min(left, 0.5))
        except asyncio.TimeoutError:
            pass
    return True


async def play(host: ScreenHost, n: int, made: list) -> Room:
    room = Room(n, len(made))
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=10)  # idle sockets go before the host's 15 s
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        readies = [asyncio.Event() for _ in range(n)]
        tasks = [asyncio.create_task(player(session, host.url, f"bot{i:04d}", made, room, readies[i])) for i in range(n)]
        await asyncio.gather(*(e.wait() for e in readies))
        await asyncio.sleep(1.0)  # the screen draws the full lobby
        room.opened[0] = host.press("s")
        for index in range(len(made)):
            if not await until(room, lambda: room.closed_seen[index] >= n):
                raise SystemExit(f"question {index + 1} never closed on every player's screen")
            await asyncio.sleep(3.2)  # the host's "next" waits until the answer has been up 3 s
            last = index + 1 == len(made)
            for _ in range(60):  # press n until the room moves on (a press too early is refused)
                pressed = host.press("n")
                if not last:  # the first press counts (a later one would only make the delay look longer)
                    room.opened.setdefault(index + 1, pressed)
                if await until(room, (lambda: room.done_seen > 0) if last else (lambda: bool(room.arrived[index + 1])),
                               limit=1.0):
                    break
        if not await until(room, lambda: room.done_seen >= n):
            raise SystemExit("the podium never reached every player")
        lost = 0
        async with session.post(host.url + "/api/join", json={"pin": PIN, "name": "auditor"}) as r:
            audit = {"X-Ridge-Token": (await r.json())["token"]}
        for index in range(len(made)):
            async with session.get(f"{host.url}/api/reveal?index={index}", headers=audit) as r:
                reveal = await r.json()
            answered = {p["name"] for p in reveal["players"] if p["outcome"] != "unanswered"}
            lost += sum(1 for name, i in room.sent if i == index and name not in answered)
        room.lost = lost
        await asyncio.gather(*tasks, return_exceptions=True)
    return room


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered))) - 1))]


def run_size(n: int, questions: int) -> dict:
    from puzzles import generator

    made = generator.generate(7, questions, None)
    with tempfile.TemporaryDirectory() as save:
        host = ScreenHost(save, n, questions)
        try:
            room = asyncio.run(play(host, n, made))
            peak = host.peak_mib()
        finally:
            host.stop()
    delays = [t - room.opened[i] for i, times in room.arrived.items() for t in times if i in room.opened]
    return {"players": n, "answers": len(room.answer_ms), "refused": room.refused, "lost": room.lost,
            "answer_p50": statistics.median(room.answer_ms), "answer_p99": pct(room.answer_ms, 0.99),
            "answer_max": max(room.answer_ms), "question_p50": statistics.median(delays),
            "question_p99": pct(delays, 0.99), "question_max": max(delays), "memory": peak}


def meets(r: dict) -> bool:
    return (r["answer_p99"] < ANSWER_P99_MS and r["question_p99"] < QUESTION_P99_S and r["memory"] < MEMORY_MIB
            and r["lost"] == 0 and r["refused"] == 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="30,100,200")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--find", action="store_true", help="double past the last size until a target fails")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"targets: answer p99 < {ANSWER_P99_MS:g} ms, question p99 < {QUESTION_P99_S:g} s, "
          f"host memory < {MEMORY_MIB:g} MiB; {os.cpu_count()} cores; host screen running")
    print(f"{'players':>7} {'answers':>7} {'lost':>4} {'answer p50/p99/max ms':>24} "
          f"{'question p50/p99/max ms':>26} {'host MiB':>8}  meets")
    results, largest = [], 0
    while sizes:
        n = sizes.pop(0)
        r = run_size(n, args.questions)
        results.append(r)
        ok = meets(r)
        print(f"{r['players']:>7} {r['answers']:>7} {r['lost']:>4} "
              f"{r['answer_p50']:>8.1f}/{r['answer_p99']:>6.1f}/{r['answer_max']:>6.1f}   "
              f"{1000 * r['question_p50']:>8.0f}/{1000 * r['question_p99']:>6.0f}/{1000 * r['question_max']:>6.0f}   "
              f"{r['memory']:>8.1f}  {'yes' if ok else 'NO'}", flush=True)
        if ok:
            largest = max(largest, n)
        if args.find and not sizes and ok:
            sizes.append(n * 2)
    print(f"largest room that met every target here: {largest} players")
    return 0 if all(r["lost"] == 0 for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
