"""argparse for the command line: the parser each command's build() declares its flags on, and the
one that reads every command line app.flags does not read itself (help, errors, abbreviations,
subcommands). It exits 2 with one line, never a usage dump. Kept apart from app/cli.py so that a
plain `ridge solve --json` never imports argparse (see app/flags.py)."""
from __future__ import annotations

import argparse
import os
import sys


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


class Parser(argparse.ArgumentParser):
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


def top_parser(commands: dict[str, tuple[str, str]]) -> argparse.ArgumentParser:
    """The parser of `ridge` itself: it prints the help, or refuses an unknown command in one line."""
    parser = Parser(prog="ridge", description="Ridge: a training game for LLM inference economics.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in commands.items():
        sub.add_parser(name, help=help_text)
    return parser


def command_parser(name: str, help_text: str, module) -> Parser:
    """The argparse parser of one command, built by the command's own build()."""
    parser = Parser(prog=f"ridge {name}", description=help_text)
    module.build(parser)
    return parser
