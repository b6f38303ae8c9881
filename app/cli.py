"""The `ridge` command line: a thin dispatcher that imports only the subcommand it runs.

Each subcommand lives in `app/commands/<name>.py` with `build(parser)` and `run(args) -> int`.
Importing lazily keeps `ridge solve --json` fast: it never loads Textual, numpy or pydantic.
Bad input anywhere surfaces as `RidgeError` and becomes one line on stderr with exit status 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

# name -> (module, one-line help). `play` is the default when no command is given.
COMMANDS: dict[str, tuple[str, str]] = {
    "play": ("app.commands.play", "open the game (the default)"),
    "solve": ("app.commands.solve", "analyse one deployment and print the derivation"),
    "puzzles": ("app.commands.puzzles", "list, show, check or generate puzzles"),
    "answer": ("app.commands.answer", "grade (and record) one locked-in answer"),
    "stats": ("app.commands.stats", "a player's derived figures"),
    "saves": ("app.commands.saves", "check or export save files"),
    "lab": ("app.commands.lab", "run the toy serving lab"),
    "match": ("app.commands.match", "merge match result files into a leaderboard"),
    "serve": ("app.commands.serve", "play in a browser through textual-serve"),
}


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one line, never a usage dump the player must decode."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _top_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ridge", description="Ridge: a training game for LLM inference economics.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv.insert(0, "play")
    name = argv[0]
    if name not in COMMANDS:
        _top_parser().parse_args(argv)  # prints help or a one-line error
        return 2
    module_name, help_text = COMMANDS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            print(f"ridge {name}: not available in this build", file=sys.stderr)
            return 2
        raise
    parser = _Parser(prog=f"ridge {name}", description=help_text)
    module.build(parser)
    args = parser.parse_args(argv[1:])
    from engine.errors import RidgeError

    try:
        return int(module.run(args) or 0)
    except RidgeError as exc:
        print(f"ridge {name}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: keep the traceback for the log, give the player one line
        if os.environ.get("RIDGE_DEBUG"):
            raise
        where = _log_crash(name)
        print(f"ridge {name}: internal error: {type(exc).__name__}: {exc} (details in {where})", file=sys.stderr)
        return 1


def _log_crash(command: str) -> str:
    """Append the current traceback to the error log and return the log's path."""
    import tempfile
    import traceback

    try:
        from saves.locations import log_path

        path = str(log_path())
    except Exception:
        path = os.path.join(tempfile.gettempdir(), "ridge-error.log")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"--- ridge {command}\n{traceback.format_exc()}\n")
    except OSError:
        return "stderr (the log could not be written)"
    return path
