"""`ridge join URL [--pin PIN] [--name NAME]`: play a hosted live match from this terminal: the
same player app the room's browsers get. Without --pin or --name it asks for them."""
from __future__ import annotations

import argparse


def build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="URL", help="the lobby address the host shows, e.g. http://192.168.1.20:8300")
    parser.add_argument("--pin", default=None, help="the room's pin")
    parser.add_argument("--name", default=None, help="your nickname on the board")
    parser.add_argument("--browser", action="store_true", help=argparse.SUPPRESS)  # the host's per-browser process


def run(args: argparse.Namespace) -> int:
    from engine.errors import RidgeError

    url = args.url.strip()
    if not url.startswith(("http://", "https://")) and "://" in url:
        raise RidgeError(f"the lobby address starts with http:// or https://, got {url!r}")
    from app.live.player import PlayerApp

    app = PlayerApp(url, pin=args.pin, name=args.name, browser=args.browser)
    app.run()
    return int(app.return_code or 0)
