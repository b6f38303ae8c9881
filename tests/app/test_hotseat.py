"""Hot-seat through Pilot at 80×24: three players lock in privately in turn, then one shared
reveal and a running leaderboard; each answer lands in its player's own save."""
from __future__ import annotations

import datetime as dt

from app.widgets.picker import ChoiceList, Picker

from app.screens.hotseat import HotseatScreen
from puzzles.boards import hotseat_board
from saves.players import parse_players
from app.game import make_app
from saves.store import SaveStore
from helpers.pilot import settle
from helpers.forms import choose

NOW = dt.datetime(2026, 3, 2, 18, 0, tzinfo=dt.timezone.utc)
PLAYERS = ["Ada", "Grace", "Linus"]


def answer_for(item, right: bool) -> dict:
    key = item.key
    wrong_lever = next(lv for lv in item.puzzle.levers if lv != key.best_lever)
    return {"bottleneck": key.bottleneck, "lever": key.best_lever if right else wrong_lever,
            "band": key.gain_band, "reason": key.reason}


async def fill(pilot, screen, item, right: bool, certainty: str, by_keyboard: bool = False) -> None:
    values = answer_for(item, right)
    for select_id, value in values.items():
        if by_keyboard and select_id in ("bottleneck", "lever"):
            await choose(pilot, select_id, value)
        else:
            screen.query_one(f"#{select_id}", Picker).value = value
    for name in item.puzzle.estimates:
        screen.query_one(f"#est-{name}").value = repr(item.key.estimates[name])
    screen.query_one("#certainty", ChoiceList).value = certainty
    await settle(pilot)


async def lock_in(pilot) -> None:
    await settle(pilot, "l")
    assert pilot.app.screen.id == "lock-confirm"
    await settle(pilot, "y")


def test_player_names_are_checked():
    assert parse_players("Ada, Grace; Linus") == (PLAYERS, None)
    assert parse_players("Ada")[1].startswith("Name 2 to 8 players")
    assert "twice" in parse_players("Ada, ada")[1]
    assert parse_players(", ".join(f"P{i}" for i in range(9)))[0] == []


async def test_three_players_lock_in_privately_then_share_one_reveal(tmp_path):
    app = make_app(solo=lambda: HotseatScreen(players=PLAYERS, seed=5, difficulty=1, count=2), save_dir=tmp_path,
                  clock=lambda: NOW, strict=True, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        plan = {"Ada": (True, "high"), "Grace": (False, "high"), "Linus": (True, "low")}
        for number in (1, 2):
            for turn, name in enumerate(PLAYERS):
                assert screen.phase == "pass"
                assert str(screen.query_one("#pass-name").render()) == f"Pass the keyboard to {name}"
                assert not screen.query("#form")          # nobody's answer is on the screen
                await settle(pilot, "enter")
                assert screen.phase == "question"
                item = screen.items[number - 1]
                right, certainty = plan[name]
                await fill(pilot, screen, item, right, certainty, by_keyboard=(number == 1 and turn == 0))
                await lock_in(pilot)
            assert screen.phase == ("reveal" if number == 1 else "final")
            reveal = str(screen.query_one("#hotseat-reveal").render())
            for name in PLAYERS:
                assert name in reveal
            board = str(screen.query_one("#hotseat-board").render()).splitlines()
            # Ada cleared (+30 each), Linus cleared at low certainty (+10), Grace's confident
            # wrong lever loses 15 or 60 (close or missed)
            assert [line.split()[1] for line in board[1:4]] == ["Ada", "Linus", "Grace"]
            assert f"{30 * number:>6}" in board[1]
            if number == 1:
                await settle(pilot, "n")
        standings = {s.entry.player: s.entry.score for s in hotseat_board(screen.players, screen.answers).players}
        assert standings["Ada"] == 60 and standings["Linus"] == 20 and standings["Grace"] < 0
    store = SaveStore(tmp_path)
    for name in PLAYERS:
        attempts = store.load(name).attempts
        assert [a.mode for a in attempts] == ["hotseat", "hotseat"]
        assert [a.puzzle_id for a in attempts] == ["gen-s5-d1-0000", "gen-s5-d1-0001"]
    assert [a.outcome for a in store.load("Ada").attempts] == ["cleared", "cleared"]
