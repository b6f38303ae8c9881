"""The host's clock keeps ticking when one tick fails (a busy SQLite lobby on a loaded machine):
the failure is told once on stderr and the match still advances."""
from __future__ import annotations

import asyncio
import sqlite3
import time

from app import labels
from saves.room import Room, Settings
from app.live.web import Site
from puzzles import generator
from tests.live_helpers import Clock

LIMIT = 60.0


async def test_the_ticker_survives_a_failing_tick(tmp_path, capsys):
    from app.commands.host import listen
    from app.live.server import build_app, start

    clock = Clock()
    made = generator.generate(5, 1, None)
    room = Room(Settings(seed=5, count=1, pin="4321", seconds=30), tmp_path, labels, clock=clock, made=made)
    real_tick, calls = room.tick, []

    def flaky_tick():
        calls.append(1)
        if len(calls) <= 3:
            raise sqlite3.OperationalError("database is locked")
        return real_tick()

    room.tick = flaky_tick
    room.join("4321", "ana")
    room.start()
    clock.now += 31  # the question's time is up: only the ticker closes it
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    runner = await start(build_app(room, Site("127.0.0.1", port, f"http://127.0.0.1:{port}", 50, ["true"])), sock)
    try:
        deadline = time.monotonic() + LIMIT
        while room.phase != "closed" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert room.phase == "closed"
        assert len(calls) > 3
    finally:
        await runner.cleanup()
        room.close()
        sock.close()
    err = capsys.readouterr().err
    assert err.count("tick failed") == 1 and "database is locked" in err
