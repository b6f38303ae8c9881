"""What `ridge host` and `ridge serve` share on the web side: the Origin check (both); and for
`ridge serve` only (the solo terminal game in a browser), the page that loads textual-serve's
terminal and the websocket that runs one app process per browser, with a cap on how many run at
once and only the environment that process needs. `ridge host` starts no process: its players
get a plain web page (app/live/server.py).

The Origin rule: a request that carries an `Origin` header must name this server (an address it
listens on, or the public URL); one from another site is refused, because a page a player visits
could otherwise drive the game. A request without `Origin` (a script, a terminal player) is
judged by its pin or token alone.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

log = logging.getLogger("ridge.web")


def _static_folder() -> Path:
    """textual-serve's scripts and styles for the terminal in the page."""
    import textual_serve

    return Path(textual_serve.__file__).resolve().parent / "static"


PROJECT_ROOT = Path(__file__).resolve().parents[2]
# What a per-browser app process may see of the host's environment: enough to find Python and
# print text, nothing else (no tokens, no paths to the host's saves).
CHILD_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")

SEAT = re.compile(r"^[0-9a-f]{32}$")
FOREIGN_ORIGIN = "refused: this request comes from another web page ({origin}); open the game at {url}"
ROOM_FULL = "refused: the room is full ({limit} players are connected); try again when someone leaves"


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _is_ip_or_local(host: str) -> bool:
    name = host.rsplit(":", 1)[0].strip("[]") if host.count(":") <= 1 or host.startswith("[") else host
    if name.lower() == "localhost":
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


@dataclass
class Site:
    """Who this server is: the address it listens on, the URL players type, and the cap on app
    processes (one per connected browser)."""

    host: str
    port: int
    public_url: str
    max_browsers: int = 0
    command: list[str] = field(default_factory=list)
    child_env: dict[str, str] = field(default_factory=dict)
    title: str = "Ridge"
    running: int = 0

    def allowed_origins(self, request: web.Request) -> set[str]:
        """Origins that are this server. The request's own Host counts only when it is an address
        (never a name a foreign DNS answer could point here)."""
        port = self.port
        allowed = {origin_of(self.public_url), f"http://127.0.0.1:{port}", f"http://localhost:{port}",
                   f"http://[::1]:{port}"}
        if self.host not in ("0.0.0.0", "::", ""):
            shown = f"[{self.host}]" if ":" in self.host else self.host
            allowed.add(f"http://{shown}:{port}")
        if request.host and _is_ip_or_local(request.host):
            allowed.add(f"http://{request.host}".lower())
        return allowed

    def origin_refusal(self, request: web.Request) -> str | None:
        origin = request.headers.get("Origin")
        if origin is None:
            return None
        if origin.lower().rstrip("/") in self.allowed_origins(request):
            return None
        from engine.bounds import shown

        return FOREIGN_ORIGIN.format(origin=shown(repr(origin), 80), url=self.public_url)


def child_environment(extra: dict[str, str] | None = None, width: int = 80, height: int = 24) -> dict[str, str]:
    """The environment of one browser's app process: a short allow-list of the host's, the
    terminal size, and what textual-serve's driver needs (its private empty HOME is added by
    the launcher)."""
    from importlib.metadata import version

    env = {k: os.environ[k] for k in CHILD_ENV_KEEP if k in os.environ}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["TEXTUAL_DRIVER"] = "textual.drivers.web_driver:WebDriver"
    env["TEXTUAL_FPS"] = "60"
    env["TEXTUAL_COLOR_SYSTEM"] = "truecolor"
    env["TERM_PROGRAM"] = "textual"
    env["TERM_PROGRAM_VERSION"] = version("textual-serve")
    env["COLUMNS"] = str(width)
    env["ROWS"] = str(height)
    env.update(extra or {})
    return env


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title}</title>
  <link rel="stylesheet" href="/static/css/xterm.css">
  <script src="/static/js/textual.js"></script>
  <style>
    html, body {{ margin: 0; height: 100%; background: #0c181f; color: #eee; font-family: monospace; }}
    #terminal {{ position: absolute; inset: 0; }}
    .notice {{ position: absolute; top: 40%; width: 100%; text-align: center; display: none; }}
    body.-closed .closed {{ display: block; }}
    body.-closed #terminal {{ opacity: 0.2; }}
  </style>
</head>
<body>
  <div id="terminal" class="textual-terminal" data-session-websocket-url="{ws_url}"
       data-font-size="{font_size}"></div>
  <div class="notice closed">The session ended. <a href="/" style="color:#8cf">Start again</a></div>
  <script>
    // This browser's seat: a random secret kept here, so the same nickname rejoins as the same
    // player after a reload or a host restart. It goes to the host in the websocket's path.
    document.addEventListener("DOMContentLoaded", function () {{
      var seat = null;
      try {{ seat = localStorage.getItem("ridge-seat"); }} catch (e) {{}}
      if (!seat || !/^[0-9a-f]{{32}}$/.test(seat)) {{
        var bytes = new Uint8Array(16);
        crypto.getRandomValues(bytes);
        seat = Array.from(bytes, function (b) {{ return ("0" + b.toString(16)).slice(-2); }}).join("");
        try {{ localStorage.setItem("ridge-seat", seat); }} catch (e) {{}}
      }}
      var el = document.getElementById("terminal");
      el.dataset.sessionWebsocketUrl = el.dataset.sessionWebsocketUrl + "/" + seat;
    }});
  </script>
</body>
</html>
"""


def page_handler(site: Site):
    async def handle_page(request: web.Request) -> web.Response:
        refusal = site.origin_refusal(request)
        if refusal:
            return web.Response(status=403, text=refusal)
        scheme = "wss" if request.scheme == "https" else "ws"
        try:
            size = max(8, min(40, int(request.query.get("fontsize", "16"))))
        except ValueError:
            size = 16
        body = PAGE.format(title=site.title, ws_url=f"{scheme}://{request.host}/ws", font_size=size)
        return web.Response(text=body, content_type="text/html",
                            headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                                     "Referrer-Policy": "no-referrer"})

    return handle_page


# The command line textual-serve runs for one browser, from the app's argument list, its
# environment and a private folder (app/commands/seat_launcher.py).
Launch = Callable[[list[str], dict[str, str], Path], str]


def websocket_handler(site: Site, launch: Launch, on_count=None):
    """One app process per browser, while fewer than `site.max_browsers` run."""
    from textual_serve.app_service import AppService
    from textual_serve.download_manager import DownloadManager

    downloads = DownloadManager()

    async def handle_websocket(request: web.Request) -> web.StreamResponse:
        refusal = site.origin_refusal(request)
        if refusal:
            return web.Response(status=403, text=refusal)
        if site.running >= site.max_browsers:
            return web.Response(status=503, text=ROOM_FULL.format(limit=site.max_browsers))
        site.running += 1
        if on_count:
            on_count(site.running)
        websocket = web.WebSocketResponse(heartbeat=15)
        service = None
        folder = tempfile.TemporaryDirectory(prefix="ridge-player-", ignore_cleanup_errors=True)
        try:
            width = _int(request.query.get("width"), 80)
            height = _int(request.query.get("height"), 24)
            await websocket.prepare(request)
            env = dict(site.child_env)
            seat = request.match_info.get("seat", "")
            if SEAT.match(seat):
                env["RIDGE_SEAT"] = seat
            command = launch(site.command, child_environment(env, width, height), Path(folder.name))
            service = AppService(command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                 close=websocket.close, download_manager=downloads)
            await service.start(width, height)
            await _relay(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # noqa: BLE001 - one browser's trouble must not stop the room
            log.exception(error)
        finally:
            if service is not None:
                await service.stop()
            folder.cleanup()
            site.running -= 1
            if on_count:
                on_count(site.running)
        return websocket

    return handle_websocket


def _int(text, default: int) -> int:
    try:
        return max(10, min(500, int(text)))
    except (TypeError, ValueError):
        return default


async def _relay(websocket: web.WebSocketResponse, service) -> None:
    """Keys and resizes from the browser to the app process (textual-serve's message envelope)."""
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            envelope = json.loads(message.data)
        except (ValueError, RecursionError):  # a hostile browser's message is dropped, not fatal
            continue
        if not isinstance(envelope, list) or not envelope:
            continue
        kind = envelope[0]
        data = envelope[1] if len(envelope) > 1 else None
        if kind == "stdin" and isinstance(data, str):
            await service.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            await service.set_terminal_size(_int(data.get("width"), 80), _int(data.get("height"), 24))
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await service.blur()
        elif kind == "focus":
            await service.focus()


def add_player_routes(app: web.Application, site: Site, launch: Launch, on_count=None) -> None:
    """`/` (the player page), `/ws` (its terminal) and `/static` (textual-serve's scripts)."""
    app.router.add_get("/", page_handler(site))
    handler = websocket_handler(site, launch, on_count)
    app.router.add_get("/ws", handler)
    app.router.add_get("/ws/{seat}", handler)
    app.router.add_static("/static", _static_folder(), show_index=False)


def python_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "app", *args]
