"""`ridge join URL [--pin PIN] [--name NAME]`: play a hosted live match from this terminal.
Without --pin or --name it asks for them. The address must be a plain http(s) address; a host
that never answers within REACH_SECONDS is given up on in one line (once joined, a host that
restarts is waited for and rejoined)."""
from __future__ import annotations

import argparse

REACH_SECONDS = 15.0


def build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="URL", help="the lobby address the host shows, e.g. http://192.168.1.20:8300")
    parser.add_argument("--pin", default=None, help="the room's pin")
    parser.add_argument("--name", default=None, help="your nickname on the board")


def check_url(text: str) -> str:
    """The lobby address as `http(s)://host[:port]`, or RidgeError in one line. A bare
    `host:port` means http://; any other scheme (javascript:, file:, ...) is refused."""
    import re
    from urllib.parse import urlsplit

    from engine.bounds import has_controls, shown
    from engine.errors import RidgeError

    url = text.strip()
    bad = RidgeError(f"the lobby address must be plain text like http://192.168.1.20:8300, got {shown(repr(text), 80)}")
    if has_controls(url) or not url.isascii() or not url.isprintable() or " " in url or len(url) > 2000:
        raise bad
    if not re.match(r"^https?://", url, re.IGNORECASE):
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:(?!\d)", url):  # a scheme, not host:port
            raise RidgeError(f"the lobby address starts with http:// or https://, got {shown(repr(text), 80)}")
        url = "http://" + url
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not 0-65535
    except ValueError:
        raise bad from None
    host = parts.hostname or ""
    if not host or parts.username or parts.password or not re.match(r"^[A-Za-z0-9.\-:\[\]]+$", host):
        raise bad
    return f"{parts.scheme.lower()}://{parts.netloc}{parts.path.rstrip('/')}"


def reach(url: str, seconds: float = REACH_SECONDS, clock=None, sleep=None) -> None:
    """Wait until the host answers (any answer from its API); RidgeError after `seconds`."""
    import time

    from app.live.client import LobbyClient, LobbyRefused, LobbyUnreachable
    from engine.errors import RidgeError

    clock, sleep = clock or time.monotonic, sleep or time.sleep
    deadline = clock() + seconds
    client = LobbyClient(url, timeout=min(5.0, seconds))
    while True:
        try:
            client.state()
            return
        except LobbyRefused:
            return  # it answered (401 without a token): a host is there
        except LobbyUnreachable:
            if clock() >= deadline:
                raise RidgeError(f"no Ridge host answered at {url} within {seconds:g} s: check the address "
                                 "and that `ridge host` is running") from None
            sleep(0.5)


def run(args: argparse.Namespace) -> int:
    from engine.bounds import shown
    from engine.errors import RidgeError
    from puzzles.live import LiveRefusal, check_pin, clean_name

    url = check_url(args.url)
    try:  # refused here, in one line, rather than inside the player app
        if args.pin is not None:
            check_pin(args.pin)
        if args.name is not None:
            clean_name(args.name)
    except (ValueError, LiveRefusal) as exc:
        raise RidgeError(shown(exc, 300)) from None
    reach(url)
    from app.live.player import PlayerApp

    app = PlayerApp(url, pin=args.pin, name=args.name)
    app.run()
    return int(app.return_code or 0)
