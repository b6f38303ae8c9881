"""`ridge host`: run a live match for a room. Players join at the printed address in a browser
(or with `ridge join URL --pin PIN --name NAME`); the host's screen paces the match, or, with
`--headless`, the match runs itself (for scripts and tests).

The first line on stdout is always `lobby http://HOST:PORT pin PIN`. The lobby lives in an SQLite
file in the data folder, so the same command after a crash carries on where the match was.
"""
from __future__ import annotations

import argparse
import socket

from app.commands.serve import DEFAULT_HOST, WILDCARDS, is_loopback, lan_address

DEFAULT_PORT = 8300


def build(parser: argparse.ArgumentParser) -> None:
    from puzzles import live

    parser.add_argument("--seed", type=int, required=True, help="the puzzles' seed (the host keeps it to itself)")
    parser.add_argument("--count", type=int, required=True, help="how many questions (1 to 50)")
    parser.add_argument("--difficulty", type=int, choices=range(1, 6), metavar="D", default=None,
                        help="1 to 5 (default: the questions climb through every level)")
    parser.add_argument("--host", metavar="HOST", default=DEFAULT_HOST,
                        help=f"address to listen on (default {DEFAULT_HOST}: this machine only; 0.0.0.0 for the room's network)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--pin", default=None, help="the room's pin, 4 to 8 digits (default: a random one)")
    parser.add_argument("--max-players", type=int, default=live.DEFAULT_MAX_PLAYERS,
                        help=f"how many may join (default {live.DEFAULT_MAX_PLAYERS})")
    parser.add_argument("--seconds", type=float, default=live.DEFAULT_SECONDS,
                        help=f"seconds per question (default {live.DEFAULT_SECONDS})")
    parser.add_argument("--lobby-seconds", type=float, default=live.DEFAULT_LOBBY_SECONDS,
                        help="headless: seconds from the first join to the first question "
                             f"(default {live.DEFAULT_LOBBY_SECONDS})")
    parser.add_argument("--reveal-seconds", type=float, default=live.DEFAULT_REVEAL_SECONDS,
                        help=f"headless: seconds the reveal stays up before the next question (default {live.DEFAULT_REVEAL_SECONDS})")
    parser.add_argument("--public-url", metavar="URL", default=None,
                        help="the address players type, when it differs from HOST:PORT (e.g. behind a proxy)")
    parser.add_argument("--save-dir", metavar="DIR", default=None, help="the host's data folder (the lobby file goes in it)")
    parser.add_argument("--headless", action="store_true", help="run the match without the host screen")


def _check(args: argparse.Namespace) -> None:
    from engine.errors import RidgeError
    from puzzles import live

    if not 1 <= args.count <= 50:
        raise RidgeError(f"--count must be 1 to 50, got {args.count}")
    if not 0 <= args.seed < 10**12:
        raise RidgeError(f"--seed must be a whole number from 0 to 999999999999, got {args.seed}")
    if not 1 <= args.port <= 65535:
        raise RidgeError(f"--port must be 1 to 65535, got {args.port}")
    if not 1 <= args.max_players <= 5000:
        raise RidgeError(f"--max-players must be 1 to 5000, got {args.max_players}")
    for name in ("seconds", "lobby_seconds", "reveal_seconds"):
        value = getattr(args, name)
        low = 5 if name == "seconds" else 0
        if not low <= value <= 3600:
            raise RidgeError(f"--{name.replace('_', '-')} must be {low} to 3600, got {value:g}")
    if args.pin is not None:
        try:
            args.pin = live.check_pin(args.pin)
        except ValueError as exc:
            raise RidgeError(f"--pin: {exc}") from None
    if not args.host.strip():
        raise RidgeError("--host needs an address, e.g. 127.0.0.1 or 0.0.0.0")


def listen(host: str, port: int) -> socket.socket:
    """A bound, listening socket (so the lobby line is printed only once players can connect)."""
    from engine.errors import RidgeError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        raise RidgeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock


def make_site(args: argparse.Namespace, port: int):
    from app.live.web import Site, python_command

    host = args.host.strip()
    shown = lan_address() if host in WILDCARDS else host
    shown = f"[{shown}]" if ":" in shown else shown
    url = (args.public_url or f"http://{shown}:{port}").rstrip("/")
    inner = "127.0.0.1" if host in WILDCARDS or is_loopback(host) else shown
    command = python_command("join", f"http://{inner}:{port}", "--browser")
    return Site(host=host, port=port, public_url=url, max_browsers=args.max_players, command=command,
                title="Ridge live")


def run(args: argparse.Namespace) -> int:
    _check(args)
    from app.live.room import Room, Settings
    from saves.locations import data_dir

    settings = Settings(seed=args.seed, count=args.count, difficulty=args.difficulty, pin=args.pin,
                        max_players=args.max_players, seconds=args.seconds, lobby_seconds=args.lobby_seconds,
                        reveal_seconds=args.reveal_seconds, auto=args.headless)
    sock = listen(args.host.strip(), args.port)
    port = sock.getsockname()[1]
    room = Room(settings, data_dir(args.save_dir))
    site = make_site(args, port)
    print(f"lobby {site.public_url} pin {room.pin}", flush=True)
    try:
        if args.headless:
            return _headless(room, site, sock)
        from app.live.host_app import HostApp

        app = HostApp(room, site, sock)
        app.run()
        return int(app.return_code or 0)
    finally:
        room.close()
        sock.close()


def _headless(room, site, sock) -> int:
    """Serve until the match is done and SIGINT/SIGTERM arrives, saying what happens on stdout."""
    import asyncio
    import signal

    from app.live.server import build_app, start

    said: list = []

    def report() -> None:
        now = (room.phase, room.index)
        if said and said[-1] == now:
            return
        said.append(now)
        print(_line(room), flush=True)
        if room.phase == "done":
            for row in room.rows():
                print(f"  {row.rank:>3}. {row.name:<24} {row.points:>5} pts  {row.cleared} cleared", flush=True)
            csv_path, md_path = room.export()
            print(f"results {csv_path} {md_path}", flush=True)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        runner = await start(build_app(room, site, on_change=report), sock)
        if room.resumed:
            print(f"resumed {room.path}", flush=True)
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())
    return 0


def _line(room) -> str:
    n, count = room.index + 1, room.count
    if room.phase == "lobby":
        return f"lobby open: {len(room.active())} joined"
    if room.phase == "question":
        return f"question {n} of {count} open"
    if room.phase == "closed":
        return f"question {n} of {count} closed: {len(room.locked_now())} of {len(room.active())} locked in"
    return f"match done: {count} questions, {len(room.active())} players"
