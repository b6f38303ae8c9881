"""`ridge solve` as the program ends with os._exit once its output is flushed (app/cli.py, _leave),
skipping the interpreter's teardown. Its output must still arrive whole, through a pipe too, with
the right exit status; and the short cut is taken only where it is safe: not for other commands,
not when threading was loaded, not when a caller passes its own argv (as tests do)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

from app.cli import main

SOLVE = ["solve", "--model", "llama-3-70b", "--gpus", "4"]
# Runs app.cli.main as the `ridge` script does, and tells on stderr whether the interpreter's ending ran.
PROGRAM = ("import atexit, sys\n{setup}\n"
           "atexit.register(lambda: sys.stderr.write('[teardown]'))\n"
           "sys.argv = ['ridge', *sys.argv[1:]]\n"
           "from app.cli import main\nsys.exit(main())\n")


def program(argv: list[str], setup: str = "", **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROGRAM.format(setup=setup), *argv], timeout=120, **kwargs)


def in_process(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


@pytest.mark.parametrize("extra", [["--json"], [], ["--fidelity", "realistic", "--json"]])
def test_the_output_arrives_whole_through_a_pipe(extra):
    done = program(SOLVE + extra, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")   # no teardown ran: the short cut was taken
    assert done.stdout == in_process(SOLVE + extra)
    if "--json" in extra:
        json.loads(done.stdout)


def test_a_refusal_keeps_its_line_and_status():
    done = program(["solve", "--model", "nope"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("ridge solve: error: unknown model 'nope'") and done.stderr.count("\n") == 1


def test_a_closed_pipe_is_quiet():
    read_end, write_end = os.pipe()
    os.close(read_end)   # closed before ridge writes a byte
    try:
        done = program(SOLVE + ["--json"], stdout=write_end, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_file_receives_everything(tmp_path):
    target = tmp_path / "out.json"
    with open(target, "w") as handle:
        done = program(SOLVE + ["--json"], stdout=handle, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 0
    assert target.read_text() == in_process(SOLVE + ["--json"])


@pytest.mark.parametrize("argv, setup", [
    (["puzzles", "show", "two-phases-01", "--json"], ""),   # not a command that leaves at once
    (SOLVE + ["--json"], "import threading"),              # a thread could be running
])
def test_the_ordinary_ending_elsewhere(argv, setup):
    done = program(argv, setup, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "[teardown]"
    json.loads(done.stdout)
