"""Real browsers play a hosted match: headless Chromium opens the player page the host serves at
phone size (360x640, twice) and laptop size (1280x800), each in its own browser context (its own
storage, as three people's devices). The phones tap; the laptop uses only the keyboard. One phone
reloads mid-question and comes back as the same player with its half-filled answer; the host (its
real screen, in a pseudo-terminal, paced with its keys) is killed and restarted, and every page
carries on to the reveal and the podium.

Chromium is driven over the DevTools protocol (one websocket, flattened sessions). Every step
waits on a condition read from the page or the lobby API, never a fixed sleep. Screenshots of each
stage at both sizes go to the test's folder (and to $RIDGE_SHOTS when set, to look at them).
Skipped only when no Chromium is installed (`.ci/run` installs the Debian package).
"""
from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from puzzles import generator
from helpers.live import LobbyClient, ScreenHost, right_prediction

LIMIT = 90.0
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--mute-audio", "--remote-debugging-port=0", "--remote-allow-origins=*"]
KEYS = {"Enter": (13, "\r"), "Tab": (9, ""), "ArrowDown": (40, ""), "Space": (32, " ")}
PHONE, LAPTOP = (360, 640), (1280, 800)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (the Debian package 'chromium')")


class Chromium:
    """One headless Chromium and a DevTools connection to it."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.proc: subprocess.Popen | None = None
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future] = {}
        self.errors: list[str] = []

    async def start(self) -> None:
        import aiohttp

        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        active = self.profile / "DevToolsActivePort"
        lines = await until(lambda: active.exists() and len(active.read_text().split("\n")) >= 2
                            and active.read_text().split("\n")[:2], "Chromium's DevTools port")
        self.session = aiohttp.ClientSession()
        self.ws = await self.session.ws_connect(f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}", max_msg_size=0)
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            elif data.get("method") == "Runtime.exceptionThrown":
                self.errors.append(json.dumps(data["params"]["exceptionDetails"])[:500])

    async def call(self, method: str, session: str | None = None, **params):
        ident = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[ident] = future
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        await self.ws.send_json(message)
        reply = await asyncio.wait_for(future, LIMIT)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def page(self, name: str, size: tuple[int, int], mobile: bool) -> "Page":
        context = (await self.call("Target.createBrowserContext"))["browserContextId"]
        target = (await self.call("Target.createTarget", url="about:blank", browserContextId=context))["targetId"]
        session = (await self.call("Target.attachToTarget", targetId=target, flatten=True))["sessionId"]
        page = Page(self, session, name, size)
        await page.call("Page.enable")
        await page.call("Runtime.enable")
        await page.call("Emulation.setDeviceMetricsOverride", width=size[0], height=size[1], deviceScaleFactor=1,
                        mobile=mobile)
        if mobile:
            await page.call("Emulation.setTouchEmulationEnabled", enabled=True)
        return page

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


class Page:
    """One page (one person's device): script it, wait on it, photograph it."""

    def __init__(self, browser: Chromium, session: str, name: str, size: tuple[int, int]) -> None:
        self.browser, self.session, self.name, self.size = browser, session, name, size

    async def call(self, method: str, **params):
        return await self.browser.call(method, self.session, **params)

    async def js(self, expression: str):
        reply = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise AssertionError(f"{self.name}: {expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def until(self, expression: str, what: str, shots: Path | None = None):
        deadline = time.monotonic() + LIMIT
        while time.monotonic() < deadline:
            value = await self.js(expression)
            if value:
                return value
            await asyncio.sleep(0.05)
        if shots is not None:
            await self.shot(shots, "failure")
        text = await self.js("document.body.innerText")
        raise AssertionError(f"{self.name}: timed out waiting for {what}; the page shows {text[-1500:]!r}")

    async def view(self, name: str, shots: Path | None = None) -> None:
        await self.until(f"(function(){{var e=document.getElementById({name!r}); return !!e && !e.hidden;}})()",
                         f"the {name} view", shots)

    async def go(self, url: str) -> None:
        await self.call("Page.navigate", url=url)

    async def tap(self, selector: str) -> None:
        assert await self.js(f"(function(){{var e=document.querySelector({selector!r}); if(!e) return false; "
                             "e.scrollIntoView(); e.click(); return true;})()"), f"{self.name}: no {selector}"

    async def press(self, key: str) -> None:
        code, text = KEYS[key]
        common = {"key": " " if key == "Space" else key, "code": key, "windowsVirtualKeyCode": code,
                  "nativeVirtualKeyCode": code}
        await self.call("Input.dispatchKeyEvent", type="keyDown", text=text, **common)
        await self.call("Input.dispatchKeyEvent", type="keyUp", **common)

    async def type(self, text: str) -> None:
        await self.call("Input.insertText", text=text)

    async def focused(self) -> str:
        return await self.js("document.activeElement ? (document.activeElement.id || document.activeElement.name"
                             " || document.activeElement.tagName) : ''")

    async def shot(self, folder: Path, stage: str) -> Path:
        shot = await self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path = folder / f"{stage}-{self.name}-{self.size[0]}x{self.size[1]}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        kept = os.environ.get("RIDGE_SHOTS")
        if kept:
            Path(kept).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(kept) / path.name)
        return path


async def until(check, what: str):
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def _api(call):
    return await asyncio.to_thread(call)


async def _join_by_taps(page: Page, url: str, name: str) -> None:
    await page.go(url + "/")
    await page.view("join")
    await page.js(f"document.getElementById('pin').value='4321'; document.getElementById('name').value={name!r}")
    await page.tap("#join-button")
    await page.view("lobby")


async def _checked(page: Page, part: str, value: str) -> bool:
    selector = json.dumps(f"input[name={part!r}][value={value!r}]")
    return await page.js(f"document.querySelector({selector}).checked")


async def _pick(page: Page, part: str, value: str) -> None:
    await page.tap(f"input[name={part!r}][value={value!r}]")


@pytest.mark.slow
async def test_phones_and_a_laptop_play_through_a_reload_and_a_host_restart(tmp_path):
    shots = tmp_path / "shots"
    shots.mkdir()
    made = generator.generate(5, 1, None)
    right = {k: v if isinstance(v, dict) else str(v) for k, v in right_prediction(made[0]).items()}
    host = ScreenHost(tmp_path / "host", count=1, seconds=600, size=(120, 40))
    browser = Chromium(tmp_path / "chromium-profile")
    try:
        host.start()
        watcher = LobbyClient(host.url)
        await _api(lambda: watcher.join("4321", "watcher"))
        await browser.start()
        ana = await browser.page("ana", PHONE, mobile=True)
        bo = await browser.page("bo", PHONE, mobile=True)
        cy = await browser.page("cy", LAPTOP, mobile=False)

        # Joining: the phones tap, the laptop types and presses Enter.
        await _join_by_taps(ana, host.url, "ana")
        await _join_by_taps(bo, host.url, "bo")
        await cy.go(host.url + "/")
        await cy.view("join")
        assert await cy.focused() == "pin"
        await cy.type("4321")
        await cy.press("Tab")
        await cy.type("cy")
        await cy.press("Enter")
        await cy.view("lobby")
        taken = await ana.js("fetch('/api/join',{method:'POST',headers:{'Content-Type':'application/json'},"
                             "body:JSON.stringify({pin:'4321',name:'\u0410na'})}).then(r=>r.status)")
        assert taken == 409  # 'Аna' with a Cyrillic А is ana
        await ana.shot(shots, "1-lobby")
        await cy.shot(shots, "1-lobby")

        host.press("s")  # the facilitator starts the match
        for page in (ana, bo, cy):
            await page.view("question")
        assert "Question 1 of 1" in await ana.js("document.getElementById('q-meta').textContent")
        width = await ana.js("document.documentElement.scrollWidth")
        assert width <= PHONE[0], f"the phone page scrolls sideways ({width} px)"
        heights = await ana.js("Array.from(document.querySelectorAll('.choice')).map(e=>e.getBoundingClientRect().height)")
        assert heights and min(heights) >= 44, heights  # tap-sized choices
        order = await ana.js("Array.from(document.querySelectorAll('input[name=bottleneck]')).map(e=>e.value)")
        assert order == await _api(lambda: watcher.state()["puzzle"]["ask"]["bottleneck"])  # the fixed order
        await ana.shot(shots, "2-question")
        await cy.shot(shots, "2-question")

        # ana answers every part by tapping, and confirms the lock-in.
        for part, key in (("bottleneck", "bottleneck"), ("lever", "lever"), ("gain", "gain_band"), ("reason", "reason"),
                          ("certainty", "certainty")):
            await _pick(ana, part, right[key])
        for est in right["estimates"]:
            await ana.js(f"document.getElementById('est-{est}').value='{right['estimates'][est]}'")
        await ana.tap("#lock")
        await ana.until("!document.getElementById('confirm').hidden", "the lock-in question")
        await ana.shot(shots, "3-confirm")
        await ana.tap("#confirm-yes")
        await ana.view("locked")
        await ana.shot(shots, "4-locked")

        # cy answers with the keyboard only: arrows pick within a part, Tab moves on.
        await cy.js("document.getElementById('bottleneck-0').focus()")
        for _ in range(4):  # bottleneck, lever, gain, reason: pick the second option of each
            await cy.press("ArrowDown")
            await cy.press("Tab")
        for _ in right["estimates"]:
            await cy.type("1000")
            await cy.press("Tab")
        await cy.press("ArrowDown")  # certainty
        await cy.press("Tab")
        assert await cy.focused() == "lock"
        await cy.press("Enter")
        await cy.until("document.activeElement && document.activeElement.id === 'confirm-yes'", "the confirm button")
        await cy.press("Enter")
        await cy.view("locked")
        await cy.shot(shots, "4-locked")

        # bo fills in half, then reloads: the same player comes back with the half-filled answer.
        await _pick(bo, "bottleneck", right["bottleneck"])
        await _pick(bo, "lever", right["lever"])
        await bo.shot(shots, "5-half-filled")
        await bo.call("Page.reload")
        await bo.view("question")
        assert (await bo.js("document.getElementById('who').textContent")).startswith("bo ·")
        assert await _checked(bo, "bottleneck", right["bottleneck"]) and await _checked(bo, "lever", right["lever"])
        state = await _api(watcher.state)
        assert state["players"] == 4 and state["locked"] == 2  # no new player for the reload

        # The host is killed mid-question and started again: every page carries on.
        host.kill()
        await bo.until("document.getElementById('link').textContent.indexOf('reconnecting') >= 0", "the lost host")
        await bo.shot(shots, "6-host-gone")
        host.start()
        await bo.until("document.getElementById('link').textContent.indexOf('connected') >= 0", "the host again")
        await ana.view("locked")
        await cy.view("locked")
        assert await _checked(bo, "lever", right["lever"])
        for part, key in (("gain", "gain_band"), ("reason", "reason"), ("certainty", "certainty")):
            await _pick(bo, part, right[key])
        for est in right["estimates"]:
            await bo.js(f"document.getElementById('est-{est}').value='{right['estimates'][est]}'")
        board = await _api(watcher.board)
        assert all(r["points"] == 0 for r in board["players"])  # nothing moves while the question is open
        await bo.tap("#lock")
        await bo.until("!document.getElementById('confirm').hidden", "the lock-in question")
        await bo.tap("#confirm-yes")
        await bo.view("locked")
        await _api(lambda: watcher.answer(0, right))  # the last one in: the question closes

        for page in (ana, bo, cy):
            await page.view("reveal")
        verdict = await ana.js("document.getElementById('verdict').textContent")
        assert verdict.startswith("✓ CLEARED"), verdict
        assert await ana.js("document.querySelectorAll('#parts-judged li').length") >= 4
        await ana.shot(shots, "7-reveal")
        await cy.shot(shots, "7-reveal")

        deadline = time.monotonic() + LIMIT
        while not await _api(lambda: _done(watcher)):  # "n" waits until the answer has been up a moment
            assert time.monotonic() < deadline, "the host never went on to the podium"
            host.press("n")
            for _ in range(20):
                if await _api(lambda: _done(watcher)):
                    break
                await asyncio.sleep(0.05)
        for page in (ana, bo, cy):
            await page.view("done")
        podium = await ana.js("document.getElementById('podium').textContent")
        assert "1st" in podium
        await ana.shot(shots, "8-podium")
        await cy.shot(shots, "8-podium")
        assert not browser.errors, browser.errors
    finally:
        await browser.stop()
        host.stop()


def _done(watcher) -> bool:
    try:
        return watcher.state()["phase"] == "done"
    except Exception:  # noqa: BLE001 - the host may be busy writing the report
        return False
