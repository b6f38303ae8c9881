"""`ridge match`: make a match code, play one, and merge the players' result files into a board.

    ridge match new [--seed S] [--count N] [--difficulty D] [--speed-bonus]
    ridge match play CODE [--player NAME] [--team TEAM] [--save-dir DIR]
    ridge match results FILES... [--me NAME] [--json]

`results` checks each file's hash chain and grades every answer again; a file that fails is left
out with one line saying why (exit status 1 when any was left out, 2 when none could be used).
"""
from __future__ import annotations

import argparse
import json
import sys


def build(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    new = sub.add_parser("new", help="print a new match code")
    new.add_argument("--seed", type=int, default=None, help="the puzzles' seed (default: a random one)")
    new.add_argument("--count", type=int, default=8, help="how many puzzles (default 8)")
    new.add_argument("--difficulty", type=int, default=2, help="1 to 5 (default 2)")
    new.add_argument("--speed-bonus", action="store_true", help="cleared answers earn up to 5 points for speed")
    new.add_argument("--json", action="store_true", help="print one JSON object")

    play = sub.add_parser("play", help="play a match on this machine and write your result file")
    play.add_argument("code", metavar="CODE", help="the match code, e.g. R-42-2-8")
    play.add_argument("--player", metavar="NAME", default=None, help="your name on the board")
    play.add_argument("--team", metavar="TEAM", default="", help="your team (optional)")
    play.add_argument("--save-dir", metavar="DIR", default=None, help="the data folder")

    results = sub.add_parser("results", help="merge result files into a leaderboard")
    results.add_argument("files", metavar="FILE", nargs="+", help="players' result files")
    results.add_argument("--me", metavar="NAME", default=None, help="also show the players around NAME")
    results.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.action == "new":
        return _new(args)
    if args.action == "play":
        return _play(args)
    return _results(args)


def _new(args: argparse.Namespace) -> int:
    import secrets

    from puzzles.match import MatchCode

    seed = args.seed if args.seed is not None else secrets.randbelow(1_000_000)
    code = MatchCode(seed, args.difficulty, args.count, args.speed_bonus)
    if args.json:
        print(json.dumps({"code": str(code), "seed": code.seed, "difficulty": code.difficulty,
                          "count": code.count, "speed_bonus": code.speed_bonus, "puzzles": code.puzzle_ids()}))
    else:
        print(code)
    return 0


def _play(args: argparse.Namespace) -> int:
    from puzzles.match import MatchCode, check_name

    code = MatchCode.parse(args.code)
    player = check_name(args.player) if args.player else None
    team = check_name(args.team, "team") if args.team else ""
    from app.game import make_app
    from app.screens.match import MatchScreen

    app = make_app(save_dir=args.save_dir, solo=lambda: MatchScreen(code=code, player=player, team=team))
    app.run()
    return int(app.return_code or 0)


def _results(args: argparse.Namespace) -> int:
    from engine.errors import RidgeError
    from puzzles.boards import board_json, board_lines
    from saves.match import merge_files

    merged = merge_files(args.files)
    if merged.board is None and len(merged.rejected) == 1 and not args.json:
        path, reason = merged.rejected[0]  # one file, one reason: one line
        raise RidgeError(f"{path}: {reason}")
    for path, reason in merged.rejected:
        print(f"ridge match: rejected {path}: {reason}", file=sys.stderr)
    if merged.board is None:
        if args.json:
            print(json.dumps({"board": None, "rejected": [{"file": f, "reason": r} for f, r in merged.rejected]}))
            return 2
        raise RidgeError(f"none of the {len(args.files)} file(s) could be used")
    board = merged.board
    if args.me and board.find(args.me) is None:
        print(f"ridge match: {args.me!r} is not on this board", file=sys.stderr)
    if args.json:
        out = {"board": board_json(board, args.me),
               "rejected": [{"file": f, "reason": r} for f, r in merged.rejected]}
        print(json.dumps(out, indent=2))
    else:
        bonus = " · speed bonus on" if board.speed_bonus else ""
        print(f"Match {board.code}: {len(merged.accepted)} player(s){bonus}")
        print("\n".join(board_lines(board, args.me)))
    return 1 if merged.rejected else 0
