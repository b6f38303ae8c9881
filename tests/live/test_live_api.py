"""`ridge host --headless` from outside, on loopback: the lobby line, refusals, thirty players,
answers locked once, keys hidden until the close, the board, and a SIGKILL mid-question."""
from __future__ import annotations

import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from puzzles import generator
from helpers.live import Host, LobbyClient, refused, right_prediction, wait_for, wrong_prediction

PLAYERS = 30


@pytest.fixture
def made():
    return generator.generate(5, 3, None)


def _raw(url: str, path: str, body=None, headers=None) -> tuple[int, dict]:
    request = urllib.request.Request(url + path, data=None if body is None else json.dumps(body).encode(),
                                     method="POST" if body is not None else "GET", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _join_all(url: str, names) -> list[LobbyClient]:
    def one(name):
        client = LobbyClient(url)
        client.join("4321", name)
        return client

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(one, names))


def _phase(client, phase, index):
    state = client.state()
    return state if state["phase"] == phase and state["index"] == index else None


def test_a_whole_match_from_outside(tmp_path, made):
    # everyone locks in long before the question's 600 s: no race with the clock. The lobby and the
    # reveal are short (a setting of the room, never a sleep): the waits below are on conditions
    host = Host(tmp_path, seconds=600, lobby_seconds=0.3, reveal_seconds=0.1)
    try:
        assert host.start() == f"lobby http://127.0.0.1:{host.port} pin 4321"
        status, body = _raw(host.url, "/api/join", {"pin": "1111", "name": "mallory"})
        assert status == 403 and "wrong pin" in body["error"]
        status, body = _raw(host.url, "/api/join", {"pin": "4321", "name": "eve"}, {"Origin": "http://evil.example"})
        assert status == 403 and "another web page" in body["error"]
        with urllib.request.urlopen(host.url + "/", timeout=10) as page:
            assert page.status == 200 and b"/static/app.js" in page.read()

        names = [f"player{i:02d}" for i in range(PLAYERS)]
        players = _join_all(host.url, names)
        status, body = _raw(host.url, "/api/join", {"pin": "4321", "name": "PLAYER07"})
        assert status == 409 and "taken" in body["error"]
        by_name = dict(zip(names, players))
        right = set(names[:15])

        for index in range(3):
            state = wait_for(lambda: _phase(players[0], "question", index), f"question {index} to open")
            text = json.dumps(state)
            assert "answer" not in state["puzzle"] and "gen-s5" not in text and made[index].key.deciding not in text
            assert refused(lambda: players[0].reveal(index)).status == 409
            for name, client in by_name.items():
                pred = right_prediction(made[index]) if name in right else wrong_prediction(made[index])
                assert client.answer(index, pred) == {"accepted": True, "index": index}
                again = refused(lambda: client.answer(index, pred))
                assert again.status == 409 and "already" in again.message
            reveal = wait_for(lambda: _try_reveal(players[0], index), f"question {index} to close")
            assert len(reveal["players"]) == PLAYERS
            assert reveal["answer"]["bottleneck"] == right_prediction(made[index])["bottleneck"]
            late = refused(lambda: players[0].answer(index, right_prediction(made[index])))
            assert late.status == 409

        host.wait_line(lambda line: line.startswith("match done"))
        board = players[0].board()["players"]
        assert len(board) == PLAYERS and {r["name"] for r in board} == set(names)
        worst_right = min(r["points"] for r in board if r["name"] in right)
        best_wrong = max(r["points"] for r in board if r["name"] not in right)
        assert worst_right > best_wrong
        assert board == sorted(board, key=lambda r: -r["points"])
        results = host.wait_line(lambda line: line.startswith("results "))
        csv_path = results.split()[1]
        assert open(csv_path, encoding="utf-8").read().count("\n") == PLAYERS + 1
    finally:
        host.stop()
    assert "Traceback" not in getattr(host, "stderr", "")


def _try_reveal(client, index):
    try:
        return client.reveal(index)
    except Exception:  # noqa: BLE001 - 409 until it closes
        return None


def test_a_host_killed_mid_question_resumes_it(tmp_path, made):
    host = Host(tmp_path, seconds=600, lobby_seconds=0.3)
    try:
        host.start()
        names = [f"p{i}" for i in range(6)]
        players = _join_all(host.url, names)
        wait_for(lambda: _phase(players[0], "question", 0), "the first question")
        for client in players[:3]:
            client.answer(0, right_prediction(made[0]))
        host.kill()

        host.start()
        host.wait_line(lambda line: line.startswith("resumed "))
        state = players[0].state()
        assert state["phase"] == "question" and state["index"] == 0 and state["locked"] == 3
        assert refused(lambda: players[1].answer(0, right_prediction(made[0]))).status == 409
        for client in players[3:]:
            client.answer(0, wrong_prediction(made[0]))
        reveal = wait_for(lambda: _try_reveal(players[0], 0), "the resumed question to close")
        outcomes = {p["name"]: p["outcome"] for p in reveal["players"]}
        assert set(outcomes) == set(names) and all(outcomes[n] == "cleared" for n in names[:3])
        assert all(outcomes[n] == "missed" for n in names[3:])
    finally:
        host.stop()


def test_bad_commands_are_one_line(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "app", "host", "--seed", "5", "--count", "3", "--pin", "12",
                           "--headless", "--save-dir", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "--pin" in done.stderr
