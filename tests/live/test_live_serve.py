"""`ridge serve` refuses another site's page, caps the games it runs, and asks each browser its
player's name (instead of opening the last player's profile)."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from app.game import make_app
from helpers.live import ROOT, free_port

LIMIT = 60.0


async def _until(check, what):
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        value = await check() if asyncio.iscoroutinefunction(check) else check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def test_serve_refuses_foreign_origins_and_caps_the_room(tmp_path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port), "--save-dir", str(tmp_path),
                             "--max-players", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(ROOT))
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            async def up():
                try:
                    async with session.get(url + "/") as r:
                        return r.status == 200
                except aiohttp.ClientError:
                    return False

            await _until(up, "ridge serve to answer")
            async with session.get(url + "/ws", headers={"Origin": "http://evil.example", "Connection": "Upgrade",
                                                         "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                                                         "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}) as r:
                assert r.status == 403 and "another web page" in await r.text()
            async with session.get(url + "/", headers={"Origin": "http://evil.example"}) as r:
                assert r.status == 403
            first = await session.ws_connect(url + "/ws", headers={"Origin": url})
            try:
                async with session.get(url + "/ws", headers={"Connection": "Upgrade", "Upgrade": "websocket",
                                                             "Sec-WebSocket-Version": "13",
                                                             "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}) as r:
                    assert r.status == 503 and "full" in await r.text()
            finally:
                await first.close()
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert "at most 1 players at once" in out and "Traceback" not in err


async def test_each_browser_is_asked_its_name(tmp_path):
    app = make_app(save_dir=tmp_path)
    app.store.create_profile("alice")
    app.ask_name = True
    async with app.run_test(size=(80, 24)) as pilot:
        await _until(lambda: app.screen.id == "name-dialog", "the name prompt")
        assert app.session is None
        await pilot.press(*"bob", "enter")
        await _until(lambda: app.session is not None, "bob's session")
        assert app.session.name == "bob"


def test_a_browsers_process_gets_only_the_environment_it_needs(monkeypatch):
    from app.live.web import child_environment

    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "do-not-pass")
    monkeypatch.setenv("RIDGE_SAVE_DIR", "/the/hosts/saves")
    env = child_environment({"RIDGE_SEAT": "ab" * 16}, 100, 40)
    assert "AWS_SECRET_ACCESS_KEY" not in env and "RIDGE_SAVE_DIR" not in env
    assert env["COLUMNS"] == "100" and env["ROWS"] == "40" and env["RIDGE_SEAT"] == "ab" * 16
    assert env["TEXTUAL_DRIVER"].endswith("WebDriver") and set(env) <= {
        "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
        "TEXTUAL_DRIVER", "TEXTUAL_FPS", "TEXTUAL_COLOR_SYSTEM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION",
        "COLUMNS", "ROWS", "RIDGE_SEAT"}


# What a browser's app process sees, printed by a stand-in app: its environment, its folder, its
# home's contents and the signal it gets when its parent ends (Linux prctl PR_GET_PDEATHSIG).
REPORTER = """
import ctypes, json, os, sys
sig = ctypes.c_int(0)
try:
    ctypes.CDLL("libc.so.6").prctl(2, ctypes.byref(sig))
except OSError:
    pass
print(json.dumps({"env": dict(os.environ), "cwd": os.getcwd(), "home": os.listdir(os.environ["HOME"]),
                  "folder": sorted(os.listdir(os.path.dirname(os.environ["HOME"]))), "pdeathsig": sig.value,
                  "argv": sys.argv[1:]}))
"""


def _player_command(tmp_path, argv, env):
    from app.commands.seat_launcher import player_command
    from app.live.web import child_environment

    folder = tmp_path / "a b'c; echo $HOME"  # the command line must quote every word
    folder.mkdir()
    return folder, player_command(argv, child_environment(env), folder)


def test_a_browsers_process_runs_with_the_servers_environment_in_an_empty_home(tmp_path, monkeypatch):
    """textual-serve runs the command through a shell with the server's whole environment: the
    app still gets only the allow-list, a private empty home as its folder, and the signal that
    ends it with the server."""
    import json
    import signal

    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "do-not-pass")
    odd = "it's $HOME; `true` \"quoted\""
    folder, command = _player_command(tmp_path, [sys.executable, "-c", REPORTER, odd], {"RIDGE_SEAT": "ab" * 16})
    assert command.startswith("exec ")
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TEXTUAL_DRIVER": "x"})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    home = folder / "home"
    assert seen["argv"] == [odd]
    assert "AWS_SECRET_ACCESS_KEY" not in seen["env"] and seen["env"]["RIDGE_SEAT"] == "ab" * 16
    assert seen["env"]["HOME"] == str(home) and seen["cwd"] == str(home) and seen["home"] == []
    assert seen["folder"] == ["home"]  # the environment file is read and removed before the app starts
    assert seen["env"]["TEXTUAL_DRIVER"].endswith("WebDriver")
    if sys.platform.startswith("linux"):
        assert seen["pdeathsig"] == signal.SIGTERM


SERVER = """
import subprocess, sys, time
from pathlib import Path
from app.commands.seat_launcher import player_command
from app.live.web import child_environment
command = player_command([sys.executable, "-c", "import time; time.sleep(600)"], child_environment(), Path(sys.argv[1]))
child = subprocess.Popen(command, shell=True)
print(child.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_browsers_process_ends_when_the_server_is_killed(tmp_path):
    from helpers.live import wait_for

    server = subprocess.Popen([sys.executable, "-c", SERVER, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        child = int(server.stdout.readline())
        wait_for(lambda: _state(child) == "S" and "sleep(600)" in _cmdline(child), "the app to start")
    finally:
        server.kill()
        server.wait()
    try:
        wait_for(lambda: _state(child) in ("Z", None), "the app to end with its server")
    finally:
        if _state(child) not in ("Z", None):  # the failure case: leave no process behind
            os.kill(child, 9)


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""
