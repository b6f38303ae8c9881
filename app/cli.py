"""The `ridge` command line: a thin dispatcher that imports only the subcommand it runs.

Each subcommand lives in `app/commands/<name>.py` with `build(parser)` and `run(args) -> int`.
Importing lazily keeps `ridge solve --json` fast: it never loads Textual, numpy or pydantic, and a
plain command line is read by app/flags.py without argparse (app/parser.py reads the rest).
Bad input anywhere surfaces as `RidgeError` and becomes one line on stderr with exit status 2.
"""
from __future__ import annotations

import errno
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


def _one_line(text: object) -> str:
    """A refusal as printed: one line, at most 300 characters, control characters written out."""
    from engine.bounds import refusal

    return refusal(text)


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if not words or words[0].startswith("-") and words[0] not in ("-h", "--help"):
        words.insert(0, "play")
    code = _command(words)
    if argv is None and words[0] in _LEAVE_AT_ONCE and "threading" not in sys.modules:
        _leave(code)
    return code


# Commands that end their process as soon as their output is out (see _leave).
_LEAVE_AT_ONCE = frozenset({"solve"})


def _leave(code: int) -> None:
    """End the process now with `code`, once what was printed is flushed. The interpreter's own
    ending frees every module and object one by one: about a tenth of a whole `ridge solve --json`,
    for nothing the player sees. Only when `ridge` is the program (main read sys.argv: a test
    passes its own argv) and no thread was ever started (threading not imported), for commands
    that write no file and register nothing to run at exit."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # the ordinary ending reports (or silences) what failed
    os._exit(code)


def _command(argv: list[str]) -> int:
    name = argv[0]
    if name not in COMMANDS:
        from app.parser import top_parser

        top_parser(COMMANDS).parse_args(argv)  # prints help or a one-line error
        return 2
    module_name, help_text = COMMANDS[name]
    try:
        __import__(module_name)  # not importlib.import_module: importing importlib is ~2% of `ridge solve`
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            print(f"ridge {name}: not available in this build", file=sys.stderr)
            return 2
        raise
    module = sys.modules[module_name]
    args = _arguments(name, help_text, module, argv[1:])
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


def _arguments(name: str, help_text: str, module, argv: list[str]):
    """The command's arguments: read by app.flags when the line is plain, else by argparse."""
    from app.flags import Recorder, read

    recorder = Recorder()
    try:
        module.build(recorder)
    except Exception:  # a build that needs the real parser; argparse's build below decides
        recorder.plain = False
    args = read(recorder, argv)
    if args is None:
        from app.parser import command_parser

        args = command_parser(name, help_text, module).parse_args(argv)
    return args


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
