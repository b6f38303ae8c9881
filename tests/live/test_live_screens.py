"""The host's screen through a whole match, and the player app through a hosted match over
loopback HTTP (Pilot; each room in-process on a fake clock, so no phase can end before the test has
looked at it)."""
from __future__ import annotations

import re
import time

from app.live.host_app import HostApp
from app import labels
from saves.room import Room, Settings
from app.live.web import Site
from puzzles import generator
from helpers.live import Clock, right_prediction, wrong_prediction
from helpers.pilot import settled

LIMIT = 60.0


def _answer(room, token, index, prediction):
    body = {"index": index, "bottleneck": prediction["bottleneck"], "lever": prediction["lever"],
            "gain": prediction["gain_band"], "reason": prediction["reason"], "certainty": prediction["certainty"],
            "estimates": prediction["estimates"]}
    return room.answer(token, body)


def _text(app, wid: str) -> str:
    return str(app.query_one(wid).render())


async def _until(pilot, check, what: str):
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def test_the_host_asks_whom_to_remove_and_escape_removes_nobody(tmp_path):
    room = Room(Settings(seed=5, count=2, pin="4321", seconds=60), tmp_path, labels, clock=Clock(),
                made=generator.generate(5, 2, None))
    app = HostApp(room, Site("127.0.0.1", 8300, "http://127.0.0.1:8300", 50, ["true"]), serve=False)
    async with app.run_test(size=(120, 40)) as pilot:
        for name in ("ana", "bo"):
            room.join("4321", name)
        await pilot.press("r")
        await _until(pilot, lambda: app.screen.query("#remove-name"), "the question")
        await pilot.press("escape")
        await _until(pilot, lambda: not app.screen.query("#remove-name"), "the question to close")
        await pilot.press("r")
        await _until(pilot, lambda: app.screen.query("#remove-name"), "the question again")
        await pilot.press(*"cy", "enter")
        await _until(pilot, lambda: not app.screen.query("#remove-name") and all(w.is_finished for w in app.workers),
                     "the answer to be acted on")
        assert len(room.active()) == 2  # nobody called cy: nobody removed
        await pilot.press("r")
        await _until(pilot, lambda: app.screen.query("#remove-name"), "the question a third time")
        await pilot.press(*"bo", "enter")
        await _until(pilot, lambda: len(room.active()) == 1, "bo to be removed")


async def test_the_host_screen_runs_a_whole_match(tmp_path):
    clock = Clock()
    made = generator.generate(5, 2, None)
    room = Room(Settings(seed=5, count=2, pin="4321", seconds=60), tmp_path, labels, clock=clock, made=made)
    site = Site("127.0.0.1", 8300, "http://127.0.0.1:8300", 50, ["true"])
    app = HostApp(room, site, serve=False)
    async with app.run_test(size=(120, 40)) as pilot:
        assert "http://127.0.0.1:8300" in _text(app, "#join-url") and app.query_one("#pin-digits").value == "4321"
        assert app.query_one("#join-panel").display and "█" in _text(app, "#qr")  # the QR code, drawn
        tokens = {name: room.join("4321", name) for name in ("ana", "bo", "cy", "troll")}
        app.refresh_view()
        assert "ana" in _text(app, "#left-text") and "4 joined" in _text(app, "#phase")

        await pilot.press("r")
        await pilot.press(*"troll", "enter")
        await _until(pilot, lambda: len(room.active()) == 3, "troll to be removed")
        await pilot.press("l")
        assert room.room_locked and "room locked" in _text(app, "#phase")
        await pilot.press("l")

        await pilot.press("s")
        assert room.phase == "question" and "Question 1 of 2" in _text(app, "#phase")
        assert not app.query_one("#join-panel").display and "4321" in _text(app, "#join-line")
        card = room.cards[0]
        assert card["card"][0]["value"][:20] in _text(app, "#left-text")  # the whole card on the projector
        _answer(room, tokens["ana"], 0, right_prediction(made[0]))
        app.refresh_view()
        assert "1 of 3 locked in" in _text(app, "#phase") and app.query_one("#locked-digits").value == "1/3"
        shown = _text(app, "#left-text") + _text(app, "#right-text") + _text(app, "#phase")
        # who answered and the spread wait for the close ("ana" as a name: a card may say "analyst")
        assert not re.search(r"\bana\b", shown) and "█" not in shown
        await pilot.press("p")
        assert room.paused and "paused" in _text(app, "#clock-note")
        clock.now += 600
        app.refresh_view()
        assert room.phase == "question"  # a paused question does not run out
        await pilot.press("p")
        assert not room.paused
        _answer(room, tokens["bo"], 0, wrong_prediction(made[0]))
        await pilot.press("n")  # close it now: cy did not answer
        assert room.phase == "closed"
        assert "Bottleneck" in _text(app, "#left-text") and "█" in _text(app, "#left-text")
        assert "✓ cleared (1): ana" in _text(app, "#right-text") and "no answer (1): cy" in _text(app, "#right-text")

        await pilot.press("n")  # too soon: the answer has just gone up
        assert room.phase == "closed"
        clock.now += 5
        await pilot.press("n")
        assert room.phase == "question" and room.index == 1
        for name in ("ana", "bo", "cy"):
            _answer(room, tokens[name], 1, right_prediction(made[1]) if name != "bo" else wrong_prediction(made[1]))
        app.refresh_view()
        assert room.phase == "closed"  # everyone locked in
        clock.now += 5
        await pilot.press("n")
        assert room.phase == "done" and "1st  ana" in _text(app, "#left-text")
        assert app.exported and all(p.exists() for p in app.exported)  # the report writes itself at the end
        assert str(app.exported[0]) in " ".join(_text(app, "#phase").split())
        await pilot.press("e")
        assert "ana" in app.exported[0].read_text(encoding="utf-8")
    room.close()


async def test_the_player_app_plays_a_hosted_question(tmp_path):
    """A self-running room served in this test's loop on a fake clock. It once ran as a host
    process whose reveal lasted half a second of real time: on a loaded machine the app's poll
    could miss that window (going from the question straight to the podium), or the test's own
    look at the screen could, and the wait for the reveal timed out. Here the reveal stays up until
    the test moves the clock on, so every step is one the test takes."""
    from app.commands.host import listen
    from app.live.player import PlayerApp
    from app.live.server import build_app, start

    clock = Clock()
    made = generator.generate(5, 1, None)
    room = Room(Settings(seed=5, count=1, pin="4321", seconds=120, lobby_seconds=0, reveal_seconds=8, auto=True),
                tmp_path, labels, clock=clock, made=made)
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    runner = await start(build_app(room, Site("127.0.0.1", port, url, 50, ["true"])), sock)
    try:
        wrong = PlayerApp(url, pin="9999", name="ana", poll=0.1)
        async with wrong.run_test(size=(100, 40)) as pilot:
            await _until(pilot, lambda: "wrong pin" in _text(wrong, "#join-error"), "the wrong pin to be refused")

        app = PlayerApp(url, pin="4321", name="ana", poll=0.1)
        async with app.run_test(size=(100, 40)) as pilot:
            await _until(pilot, lambda: app.view == ("question", 0), "the question")
            key = right_prediction(made[0])
            from app.widgets.form import PredictionForm

            form = app.query_one(PredictionForm)
            for wid, value in (("bottleneck", key["bottleneck"]), ("lever", key["lever"]),
                               ("band", key["gain_band"]), ("reason", key["reason"])):
                app.query_one(f"#{wid}").value = value
            for est, value in key["estimates"].items():
                app.query_one(f"#est-{est}").value = repr(value)
            app.query_one("#certainty").value = "high"
            await settled(pilot)
            assert not form.missing()
            app.query_one("#lock-in").focus()
            await pilot.press("enter")
            await _until(pilot, lambda: app.view == ("closed", 0) and app.query("#verdict"), "the reveal")
            assert "CLEARED" in _text(app, "#verdict") and "ana" in _text(app, "#board")
            clock.now += 9  # the reveal has been up its 8 s: the room goes on to the podium
            # the view turns to the podium while a poll may still be mounting it: wait for the podium itself
            await _until(pilot, lambda: app.view == ("done", 0) and app.query("#podium")
                         and "1st  ana" in _text(app, "#podium"), "the podium with ana first")
    finally:
        await runner.cleanup()
        room.close()
        sock.close()


async def test_the_host_screen_serves_the_lobby_api_itself(tmp_path):
    import aiohttp

    from app.commands.host import listen

    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    room = Room(Settings(seed=5, count=1, pin="4321", seconds=60), tmp_path, labels, made=generator.generate(5, 1, None))
    site = Site("127.0.0.1", port, f"http://127.0.0.1:{port}", 50, ["true"])
    app = HostApp(room, site, sock)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            async with aiohttp.ClientSession() as session:
                async with session.post(f"http://127.0.0.1:{port}/api/join", json={"pin": "4321", "name": "ana"}) as r:
                    assert r.status == 200
            await _until(pilot, lambda: "ana" in _text(app, "#left-text"), "ana in the lobby list")
    finally:
        room.close()
        sock.close()


async def test_a_player_whose_time_runs_out_is_locked_at_zero(tmp_path):
    """The room runs in this test's loop on a fake clock, so the question's end is a step the test
    takes, not a race with the machine's speed."""
    from app.commands.host import listen
    from app.live.player import PlayerApp
    from app.live.server import build_app, start

    clock = Clock()
    made = generator.generate(5, 1, None)
    room = Room(Settings(seed=5, count=1, pin="4321", seconds=30), tmp_path, labels, clock=clock, made=made)
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    runner = await start(build_app(room, Site("127.0.0.1", port, f"http://127.0.0.1:{port}", 50, ["true"])), sock)
    try:
        app = PlayerApp(f"http://127.0.0.1:{port}", pin="4321", name="slow", poll=0.1)
        async with app.run_test(size=(100, 40)) as pilot:
            await _until(pilot, lambda: room.active(), "the player to join")
            room.start()
            await _until(pilot, lambda: app.view == ("question", 0), "the question")
            app.query_one("#bottleneck").value = right_prediction(made[0])["bottleneck"]
            await pilot.pause()
            clock.now += 31  # the host's clock runs out
            await _until(pilot, lambda: app.view == ("closed", 0) and app.query("#verdict"), "the reveal")
            await _until(pilot, lambda: "LATE" in _text(app, "#verdict"), "the late lock in the reveal")
            assert "0 points" in _text(app, "#verdict")
        slow = next(p for p in room.reveal(0)["players"] if p["name"] == "slow")
        assert slow["late"] and slow["points"] == 0
    finally:
        await runner.cleanup()
        room.close()
        sock.close()


async def test_a_poll_that_lands_while_the_player_app_closes_changes_nothing():
    """A poll answered after the app has begun closing (its stage already gone) must not raise: it
    once ended a finished match with NoMatches('#stage') from the poll worker."""
    from textual.widgets import Static

    from app.live.player import PlayerApp

    app = PlayerApp("http://127.0.0.1:9", poll=60)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        await app.query_one("#stage").remove()
        assert await app.set_stage(("done", 0), Static("the podium")) is False
        assert not app.query("#stage")
