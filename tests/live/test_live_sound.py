"""The live host from outside, on loopback, against what broke a room before: one address's wrong
pins, half-sent and oversized requests, malformed queries, an echoed Host header, a look-alike
name, a board or a spread that gives the open question away, and an endpoint that starts a
process. Each check waits on a condition (a reply, a closed socket), never on a fixed sleep."""
from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest

from puzzles import generator
from helpers.live import LIMIT, Host, LobbyClient, right_prediction, wait_for, wrong_prediction


def _request(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
             source: str = "127.0.0.1", timeout: float = 10.0) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def _join(port: int, name: str, pin: str = "4321", source: str = "127.0.0.1", timeout: float = 10.0):
    return _request(port, "POST", "/api/join", json.dumps({"pin": pin, "name": name}).encode(), source=source,
                    timeout=timeout)


@pytest.fixture
def host(tmp_path):
    running = Host(tmp_path, count=2, seconds=600, lobby_seconds=3600)
    running.start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def lobby(tmp_path_factory):
    """One open lobby for the checks that only need a room to ask (a process start costs ~0.3 s of
    CPU each): each joins under its own name, and none of them locks, fills or rate-limits the
    room (those checks start their own host)."""
    running = Host(tmp_path_factory.mktemp("lobby"), count=2, seconds=600, lobby_seconds=3600)
    running.start()
    yield running
    running.stop()


def _loopback_two_works() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 9), timeout=0.01, source_address=("127.0.0.2", 0)):
            pass
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _loopback_two_works(), reason="this system cannot send from 127.0.0.2")
def test_wrong_pins_from_one_address_do_not_stop_another(host):
    for _ in range(25):
        status, _, body = _join(host.port, "mallory", pin="0000")
        assert status in (403, 429), body
    status, _, body = _join(host.port, "mallory", pin="0000")
    assert status == 429 and b"wait ten minutes" in body
    status, _, body = _join(host.port, "ana", source="127.0.0.2")
    assert status == 200 and "token" in json.loads(body)


@pytest.fixture
def quick_host(tmp_path):
    """A host whose request deadlines are 2 s instead of 15 and 5: what they do is the same, and
    the test that waits for them to act waits 2 s, not 15 (nor 5 plus aiohttp's 10 s lingering
    close after a 408, which the host now skips)."""
    running = Host(tmp_path, count=2, seconds=600, lobby_seconds=3600,
                   extra=("--header-seconds", "2", "--body-seconds", "2"))
    running.start()
    yield running
    running.stop()


def test_half_sent_requests_never_hold_the_room(quick_host):
    host = quick_host
    held = []
    for i in range(300):
        s = socket.create_connection(("127.0.0.1", host.port), timeout=LIMIT)
        if i % 2:
            s.sendall(b"POST /api/join HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n")  # headers never end
        else:
            s.sendall(b"POST /api/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 200\r\n\r\n{\"pin\"")  # the body never ends
        held.append(s)
    try:
        status, _, _ = _join(host.port, "ana", timeout=2.0)  # a new player gets in at once
        assert status == 200
        for s in held:  # and the host lets every half-sent request go (a header or body deadline)
            s.settimeout(LIMIT)
            try:
                while s.recv(4096):
                    pass
            except ConnectionResetError:
                pass
    finally:
        for s in held:
            s.close()


def test_a_one_mebibyte_body_is_refused_at_once(lobby):
    host = lobby
    big = b'{"pin": "4321", "name": "' + b"a" * (1 << 20) + b'"}'
    status, _, body = _request(host.port, "POST", "/api/join", big)
    assert status == 413 and "too large" in json.loads(body)["error"]
    token = json.loads(_join(host.port, "mebi")[2])["token"]
    status, _, body = _request(host.port, "POST", "/api/answer", big, headers={"X-Ridge-Token": token})
    assert status == 413


MALFORMED = ["index=%C2%B2", "index=" + "9" * 5000, "index=-1", "index=", "index=1.0", "index=%ZZ", "index=0x1"]


@pytest.mark.parametrize("query", MALFORMED)
def test_a_malformed_query_is_a_400_in_one_line(lobby, query):
    host = lobby
    status, _, body = _join(host.port, f"query {MALFORMED.index(query)}")
    assert status == 200, body
    token = json.loads(body)["token"]
    status, headers, body = _request(host.port, "GET", "/api/reveal?" + query, headers={"X-Ridge-Token": token})
    assert status == 400, body[:200]
    message = json.loads(body)["error"]
    assert "\n" not in message and len(message) <= 300 and "Traceback" not in message


def test_nothing_from_a_request_is_echoed_into_a_page(lobby):
    host = lobby
    evil = "<script>alert(1)</script>"
    for path in ("/", "/static/app.js", "/nothing", "/api/state"):
        status, headers, body = _request(host.port, "GET", path, headers={"Host": evil, "Origin": f"http://{evil}"})
        assert b"<script>alert" not in body
        assert headers.get("X-Content-Type-Options") == "nosniff"
    status, _, body = _request(host.port, "POST", "/api/join", b'{"pin": "4321", "name": "<b>x</b>"}')
    assert status == 400 and b"<b>" not in body


def test_a_confusable_name_is_taken(lobby):
    host = lobby   # the only test on it that joins a name with the key "ana"
    assert _join(host.port, "Ana")[0] == 200
    for twin in ("\u0410na", "ANA", "Ａｎａ"):  # Cyrillic А, capitals, full-width letters
        status, _, body = _join(host.port, twin)
        assert status == 409 and "taken" in json.loads(body)["error"]


def test_nothing_about_an_open_question_leaves_the_host(tmp_path):
    made = generator.generate(5, 2, None)
    host = Host(tmp_path, count=2, seconds=600, lobby_seconds=0)
    try:
        host.start()
        ana, bo, cy = LobbyClient(host.url), LobbyClient(host.url), LobbyClient(host.url)
        for client, name in ((ana, "ana"), (bo, "bo"), (cy, "cy")):
            client.join("4321", name)
        wait_for(lambda: ana.state()["phase"] == "question", "the first question")
        ana.answer(0, right_prediction(made[0]))
        bo.answer(0, wrong_prediction(made[0]))
        seen = [json.dumps(ana.state()), json.dumps(ana.board()), json.dumps(bo.board())]
        seen.append(_first_event(host.port, cy.token))
        text = " ".join(seen)
        assert "spread" not in text and "outcome" not in text and '"points": 0' in json.dumps(ana.board())
        assert all(r["points"] == 0 and r["answered"] == 0 for r in ana.board()["players"])
        assert made[0].key.deciding not in text
        assert _request(host.port, "GET", "/api/reveal?index=0", headers={"X-Ridge-Token": ana.token})[0] == 409
        cy.answer(0, wrong_prediction(made[0]))  # the last one in: it closes
        reveal = wait_for(lambda: _reveal(ana, 0), "the close")
        assert "spread" in reveal and {p["name"] for p in reveal["players"]} == {"ana", "bo", "cy"}
        assert max(r["points"] for r in ana.board()["players"]) > 0
    finally:
        host.stop()


def _reveal(client, index):
    try:
        return client.reveal(index)
    except Exception:  # noqa: BLE001 - 409 until it closes
        return None


def _first_event(port: int, token: str) -> str:
    """The first `state` event the player page would receive."""
    s = socket.create_connection(("127.0.0.1", port), timeout=LIMIT)
    try:
        s.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Ridge-Token: {token}\r\n\r\n".encode())
        got = b""
        while b"event: state" not in got or not got.rstrip(b"\r\n").endswith(b"}"):
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
        return got.decode("utf-8", "replace")
    finally:
        s.close()


def test_no_endpoint_starts_a_process(lobby):
    host = lobby
    token = json.loads(_join(host.port, "proc")[2])["token"]
    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    for path in ("/", "/ws", "/ws/" + "ab" * 16, "/static/js/textual.js", "/static/app.js", "/api/state"):
        status, _, _ = _request(host.port, "GET", path, headers={**upgrade, "X-Ridge-Token": token})
        assert status in (200, 404), path
    _first_event(host.port, token)
    children = []
    for task in Path(f"/proc/{host.proc.pid}/task").iterdir():
        try:
            children += (task / "children").read_text().split()
        except OSError:
            pass
    assert children == []


def test_a_full_room_says_so(tmp_path):
    host = Host(tmp_path, count=1, seconds=600, lobby_seconds=3600, extra=("--max-players", "2"))
    try:
        host.start()
        assert _join(host.port, "ana")[0] == 200 and _join(host.port, "bo")[0] == 200
        status, _, body = _join(host.port, "cy")
        assert status == 503 and "the room is full" in json.loads(body)["error"]
    finally:
        host.stop()
