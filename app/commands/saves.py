"""`ridge saves check | export`: validate a save folder, or write a player's history out."""
from __future__ import annotations

import argparse
import json
import sys


def build(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="validate every file and hash chain in a save folder")
    check.add_argument("--save-dir", metavar="DIR", help="the save folder (default: your data folder)")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    export = sub.add_parser("export", help="write a player's history as CSV or Markdown")
    export.add_argument("--profile", metavar="NAME",
                        help="whose history (default: the only profile, else the last used)")
    export.add_argument("--save-dir", metavar="DIR", help="the save folder (default: your data folder)")
    export.add_argument("--format", required=True, choices=("csv", "md"))
    export.add_argument("--output", metavar="FILE", help="write here instead of standard output "
                        "(never inside the save folder; an existing file only if Ridge wrote it)")
    export.add_argument("--force", action="store_true", help="replace --output even if Ridge did not write it")


def run(args: argparse.Namespace) -> int:
    from saves.locations import data_dir
    from saves.store import SaveStore

    store = SaveStore(data_dir(args.save_dir))
    if args.save_dir is not None and not store.dir.is_dir():
        from saves.errors import SaveError

        raise SaveError(f"no save folder at {store.dir}")
    return _check(store, args) if args.action == "check" else _export(store, args)


def _check(store, args: argparse.Namespace) -> int:
    report = store.check_report()
    if args.json:
        print(json.dumps({"save_dir": str(store.dir), "ok": not report.problems,
                          "profiles": report.profiles, "attempts": report.attempts,
                          "problems": [p.to_json() for p in report.problems]}, indent=2))
    else:
        from engine.bounds import one_line

        for problem in report.problems:
            print(one_line(problem, escape=True))
        verdict = f"{len(report.problems)} problem(s)" if report.problems else "no problems"
        print(f"{one_line(store.dir, escape=True)}: {len(report.profiles)} profile(s), {report.attempts} attempts, "
              f"{verdict}", file=sys.stderr if report.problems else sys.stdout)
    return 1 if report.problems else 0


def _export(store, args: argparse.Namespace) -> int:
    from pathlib import Path

    from saves.errors import SaveError
    from saves.export import export

    name = store.choose_profile(args.profile)
    if name is None:
        raise SaveError(f"no profiles in {store.dir}")
    text = export(store.load(name), args.format)
    if args.output:
        from saves.atomic import write_requested
        from saves.export import is_export

        write_requested(Path(args.output).expanduser(), text, force=args.force, ours=is_export,
                        save_dir=store.dir, what="an export")
    else:
        sys.stdout.write(text)
    return 0
