"""`ridge serve`: play Ridge in a web browser, through textual-serve, with nothing installed by
the audience. Each browser tab runs its own game and asks its player's name first; all of them
save in one data folder, each player under their own name. At most `--max-players` games run at
once, and the page and its websocket refuse a request from another site's page (`Origin`).

It listens on 127.0.0.1 (this machine only) unless `--host` says otherwise; with any other host
it says plainly who can reach it.
"""
from __future__ import annotations

import argparse
import ipaddress
import socket

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_PLAYERS = 20
WILDCARDS = ("0.0.0.0", "::", "")


def build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", metavar="HOST", default=None,
                        help=f"address to listen on (default {DEFAULT_HOST}: this machine only; "
                             "0.0.0.0 lets anyone on your network play)")
    parser.add_argument("--port", metavar="PORT", type=int, default=DEFAULT_PORT,
                        help=f"port to listen on (default {DEFAULT_PORT})")
    parser.add_argument("--public-url", metavar="URL", default=None,
                        help="the address players type, when it differs from HOST:PORT (e.g. behind a proxy)")
    parser.add_argument("--save-dir", metavar="DIR", default=None,
                        help="folder the players' saves go in (default: your data folder)")
    parser.add_argument("--max-players", type=int, default=DEFAULT_MAX_PLAYERS,
                        help=f"how many browsers may play at once (default {DEFAULT_MAX_PLAYERS})")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_address() -> str:
    """This machine's address on its network, as others would reach it (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET: connecting a UDP socket sends nothing
            return probe.getsockname()[0]
    except OSError:
        return socket.gethostname()


def reach_line(host: str, port: int, url: str) -> str:
    """The one line that says who can play."""
    if is_loopback(host):
        return (f"Listening on {url} (this machine only). To let others on your network play, "
                f"run with --host 0.0.0.0.")
    return (f"Listening on {host}:{port}: anyone who can reach this machine on port {port} can play, "
            f"at {url}. Stop with Ctrl+C.")


def run(args: argparse.Namespace) -> int:
    from engine.errors import RidgeError
    from saves.locations import data_dir

    host = DEFAULT_HOST if args.host is None else args.host.strip()
    if args.host is not None and not host:
        raise RidgeError("--host needs an address, e.g. 127.0.0.1 or 0.0.0.0")
    if not 1 <= args.port <= 65535:
        raise RidgeError(f"--port must be 1 to 65535, got {args.port}")
    from saves.locations import resolved

    save_dir = resolved(data_dir(args.save_dir))
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as trial:
            trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            trial.bind((host, args.port))
    except OSError as exc:
        raise RidgeError(f"cannot listen on {host}:{args.port}: {exc.strerror or exc}") from None
    shown = lan_address() if host in WILDCARDS else host
    shown = f"[{shown}]" if ":" in shown else shown
    url = args.public_url or f"http://{shown}:{args.port}"
    if not 1 <= args.max_players <= 1000:
        raise RidgeError(f"--max-players must be 1 to 1000, got {args.max_players}")
    from aiohttp import web

    from app.commands.seat_launcher import player_command
    from app.live.web import Site, add_player_routes, python_command

    command = python_command("play", "--save-dir", str(save_dir), "--ask-name")
    site = Site(host=host, port=args.port, public_url=url, max_browsers=args.max_players, command=command,
                title="Ridge")
    app = web.Application()
    add_player_routes(app, site, player_command)
    print(reach_line(host, args.port, url), flush=True)
    from engine.bounds import one_line

    print(f"Saves go to {one_line(save_dir, escape=True)}; at most {args.max_players} players at once", flush=True)
    web.run_app(app, host=host, port=args.port, print=lambda *a: None, access_log=None, shutdown_timeout=5)
    return 0
