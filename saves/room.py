"""The room a host runs: the durable lobby (`saves.lobby`) driven by the live-match rules
(`puzzles.live`) on the host's clock. The API server, the host screen and the tests all work
through one Room; it holds no rule of its own, only the order things happen in.

Two ways to pace it: `auto` (the `--headless` host) opens the first question `lobby_seconds` after
the first player joins and moves on `reveal_seconds` after each close; otherwise the host screen
says when to start and when to go on. Either way a question closes when everyone has locked in
or its time is up (`puzzles.live.due` decides when; this class only carries it out).

Whoever shows the room (the player feed, the host's screen) registers in `listeners` and is told
what changed: "phase", "players" or "locked". The room has no words of its own: whoever opens it
hands it the app's labels (a `RoomWords`) for the cards, the verdicts and the report it sends out.
"""
from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from engine.errors import RidgeError
from puzzles import generator, live
from puzzles.cards import answer_json, puzzle_json
from puzzles.drill import CONCEPT_TITLES
from puzzles.live import LiveRefusal
from saves.atomic import make_dir, write_atomic
from saves.lobby import LobbyError, LobbyStore, archive, lobby_path, report_folder


class RoomWords(Protocol):
    """The words a room sends out; the app's labels module is one (a module can be a Protocol)."""

    def card_words(self, card: dict) -> dict:
        """Each option id the card offers, by kind, in words."""

    def verdict_line(self, outcome: str, points: int) -> str:
        """A player's result on one question in one line."""

    def part_lines(self, me: dict, answer: dict) -> list[str]:
        """The parts judged for a player's grade row, beside the question's answer."""

    def words(self, kind: str, identifier: str) -> str:
        """One id in words, by kind (for the report)."""


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

    def __init__(self, settings: Settings, save_dir: Path, words: RoomWords, clock: Callable[[], float] = time.time,
                 made: list | None = None, existing: Path | None = None) -> None:
        """`existing`: read the match kept in that lobby file as it is (for its report): nothing
        is archived, resumed or written."""
        self.settings = settings
        self.words = words
        self.clock = clock
        self.made = made if made is not None else generator.generate(settings.seed, settings.count, settings.difficulty)
        self.cards = [with_words(live.public_card(puzzle_json(g.puzzle), i), words) for i, g in enumerate(self.made)]
        self.answers_json = [answer_json(g.puzzle, g.key) for g in self.made]
        self.save_dir = Path(save_dir)
        self.path = Path(existing) if existing is not None else lobby_path(self.save_dir, settings.match_id)
        self.listeners: list[Callable[[str], None]] = []
        self.archived: Path | None = None
        if existing is None and self.path.exists():
            old = LobbyStore(self.path)
            finished = old.get("phase") == "done"
            old.close()
            if finished:
                self.archived = archive(self.path)
        self.store = LobbyStore(self.path, existing=existing is not None)
        self.resumed = self.store.get("phase") is not None
        pin = settings.pin or self.store.get("pin") or f"{secrets.randbelow(10**6):06d}"
        if existing is None:
            if not self.resumed:
                self.store.set_many({"phase": "lobby", "index": 0, "seed": settings.seed, "count": settings.count,
                                     "difficulty": settings.difficulty, "created": clock(), "deadline": None,
                                     "paused_left": None, "first_join": None, "closed_at": None,
                                     "room_locked": False})
            self.store.set_many({"pin": pin, "match_id": settings.match_id})
        self.pin = pin
        self._grades: dict[tuple[str, int], live.LiveGrade] = {}
        self._load()
        if existing is None and self.resumed and self.phase == "question" and self._m["paused_left"] is None:
            deadline = live.resumed_deadline(self._m["deadline"] or clock(), clock(), settings.seconds)
            self._save(deadline=deadline)

    # -- loading and saving state ------------------------------------------------------------------
    def _load(self) -> None:
        self._m = self.store.meta()
        index = self._m.get("index")
        if (self._m.get("phase") not in live.PHASES or isinstance(index, bool) or not isinstance(index, int)
                or not 0 <= index < self.count or self._m.get("seed") not in (None, self.settings.seed)):
            raise LobbyError(f"{self.path}: damaged lobby file (its phase or question does not fit this match)")
        self._players = {p.token: p for p in self.store.players()}
        self._locked: dict[int, dict[str, Any]] = {}
        self._seen_reveal: set[tuple[str, int]] = set()  # (token, index): who has read a question's answer
        for a in self.store.answers():
            if not 0 <= a.index < self.count or a.token not in self._players:
                raise LobbyError(f"{self.path}: damaged lobby file (an answer to no question or from no player)")
            self._locked.setdefault(a.index, {})[a.token] = a
            try:
                self._grade(a)
            except (RidgeError, KeyError, TypeError, ValueError) as exc:
                raise LobbyError(f"{self.path}: damaged lobby file (an answer cannot be graded: {exc})") from None

    def _save(self, **values: Any) -> None:
        _stored(lambda: self.store.set_many(values))
        self._m.update(values)
        if {"phase", "index", "paused_left", "deadline", "room_locked"} & set(values):
            self._tell("phase")

    def _tell(self, what: str) -> None:
        for listener in list(self.listeners):
            listener(what)

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

    @property
    def room_locked(self) -> bool:
        return bool(self._m.get("room_locked"))

    def active(self) -> list:
        return [p for p in self._players.values() if not p.removed]

    def locked_now(self) -> list:
        """The on-time answers to the open (or just closed) question from players still in."""
        mine = self._locked.get(self.index, {})
        return [a for t, a in mine.items() if not a.late and not self._players[t].removed]

    def seconds_left(self) -> float | None:
        m, s = self._m, self.settings
        return live.countdown(self.phase, self.clock(), auto=s.auto, deadline=m.get("deadline"),
                              paused_left=m.get("paused_left"), first_join=m.get("first_join"),
                              lobby_seconds=s.lobby_seconds, closed_at=m.get("closed_at"),
                              reveal_seconds=s.reveal_seconds)

    # -- moving on ------------------------------------------------------------------------------------
    def tick(self) -> str:
        """Make the phase what the clock says it is; returns the phase."""
        for _ in range(3):  # at most lobby -> question -> closed in one tick
            m = self._m
            step = live.due(self.phase, self.clock(), auto=self.settings.auto, first_join=m.get("first_join"),
                            lobby_seconds=self.settings.lobby_seconds, deadline=m.get("deadline"), paused=self.paused,
                            locked=len(self.locked_now()), players=len(self.active()), closed_at=m.get("closed_at"),
                            reveal_seconds=self.settings.reveal_seconds)
            if step is None:
                break
            self._do(step)
        return self.phase

    def _do(self, step: str) -> None:
        """Carry out one step of the phase machine (`puzzles.live.step_to`), stamping its clock."""
        moved = live.step_to(step, self.phase, self.index, self.count)
        if moved is None:
            return
        phase, index = moved
        if phase == "question":
            self._save(phase=phase, index=index, deadline=self.clock() + self.settings.seconds,
                       paused_left=None, closed_at=None)
        elif phase == "closed":
            self._save(phase=phase, closed_at=self.clock(), paused_left=None)
        else:
            self._save(phase=phase)

    def close_question(self) -> None:
        self._do("close")

    def start(self) -> None:
        self._do("open")

    def skip(self) -> None:
        """The host's next key (`puzzles.live.skip`): start, close the open question now (answers
        so far count), or go on once the reveal has been up long enough (LiveRefusal before)."""
        step = live.skip(self.phase, self.clock(), self._m.get("closed_at"))
        if step is not None:
            self._do(step)

    def lock_room(self, locked: bool | None = None) -> bool:
        """Let no new player join (players already in may still rejoin); again to open it."""
        self._save(room_locked=not self.room_locked if locked is None else bool(locked))
        return self.room_locked

    def pause(self) -> None:
        """Freeze the open question's clock; calling again carries on from the same second."""
        if self.phase != "question":
            return
        deadline, paused_left = live.paused_clock(self._m["deadline"], self._m.get("paused_left"), self.clock())
        self._save(deadline=deadline, paused_left=paused_left)

    def remove(self, name: str) -> bool:
        folded = live.fold(name)
        for token, p in self._players.items():
            if live.fold(p.name) == folded and not p.removed:
                _stored(lambda: self.store.remove_player(token))
                self._players = {p.token: p for p in self.store.players()}
                self._tell("players")
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
        nick = live.check_join(pin, self.pin, name, taken, len(self.active()), self.settings.max_players,
                               locked=self.room_locked)
        token = secrets.token_urlsafe(18)
        now = self.clock()
        if not _stored(lambda: self.store.add_player(token, nick, live.fold(nick), now, seat)):
            raise LiveRefusal(409, f"the nickname {nick!r} is taken in this room: pick another")
        self._players[token] = next(p for p in self.store.players() if p.token == token)
        if self._m.get("first_join") is None:
            self._save(first_join=now)
        self._tell("players")
        return token

    def player(self, token: Any):
        p = self._players.get(token) if isinstance(token, str) else None
        if p is None:
            raise LiveRefusal(401, "join first: send the X-Ridge-Token header that /api/join gave you")
        if p.removed:
            raise LiveRefusal(403, "the host removed you from this match")
        return p

    def state(self, token: Any = None) -> dict:
        """What a player's screen shows now (DESIGN.md's `/api/state`, plus `you` with a token)."""
        self.tick()
        out = self.public_state()
        if token is not None:
            out["you"] = self.you(token)
        return out

    def public_state(self) -> dict:
        """The part of the state every player sees alike (the card, never its answer)."""
        phase = self.phase
        open_card = live.shows_card(phase)
        left = self.seconds_left()
        return {"phase": phase, "index": self.index if phase != "done" else self.count, "count": self.count,
                "seconds_left": None if left is None else round(left, 2),
                "puzzle": self.cards[self.index] if open_card else None, "paused": self.paused,
                "players": len(self.active()), "locked": len(self.locked_now()) if open_card else 0,
                "room_locked": self.room_locked}

    def you(self, token: Any) -> dict:
        """A player's own part of the state: their name and, for the question on screen, whether
        they locked in and what (their own answer only)."""
        p = self.player(token)
        mine = self._locked.get(self.index, {}).get(p.token) if live.shows_card(self.phase) else None
        return {"name": p.name, "locked": mine is not None, "late": bool(mine and mine.late),
                "answer": _api_answer(mine.prediction) if mine is not None else None}

    def answer(self, token: Any, payload: Any) -> dict:
        p = self.player(token)
        self.tick()
        index, prediction = live.parse_answer(payload, complete=False)
        already = p.token in self._locked.get(index, {})
        read_reveal = (p.token, index) in self._seen_reveal
        refusal = live.answer_refusal(self.phase, self.index, index, already, read_reveal)
        if refusal is not None:
            if live.keeps_late(self.phase, self.index, index, already, read_reveal):
                # what the late player filled in is kept (once) at zero points
                if _stored(lambda: self.store.lock(index, p.token, prediction, self.clock(), late=True)):
                    self._remember(index, p.token)
            raise refusal
        index, prediction = live.parse_answer(payload, complete=True)
        g = self.made[index]
        try:
            live.score(g.puzzle, g.key, prediction)
        except RidgeError as exc:
            raise LiveRefusal(400, str(exc)) from None
        if not _stored(lambda: self.store.lock(index, p.token, prediction, self.clock())):
            raise LiveRefusal(409, f"you already locked in an answer to question {index + 1}: it is final")
        self._remember(index, p.token)
        self._tell("locked")
        self.tick()
        return {"accepted": True, "index": index}

    def _remember(self, index: int, token: str) -> None:
        stored = next(a for a in self.store.answers(index) if a.token == token)
        self._locked.setdefault(index, {})[token] = stored
        self._grade(stored)

    def reveal(self, index: Any, viewer: str | None = None) -> dict:
        """A closed question's answer and every player's grade (a late one says "late"); with
        `viewer` (a player's token), also `you`: that player's grade with every part judged, in
        words. The viewer has now read it, so no late lock of theirs for it is kept after this."""
        self.tick()
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < self.count:
            raise LiveRefusal(400, f"index must be a question number from 0 to {self.count - 1}")
        if not self.closed(index):
            raise LiveRefusal(409, f"question {index + 1} has not closed yet: its answer stays on the host until then")
        players = []
        for p in self.active():
            grade = self._grades.get((p.token, index))
            players.append({"name": p.name, "outcome": grade.shown if grade else live.NO_ANSWER,
                            "points": grade.points if grade else 0, "late": bool(grade and grade.late)})
        players.sort(key=lambda r: (-r["points"], live.fold(r["name"])))
        out = {"index": index, "answer": self.answers_json[index], "players": players, "spread": self.spread(index)}
        if viewer is not None:
            self._seen_reveal.add((viewer, index))
            out["you"] = self._your_grade(viewer, index)
        return out

    def _your_grade(self, token: str, index: int) -> dict:
        verdict_line, part_lines = self.words.verdict_line, self.words.part_lines
        p = self.player(token)
        grade = self._grades.get((token, index))
        if grade is None:
            return {"name": p.name, "outcome": live.NO_ANSWER, "points": 0, "late": False, "parts": [], "lines": [],
                    "verdict": verdict_line(live.NO_ANSWER, 0)}
        row = {"name": p.name, **grade.to_json(), "verdict": verdict_line(grade.shown, grade.points)}
        row["lines"] = part_lines({**row, "outcome": grade.outcome}, self.answers_json[index])
        return row

    def closed(self, index: int) -> bool:
        return live.is_closed(index, self.index, self.phase)

    def spread(self, index: int | None = None) -> dict:
        index = self.index if index is None else index
        card = self.cards[index]
        predictions = [a.prediction for t, a in self._locked.get(index, {}).items()
                       if not a.late and not self._players[t].removed]
        return live.spread(predictions, {"bottleneck": card["ask"]["bottleneck"], "lever": card["ask"]["lever"]})

    def closed_indexes(self) -> list[int]:
        return [i for i in range(self.count) if self.closed(i)]

    def rows(self) -> list[live.Row]:
        """The board over the closed questions only (nothing moves while a question is open)."""
        names = {p.token: p.name for p in self.active()}
        grades = {(names[t], i): g for (t, i), g in self._grades.items() if t in names}
        return live.board(list(names.values()), grades, self.count, self.closed_indexes())

    def board(self) -> dict:
        self.tick()
        rows = self.rows()
        return {"players": [r.to_json() for r in rows], "count": self.count, "phase": self.phase,
                "closed": len(self.closed_indexes()),
                "podium": [r.to_json() for r in live.podium(rows)] if self.phase == "done" else []}

    # -- the facilitator's report -------------------------------------------------------------------
    def report(self) -> live.Report:
        names = {p.token: p.name for p in self.active()}
        answers = {(names[t], i): (a.prediction, self._grades[(t, i)])
                   for i, by in self._locked.items() for t, a in by.items() if t in names}
        return live.report(f"Ridge live match {self.settings.match_id}", self.made, list(names.values()), answers,
                           self.closed_indexes())

    def export(self, folder: Path | None = None) -> tuple[Path, ...]:
        """Write the facilitator's report (Markdown, and CSV for questions, concepts and players)
        into the host's data folder; returns the paths, the Markdown first."""
        folder = Path(folder) if folder is not None else report_folder(self.save_dir, self.path)
        return write_report(self.report(), folder, self.words.words)

    def close(self) -> None:
        self.store.close()

    @classmethod
    def kept(cls, lobby: Path, save_dir: Path, words: RoomWords) -> Room:
        """The match kept in the lobby file `lobby`, read as it is (for its report): its seed,
        count and difficulty come from the file; RidgeError (one line) when it does not say."""
        store = LobbyStore(lobby, existing=True)
        meta = store.meta()
        store.close()
        seed, count, difficulty = meta.get("seed"), meta.get("count"), meta.get("difficulty")
        if not isinstance(seed, int) or not isinstance(count, int) or not 1 <= count <= 50:
            raise RidgeError(f"{lobby}: the lobby does not say which match it holds (seed, count)")
        return cls(Settings(seed=seed, count=count, difficulty=difficulty, pin="0000"), save_dir, words,
                   existing=lobby)

    def status_line(self) -> str:
        """Where the match is, in one line (what the headless host prints as each phase begins)."""
        n, count = self.index + 1, self.count
        if self.phase == "lobby":
            return f"lobby open: {len(self.active())} joined"
        if self.phase == "question":
            return f"question {n} of {count} open"
        if self.phase == "closed":
            return f"question {n} of {count} closed: {len(self.locked_now())} of {len(self.active())} locked in"
        return f"match done: {count} questions, {len(self.active())} players"


def _stored(write: Callable[[], Any]) -> Any:
    """A lobby write; a disk that is full or read-only refuses the request in one line (503)
    instead of failing it, and nothing already stored is lost."""
    try:
        return write()
    except LobbyError as exc:
        raise LiveRefusal(503, f"the host cannot save right now: {exc}") from None


def _api_answer(prediction: dict) -> dict:
    """A stored prediction in the API's answer names (`gain`, not the grader's `gain_band`)."""
    return {"bottleneck": prediction.get("bottleneck", ""), "lever": prediction.get("lever", ""),
            "gain": prediction.get("gain_band", ""), "reason": prediction.get("reason", ""),
            "certainty": prediction.get("certainty", ""), "estimates": dict(prediction.get("estimates") or {})}


def with_words(card: dict, words: RoomWords) -> dict:
    """The card with `words`: each option id the form offers in the words the game shows, so the
    player page needs no copy of the labels."""
    return {**card, "words": words.card_words(card)}


def write_report(report: live.Report, folder: Path, word: Callable[[str, str], str]) -> tuple[Path, ...]:
    """The facilitator's report as files in `folder`: report.md, questions.csv, concepts.csv and
    players.csv (a spreadsheet opens each); returns their paths, the Markdown first."""
    make_dir(folder)
    files = {"report.md": live.report_markdown(report, word, CONCEPT_TITLES),
             "questions.csv": live.questions_csv(report),
             "concepts.csv": live.concepts_csv(report),
             "players.csv": live.results_csv(list(report.rows), report.count)}
    paths = []
    for name, text in files.items():
        write_atomic(folder / name, text)
        paths.append(folder / name)
    return tuple(paths)
