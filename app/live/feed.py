"""The push side of the lobby: each player page holds one server-sent-event stream
(`GET /api/events`), and the host writes to it when something the page shows has changed, so
200 phones cost 200 idle connections, not 200 polls a second.

Two kinds of event: `state` (the whole state, card included, as `/api/state` gives it, with the
player's own `you`) when the phase, the question, the pause or that player's own lock changes;
and `count` (how many have joined and locked in, the seconds left), at most every COUNT_SECONDS
however many answers arrive. Each stream has its own task and sends only the latest state, so a
phone that has gone to sleep holds up nobody. The shared part of a state is encoded once per
change, not once per player. Nothing about the open question is in either event beyond the card
and the counts (the room's `public_state`).
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field

from aiohttp import web

from puzzles.live import LiveRefusal

COUNT_SECONDS = 0.5     # counts go out at most this often
HEARTBEAT_SECONDS = 15  # an idle stream gets a comment line this often, so dead ones are noticed
FRESH_SECONDS = 0.5     # a cached shared state older than this is rebuilt (its seconds_left ages)


@dataclass(eq=False)
class _Stream:
    token: str
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    you_changed: bool = False


class Feed:
    """Every open event stream of one room."""

    def __init__(self, room) -> None:
        self.room = room
        self.streams: set[_Stream] = set()
        self.version = 0        # bumped when the phase, question, pause or lock of the room changes
        self.counted = 0        # bumped when the counts change
        self._count_timer: asyncio.TimerHandle | None = None
        self._shared: tuple[tuple[int, int], float, str] | None = None
        room.listeners.append(self.changed)

    # -- what changed -------------------------------------------------------------------------
    def changed(self, what: str) -> None:
        if what == "phase":
            self.version += 1
            self._wake_all()
        elif self._count_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # a change made outside the server's loop (a test, a script)
                self.counted += 1
                return
            self._count_timer = loop.call_later(COUNT_SECONDS, self._send_counts)

    def touch(self, token: str) -> None:
        """This player's own part changed (they locked in): only their streams resend."""
        for stream in self.streams:
            if stream.token == token:
                stream.you_changed = True
                stream.wake.set()

    def _send_counts(self) -> None:
        self._count_timer = None
        self.counted += 1
        self._wake_all()

    def _wake_all(self) -> None:
        for stream in self.streams:
            stream.wake.set()

    # -- what is sent -------------------------------------------------------------------------
    def _shared_json(self) -> str:
        key = (self.version, self.counted)
        now = time.monotonic()
        if self._shared is None or self._shared[0] != key or now - self._shared[1] > FRESH_SECONDS:
            self.room.tick()
            self._shared = (key, now, json.dumps(self.room.public_state(), separators=(",", ":")))
        return self._shared[2]

    def state_event(self, token: str) -> bytes:
        shared = self._shared_json()
        you = json.dumps(self.room.you(token), separators=(",", ":"))
        return f"event: state\ndata: {shared[:-1]},\"you\":{you}}}\n\n".encode("utf-8")

    def count_event(self) -> bytes:
        state = json.loads(self._shared_json())
        counts = {k: state[k] for k in ("phase", "index", "players", "locked", "seconds_left", "paused")}
        return f"event: count\ndata: {json.dumps(counts, separators=(',', ':'))}\n\n".encode("utf-8")

    # -- one stream ---------------------------------------------------------------------------
    async def stream(self, request: web.Request, token: str) -> web.StreamResponse:
        self.room.player(token)  # refused (401/403) before the stream opens
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                               "X-Accel-Buffering": "no"})
        await response.prepare(request)
        stream = _Stream(token)
        self.streams.add(stream)
        sent = (-1, -1)
        try:
            await response.write(b"retry: 2000\n\n")
            while True:
                stream.wake.clear()
                try:
                    if sent[0] != self.version or stream.you_changed:
                        stream.you_changed = False
                        sent = (self.version, self.counted)
                        data = self.state_event(token)
                    elif sent[1] != self.counted:
                        sent = (sent[0], self.counted)
                        data = self.count_event()
                    else:
                        try:
                            await asyncio.wait_for(stream.wake.wait(), HEARTBEAT_SECONDS)
                            continue
                        except asyncio.TimeoutError:
                            data = b": still here\n\n"
                except LiveRefusal as refused:  # removed by the host while watching
                    body = json.dumps({"status": refused.status, "error": refused.message})
                    await response.write(f"event: gone\ndata: {body}\n\n".encode("utf-8"))
                    break
                await response.write(data)
        except ConnectionError:
            pass  # the page went away: it reconnects on its own
        finally:
            self.streams.discard(stream)
        return response

    def close(self) -> None:
        if self._count_timer is not None:
            self._count_timer.cancel()
            self._count_timer = None
        if self.changed in self.room.listeners:
            self.room.listeners.remove(self.changed)
