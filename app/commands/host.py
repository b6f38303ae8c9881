"""`ridge host`: run a live match for a room. Players join at the printed address in a browser
(a plain page the host serves; no process per player) or with `ridge join URL --pin PIN --name
NAME`; the host's screen paces the match, or, with `--headless`, the match runs itself (for
scripts and tests). `ridge host --report LOBBY` writes the facilitator's report of a kept match.

The first line on stdout is always `lobby http://HOST:PORT pin PIN`; bound to loopback, the next
says that only this machine can join and how to open the room. The lobby lives in an SQLite file
in the data folder, so the same command after a crash carries on where the match was.
"""
from __future__ import annotations

import argparse
import ipaddress
import socket

from app.commands.serve import DEFAULT_HOST, WILDCARDS, is_loopback, lan_address

DEFAULT_PORT = 8300


def build(parser: argparse.ArgumentParser) -> None:
    from puzzles import live

    parser.add_argument("--seed", type=int, default=None, help="the puzzles' seed (the host keeps it to itself)")
    parser.add_argument("--count", type=int, default=None, help="how many questions (1 to 50)")
    parser.add_argument("--difficulty", type=int, choices=range(1, 6), metavar="D", default=None,
                        help="1 to 5 (default: the questions climb through every level)")
    parser.add_argument("--host", metavar="HOST", default=DEFAULT_HOST,
                        help=f"IP address to listen on, or localhost (default {DEFAULT_HOST}: this machine only; "
                             "0.0.0.0 for the room's network)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free port)")
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
    parser.add_argument("--header-seconds", type=float, default=live.HEADER_SECONDS,
                        help="seconds a connection may take to send a request's headers, and may stay idle "
                             f"(default {live.HEADER_SECONDS:g}); a slower one is closed, so none can hold the room")
    parser.add_argument("--body-seconds", type=float, default=live.BODY_SECONDS,
                        help=f"seconds a request's body may take once its headers are in (default {live.BODY_SECONDS:g})")
    parser.add_argument("--public-url", metavar="URL", default=None,
                        help="the address players type, when it differs from HOST:PORT (e.g. behind a proxy)")
    parser.add_argument("--save-dir", metavar="DIR", default=None, help="the host's data folder (the lobby file goes in it)")
    parser.add_argument("--headless", action="store_true", help="run the match without the host screen")
    parser.add_argument("--report", metavar="LOBBY", default=None,
                        help="write the facilitator's report of a kept match (a lobby file, or its name in the "
                             "data folder's lobby/) and exit")


def check_address(text: str) -> str:
    """The address to bind: an IP address, or `localhost` (as 127.0.0.1). A name is refused
    without being looked up, so no DNS answer decides where the room listens."""
    from engine.bounds import shown
    from engine.errors import RidgeError

    host = text.strip()
    if host.lower() == "localhost":
        return "127.0.0.1"
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        raise RidgeError(f"--host takes an IP address (0.0.0.0 for the room's network, 127.0.0.1 for this "
                         f"machine) or localhost, not a name: got {shown(repr(text), 80)}") from None


def check_public_url(text: str) -> str:
    """The address players are told to open: http(s)://host[:port][/path], printable, one line."""
    from urllib.parse import urlsplit

    from engine.bounds import has_controls, shown
    from engine.errors import RidgeError

    url = text.strip()
    parts = urlsplit(url) if not has_controls(url) and url.isprintable() else None
    if (parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.username
            or parts.password or " " in url or len(url) > 200):
        raise RidgeError(f"--public-url must be a plain http:// or https:// address such as "
                         f"http://192.168.1.20:8300, got {shown(repr(text), 80)}")
    return url.rstrip("/")


def reach_line(host: str, url: str, port: int) -> str:
    """The one line that says who can join."""
    if is_loopback(host):
        return (f"Only this machine can join (listening on {host}): to open the room to other devices, run again "
                f"with --host 0.0.0.0 and they join at http://{lan_address()}:{port}.")
    return f"Anyone on this network can join at {url} (listening on {host}:{port})."


def _check(args: argparse.Namespace) -> None:
    from engine.errors import RidgeError
    from puzzles import live

    if args.seed is None or args.count is None:
        raise RidgeError("ridge host needs --seed S and --count N (or --report LOBBY to write a kept match's report)")
    if not 1 <= args.count <= 50:
        raise RidgeError(f"--count must be 1 to 50, got {args.count}")
    if not 0 <= args.seed < 10**12:
        raise RidgeError(f"--seed must be a whole number from 0 to 999999999999, got {args.seed}")
    if not 0 <= args.port <= 65535:
        raise RidgeError(f"--port must be 0 to 65535 (0: any free port), got {args.port}")
    if not 1 <= args.max_players <= 5000:
        raise RidgeError(f"--max-players must be 1 to 5000, got {args.max_players}")
    for name in ("seconds", "lobby_seconds", "reveal_seconds", "header_seconds", "body_seconds"):
        value = getattr(args, name)
        low = {"seconds": 5, "header_seconds": 0.5, "body_seconds": 0.5}.get(name, 0)
        if not low <= value <= 3600:
            raise RidgeError(f"--{name.replace('_', '-')} must be {low:g} to 3600, got {value:g}")
    if args.pin is not None:
        try:
            args.pin = live.check_pin(args.pin)
        except ValueError as exc:
            raise RidgeError(f"--pin: {exc}") from None
    args.host = check_address(args.host)
    if args.public_url is not None:
        args.public_url = check_public_url(args.public_url)


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
    from app.live.web import Site

    host = args.host
    shown = lan_address() if host in WILDCARDS else host
    shown = f"[{shown}]" if ":" in shown else shown
    url = (args.public_url or f"http://{shown}:{port}").rstrip("/")
    return Site(host=host, port=port, public_url=url, title="Ridge live")


def _more_files() -> None:
    """Every player holds a connection: let this process hold as many files as the system allows
    it (up to 65,536), so a full room never meets the usual 1,024 limit."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ImportError, ValueError, OSError):
        pass


def open_room(settings, save_dir):
    """The match's room, or one line (RidgeError) when its lobby or data folder cannot be used."""
    from app import labels
    from engine.errors import RidgeError
    from saves.lobby import LobbyError
    from saves.room import Room

    try:
        return Room(settings, save_dir, labels)
    except LobbyError as exc:
        raise RidgeError(str(exc)) from None
    except OSError as exc:
        raise RidgeError(f"{save_dir}: cannot use the data folder: {exc.strerror or exc}") from None


def report(args: argparse.Namespace) -> int:
    """`ridge host --report LOBBY`: the facilitator's report of a kept (e.g. archived) match."""
    from app import labels
    from engine.errors import RidgeError
    from saves.lobby import LobbyError, kept_lobby
    from saves.locations import data_dir
    from saves.room import Room

    folder = data_dir(args.save_dir)
    try:
        room = Room.kept(kept_lobby(args.report, folder), folder, labels)
    except LobbyError as exc:
        raise RidgeError(str(exc)) from None
    try:
        paths = room.export()
    finally:
        room.close()
    print(f"report {' '.join(str(p) for p in paths)}", flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.report is not None:
        return report(args)
    _check(args)
    from saves.locations import data_dir
    from saves.room import Settings

    settings = Settings(seed=args.seed, count=args.count, difficulty=args.difficulty, pin=args.pin,
                        max_players=args.max_players, seconds=args.seconds, lobby_seconds=args.lobby_seconds,
                        reveal_seconds=args.reveal_seconds, auto=args.headless)
    room = open_room(settings, data_dir(args.save_dir))
    try:
        sock = listen(args.host, args.port)
    except BaseException:
        room.close()
        raise
    _more_files()
    port = sock.getsockname()[1]
    site = make_site(args, port)
    reach = reach_line(args.host, site.public_url, port)
    print(f"lobby {site.public_url} pin {room.pin}", flush=True)
    print(reach, flush=True)
    try:
        if args.headless:
            return _headless(room, site, sock, args.header_seconds, args.body_seconds)
        from app.live.host_app import HostApp

        app = HostApp(room, site, sock, reach=reach, deadlines=(args.header_seconds, args.body_seconds))
        app.run()
        return int(app.return_code or 0)
    finally:
        room.close()
        sock.close()


def _headless(room, site, sock, header_seconds: float, body_seconds: float) -> int:
    """Serve until the match is done and SIGINT/SIGTERM arrives, saying what happens on stdout."""
    import asyncio
    import signal
    import sys

    from app.live.server import build_app, start
    from engine.errors import RidgeError

    said: list = []

    def report(what: str = "phase") -> None:
        now = (room.phase, room.index)
        if what != "phase" or (said and said[-1] == now):
            return
        said.append(now)
        print(room.status_line(), flush=True)
        if room.phase == "done":
            for row in room.rows():
                print(f"  {row.rank:>3}. {row.name:<24} {row.points:>5} pts  {row.cleared} cleared", flush=True)
            try:
                paths = room.export()
            except (OSError, RidgeError) as exc:
                print(f"ridge host: the report could not be written: {exc}", file=sys.stderr, flush=True)
                return
            print(f"results {paths[3]} {paths[0]}", flush=True)
            print(f"report {' '.join(str(p) for p in paths)}", flush=True)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        runner = await start(build_app(room, site, on_change=report, body_seconds=body_seconds), sock, header_seconds)
        if room.resumed:
            print(f"resumed {room.path}", flush=True)
        report()
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())
    return 0

