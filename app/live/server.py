"""The lobby's HTTP face (DESIGN.md, "Live play"): the player page (static HTML, CSS and a small
script from app/live/static, no process per player), its event stream, and the JSON API players,
bots and `ridge join` use. Every refusal is a JSON body `{"error": "<one line>"}` with its status:
400 a malformed request, 401 no token, 403 wrong pin, foreign Origin or a removed player, 404 no
such page, 408 a body that did not arrive in time, 409 name taken or answer refused, 413 too
large, 423 the room locked, 429 too many wrong pins from one address, 503 the room full.

What keeps the room sound: a request's headers must arrive within `header_seconds` of connecting
(aiohttp's keep-alive timer starts at the connection), its body within `body_seconds` and under
MAX_BODY bytes (a larger declared body is refused before a byte of it is read); every query is
checked before use; no response echoes a request's text into a page (the page is a fixed file,
errors are JSON); the wrong-pin limit counts per client address.
"""
from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from aiohttp import web

from app.live.feed import Feed
from app.live.web import Site
from engine.bounds import MAX_DEPTH, json_depth
from puzzles import live
from puzzles.live import LiveRefusal, PinGuard

TOKEN_HEADER = "X-Ridge-Token"
MAX_BODY = 16 * 1024
# The defaults (puzzles.live): the header deadline also closes an idle keep-alive (one timer in
# aiohttp), so it stays longer than a client's own idle pool and a reused connection is not closed
# under a request in flight. Both are settings so a test can see them act in a second or two.
HEADER_SECONDS = live.HEADER_SECONDS
BODY_SECONDS = live.BODY_SECONDS
TICK_SECONDS = 0.2
STATIC = Path(__file__).resolve().parent / "static"
PAGES = {"/": ("index.html", "text/html"), "/static/app.js": ("app.js", "text/javascript"),
         "/static/app.css": ("app.css", "text/css")}
INDEX = re.compile(r"^[0-9]{1,4}$")
FEED = web.AppKey("feed", Feed)
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
                    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"}


def _no_constant(word: str):
    """NaN and Infinity are not JSON (Python's parser accepts them): no estimate may be one."""
    raise ValueError(f"{word} is not JSON")


def safe_dumps(data: object) -> str:
    """JSON with no raw `<`, `>` or `&`: whatever a request put in a message stays inert text even
    if something treats the reply as a page."""
    return json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _json(data: object, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=safe_dumps, headers={"Cache-Control": "no-store"})


def _refuse(status: int, message: str) -> web.Response:
    return _json({"error": message}, status)


def build_app(room, site: Site, on_change=None, body_seconds: float = BODY_SECONDS) -> web.Application:
    """The aiohttp application for `room`: the page, the API, the event feed and the clock's ticker;
    a request's body must arrive within `body_seconds` of its headers (else 408)."""
    guard = PinGuard()
    feed = Feed(room)
    files = {route: (STATIC / name).read_bytes() for route, (name, _) in PAGES.items()}
    told: set[str] = set()

    @web.middleware
    async def sound(request: web.Request, handler):
        refusal = site.origin_refusal(request)
        if refusal and request.path.startswith("/api/"):
            return _with_headers(_refuse(403, refusal))
        try:
            response = await handler(request)
        except LiveRefusal as refused:
            response = _refuse(refused.status, refused.message)
        except web.HTTPException as http:
            if http.status >= 400:
                response = _refuse(http.status, _http_words(http.status))
            else:
                raise
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception as exc:  # noqa: BLE001 - one bad request never stops the room
            kind = type(exc).__name__
            if kind not in told:
                told.add(kind)
                print(f"ridge host: a request to {request.path[:80]!r} failed ({kind}); the room carries on",
                      file=sys.stderr, flush=True)
            response = _refuse(500, "the host could not answer that request; the match carries on")
        if response.status == 408:  # the body never came: say so, then close, rather than let aiohttp
            await _with_headers(response).prepare(request)  # wait 10 s more for the rest of it
            await response.write_eof()
            request.protocol.force_close()
        return _with_headers(response)

    async def body(request: web.Request) -> object:
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise LiveRefusal(413, f"that request is too large (at most {MAX_BODY // 1024} KiB)")
        try:
            raw = await asyncio.wait_for(request.read(), body_seconds)
        except asyncio.TimeoutError:
            raise LiveRefusal(408, "the request's body did not arrive in time") from None
        except web.HTTPRequestEntityTooLarge:
            raise LiveRefusal(413, f"that request is too large (at most {MAX_BODY // 1024} KiB)") from None
        try:
            text = raw.decode("utf-8") or "null"
            if json_depth(text) > MAX_DEPTH:  # the parser recurses per level: refuse before it does
                raise ValueError("nested too deeply")
            return json.loads(text, parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise LiveRefusal(400, "send a JSON object") from None

    def token_of(request: web.Request) -> str:
        token = request.headers.get(TOKEN_HEADER)
        if not token:
            raise LiveRefusal(401, f"join first: send the {TOKEN_HEADER} header that /api/join gave you")
        room.player(token)
        return token

    async def page(request: web.Request) -> web.Response:
        refusal = site.origin_refusal(request)
        if refusal:
            return _refuse(403, refusal)
        name, kind = PAGES[request.path]
        return web.Response(body=files[request.path], content_type=kind, charset="utf-8",
                            headers={"Cache-Control": "no-cache"})

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
        return _json({"token": token, "name": room.player(token).name})

    async def state(request: web.Request) -> web.Response:
        return _json(room.state(token_of(request)))

    async def events(request: web.Request) -> web.StreamResponse:
        return await feed.stream(request, token_of(request))

    async def answer(request: web.Request) -> web.Response:
        token = token_of(request)
        data = await body(request)
        try:
            return _json(room.answer(token, data))
        finally:
            feed.touch(token)

    async def reveal(request: web.Request) -> web.Response:
        token = token_of(request)
        text = request.query.get("index", "")
        if not INDEX.match(text):
            raise LiveRefusal(400, "say which question: /api/reveal?index=I, I a question number from 0")
        return _json(room.reveal(int(text), viewer=token))

    async def board(request: web.Request) -> web.Response:
        token_of(request)
        return _json(room.board())

    async def ticker(app: web.Application) -> None:
        async def run() -> None:
            said = False
            while True:
                try:
                    room.tick()
                except Exception as exc:  # noqa: BLE001 - e.g. a busy disk: the next tick tries again
                    if not said:
                        print(f"ridge host: the match clock's tick failed ({type(exc).__name__}: {exc}); "
                              "retrying every tick", file=sys.stderr, flush=True)
                        said = True
                await asyncio.sleep(TICK_SECONDS)

        if on_change:
            room.listeners.append(on_change)
        task = asyncio.create_task(run())
        yield
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        feed.close()
        if on_change and on_change in room.listeners:
            room.listeners.remove(on_change)

    app = web.Application(middlewares=[sound], client_max_size=MAX_BODY)
    for route in PAGES:
        app.router.add_get(route, page)
    app.router.add_post("/api/join", join)
    app.router.add_get("/api/state", state)
    app.router.add_get("/api/events", events)
    app.router.add_post("/api/answer", answer)
    app.router.add_get("/api/reveal", reveal)
    app.router.add_get("/api/board", board)
    app.cleanup_ctx.append(ticker)
    app[FEED] = feed
    return app


def _with_headers(response: web.StreamResponse) -> web.StreamResponse:
    if not response.prepared:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
    return response


def _http_words(status: int) -> str:
    return {404: "no such page here: the game is at /", 405: "that method is not used here"}.get(
        status, f"the host refused that request ({status})")


async def start(app: web.Application, sock, header_seconds: float = HEADER_SECONDS) -> web.AppRunner:
    """Serve `app` on an already-bound listening socket, closing a connection whose request's
    headers have not all arrived `header_seconds` after it opened; returns the runner to clean up."""
    import logging

    # A request aiohttp cannot parse (a request line over 8 KiB, a broken header) gets aiohttp's
    # own 400 (escaped); its traceback is the sender's problem, not the host's screen's.
    quiet = logging.getLogger("aiohttp.server")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=2.0,
                           keepalive_timeout=header_seconds, max_headers=64)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner
