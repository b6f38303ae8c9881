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

    from engine.bounds import has_controls, shown
    from puzzles.live import LiveRefusal, check_pin, clean_name

    url = args.url.strip()
    if has_controls(url) or len(url) > 2000 or not url.isascii():
        raise RidgeError(f"the lobby address must be plain text like http://192.168.1.20:8300, got {shown(repr(url), 80)}")
    if not url.startswith(("http://", "https://")) and "://" in url:
        raise RidgeError(f"the lobby address starts with http:// or https://, got {url!r}")
    try:  # refused here, in one line, rather than inside the player app
        if args.pin is not None:
            check_pin(args.pin)
        if args.name is not None:
            clean_name(args.name)
    except (ValueError, LiveRefusal) as exc:
        raise RidgeError(shown(exc, 300)) from None
    from app.live.player import PlayerApp

    app = PlayerApp(url, pin=args.pin, name=args.name, browser=args.browser)
    app.run()
    return int(app.return_code or 0)
