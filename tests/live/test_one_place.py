"""Things that exist once: the lobby client's refusal is the room's own refusal type, so a caller
catches one type with one status and one line, whichever side said no."""
from __future__ import annotations

from app.live.client import LobbyRefused
from puzzles.live import LiveRefusal


def test_the_clients_refusal_is_the_rooms():
    refused = LobbyRefused(409, "that name is taken")
    assert isinstance(refused, LiveRefusal)
    assert (refused.status, refused.message, str(refused)) == (409, "that name is taken", "that name is taken")
