"""A small reader of plain command lines, so that `ridge solve --json` need not import argparse.

Importing argparse and building a parser (gettext, locale, the help formatter's patterns) cost about
an eighth of a whole `ridge solve --json` process. Each command's build() still declares its flags,
here on a Recorder that keeps the add_argument calls, so the declarations stay the one source of
truth. read() parses argv with them only when every word is plain: a declared long flag written in
full, `--flag value` (a value not starting with '-') or `--flag=value`, with values inside the
declared choices and numbers in ASCII digits. Anything else (help, an error, an abbreviation, a
positional, subcommands, a value starting with '-') gives None, and argparse, built by the same
build(), reads the line. tests/contract/test_plain_flags.py checks the two agree.
"""
from __future__ import annotations

from types import SimpleNamespace

_ACTIONS = {"store": None, "store_true": False, "append": None}   # action -> its default default
_KNOWN = {"action", "default", "type", "choices", "dest", "help", "metavar"}
_NO = object()


class Recorder:
    """Stands in for the parser while build() runs: keeps each add_argument call. Any other use of
    the parser (subcommands, groups, defaults) marks the line as one for argparse."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple, dict]] = []
        self.plain = True

    def add_argument(self, *names, **options) -> None:
        self.calls.append((names, options))

    def __getattr__(self, name: str):
        self.plain = False
        return lambda *args, **kwargs: Recorder()


def _flags(calls) -> dict | None:
    """Each declared flag name -> (dest, action, options), or None if any declaration is more than
    a long flag storing one value, a switch or a repeatable value."""
    flags = {}
    for names, options in calls:
        action = options.get("action", "store")
        if (action not in _ACTIONS or not options.keys() <= _KNOWN or options.get("type") not in (None, int, float)
                or not names or not all(n[:2] == "--" and n[2:3] not in ("", "-") and "=" not in n for n in names)):
            return None
        dest = options.get("dest") or names[0][2:].replace("-", "_")
        flags.update((n, (dest, action, options)) for n in names)
    return flags


def _value(options: dict, text: str):
    """`text` read as argparse would (the declared type, ASCII digits only), or _NO if argparse
    would refuse it."""
    from engine.bounds import is_ascii_decimal, is_ascii_whole

    kind = options.get("type")
    if kind is int:
        value = int(text) if is_ascii_whole(text) else _NO
    elif kind is float:
        value = float(text) if is_ascii_decimal(text, 3) and -1e300 < float(text) < 1e300 else _NO
    else:
        value = text
    choices = options.get("choices")
    return _NO if choices is not None and value is not _NO and value not in choices else value


def read(recorder: Recorder, argv: list[str]) -> SimpleNamespace | None:
    """argv read with the recorded flags, or None when argparse must read it."""
    flags = _flags(recorder.calls) if recorder.plain else None
    if flags is None:
        return None
    values = {dest: options.get("default", _ACTIONS[action]) for dest, action, options in flags.values()}
    defaults = dict(values)
    words = iter(argv)
    for word in words:
        name, eq, text = word.partition("=") if word not in flags else (word, "", "")
        if name not in flags:
            return None
        dest, action, options = flags[name]
        if action == "store_true":
            if eq:
                return None
            values[dest] = True
            continue
        if not eq:
            text = next(words, "-")
            if text[:1] == "-":
                return None
        value = _value(options, text)
        if value is _NO:
            return None
        values[dest] = [*(values[dest] or ()), value] if action == "append" else value
    for dest, action, options in flags.values():
        default = defaults[dest]
        if isinstance(default, str) and values[dest] is default and options.get("type") is not None:
            values[dest] = _value(dict(options, choices=None), default)   # argparse converts a text default
            if values[dest] is _NO:
                return None
    return SimpleNamespace(**values)
