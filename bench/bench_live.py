"""Load benchmark for live play, on loopback only (127.0.0.1).

    .venv/bin/python bench/bench_live.py [--players 200] [--browsers 3] [--questions 3]

1. Starts `ridge host --headless` on a free loopback port, joins N simulated players over the
   lobby API, and plays a whole match: every player polls /api/state once a second (as the player
   app does) and locks in one answer per question at a random moment in the first seconds.
   Prints answers sent, accepted and lost (accepted but missing from the reveal; must be 0), and
   the answer round trip p50/p99.
2. Opens a few browser sessions the way the page does (a websocket to /ws; the host starts one
   player app per browser), and measures each player process's memory (RSS and PSS) and CPU
   while a question is open.
3. Says how many browser players one 2-core / 24 GiB machine holds with the answer p99 under
   200 ms: the smaller of the memory bound and the CPU bound (processes' CPU within 70% of two
   cores, leaving the host's own loop room), given the measured per-player figures.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
MACHINE_CORES = 2
MACHINE_GIB = 24
CPU_BUDGET = 0.7
PROBES = 20          # API answers sent while the browsers draw a question
BURST_SECONDS = 5.0   # a new question on every screen within this (of a 90 s question)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_host(save: str, port: int, players: int, questions: int, seconds: float, lobby: float = 2) -> subprocess.Popen:
    args = [sys.executable, "-m", "app", "host", "--seed", "7", "--count", str(questions), "--headless",
            "--host", "127.0.0.1", "--port", str(port), "--pin", "2468", "--seconds", str(seconds),
            "--max-players", str(players + 20), "--lobby-seconds", str(lobby), "--reveal-seconds", "1", "--save-dir", save]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=str(ROOT))
    first = proc.stdout.readline()
    if not first.startswith("lobby "):
        raise SystemExit(f"the host did not start: {first!r}")
    return proc


def right_answer(made) -> dict:
    from puzzles.grading import objective_bottleneck

    key = made.key
    return {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain": key.gain_band, "reason": key.reason,
            "certainty": "medium", "estimates": {e: key.estimates[e] for e in made.puzzle.estimates}}


async def player(session, url: str, name: str, made: list, times: list, sent: list, errors: list, done: asyncio.Event):
    async with session.post(url + "/api/join", json={"pin": "2468", "name": name}) as r:
        token = (await r.json())["token"]
    headers = {"X-Ridge-Token": token}
    answered: set[int] = set()
    while not done.is_set():
        async with session.get(url + "/api/state", headers=headers) as r:
            state = await r.json()
        if state["phase"] == "done":
            return token
        index = state["index"]
        if state["phase"] == "question" and index not in answered:
            answered.add(index)
            await asyncio.sleep(random.uniform(0, 3))
            body = {"index": index, **right_answer(made[index])}
            start = time.perf_counter()
            async with session.post(url + "/api/answer", json=body, headers=headers) as r:
                status = r.status
                await r.read()
            times.append(time.perf_counter() - start)
            sent.append((name, index))
            if status != 200:
                errors.append((name, index, status))
            continue
        await asyncio.sleep(1.0)
    return token


async def api_load(url: str, n: int, made: list) -> dict:
    times: list[float] = []
    sent: list = []
    errors: list = []
    done = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:
        tokens = await asyncio.gather(*(player(session, url, f"bot{i:04d}", made, times, sent, errors, done)
                                        for i in range(n)))
        headers = {"X-Ridge-Token": tokens[0]}
        lost = 0
        for index in range(len(made)):
            async with session.get(f"{url}/api/reveal?index={index}", headers=headers) as r:
                reveal = await r.json()
            answered = {p["name"] for p in reveal["players"] if p["outcome"] != "unanswered"}
            lost += sum(1 for name, i in sent if i == index and name not in answered)
    times.sort()
    return {"players": n, "sent": len(sent), "refused": len(errors), "lost": lost,
            "p50_ms": 1000 * statistics.median(times), "p99_ms": 1000 * times[max(0, int(len(times) * 0.99) - 1)],
            "max_ms": 1000 * times[-1]}


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def memory(pid: int) -> tuple[float, float]:
    """(RSS, PSS) in MiB."""
    rss = pss = 0.0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1]) / 1024
        elif line.startswith("Pss:"):
            pss = int(line.split()[1]) / 1024
    return rss, pss


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def browsers(url: str, host_pid: int, k: int, made: list, window: float = 5.0) -> dict:
    """k browser sessions: websockets to /ws, each starting a player app process on the host, each
    joining like a player; then the CPU it takes them to draw a question, while PROBES API players
    answer, and their steady CPU and memory."""
    before = set(children(host_pid))
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        sockets = [await session.ws_connect(f"{url.replace('http', 'ws')}/ws?width=100&height=40") for _ in range(k)]
        seen = [b"" for _ in sockets]

        async def until_drawn(i: int, ws, *texts: bytes) -> None:
            while not any(text in seen[i] for text in texts):
                msg = await asyncio.wait_for(ws.receive(), 120)
                if msg.type == aiohttp.WSMsgType.BINARY:
                    seen[i] = (seen[i] + msg.data)[-40000:]
                elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                    raise SystemExit("a browser session closed before its app drew")

        async def join(i: int, ws) -> None:
            await ws.send_str(json.dumps(["resize", {"width": 100, "height": 40}]))
            await until_drawn(i, ws, b"Join the match")
            await ws.send_str(json.dumps(["focus"]))  # as the page does when its terminal gets focus
            await until_drawn(i, ws, "▶ pin".encode())
            seen[i] = b""
            await ws.send_str(json.dumps(["stdin", "2468\r"]))
            await until_drawn(i, ws, "▶ nickname".encode())
            seen[i] = b""
            await ws.send_str(json.dumps(["stdin", f"web{i}\r"]))
            await until_drawn(i, ws, b"You're in", b"Your prediction")

        await asyncio.gather(*(join(i, ws) for i, ws in enumerate(sockets)))
        pids = [p for p in children(host_pid) if p not in before]

        async def drain(ws) -> None:
            async for _ in ws:
                pass

        drains = [asyncio.create_task(drain(ws)) for ws in sockets]
        async with session.post(url + "/api/join", json={"pin": "2468", "name": "watcher"}) as r:
            headers = {"X-Ridge-Token": (await r.json())["token"]}
        probes = []
        for i in range(PROBES):
            async with session.post(url + "/api/join", json={"pin": "2468", "name": f"probe{i}"}) as r:
                probes.append({"X-Ridge-Token": (await r.json())["token"]})
        probe_times: list[float] = []

        async def probe(h) -> None:
            await asyncio.sleep(random.uniform(0, 3))
            start = time.perf_counter()
            async with session.post(url + "/api/answer", json={"index": 0, **right_answer(made[0])}, headers=h) as r:
                await r.read()
            probe_times.append(time.perf_counter() - start)

        async def state() -> dict:
            async with session.get(url + "/api/state", headers=headers) as r:
                return await r.json()

        while (await state())["phase"] == "lobby":  # the first question opens lobby-seconds after the first join
            cpu0 = {p: cpu_seconds(p) for p in pids}
            host0 = cpu_seconds(host_pid)
            await asyncio.sleep(0.05)
        await asyncio.gather(*(probe(h) for h in probes), asyncio.sleep(4))  # every app draws the question
        burst = [cpu_seconds(p) - cpu0[p] for p in pids]
        cpu1 = {p: cpu_seconds(p) for p in pids}
        host1 = cpu_seconds(host_pid)
        await asyncio.sleep(window)
        cpu = [(cpu_seconds(p) - cpu1[p]) / window for p in pids]
        host_share = (cpu_seconds(host_pid) - host1) / window / max(1, len(pids))
        host_burst = (host1 - host0) / max(1, len(pids))
        mem = [memory(p) for p in pids]
        joined = (await state())["players"] - 1 - PROBES
        for ws in sockets:
            await ws.close()
        for task in drains:
            task.cancel()
    steady = statistics.mean(cpu)
    probe_times.sort()
    return {"processes": len(pids), "joined": joined, "rss_mib": statistics.mean(m[0] for m in mem),
            "pss_mib": statistics.mean(m[1] for m in mem), "cpu_share": steady + host_share,
            "burst_s": max(0.0, statistics.mean(burst) - 4 * steady) + host_burst,
            "probe_p50_ms": 1000 * statistics.median(probe_times),
            "probe_p99_ms": 1000 * probe_times[max(0, int(len(probe_times) * 0.99) - 1)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--browsers", type=int, default=3)
    parser.add_argument("--questions", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from puzzles import generator

    made = generator.generate(7, args.questions, None)
    with tempfile.TemporaryDirectory() as save:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        host = start_host(save, port, args.players + args.browsers, args.questions, 30)
        try:
            host_rss0 = memory(host.pid)[0]
            result = asyncio.run(api_load(url, args.players, made))
            host_rss = memory(host.pid)[0]
        finally:
            host.terminate()
            host.wait(timeout=30)
        print(f"API: {result['players']} players x {args.questions} questions: {result['sent']} answers sent, "
              f"{result['refused']} refused, lost answers: {result['lost']}")
        print(f"answer round trip: p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, max {result['max_ms']:.1f} ms")
        print(f"host process: {host_rss0:.0f} MiB before, {host_rss:.0f} MiB with {args.players} players")

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        host = start_host(save + "/b", port, args.browsers + PROBES + 5, 1, 300, lobby=30)
        try:
            web = asyncio.run(browsers(url, host.pid, args.browsers, made))
        finally:
            host.terminate()
            host.wait(timeout=30)
    print(f"browser players: {web['processes']} app processes, each RSS {web['rss_mib']:.0f} MiB, "
          f"PSS {web['pss_mib']:.0f} MiB, CPU {100 * web['cpu_share']:.1f}% of a core while a question is open")
    print(f"{web['joined']} of them joined; while they drew a new question, {PROBES} API answers took "
          f"p50 {web['probe_p50_ms']:.0f} ms, p99 {web['probe_p99_ms']:.0f} ms")
    print(f"drawing a new question costs each browser player {1000 * web['burst_s']:.0f} ms of CPU "
          "(its app process plus its share of the host's relaying)")
    by_memory = int((MACHINE_GIB * 1024 - 2048) / max(web["pss_mib"], 1))
    by_cpu = int(MACHINE_CORES * CPU_BUDGET / max(web["cpu_share"], 1e-4))
    by_burst = int(MACHINE_CORES * BURST_SECONDS / max(web["burst_s"], 1e-4))
    print(f"one {MACHINE_CORES}-core / {MACHINE_GIB} GiB machine: about {min(by_memory, by_cpu, by_burst)} browser "
          f"players (memory allows {by_memory}; steady CPU within {CPU_BUDGET:.0%} of the cores allows {by_cpu}; "
          f"every screen drawing a new question within {BURST_SECONDS:g} s allows {by_burst}); "
          f"API p99 here {result['p99_ms']:.0f} ms with {args.players} API players")
    return 0 if result["lost"] == 0 and result["refused"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
