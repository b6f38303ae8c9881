"""`ridge puzzles list | show ID | generate | check`: the puzzle bank from the command line.

list      the puzzles (id, module, difficulty, title): the built-in ones, then the player's own
          packs from <data>/packs (--save-dir or RIDGE_SAVE_DIR moves it)
show      one card (built-in or generated id); the key and the reveal only with --answer
generate  seeded puzzles: the same seed gives the same puzzles on any machine
check     validate packs (the built-in ones by default) and hold each puzzle to the engine;
          exit 1 when any problem is found, one line per problem
import    check a shared pack and copy it into <data>/packs, where the game loads it
Every action takes --json. Loading never imports Textual or numpy.
"""
from __future__ import annotations

import json
import sys

from engine.errors import RidgeError


def build(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    p = sub.add_parser("list", help="the built-in puzzles and your own packs'")
    p.add_argument("--module", help="only this module's (or chapter's) puzzles")
    p.add_argument("--json", action="store_true", help="one JSON array")
    p.add_argument("--save-dir", metavar="DIR", help="the data folder whose packs/ to read too")
    p = sub.add_parser("show", help="one puzzle's card")
    p.add_argument("id")
    p.add_argument("--save-dir", metavar="DIR", help="the data folder whose packs/ to read too")
    p.add_argument("--answer", action="store_true", help="also the engine's key, the reveal and the derivation")
    p.add_argument("--hints", type=int, default=0, metavar="N", help="show the first N hints")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("generate", help="seeded puzzles at five difficulty levels")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--difficulty", type=int, choices=range(1, 6), metavar="D", help="1 to 5 (default: cycle through all)")
    p.add_argument("--start", type=int, default=0, help="first index (default 0)")
    p.add_argument("--chapter", choices=("load-and-tails", "splitting-the-work"), default=None,
                   help="draw from a load chapter's recipes instead (ids gen-tails-..., gen-split-...)")
    p.add_argument("--answer", action="store_true")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("check", help="validate packs and compare every expect with the engine")
    p.add_argument("packs", nargs="*", metavar="PACK.toml")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("import", help="check a shared pack and copy it into your packs folder")
    p.add_argument("file", metavar="PACK.toml")
    p.add_argument("--replace", action="store_true", help="overwrite a pack of the same name already there")
    p.add_argument("--save-dir", metavar="DIR", help="the data folder to import into")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    action = getattr(args, "action", None)
    if action is None:
        raise RidgeError("say what to do: list, show ID, generate --seed S --count N, check [PACK.toml ...] "
                         "or import PACK.toml")
    return {"list": _list, "show": _show, "generate": _generate, "check": _check, "import": _import}[action](args)


def _with_player_packs(args) -> None:
    """Read the player's own packs too (from --save-dir, RIDGE_SAVE_DIR or the data folder);
    a pack left out is said on stderr, one line each, and the rest still load."""
    from puzzles import bank
    from saves.locations import packs_dir

    bank.use_player_packs(packs_dir(getattr(args, "save_dir", None)))
    for problem in bank.player_problems():
        sys.stderr.write(f"skipped a pack: {problem}\n")
    for note in bank.player_notes():
        sys.stderr.write(f"note: {note}\n")


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _list(args) -> int:
    from puzzles import bank

    _with_player_packs(args)
    known = [chapter.id for chapter in bank.chapters()]
    if args.module is not None and args.module not in known:
        raise RidgeError(f"unknown module '{args.module}' (known: {', '.join(known)})")
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

    from puzzles.generator import is_generated_id

    if not is_generated_id(args.id):
        _with_player_packs(args)
    puzzle = bank.get(args.id)
    key = bank.key(puzzle) if args.answer else None
    if args.json:
        _out(json.dumps(puzzle_json(puzzle, key, measured=True), indent=2))
        return 0
    _out("\n".join(card_lines(puzzle, hints=args.hints)))
    if key is not None:
        _out("\n".join(["", "Answer"] + _answer_lines(puzzle, key)))
    return 0


def _answer_lines(puzzle, key) -> list[str]:
    from puzzles.explain import reveal_lines

    return reveal_lines(puzzle, key) + ["", "Derivation"] + [f"  {line}" for line in key.derivation]


def _generate(args) -> int:
    """Each puzzle is made, printed and dropped in turn, so memory does not grow with --count."""
    from puzzles import generator
    from puzzles.cards import card_lines, puzzle_json

    try:
        generator.check_request(args.seed, args.count, args.start)
    except RidgeError as error:  # name the flag the player typed
        flag = str(error).split(" ", 1)[0]
        raise RidgeError(f"--{flag} {str(error).split(' ', 1)[1]}") from None
    if args.chapter is not None:
        from puzzles import load_generator

        if args.count > 200:
            raise RidgeError(f"--count must be at most 200 with --chapter (each draw runs its traffic), got {args.count}")
        short = {v: k for k, v in load_generator.CHAPTERS.items()}[args.chapter]
        made = (load_generator.make(short, args.seed, i) for i in range(args.start, args.start + args.count))
    else:
        made = generator.iter_generated(args.seed, args.count, args.difficulty, start=args.start)
    if args.json:
        sys.stdout.write("[")
        for i, g in enumerate(made):
            body = json.dumps(puzzle_json(g.puzzle, g.key if args.answer else None, measured=True), indent=2)
            sys.stdout.write(("," if i else "") + "\n  " + body.replace("\n", "\n  "))
        _out("\n]" if args.count else "]")
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


def _import(args) -> int:
    """Check a shared pack as `check` does and install it (`saves.own_pack.install_pack`); many
    problems are listed on stderr, then refused in one line."""
    from pathlib import Path

    from saves.locations import packs_dir
    from saves.own_pack import PackRefused, install_pack

    source = Path(args.file)
    try:
        installed = install_pack(source, packs_dir(args.save_dir), replace=args.replace)
    except PackRefused as refused:
        for e in refused.problems:
            sys.stderr.write(f"{e}\n")
        raise RidgeError(str(refused)) from None
    if args.json:
        _out(json.dumps({"imported": str(installed.path), "chapter": installed.chapter.id,
                         "title": installed.chapter.title, "puzzles": installed.count}, indent=2))
    else:
        count = installed.count
        _out(f"imported {count} puzzle{'s' if count != 1 else ''} as chapter '{installed.chapter.id}' "
             f"({installed.chapter.title}) into {installed.path}")
    return 0