"""The `ridge` command line: a thin dispatcher that imports only the subcommand it runs.

Each subcommand lives in `app/commands/<name>.py` with `build(parser)` and `run(args) -> int`.
Importing lazily keeps `ridge solve --json` fast: it never loads Textual, numpy or pydantic.
Bad input anywhere surfaces as `RidgeError` and becomes one line on stderr with exit status 2.
"""
from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

# name -> (module, one-line help). `play` is the default when no command is given.
COMMANDS: dict[str, tuple[str, str]] = {
    "play": ("app.commands.play", "open the game (the default)"),
    "solve": ("app.commands.solve", "analyse one deployment and print the derivation"),
    "load": ("app.commands.load", "serve a deployment under traffic and print its tails (P50/P90/P99)"),
    "puzzles": ("app.commands.puzzles", "list, show, check, generate or import puzzles"),
    "answer": ("app.commands.answer", "grade (and record) one locked-in answer"),
    "stats": ("app.commands.stats", "a player's derived figures"),
    "drill": ("app.commands.drill", "plan reviews toward an exam date (drill plan --until DATE)"),
    "saves": ("app.commands.saves", "check or export save files"),
    "lab": ("app.commands.lab", "run the toy serving lab"),
    "match": ("app.commands.match", "merge match result files into a leaderboard"),
    "serve": ("app.commands.serve", "play in a browser through textual-serve"),
    "host": ("app.commands.host", "run a live match for a room (players join in a browser)"),
    "join": ("app.commands.join", "play a hosted live match from this terminal"),
}


def ascii_int(text: str) -> int:
    """A whole-number flag: ASCII digits only (Python's int() also reads '١٢', '１２', '1_000'
    and ' 12 ', which a player never means)."""
    from engine.bounds import is_ascii_whole

    if not is_ascii_whole(text):
        raise argparse.ArgumentTypeError(f"expected a whole number in digits 0-9, got '{_shown(text)}'")
    return int(text)


def ascii_float(text: str) -> float:
    """A numeric flag: ASCII decimal notation only, and finite (no 'nan', 'inf' or '1e999')."""
    from engine.bounds import is_ascii_decimal

    if not is_ascii_decimal(text, 3) or not -1e300 < float(text) < 1e300:
        raise argparse.ArgumentTypeError(f"expected a finite number like 0.5 or 3e-2, got '{_shown(text)}'")
    return float(text)


def _shown(text: object) -> str:
    from engine.bounds import shown

    return shown(text, 60)


def _one_line(text: object) -> str:
    """A refusal as printed: one line, at most 300 characters, control characters written out."""
    from engine.bounds import refusal

    return refusal(text)


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size reads it ($COLUMNS, else the terminal,
    else 80), without importing shutil."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's own formatter at the same width. argparse builds one for every add_argument,
    and its default sizing imports shutil, which loads three compression modules: a fifth of
    `ridge solve --json`'s whole run."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one line, never a usage dump the player must decode. Numeric
    flags declared with type=int or type=float take ASCII digits only (see ascii_int)."""

    _STRICT_TYPES = {int: ascii_int, float: ascii_float}

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):  # type: ignore[override]
        kind = kwargs.get("type")
        if kind in self._STRICT_TYPES:
            kwargs["type"] = self._STRICT_TYPES[kind]
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, _one_line(f"{self.prog}: error: {message}") + "\n")


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

    guard = None if name in _OWN_TERMINAL else _OutputGuard(sys.stdout)
    if guard is not None:
        sys.stdout = guard
    try:
        code = int(module.run(args) or 0)
        sys.stdout.flush()  # a full disk shows here, not as a second error at interpreter exit
        return code
    except OutputError as exc:
        _silence_stdout()
        if exc.errno == errno.EPIPE:
            return 0
        print(_one_line(f"ridge {name}: error: cannot write the output: {exc.strerror or exc}"), file=sys.stderr)
        return 2
    except RidgeError as exc:
        print(_one_line(f"ridge {name}: error: {exc}"), file=sys.stderr)
        return 2
    except BrokenPipeError:  # a pipe closed under a write the guard did not see
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: keep the traceback for the log, give the player one line
        return _internal_error(name, exc, args)
    finally:
        if guard is not None and sys.stdout is guard:
            sys.stdout = guard.stream


# Commands that draw on the terminal themselves (Textual); their output is not guarded.
_OWN_TERMINAL = frozenset({"play", "serve"})


class OutputError(OSError):
    """Writing standard output failed (a full disk, a closed pipe): the command's result was not
    delivered, which is the player's environment, not a bug."""


class _OutputGuard:
    """Standard output with its write errors told apart from every other OSError."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as exc:
            raise OutputError(exc.errno, exc.strerror) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            raise OutputError(exc.errno, exc.strerror) from None

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def _silence_stdout() -> None:
    """Point standard output at the null device, so the interpreter's final flush of whatever is
    still buffered cannot add a second error line."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _internal_error(name: str, exc: Exception, args) -> int:
    if os.environ.get("RIDGE_DEBUG"):
        raise  # noqa: PLE0704 - called inside the except block that caught `exc`
    where = _log_crash(name, getattr(args, "save_dir", None))
    print(_one_line(f"ridge {name}: internal error: {type(exc).__name__}: {exc} (details in {where})"),
          file=sys.stderr)
    return 1


def _log_crash(command: str, save_dir: str | None = None) -> str:
    """Append the current traceback to the error log of the save folder in use (`--save-dir`,
    else the data folder) and return the log's path."""
    import tempfile
    import traceback

    try:
        from saves.locations import log_path

        path = str(log_path(save_dir))
    except Exception:
        path = os.path.join(tempfile.gettempdir(), "ridge-error.log")
    entry = f"--- ridge {command}\n{traceback.format_exc()}\n"
    for candidate in (path, os.path.join(tempfile.gettempdir(), "ridge-error.log")):
        try:
            from engine.bounds import append_text

            os.makedirs(os.path.dirname(candidate), exist_ok=True)
            append_text(candidate, entry)  # a pipe or device planted as the log never hangs us
            return candidate
        except (OSError, ValueError):
            continue
    return "nowhere (the log could not be written)"
