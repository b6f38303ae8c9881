"""`ridge host` and `ridge join` on bad input: one line, exit 2, nothing already saved lost; the
loopback line; `--report` on a kept match; a join that gives up on a silent host."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from app.commands.join import check_url, reach
from engine.errors import RidgeError
from helpers.live import ROOT, Host, LobbyClient, right_prediction, wait_for

HOST = ("host", "--seed", "5", "--count", "2", "--headless", "--port", "0")


def _ridge(*args: str, save=None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RIDGE_SAVE_DIR"}
    extra = ("--save-dir", str(save)) if save is not None else ()
    return subprocess.run([sys.executable, "-m", "app", *args, *extra], capture_output=True, text=True,
                          timeout=timeout, cwd=str(ROOT), env=env)


def _one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    err = done.stderr.strip()
    assert done.returncode == 2 and "\n" not in err and len(err) <= 300 and "Traceback" not in err, done.stderr
    assert all(w in err for w in words), err


@pytest.mark.parametrize("address", ["a..b", "example.com", "-1", "256.1.1.1", "localhost.evil"])
def test_host_takes_an_address_never_a_name(tmp_path, address):
    _one_line(_ridge(*HOST, "--host", address, save=tmp_path), "--host", "IP address")


def test_host_refuses_a_public_url_with_control_characters(tmp_path):
    done = _ridge(*HOST, "--public-url", "http://x\x1b[2J/", save=tmp_path)
    _one_line(done, "--public-url")
    assert "\x1b" not in done.stderr + done.stdout


def test_host_with_a_damaged_lobby_or_an_unwritable_folder_is_one_line(tmp_path):
    lobby = tmp_path / "lobby" / "live-s5-mixed-n2.sqlite"
    lobby.parent.mkdir(parents=True)
    lobby.write_bytes(b"not a database at all" * 100)
    before = lobby.read_bytes()
    _one_line(_ridge(*HOST, save=tmp_path), str(lobby.name))
    assert lobby.read_bytes() == before  # nothing already there is touched

    lobby.unlink()
    with sqlite3.connect(lobby) as db:  # a real SQLite file, hand-edited: a phase that is no phase
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('schema_version', '1'), ('phase', '\"??\"'), ('index', '0')")
    _one_line(_ridge(*HOST, save=tmp_path), "damaged")

    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    _one_line(_ridge(*HOST, save=blocked / "inside"))


def test_loopback_says_who_can_join(tmp_path):
    host = Host(tmp_path, count=1)
    try:
        host.start()
        line = host.wait_line(lambda line: "this machine" in line)
        assert "Only this machine can join" in line and "--host 0.0.0.0" in line
    finally:
        host.stop()


def test_report_exports_a_kept_match(tmp_path):
    from puzzles import generator

    made = generator.generate(5, 1, None)
    host = Host(tmp_path, count=1, seconds=600, lobby_seconds=0, reveal_seconds=0)  # the match ends at the close
    try:
        host.start()
        ana = LobbyClient(host.url)
        ana.join("4321", "ana")
        wait_for(lambda: ana.state()["phase"] == "question", "the question")
        ana.answer(0, right_prediction(made[0]))
        host.wait_line(lambda line: line.startswith("report "))
    finally:
        host.stop()
    again = Host(tmp_path, count=1)  # hosting the same match again archives the finished one
    again.start()
    again.stop()
    archived = [p for p in (tmp_path / "lobby").glob("live-s5-mixed-n1-*.sqlite")]
    assert len(archived) == 1
    done = _ridge("host", "--report", str(archived[0]), save=tmp_path)
    assert done.returncode == 0, done.stderr
    paths = done.stdout.split()[1:]
    assert paths[0].endswith("report.md") and "| 1 | ana |" in open(paths[0], encoding="utf-8").read()
    _one_line(_ridge("host", "--report", str(tmp_path / "nothing.sqlite"), save=tmp_path), "no such lobby")


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "http://", "http://a b",
                                 "http://user:pw@host:1", "http://h:99999", "ftp://h"])
def test_join_refuses_a_bad_address(url, capsys):
    """In this process (the address is refused before anything connects): what `ridge join`
    returns and prints, as `_one_line` judges a process's."""
    from app.cli import main

    code = main(["join", url, "--pin", "1234", "--name", "x"])
    out, err = capsys.readouterr()
    _one_line(subprocess.CompletedProcess(["ridge", "join", url], code, out, err))


def test_join_accepts_host_and_port():
    assert check_url("192.168.1.20:8300") == "http://192.168.1.20:8300"
    assert check_url(" HTTP://127.0.0.1:8300/ ") == "http://127.0.0.1:8300"


def test_join_gives_up_on_a_silent_host_after_its_deadline():
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    with pytest.raises(RidgeError, match="within 15 s"):
        reach("http://127.0.0.1:9", clock=lambda: now[0], sleep=sleep)
    assert now[0] >= 15
