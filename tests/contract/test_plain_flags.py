"""app/flags.py reads plain command lines without argparse; for every line it reads, argparse
(built by the same build()) gives the same arguments, and every other line goes to argparse.
Hypothesis draws lines from each command's own flags, their values, abbreviations, `=` forms,
help, separators and hostile text."""
from __future__ import annotations

import contextlib
import importlib
import io
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from helpers.hostile import NUMBER_TEXT, ODD_DIGITS, hostile_text
from helpers.hunt import examples

from app.cli import COMMANDS
from app.flags import Recorder, read
from app.parser import command_parser

PLAIN = ("solve", "load", "stats", "play")


def _recorded(name: str) -> tuple[Recorder, object]:
    module = importlib.import_module(COMMANDS[name][0])
    recorder = Recorder()
    module.build(recorder)
    return recorder, module


def _argparse(name: str, module, argv: list[str]):
    """argparse's reading of argv: its arguments, or None where it exits (help or an error)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return command_parser(name, COMMANDS[name][1], module).parse_args(argv)
        except SystemExit:
            return None


def _typed(args) -> dict:
    """Arguments compared with their types, so 4, 4.0 and True never pass for one another."""
    return {key: (type(value), value) for key, value in vars(args).items()}


def _words(name: str):
    """The words of a `name` line: its own flags, their values, abbreviations, `=` forms, help,
    separators and hostile text."""
    recorder, _ = _recorded(name)
    flags = [n for names, _ in recorder.calls for n in names]
    choices = [c for _, options in recorder.calls for c in options.get("choices") or ()]
    value = st.one_of(st.sampled_from(["4", "0", "-1", "0.5", "1e3", ".5", "llama-3-70b", "h100-sxm", "x", ""]
                                      + choices + NUMBER_TEXT + ODD_DIGITS), hostile_text)
    return st.one_of(
        st.sampled_from(flags), st.sampled_from(flags), st.sampled_from(flags), value, value,
        st.sampled_from(flags).map(lambda f: f[:max(3, len(f) - 2)]),            # abbreviations
        st.tuples(st.sampled_from(flags), value).map("=".join),                  # --flag=value
        st.sampled_from(["-h", "--help", "--", "-", "--nope", "-x", "---json"]),
    )


# Built once, when the module loads: building them inside each example cost more than the reading checked.
LINES = {name: st.tuples(st.just(name), st.lists(_words(name), max_size=12)) for name in PLAIN}


@settings(max_examples=examples(600))
@given(st.sampled_from(PLAIN).flatmap(LINES.__getitem__))
def test_a_line_read_without_argparse_reads_as_argparse_reads_it(case):
    name, argv = case
    recorder, module = _recorded(name)
    fast = read(recorder, argv)
    if fast is not None:
        slow = _argparse(name, module, argv)
        assert slow is not None, f"app.flags read {argv} that argparse refuses"
        assert _typed(fast) == _typed(slow), argv


@pytest.mark.parametrize("argv", [
    ["--model", "llama-3-70b", "--gpus", "4", "--json"],
    ["--json", "--model=llama-3-70b", "--gpu=h100-sxm", "--gpus=4", "--mfu", "0.5", "--weights", "fp8"],
    ["--model", "llama-3-70b", "--catalog", "a.toml", "--catalog", "b.toml", "--prefix-caching"],
    [],
])
def test_plain_solve_lines_skip_argparse(argv):
    """The common lines really are read by app.flags (so `ridge solve --json` never loads argparse),
    with argparse's own result."""
    recorder, module = _recorded("solve")
    fast = read(recorder, argv)
    assert fast is not None and _typed(fast) == _typed(_argparse("solve", module, argv))


@pytest.mark.parametrize("argv", [
    ["--mod", "llama-3-70b"], ["--help"], ["--gpus", "-4"], ["--gpus", "١٢"], ["--weights", "fp9"],
    ["--json=1"], ["--model"], ["extra"], ["--", "--json"], ["--mfu", "nan"],
])
def test_lines_argparse_must_judge_go_to_argparse(argv):
    assert read(_recorded("solve")[0], argv) is None


def test_a_command_with_subcommands_goes_to_argparse():
    recorder, _ = _recorded("puzzles")
    assert not recorder.plain and read(recorder, ["list"]) is None


def test_a_plain_solve_never_imports_argparse():
    import subprocess

    probe = ("import io, contextlib, sys\nfrom app.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    main(['solve', '--model', 'llama-3-70b', '--gpus', '4', '--json'])\n"
             "print('argparse' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
