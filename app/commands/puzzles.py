"""`ridge puzzles list | show ID | generate | check`: the puzzle bank from the command line.

list      the built-in puzzles (id, module, difficulty, title)
show      one card (built-in or generated id); the key and the reveal only with --answer
generate  seeded puzzles: the same seed gives the same puzzles on any machine
check     validate packs (the built-in ones by default) and hold each puzzle to the engine;
          exit 1 when any problem is found, one line per problem
Every action takes --json. Loading never imports Textual or numpy.
"""
from __future__ import annotations

import json
import sys

from engine.errors import RidgeError


def build(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    p = sub.add_parser("list", help="the built-in puzzles")
    p.add_argument("--module", help="only this module's puzzles")
    p.add_argument("--json", action="store_true", help="one JSON array")
    p = sub.add_parser("show", help="one puzzle's card")
    p.add_argument("id")
    p.add_argument("--answer", action="store_true", help="also the engine's key, the reveal and the derivation")
    p.add_argument("--hints", type=int, default=0, metavar="N", help="show the first N hints")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("generate", help="seeded puzzles at five difficulty levels")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--difficulty", type=int, choices=range(1, 6), metavar="D", help="1 to 5 (default: cycle through all)")
    p.add_argument("--start", type=int, default=0, help="first index (default 0)")
    p.add_argument("--answer", action="store_true")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("check", help="validate packs and compare every expect with the engine")
    p.add_argument("packs", nargs="*", metavar="PACK.toml")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    action = getattr(args, "action", None)
    if action is None:
        raise RidgeError("say what to do: list, show ID, generate --seed S --count N, or check [PACK.toml ...]")
    return {"list": _list, "show": _show, "generate": _generate, "check": _check}[action](args)


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _list(args) -> int:
    from puzzles import bank
    from puzzles.puzzle import MODULES

    if args.module is not None and args.module not in MODULES:
        raise RidgeError(f"unknown module '{args.module}' (known: {', '.join(MODULES)})")
    rows = [p for p in bank.builtin().values() if args.module is None or p.module == args.module]
    if args.json:
        _out(json.dumps([{"id": p.id, "module": p.module, "title": p.title, "difficulty": p.difficulty}
                         for p in rows], indent=2))
        return 0
    width = max((len(p.id) for p in rows), default=2)
    mod_width = max((len(p.module) for p in rows), default=6)
    _out(f"{'id':<{width}}  {'module':<{mod_width}}  d  title")
    for p in rows:
        _out(f"{p.id:<{width}}  {p.module:<{mod_width}}  {p.difficulty}  {p.title}")
    return 0


def _show(args) -> int:
    from puzzles import bank
    from puzzles.cards import card_lines, puzzle_json

    puzzle = bank.get(args.id)
    key = bank.key(puzzle) if args.answer else None
    if args.json:
        _out(json.dumps(puzzle_json(puzzle, key), indent=2))
        return 0
    _out("\n".join(card_lines(puzzle, hints=args.hints)))
    if key is not None:
        _out("\n".join(["", "Answer"] + _answer_lines(puzzle, key)))
    return 0


def _answer_lines(puzzle, key) -> list[str]:
    from puzzles.explain import reveal_lines

    return reveal_lines(puzzle, key) + ["", "Derivation"] + [f"  {line}" for line in key.derivation]


def _generate(args) -> int:
    from puzzles import generator
    from puzzles.cards import card_lines, puzzle_json

    if args.count < 0 or args.count > 100_000:
        raise RidgeError(f"--count must be between 0 and 100000, got {args.count}")
    if args.seed < 0:
        raise RidgeError(f"--seed must be zero or more, got {args.seed}")
    if args.start < 0:
        raise RidgeError(f"--start must be zero or more, got {args.start}")
    made = generator.generate(args.seed, args.count, args.difficulty, start=args.start)
    if args.json:
        _out(json.dumps([puzzle_json(g.puzzle, g.key if args.answer else None) for g in made], indent=2))
        return 0
    for i, g in enumerate(made):
        if i:
            _out("\n" + "-" * 72 + "\n")
        _out("\n".join(card_lines(g.puzzle)))
        if args.answer:
            _out("\n".join(["", "Answer"] + _answer_lines(g.puzzle, g.key)))
    return 0


def _check(args) -> int:
    from puzzles.bank import pack_paths
    from puzzles.check import check_paths

    paths = args.packs or [str(p) for p in pack_paths()]
    problems, count, packs = check_paths(paths)
    if args.json:
        _out(json.dumps({"ok": not problems, "packs": packs, "puzzles": count,
                         "problems": [{"path": e.path, "line": e.line, "puzzle": e.puzzle, "field": e.field,
                                       "message": e.detail} for e in problems]}, indent=2))
    else:
        for e in problems:
            _out(str(e))
        status = "ok" if not problems else f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        _out(f"{status}: {count} puzzles in {packs} pack{'s' if packs != 1 else ''} checked")
    return 1 if problems else 0
