"""The lobby API under hostile bodies: nesting deep enough to overflow the JSON parser, NaN and
Infinity (not JSON, though Python reads them), oversized and non-UTF-8 bodies each get a 4xx
answer with one message, and the host keeps serving."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from helpers.live import Host

BODIES = {
    "deep arrays": b"[" * 8000 + b"]" * 8000,
    "deep objects": b'{"a":' * 3000 + b"1" + b"}" * 3000,
    "NaN pin": b'{"pin": NaN, "name": "eve"}',
    "Infinity in an answer": b'{"index": 0, "estimates": {"intensity": Infinity}}',
    "not UTF-8": b'{"pin": "\xff"}',
    "too large": b'{"name": "' + b"x" * 20_000 + b'"}',
}


def _post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url + "/api/join", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_hostile_bodies_get_a_clear_refusal_and_the_host_keeps_serving(tmp_path):
    host = Host(tmp_path)
    host.start()
    try:
        for name, body in BODIES.items():
            status, answer = _post(host.url, body)
            assert 400 <= status < 500, (name, status, answer)
            assert isinstance(answer.get("error"), str) and "\n" not in answer["error"], (name, answer)
        status, answer = _post(host.url, json.dumps({"pin": "4321", "name": "ada"}).encode())
        assert status == 200 and answer.get("token"), answer
    finally:
        host.stop()
