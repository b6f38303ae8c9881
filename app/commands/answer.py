"""`ridge answer ID ...`: grade one locked-in answer headlessly, print the outcome and why, and
record the attempt in the player's save (unless --no-record).

    ridge answer kv-cache-03 --bottleneck kv-capacity --lever quantization --gain 2-4x \
        --reason kv-cap --estimate max_concurrency=125 --certainty medium

Exit 0 whatever the outcome; 2 (one line) for input the puzzle does not offer.
"""
from __future__ import annotations

import json
import math
import sys

from engine.errors import RidgeError


def build(parser) -> None:
    parser.add_argument("id", help="a puzzle id (built-in or generated)")
    parser.add_argument("--bottleneck", required=True)
    parser.add_argument("--lever", required=True)
    parser.add_argument("--gain", required=True, metavar="BAND", help="under-1.25x, 1.25-2x, 2-4x or over-4x")
    parser.add_argument("--reason", required=True)
    parser.add_argument("--estimate", action="append", default=[], metavar="NAME=VALUE",
                        help="a numeric estimate the puzzle asks for (repeatable)")
    parser.add_argument("--certainty", required=True, help="low, medium or high")
    parser.add_argument("--hints", type=int, default=0, metavar="N", help="hints taken before locking in")
    parser.add_argument("--profile", metavar="NAME", default=None,
                        help="who answers (default: the player the game would open, the last one played)")
    parser.add_argument("--save-dir", default=None)
    parser.add_argument("--no-record", action="store_true", help="grade only; do not write the save")
    parser.add_argument("--json", action="store_true")


def parse_estimates(items: list[str]) -> dict[str, float]:
    from argparse import ArgumentTypeError

    from app.parser import ascii_float

    out: dict[str, float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise RidgeError(f"--estimate wants NAME=VALUE, got {item!r}")
        try:
            value = ascii_float(text.strip().replace(",", "").replace("_", ""))  # ASCII digits only
        except ArgumentTypeError:
            raise RidgeError(f"--estimate {name}: {text!r} is not a finite number in digits 0-9") from None
        if not math.isfinite(value):
            raise RidgeError(f"--estimate {name}: must be a finite number")
        if name in out:
            raise RidgeError(f"--estimate {name} given twice")
        out[name] = value
    return out


def run(args) -> int:
    from puzzles import bank
    from puzzles.grading import Prediction, grade

    puzzle = bank.get(args.id)
    estimates = parse_estimates(args.estimate)
    missing = [name for name in puzzle.estimates if name not in estimates]
    if missing:
        raise RidgeError(f"this puzzle asks for {', '.join(missing)}: add --estimate {missing[0]}=VALUE")
    if args.hints < 0 or args.hints > len(puzzle.hints):
        raise RidgeError(f"--hints must be between 0 and {len(puzzle.hints)} for this puzzle, got {args.hints}")
    prediction = Prediction(bottleneck=args.bottleneck, lever=args.lever, gain_band=args.gain,
                            reason=args.reason, certainty=args.certainty, estimates=estimates)
    store, player = (None, None) if args.no_record else _player(args)  # refused before anything is graded
    result = grade(puzzle, bank.key(puzzle), prediction, hints_used=args.hints)
    recorded = None if args.no_record else _record(store, player, args, puzzle, result)
    if args.json:
        out = result.to_json()
        out.update(id=puzzle.id, module=puzzle.module, prediction=prediction.to_json(), hints_used=args.hints,
                   recorded=recorded)
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    lines = [f"{puzzle.id}: {result.outcome.upper()}  ({result.points:+d} points at {args.certainty} certainty"
             + (f", {args.hints} hint{'s' if args.hints != 1 else ''}" if args.hints else "") + ")"]
    from puzzles.grading import decided_text, part_lines

    lines.append(f"  {decided_text(result)}")
    lines += [f"  {line}" for line in part_lines(result)]
    lines += [f"  {line}" for line in result.feedback]
    for m in result.misconceptions:
        lines.append(f"  Watch out: {m.text}")
    if recorded:
        lines.append(f"Recorded as attempt {recorded['seq']} in profile '{recorded['profile']}'.")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _player(args):
    """(store, profile name) the answer is recorded to: --profile (created if new: that is asking
    for it), else the player the game would open; RidgeError (one line) when there is none."""
    from saves.locations import data_dir
    from saves.store import SaveStore

    store = SaveStore(data_dir(args.save_dir))
    name = store.choose_profile(args.profile)
    if name is None:
        raise RidgeError(f"no player in {store.dir} yet: name one with --profile NAME (or play once), "
                         "or grade without saving with --no-record")
    return store, name


def _record(store, name: str, args, puzzle, result) -> dict | None:
    """Append the attempt to the save (`saves.record.record_graded`); RidgeError (one line) when
    the save refuses it."""
    import datetime as dt

    from saves.record import record_graded

    saved = record_graded(store, name, puzzle, result, mode="cli", hints_used=args.hints,
                          locked_at=dt.datetime.now(dt.timezone.utc))
    return {"profile": name, "seq": saved.seq}
