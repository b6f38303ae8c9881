"""A real browser plays a hosted match: headless Chromium opens the player page, types the pin and
a nickname into the terminal, answers the question with the keyboard, and shows up on the board.

Chromium is driven over the DevTools protocol (a websocket, through aiohttp). What the page shows
is read from the terminal's own websocket frames (Network.webSocketFrameReceived), and every step
waits on a condition: a text on the screen or a fact in the lobby API, never a fixed sleep.
Skipped only when no Chromium is installed (`.ci/run` installs the Debian package).
"""
from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from app import labels
from puzzles import generator
from puzzles.cards import puzzle_json
from tests.live_helpers import Host, LobbyClient, right_prediction

LIMIT = 90.0
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--mute-audio", "--window-size=1280,1800", "--remote-debugging-port=0",
         "--remote-allow-origins=*"]
_ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
KEYS = {"Enter": (13, "\r"), "Tab": (9, ""), "ArrowDown": (40, "")}

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (the Debian package 'chromium')")


class Browser:
    """One headless Chromium with a fresh profile, and a DevTools session on its page."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.proc: subprocess.Popen | None = None
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future] = {}
        self.frames: list[str] = []
        self.frame_added = asyncio.Event()

    async def start(self) -> None:
        import aiohttp

        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        active = self.profile / "DevToolsActivePort"
        port = await until(lambda: active.exists() and active.read_text().split("\n")[0].strip(), "Chromium's DevTools port")
        self.session = aiohttp.ClientSession()
        pages = await until_async(lambda: self._pages(int(port)), "Chromium's first page")
        self.ws = await self.session.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0)
        self.reader = asyncio.create_task(self._read())
        await self.call("Network.enable")
        await self.call("Page.enable")

    async def _pages(self, port: int):
        try:
            async with self.session.get(f"http://127.0.0.1:{port}/json/list") as response:
                found = [t for t in await response.json() if t.get("type") == "page"]
                return found or None
        except OSError:
            return None

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            elif data.get("method") == "Network.webSocketFrameReceived":
                response = data["params"]["response"]
                raw = response.get("payloadData", "")
                if response.get("opcode") == 2:
                    raw = base64.b64decode(raw).decode("utf-8", "replace")
                self.frames.append(_ESCAPES.sub("", raw))
                self.frame_added.set()

    async def call(self, method: str, **params):
        ident = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[ident] = future
        await self.ws.send_json({"id": ident, "method": method, "params": params})
        reply = await asyncio.wait_for(future, LIMIT)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def mark(self) -> int:
        return len(self.frames)

    async def seen(self, *texts: str, since: int = 0) -> None:
        """Wait until every text has appeared on the terminal since frame `since`."""
        deadline = time.monotonic() + LIMIT
        while True:
            screen = "".join(self.frames[since:])
            if all(t in screen for t in texts):
                return
            left = deadline - time.monotonic()
            if left <= 0:
                shot = await self.call("Page.captureScreenshot", format="png")
                (self.profile.parent / "failure.png").write_bytes(base64.b64decode(shot["data"]))
                raise AssertionError(f"the page never showed {texts}; it showed {screen[-2000:]!r}")
            self.frame_added.clear()
            try:
                await asyncio.wait_for(self.frame_added.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def press(self, key: str, then: tuple[str, ...] = ()) -> None:
        """Press a key in the terminal; with `then`, wait for those texts to be drawn after it."""
        since = self.mark()
        code, text = KEYS[key]
        common = {"key": key, "code": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
        await self.call("Input.dispatchKeyEvent", type="keyDown", text=text, **common)
        await self.call("Input.dispatchKeyEvent", type="keyUp", **common)
        if then:
            await self.seen(*then, since=since)

    async def type(self, text: str, then: tuple[str, ...] = ()) -> None:
        since = self.mark()
        await self.call("Input.insertText", text=text)
        if then:
            await self.seen(*then, since=since)

    async def stop(self) -> None:
        for closing in (getattr(self, "ws", None), getattr(self, "session", None)):
            if closing is not None:
                await closing.close()
        if getattr(self, "reader", None) is not None:
            self.reader.cancel()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)


async def until(check, what: str):
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def until_async(check, what: str):
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        value = await check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def _choose_one(browser: Browser, part: str, then: str) -> None:
    """Open a menu's list (wait until the keyboard is in it), move the highlight down one and
    pick that option; the player app then moves on to the next part (wait until the keyboard is
    there)."""
    await browser.press("Enter", then=(f"▶ {part} · list open",))
    await browser.press("ArrowDown")
    await browser.press("Enter", then=(f"▶ {then} ·",))


async def test_a_browser_joins_answers_and_is_on_the_board(tmp_path):
    made = generator.generate(5, 1, None)
    card = puzzle_json(made[0].puzzle)
    host = Host(tmp_path / "host", count=1, seconds=300, lobby_seconds=0, reveal_seconds=300)
    browser = Browser(tmp_path / "chromium-profile")
    try:
        host.start()
        watcher = LobbyClient(host.url)
        await asyncio.to_thread(watcher.join, "4321", "watcher")
        await browser.start()
        await browser.call("Page.navigate", url=host.url + "/")
        await browser.seen("Join the match")
        await browser.call("Runtime.evaluate", expression="document.querySelector('.xterm-helper-textarea').focus()")
        await browser.type("4321", then=("4321",))
        await browser.press("Enter", then=("▶ nickname",))
        await browser.type("chromium", then=("chromium",))
        await browser.press("Enter", then=("Your prediction", "▶ bottleneck"))

        board = await asyncio.to_thread(watcher.board)
        assert "chromium" in [r["name"] for r in board["players"]]
        ask = card["ask"]
        parts = ["bottleneck", "best lever", "its gain", "because"]
        parts.append(f"estimate: {labels.estimate(ask['estimates'][0])}" if ask["estimates"] else "how sure")
        for part, then in zip(parts, parts[1:]):
            await _choose_one(browser, part, then)
        for n, est in enumerate(ask["estimates"]):
            await browser.type("1000", then=("1000",))
            after = f"estimate: {labels.estimate(ask['estimates'][n + 1])}" if n + 1 < len(ask["estimates"]) else "how sure"
            await browser.press("Enter", then=(f"▶ {after}",))
        await browser.press("Enter", then=("▶ lock in",))
        await browser.press("Enter", then=("Locked in",))

        state = await asyncio.to_thread(watcher.state)
        assert state["locked"] == 1 and state["phase"] == "question"
        await asyncio.to_thread(watcher.answer, 0, right_prediction(made[0]))
        await browser.seen("the answer", "The board")
        board = await asyncio.to_thread(watcher.board)
        mine = next(r for r in board["players"] if r["name"] == "chromium")
        assert mine["answered"] == 1
        reveal = await asyncio.to_thread(watcher.reveal, 0)
        assert {p["name"] for p in reveal["players"]} == {"chromium", "watcher"}

        # A reload (or a host restart) ends the browser's session; the same browser rejoins under
        # the same nickname as the same player, because the page keeps its seat.
        since = browser.mark()
        await browser.call("Page.navigate", url=host.url + "/")
        await browser.seen("Join the match", since=since)
        await browser.call("Runtime.evaluate", expression="document.querySelector('.xterm-helper-textarea').focus()")
        await browser.type("4321", then=("4321",))
        await browser.press("Enter", then=("▶ nickname",))
        await browser.type("chromium", then=("chromium",))
        await browser.press("Enter", then=("the answer", "points"))
        board = await asyncio.to_thread(watcher.board)
        assert [r["name"] for r in board["players"]].count("chromium") == 1
    finally:
        await browser.stop()
        host.stop()
