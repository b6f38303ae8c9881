"""A small client for the lobby API, over plain HTTP with the standard library: the player app
(in a browser or a terminal) and tests use it. Each call returns the JSON body, or raises
LobbyRefused with the host's one-line reason, or LobbyUnreachable when the host cannot be reached
(the host may be restarting: callers retry)."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from puzzles.live import LiveRefusal

TOKEN_HEADER = "X-Ridge-Token"


class LobbyRefused(LiveRefusal):
    """The lobby turned a request down: the room's refusal (its status and one line) as the reply
    carried it."""


class LobbyUnreachable(Exception):
    pass


MAX_ANSWER = 4 << 20  # a lobby's answers are a few KiB: a host that sends more is not a Ridge host


def _parse(raw: bytes) -> Any:
    """A host's JSON answer, capped in size and depth (the client may have been pointed anywhere)."""
    from engine.bounds import MAX_DEPTH, json_depth

    if len(raw) > MAX_ANSWER:
        raise ValueError("the answer is too large")
    text = raw.decode("utf-8")
    if json_depth(text) > MAX_DEPTH:
        raise ValueError("the answer is nested too deeply")
    return json.loads(text)


class LobbyClient:
    def __init__(self, url: str, token: str | None = None, timeout: float = 10.0) -> None:
        url = url.strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            url = "http://" + url
        self.url = url
        self.token = token
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header(TOKEN_HEADER, self.token)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return _parse(response.read(MAX_ANSWER + 1))
        except urllib.error.HTTPError as error:
            try:
                message = str(_parse(error.read(MAX_ANSWER + 1)).get("error") or error)
            except (ValueError, AttributeError, RecursionError):
                message = f"the host answered {error.code}"
            from engine.bounds import shown

            raise LobbyRefused(error.code, shown(message, 300)) from None
        except (urllib.error.URLError, OSError, ValueError, RecursionError) as error:
            reason = getattr(error, "reason", error)
            raise LobbyUnreachable(f"cannot reach the host at {self.url} ({reason})") from None

    def join(self, pin: str, name: str, seat: str | None = None) -> str:
        body = {"pin": pin, "name": name}
        if seat:
            body["seat"] = seat
        self.token = self._call("POST", "/api/join", body)["token"]
        return self.token

    def state(self) -> dict:
        return self._call("GET", "/api/state")

    def answer(self, index: int, prediction: dict) -> dict:
        body = {"index": index, "bottleneck": prediction.get("bottleneck", ""), "lever": prediction.get("lever", ""),
                "gain": prediction.get("gain_band", ""), "reason": prediction.get("reason", ""),
                "estimates": dict(prediction.get("estimates") or {}), "certainty": prediction.get("certainty", "")}
        return self._call("POST", "/api/answer", body)

    def reveal(self, index: int) -> dict:
        return self._call("GET", f"/api/reveal?index={int(index)}")

    def board(self) -> dict:
        return self._call("GET", "/api/board")
