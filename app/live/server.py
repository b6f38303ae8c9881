"""The lobby's HTTP face (DESIGN.md, "Live play"): the JSON API players, bots and the player app
use, beside the player page and its websocket. Every refusal is a JSON body
`{"error": "<one line>"}` with its status: 403 wrong pin or foreign Origin, 409 name taken or
answer refused, 503 room full, 401 no token, 400 a malformed request, 429 too many wrong pins.
"""
from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import defaultdict, deque

from aiohttp import web

from app.live.web import Site, add_player_routes
from engine.bounds import MAX_DEPTH, json_depth
from puzzles.live import LiveRefusal

TOKEN_HEADER = "X-Ridge-Token"
MAX_BODY = 16 * 1024


def _no_constant(word: str):
    """NaN and Infinity are not JSON (Python's parser accepts them): no estimate may be one."""
    raise ValueError(f"{word} is not JSON")
PIN_TRIES = 20          # wrong pins allowed from one address ...
PIN_WINDOW = 600.0      # ... within this many seconds
TICK_SECONDS = 0.2


def _refuse(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


class PinGuard:
    """Counts wrong pins per client address so a pin cannot be guessed by trying them all."""

    def __init__(self, tries: int = PIN_TRIES, window: float = PIN_WINDOW, clock=time.monotonic) -> None:
        self.tries, self.window, self.clock = tries, window, clock
        self.misses: dict[str, deque] = defaultdict(deque)

    def blocked(self, address: str) -> bool:
        q = self.misses[address]
        while q and self.clock() - q[0] > self.window:
            q.popleft()
        return len(q) >= self.tries

    def miss(self, address: str) -> None:
        self.misses[address].append(self.clock())


def build_app(room, site: Site, on_change=None) -> web.Application:
    """The aiohttp application for `room`: API, player page, websocket, and the clock's ticker."""
    guard = PinGuard()

    @web.middleware
    async def guard_origin(request: web.Request, handler):
        refusal = site.origin_refusal(request)
        if refusal and request.path.startswith("/api/"):
            return _refuse(403, refusal)
        try:
            return await handler(request)
        except LiveRefusal as refused:
            return _refuse(refused.status, refused.message)

    async def body(request: web.Request) -> object:
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise LiveRefusal(413, "that request is too large")
        raw = await request.content.read(MAX_BODY + 1)
        if len(raw) > MAX_BODY:
            raise LiveRefusal(413, "that request is too large")
        try:
            text = raw.decode("utf-8") or "null"
            if json_depth(text) > MAX_DEPTH:  # the parser recurses per level: refuse before it does
                raise ValueError("nested too deeply")
            return json.loads(text, parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise LiveRefusal(400, "send a JSON object") from None

    def changed() -> None:
        if on_change:
            on_change()

    async def join(request: web.Request) -> web.Response:
        address = request.remote or "?"
        if guard.blocked(address):
            raise LiveRefusal(429, "too many wrong pins from this address: wait ten minutes, then ask the host")
        data = await body(request)
        if not isinstance(data, dict):
            raise LiveRefusal(400, "send {\"pin\": ..., \"name\": ...}")
        try:
            token = room.join(data.get("pin"), data.get("name"), data.get("seat"))
        except LiveRefusal as refused:
            if refused.status == 403:
                guard.miss(address)
            raise
        changed()
        return web.json_response({"token": token, "name": room.player(token).name})

    async def state(request: web.Request) -> web.Response:
        return web.json_response(room.state(request.headers.get(TOKEN_HEADER) or _no_token()))

    async def answer(request: web.Request) -> web.Response:
        token = request.headers.get(TOKEN_HEADER) or _no_token()
        room.player(token)
        data = await body(request)
        try:
            return web.json_response(room.answer(token, data))
        finally:
            changed()

    async def reveal(request: web.Request) -> web.Response:
        token = request.headers.get(TOKEN_HEADER) or _no_token()
        room.player(token)
        text = request.query.get("index", "")
        if not text.lstrip("-").isdigit():
            raise LiveRefusal(400, "say which question: /api/reveal?index=I")
        return web.json_response(room.reveal(int(text), viewer=room.player(token).token))

    async def board(request: web.Request) -> web.Response:
        room.player(request.headers.get(TOKEN_HEADER) or _no_token())
        return web.json_response(room.board())

    async def ticker(app: web.Application) -> None:
        async def run() -> None:
            last = None
            told = False
            while True:
                now = (room.phase, room.index)
                try:
                    room.tick()
                except Exception as exc:  # e.g. sqlite busy under load: the next tick tries again
                    if not told:
                        print(f"ridge host: the match clock's tick failed ({type(exc).__name__}: {exc}); "
                              "retrying every tick", file=sys.stderr, flush=True)
                        told = True
                else:
                    if (room.phase, room.index) != now or last is None:
                        changed()
                    last = now
                await asyncio.sleep(TICK_SECONDS)

        task = asyncio.create_task(run())
        yield
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    app = web.Application(middlewares=[guard_origin], client_max_size=MAX_BODY)
    app.router.add_post("/api/join", join)
    app.router.add_get("/api/state", state)
    app.router.add_post("/api/answer", answer)
    app.router.add_get("/api/reveal", reveal)
    app.router.add_get("/api/board", board)
    add_player_routes(app, site)
    app.cleanup_ctx.append(ticker)
    return app


def _no_token():
    raise LiveRefusal(401, f"join first: send the {TOKEN_HEADER} header that /api/join gave you")


async def start(app: web.Application, sock) -> web.AppRunner:
    """Serve `app` on an already-bound listening socket; returns the runner to clean up."""
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner
