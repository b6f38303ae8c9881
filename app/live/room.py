"""The room a host runs: the durable lobby (`saves.lobby`) driven by the live-match rules
(`puzzles.live`) on the host's clock. The API server, the host screen and the tests all work
through one Room; it holds no rule of its own, only the order things happen in.

Two ways to pace it: `auto` (the `--headless` host) opens the first question `lobby_seconds` after
the first player joins and moves on `reveal_seconds` after each close; otherwise the host screen
says when to start and when to go on. Either way a question closes when everyone has locked in
or its time is up.
"""
from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from puzzles import live
from puzzles.live import LiveRefusal


@dataclass(frozen=True)
class Settings:
    seed: int
    count: int
    difficulty: int | None = None
    pin: str | None = None
    max_players: int = live.DEFAULT_MAX_PLAYERS
    seconds: float = live.DEFAULT_SECONDS
    lobby_seconds: float = live.DEFAULT_LOBBY_SECONDS
    reveal_seconds: float = live.DEFAULT_REVEAL_SECONDS
    auto: bool = False

    @property
    def match_id(self) -> str:
        level = f"d{self.difficulty}" if self.difficulty else "mixed"
        return f"live-s{self.seed}-{level}-n{self.count}"


class Room:
    """One live match. Methods raise LiveRefusal (status + one line) for anything refused."""

    def __init__(self, settings: Settings, save_dir: Path, clock: Callable[[], float] = time.time,
                 made: list | None = None) -> None:
        from puzzles import generator
        from puzzles.cards import answer_json, puzzle_json
        from saves.lobby import LobbyStore, archive, lobby_path

        self.settings = settings
        self.clock = clock
        self.made = made if made is not None else generator.generate(settings.seed, settings.count, settings.difficulty)
        self.cards = [live.public_card(puzzle_json(g.puzzle), i) for i, g in enumerate(self.made)]
        self.answers_json = [answer_json(g.puzzle, g.key) for g in self.made]
        self.path = lobby_path(Path(save_dir), settings.match_id)
        self.archived: Path | None = None
        if self.path.exists():
            old = LobbyStore(self.path)
            finished = old.get("phase") == "done"
            old.close()
            if finished:
                self.archived = archive(self.path)
        self.store = LobbyStore(self.path)
        self.resumed = self.store.get("phase") is not None
        pin = settings.pin or self.store.get("pin") or f"{secrets.randbelow(10**6):06d}"
        if not self.resumed:
            self.store.set_many({"phase": "lobby", "index": 0, "seed": settings.seed, "count": settings.count,
                                 "difficulty": settings.difficulty, "created": clock(), "deadline": None,
                                 "paused_left": None, "first_join": None, "closed_at": None})
        self.store.set("pin", pin)
        self.pin = pin
        self._grades: dict[tuple[str, int], live.LiveGrade] = {}
        self._load()
        if self.resumed and self.phase == "question" and self._m["paused_left"] is None:
            deadline = live.resumed_deadline(self._m["deadline"] or clock(), clock(), settings.seconds)
            self._save(deadline=deadline)

    # -- loading and saving state ------------------------------------------------------------------
    def _load(self) -> None:
        self._m = self.store.meta()
        self._players = {p.token: p for p in self.store.players()}
        self._locked: dict[int, dict[str, Any]] = {}
        self._seen_reveal: set[tuple[str, int]] = set()  # (token, index): who has read a question's answer
        for a in self.store.answers():
            self._locked.setdefault(a.index, {})[a.token] = a
            self._grade(a)

    def _save(self, **values: Any) -> None:
        self.store.set_many(values)
        self._m.update(values)

    def _grade(self, locked) -> live.LiveGrade:
        g = self.made[locked.index]
        grade = live.score(g.puzzle, g.key, locked.prediction, locked.late)
        self._grades[(locked.token, locked.index)] = grade
        return grade

    # -- what is true now ----------------------------------------------------------------------------
    @property
    def phase(self) -> str:
        return self._m["phase"]

    @property
    def index(self) -> int:
        return int(self._m["index"])

    @property
    def count(self) -> int:
        return len(self.made)

    @property
    def paused(self) -> bool:
        return self._m.get("paused_left") is not None

    def active(self) -> list:
        return [p for p in self._players.values() if not p.removed]

    def locked_now(self) -> list:
        """The on-time answers to the open (or just closed) question from players still in."""
        mine = self._locked.get(self.index, {})
        return [a for t, a in mine.items() if not a.late and not self._players[t].removed]

    def seconds_left(self) -> float | None:
        now = self.clock()
        m = self._m
        if self.phase == "question":
            return live.seconds_left(m["deadline"], now, m.get("paused_left"))
        if self.settings.auto and self.phase == "lobby" and m.get("first_join") is not None:
            return live.seconds_left(m["first_join"] + self.settings.lobby_seconds, now)
        if self.settings.auto and self.phase == "closed" and m.get("closed_at") is not None:
            return live.seconds_left(m["closed_at"] + self.settings.reveal_seconds, now)
        return None

    # -- moving on ------------------------------------------------------------------------------------
    def tick(self) -> str:
        """Make the phase what the clock says it is; returns the phase."""
        now = self.clock()
        m = self._m
        if self.phase == "lobby" and self.settings.auto and m.get("first_join") is not None:
            if now >= m["first_join"] + self.settings.lobby_seconds:
                self.open_question(0)
        if self.phase == "question" and live.should_close(now, m["deadline"], self.paused, len(self.locked_now()),
                                                          len(self.active())):
            self.close_question()
        if self.phase == "closed" and self.settings.auto and m.get("closed_at") is not None:
            if now >= m["closed_at"] + self.settings.reveal_seconds:
                self.next_question()
        return self.phase

    def open_question(self, index: int) -> None:
        self._save(phase="question", index=index, deadline=self.clock() + self.settings.seconds,
                   paused_left=None, closed_at=None)

    def close_question(self) -> None:
        if self.phase == "question":
            self._save(phase="closed", closed_at=self.clock(), paused_left=None)

    def next_question(self) -> None:
        if self.phase != "closed":
            return
        if self.index + 1 < self.count:
            self.open_question(self.index + 1)
        else:
            self._save(phase="done")

    def start(self) -> None:
        if self.phase == "lobby":
            self.open_question(0)

    def skip(self) -> None:
        """The host's skip: in the lobby, start; with a question open, close it now (answers so far
        count); after a close, go on."""
        if self.phase == "lobby":
            self.start()
        elif self.phase == "question":
            self.close_question()
        elif self.phase == "closed":
            self.next_question()

    def pause(self) -> None:
        """Freeze the open question's clock; calling again carries on from the same second."""
        if self.phase != "question":
            return
        if self.paused:
            self._save(deadline=self.clock() + self._m["paused_left"], paused_left=None)
        else:
            self._save(paused_left=live.seconds_left(self._m["deadline"], self.clock()))

    def remove(self, name: str) -> bool:
        folded = live.fold(name)
        for token, p in self._players.items():
            if live.fold(p.name) == folded and not p.removed:
                self.store.remove_player(token)
                self._players = {p.token: p for p in self.store.players()}
                return True
        return False

    # -- the players' side ---------------------------------------------------------------------------
    def join(self, pin: Any, name: Any, seat: Any = None) -> str:
        live.check_pin_given(pin, self.pin)
        seat = live.seat_hash(seat)
        if seat and isinstance(name, str):
            folded = live.fold(" ".join(name.split()))
            again = next((p for p in self._players.values() if live.fold(p.name) == folded and p.seat == seat), None)
            if again is not None:
                self.player(again.token)  # a removed player stays removed
                return again.token
        taken = [p.name for p in self._players.values()]
        nick = live.check_join(pin, self.pin, name, taken, len(self.active()), self.settings.max_players)
        token = secrets.token_urlsafe(18)
        now = self.clock()
        if not self.store.add_player(token, nick, live.fold(nick), now, seat):
            raise LiveRefusal(409, f"the nickname {nick!r} is taken in this room: pick another")
        self._players = {p.token: p for p in self.store.players()}
        if self._m.get("first_join") is None:
            self._save(first_join=now)
        return token

    def player(self, token: Any):
        p = self._players.get(token) if isinstance(token, str) else None
        if p is None:
            raise LiveRefusal(401, "join first: send the X-Ridge-Token header that /api/join gave you")
        if p.removed:
            raise LiveRefusal(403, "the host removed you from this match")
        return p

    def state(self, token: Any = None) -> dict:
        self.tick()
        phase = self.phase
        open_card = phase in ("question", "closed")
        left = self.seconds_left()
        out = {"phase": phase, "index": self.index if phase != "done" else self.count, "count": self.count,
               "seconds_left": None if left is None else round(left, 2),
               "puzzle": self.cards[self.index] if open_card else None,
               "paused": self.paused, "players": len(self.active()), "locked": len(self.locked_now()) if open_card else 0}
        if token is not None:
            p = self.player(token)
            mine = self._locked.get(self.index, {}).get(p.token)
            out["you"] = {"name": p.name, "locked": mine is not None and open_card}
        return out

    def answer(self, token: Any, payload: Any) -> dict:
        p = self.player(token)
        self.tick()
        index, prediction = live.parse_answer(payload, complete=False)
        already = p.token in self._locked.get(index, {})
        refusal = live.answer_refusal(self.phase, self.index, index, already)
        if refusal is not None:
            if not already and (p.token, index) in self._seen_reveal:
                raise LiveRefusal(409, f"question {index + 1} has closed and you have read its answer: nothing is kept")
            self._lock_late(p, index, prediction, refusal)
            raise refusal
        index, prediction = live.parse_answer(payload, complete=True)
        g = self.made[index]
        from engine.errors import RidgeError

        try:
            live.score(g.puzzle, g.key, prediction)
        except RidgeError as exc:
            raise LiveRefusal(400, str(exc)) from None
        if not self.store.lock(index, p.token, prediction, self.clock()):
            raise LiveRefusal(409, f"you already locked in an answer to question {index + 1}: it is final")
        self._remember(index, p.token)
        self.tick()
        return {"accepted": True, "index": index}

    def _lock_late(self, p, index: int, prediction: dict, refusal: LiveRefusal) -> None:
        """What a late player filled in is kept (once) at zero points, while their question is the
        one just closed."""
        already = p.token in self._locked.get(index, {})
        if already or self.phase != "closed" or index != self.index or (p.token, index) in self._seen_reveal:
            return  # a "late" answer sent after reading the reveal would copy it: refused, nothing kept
        if self.store.lock(index, p.token, prediction, self.clock(), late=True):
            self._remember(index, p.token)

    def _remember(self, index: int, token: str) -> None:
        stored = next(a for a in self.store.answers(index) if a.token == token)
        self._locked.setdefault(index, {})[token] = stored
        self._grade(stored)

    def reveal(self, index: Any, viewer: str | None = None) -> dict:
        """A closed question's answer and every player's grade; `viewer` (a player's token) has
        now read it, so no late lock of theirs for it is kept after this."""
        self.tick()
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < self.count:
            raise LiveRefusal(400, f"index must be a question number from 0 to {self.count - 1}")
        if not self.closed(index):
            raise LiveRefusal(409, f"question {index + 1} has not closed yet: its answer stays on the host until then")
        if viewer is not None:
            self._seen_reveal.add((viewer, index))
        players = []
        for p in self.active():
            grade = self._grades.get((p.token, index))
            players.append({"name": p.name, "outcome": grade.outcome if grade else live.NO_ANSWER,
                            "points": grade.points if grade else 0, "late": bool(grade and grade.late),
                            "parts": list(grade.parts) if grade else []})   # every part judged (issue 13)
        players.sort(key=lambda r: (-r["points"], live.fold(r["name"])))
        return {"index": index, "answer": self.answers_json[index], "players": players,
                "spread": self.spread(index)}

    def closed(self, index: int) -> bool:
        return index < self.index or (index == self.index and self.phase in ("closed", "done"))

    def spread(self, index: int | None = None) -> dict:
        index = self.index if index is None else index
        card = self.cards[index]
        predictions = [a.prediction for t, a in self._locked.get(index, {}).items()
                       if not a.late and not self._players[t].removed]
        return live.spread(predictions, {"bottleneck": card["ask"]["bottleneck"], "lever": card["ask"]["lever"]})

    def rows(self) -> list[live.Row]:
        names = {p.token: p.name for p in self.active()}
        grades = {(names[t], i): g for (t, i), g in self._grades.items() if t in names}
        return live.board(list(names.values()), grades, self.count)

    def board(self) -> dict:
        self.tick()
        rows = self.rows()
        return {"players": [r.to_json() for r in rows], "count": self.count, "phase": self.phase,
                "closed": sum(self.closed(i) for i in range(self.count)),
                "podium": [r.to_json() for r in live.podium(rows)] if self.phase == "done" else []}

    # -- results --------------------------------------------------------------------------------------
    def export(self, folder: Path | None = None) -> tuple[Path, Path]:
        """Write the board as CSV and Markdown beside the lobby file; returns both paths."""
        from puzzles.grading import objective_bottleneck
        from saves.atomic import write_atomic

        folder = Path(folder) if folder is not None else self.path.parent
        rows = self.rows()
        keys = [{"title": g.puzzle.title, "bottleneck": objective_bottleneck(g.key), "best_lever": g.key.best_lever,
                 "gain_band": g.key.gain_band, "reason": g.key.reason} for g in self.made]
        shown = [k if self.closed(i) else {"title": k["title"], "bottleneck": "(not closed yet)"}
                 for i, k in enumerate(keys)]
        csv_path = folder / f"{self.settings.match_id}-results.csv"
        md_path = folder / f"{self.settings.match_id}-results.md"
        write_atomic(csv_path, live.results_csv(rows, self.count))
        write_atomic(md_path, live.results_markdown(rows, self.count, f"Ridge live match {self.settings.match_id}", shown))
        return csv_path, md_path

    def close(self) -> None:
        self.store.close()
