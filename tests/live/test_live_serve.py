"""`ridge serve` refuses another site's page, caps the games it runs, and asks each browser its
player's name (instead of opening the last player's profile)."""
from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import aiohttp

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
