"""The rules of a live match, headless: who may join, when an answer counts, how it scores, when a
question closes, the board, the answer spread and the exported results.

A host runs the room (`ridge host`); players only ever send predictions. The host's clock decides
everything: a question is open from `opened` to `deadline` (wall-clock seconds, so a restarted
host can carry on), and an answer counts when it reaches the host while its question is open.
Each player answers each question once. An answer that arrives after the close is refused, but
what that player had filled in is kept, locked at zero points and shown as "late" (never as the
outcome it would have had: a late answer may have been copied from the room).

Fairness: nothing about an open question leaves the host (the board counts closed questions only,
the spread and who answered what wait for the close). The facilitator's report is aggregated here
too (`report`), so the screen, the headless host and `ridge host --report` write the same figures.

Every answer is graded by THE grader (`puzzles.grading.grade`) through `grade_answer`, the one
call site, so a change in the grader's signature is one edit here. Scores are derived from the
recorded predictions whenever they are needed, never stored. Imports no Textual, no saves.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import math
import re
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from engine.ids import Outcome
from puzzles.names import name_key

PHASES = ("lobby", "question", "closed", "done")
DEFAULT_MAX_PLAYERS = 50
DEFAULT_SECONDS = 90
DEFAULT_LOBBY_SECONDS = 5
DEFAULT_REVEAL_SECONDS = 8
RESUME_GRACE_SECONDS = 10.0   # a question resumed after a restart stays open at least this long
NO_ANSWER = "unanswered"
LATE = "late"                 # what a late answer shows everywhere, in place of its outcome
MIN_REVEAL_SECONDS = 3.0      # the host's "next" waits this long after a close: no reveal goes unseen
HEADER_SECONDS = 15.0         # a request's headers must arrive this soon after connecting ...
BODY_SECONDS = 5.0            # ... and its body this soon after them (the host's --header/--body-seconds)
PIN_TRIES = 20                # wrong pins allowed from one address ...
PIN_WINDOW = 600.0            # ... within this many seconds (PinGuard)
PIN_ADDRESSES = 4096          # addresses remembered (the oldest are forgotten first)
PIN_PATTERN = re.compile(r"^\d{4,8}$")
_NICK = re.compile(r"^[\w][\w \-.']{0,23}$")


class LiveRefusal(Exception):
    """A request the room turns down: an HTTP-like status and one line saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class PinGuard:
    """Counts wrong pins per client address so a pin cannot be guessed by trying them all, while
    one prankster's mistakes never lock out anyone at another address."""

    def __init__(self, tries: int = PIN_TRIES, window: float = PIN_WINDOW, clock=time.monotonic,
                 addresses: int = PIN_ADDRESSES) -> None:
        self.tries, self.window, self.clock, self.addresses = tries, window, clock, addresses
        self.misses: OrderedDict[str, deque] = OrderedDict()

    def blocked(self, address: str) -> bool:
        q = self.misses.get(address)
        if q is None:
            return False
        while q and self.clock() - q[0] > self.window:
            q.popleft()
        if not q:
            del self.misses[address]
            return False
        return len(q) >= self.tries

    def miss(self, address: str) -> None:
        q = self.misses.setdefault(address, deque())
        self.misses.move_to_end(address)
        q.append(self.clock())
        while len(self.misses) > self.addresses:
            self.misses.popitem(last=False)


# --- joining ----------------------------------------------------------------------------------------

def clean_name(name: Any) -> str:
    """A nickname as the room keeps it, or LiveRefusal(400) saying what a nickname may be."""
    if not isinstance(name, str):
        raise LiveRefusal(400, "send your nickname as text")
    text = " ".join(name.split())
    if not _NICK.match(text):
        raise LiveRefusal(400, "a nickname is 1-24 letters, digits, spaces, '-', '_', '.' or \"'\", "
                               "starting with a letter or digit")
    return text


def fold(name: str) -> str:
    """Names compare by `puzzles.names.name_key`, so 'Ana', 'ana' and 'Аna' (Cyrillic А) are one player."""
    return name_key(name)


def check_pin_given(pin_given: Any, pin: str) -> None:
    if not isinstance(pin_given, (str, int)) or isinstance(pin_given, bool) or str(pin_given).strip() != pin:
        raise LiveRefusal(403, "wrong pin: ask the host for the pin shown on the big screen")


def seat_hash(seat: Any) -> str:
    """What the host keeps of a player's seat: a hash of the secret their browser (or terminal)
    holds. The same nickname with the same seat rejoins as the same player (after the host or
    the browser restarted); with another seat the name is taken. No seat, no rejoining."""
    import hashlib

    if not isinstance(seat, str) or not 16 <= len(seat) <= 128:
        return ""
    return hashlib.sha256(seat.encode("utf-8")).hexdigest()


def check_join(pin_given: Any, pin: str, name: Any, taken: Iterable[str], players: int, max_players: int,
               locked: bool = False) -> str:
    """The cleaned nickname when this join may go ahead; LiveRefusal otherwise, checked in the
    order a player can act on: the pin (403), the name (400, 409), a room the host locked (423),
    then a full room (503)."""
    check_pin_given(pin_given, pin)
    nick = clean_name(name)
    if fold(nick) in {fold(t) for t in taken}:
        raise LiveRefusal(409, f"the nickname {nick!r} is taken in this room: pick another")
    if locked:
        raise LiveRefusal(423, "the host has locked the room: no new players can join this match")
    if players >= max_players:
        raise LiveRefusal(503, f"the room is full ({max_players} players): ask the host to raise --max-players")
    return nick


def check_pin(pin: Any) -> str:
    """A host's pin: 4 to 8 digits."""
    text = str(pin).strip()
    if not PIN_PATTERN.match(text):
        raise ValueError(f"a pin is 4 to 8 digits, got {pin!r}")
    return text


# --- answers ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LiveGrade:
    """One player's graded answer to one question: the grader's outcome, the points it earns in
    the match (zero when it came late), and every part judged."""

    outcome: str
    points: int
    parts: tuple = ()
    late: bool = False

    @property
    def shown(self) -> str:
        """The outcome as every screen and report says it: "late" for a late answer."""
        return LATE if self.late else self.outcome

    def to_json(self) -> dict:
        return {"outcome": self.shown, "points": self.points, "late": self.late, "parts": list(self.parts)}


def _parts_json(parts: Any) -> tuple:
    """The grader's parts as plain JSON rows (it may give a dict of name -> right, or rows)."""
    if isinstance(parts, Mapping):
        return tuple({"name": str(k), "right": bool(v)} for k, v in parts.items())

    rows = []
    for part in parts or ():
        if dataclasses.is_dataclass(part):
            rows.append({k: _plain(v) for k, v in dataclasses.asdict(part).items()})
        elif hasattr(part, "to_json"):
            rows.append(part.to_json())
        elif hasattr(part, "_asdict"):
            rows.append({k: _plain(v) for k, v in part._asdict().items()})
        elif isinstance(part, Mapping):
            rows.append({str(k): _plain(v) for k, v in part.items()})
        else:
            rows.append({"name": str(part)})
    return tuple(rows)


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def grade_answer(puzzle, key, prediction: Mapping[str, Any], complete: bool = True):
    """THE grader, called from this one place for the whole live match. With `complete`, a choice
    the puzzle does not offer raises the grader's own error (a RidgeError, one line); without, a
    blank or unknown part is simply wrong (a late lock may be half filled in)."""
    from puzzles.grading import grade

    return grade(puzzle, key, dict(prediction), strict=complete)


def score(puzzle, key, prediction: Mapping[str, Any], late: bool = False) -> LiveGrade:
    """A recorded prediction's grade in the match. On time: the grader's outcome and points. Late:
    the outcome it would have had, blanks counted wrong, at zero points."""
    graded = grade_answer(puzzle, key, prediction, complete=not late)
    return LiveGrade(str(graded.outcome), 0 if late else int(graded.points), _parts_json(graded.parts), late)


_ANSWER_FIELDS = {"bottleneck": "bottleneck", "lever": "lever", "gain": "gain_band", "reason": "reason",
                  "certainty": "certainty"}


def parse_answer(payload: Any, complete: bool = True) -> tuple[int, dict]:
    """(question index, prediction as the grader's ids) from the API's answer body
    {index, bottleneck, lever, gain, reason, estimates, certainty}. With `complete`, every choice
    must be given; a late lock may leave some blank."""
    if not isinstance(payload, Mapping):
        raise LiveRefusal(400, "send the answer as a JSON object")
    index = payload.get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        raise LiveRefusal(400, "say which question this answers: 'index' must be a whole number")
    prediction: dict[str, Any] = {}
    for api_name, name in _ANSWER_FIELDS.items():
        value = payload.get(api_name, "")
        if value is None:
            value = ""
        if not isinstance(value, str) or len(value) > 64:
            raise LiveRefusal(400, f"'{api_name}' must be one of the ids the card offers")
        if complete and not value:
            raise LiveRefusal(400, f"'{api_name}' is missing: every part is answered before it is locked in")
        prediction[name] = value
    estimates = payload.get("estimates") or {}
    if not isinstance(estimates, Mapping) or len(estimates) > 16:
        raise LiveRefusal(400, "'estimates' must be an object of name -> number")
    clean: dict[str, float] = {}
    for name, value in estimates.items():
        if (not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(float(value))):
            raise LiveRefusal(400, f"estimate {name!r} must be a finite number")
        clean[name] = float(value)
    prediction["estimates"] = clean
    return index, prediction


def answer_refusal(phase: str, open_index: int, index: int, already: bool,
                   read_reveal: bool = False) -> LiveRefusal | None:
    """Why an answer to question `index` cannot be taken now (None when it can). `read_reveal`:
    this player has already read that question's answer, so nothing they send for it is kept."""
    if already:
        return LiveRefusal(409, f"you already locked in an answer to question {index + 1}: it is final")
    if phase == "question" and index == open_index:
        return None
    if read_reveal:
        return LiveRefusal(409, f"question {index + 1} has closed and you have read its answer: nothing is kept")
    if phase == "lobby":
        return LiveRefusal(409, "the match has not started: wait for the first question")
    if is_closed(index, open_index, phase):
        return LiveRefusal(409, f"question {index + 1} has closed: too late, what you filled in is locked at zero points")
    return LiveRefusal(409, f"question {index + 1} is not open (question {open_index + 1} is)")


def keeps_late(phase: str, open_index: int, index: int, already: bool, read_reveal: bool) -> bool:
    """Whether what a late player filled in is kept (once, locked at zero points): only for the
    question that has just closed, only if they had not locked in, and never once they have read
    its answer (a late answer sent after the reveal could copy it)."""
    return not already and phase == "closed" and index == open_index and not read_reveal


def is_closed(index: int, open_index: int, phase: str) -> bool:
    """Whether question `index` has closed: an earlier one than the room's, or the room's own once
    it has closed (or the match is done). Its answer, the spread and the board wait for this."""
    return index < open_index or (index == open_index and phase in ("closed", "done"))


def shows_card(phase: str) -> bool:
    """Whether the room's question is on the players' screens (open, or closed with its reveal)."""
    return phase in ("question", "closed")


# --- the clock --------------------------------------------------------------------------------------

def seconds_left(deadline: float | None, now: float, paused_left: float | None = None) -> float | None:
    """Seconds until the deadline on the host's clock (frozen while paused); None without one."""
    if paused_left is not None:
        return max(0.0, paused_left)
    if deadline is None:
        return None
    return max(0.0, deadline - now)


def should_close(now: float, deadline: float | None, paused: bool, locked: int, players: int) -> bool:
    """A question closes when everyone in the room has locked in, or when its time is up."""
    if players > 0 and locked >= players:
        return True
    return not paused and deadline is not None and now >= deadline


def due(phase: str, now: float, *, auto: bool, first_join: float | None, lobby_seconds: float,
        deadline: float | None, paused: bool, locked: int, players: int, closed_at: float | None,
        reveal_seconds: float) -> str | None:
    """What the clock says happens now: "open" (the first question), "close", "next", or None.
    A self-running (headless) room opens `lobby_seconds` after the first join and goes on
    `reveal_seconds` after each close; a hosted one waits for the host's key for both."""
    if phase == "lobby":
        return "open" if auto and first_join is not None and now >= first_join + lobby_seconds else None
    if phase == "question":
        return "close" if should_close(now, deadline, paused, locked, players) else None
    if phase == "closed" and auto and closed_at is not None and now >= closed_at + reveal_seconds:
        return "next"
    return None


def skip(phase: str, now: float, closed_at: float | None, min_reveal: float = MIN_REVEAL_SECONDS) -> str | None:
    """What the host's "next" key does: in the lobby, open the first question; with a question
    open, close it (answers so far count); after a close, go on, but only once the answer has
    been up `min_reveal` seconds, so a double press never skips a reveal nobody saw."""
    if phase == "lobby":
        return "open"
    if phase == "question":
        return "close"
    if phase == "closed":
        shown_for = now - (closed_at if closed_at is not None else now)
        if shown_for < min_reveal:
            raise LiveRefusal(409, f"the answer has been up {shown_for:.0f} s: let the room read it, "
                                   f"then press again (from {min_reveal:g} s)")
        return "next"
    return None


def countdown(phase: str, now: float, *, auto: bool, deadline: float | None, paused_left: float | None,
              first_join: float | None, lobby_seconds: float, closed_at: float | None,
              reveal_seconds: float) -> float | None:
    """The seconds a screen counts down now: the open question's time; for a self-running room, also
    the lobby's wait after the first join and the reveal's before the next question; else None."""
    if phase == "question":
        return seconds_left(deadline, now, paused_left)
    if auto and phase == "lobby" and first_join is not None:
        return seconds_left(first_join + lobby_seconds, now)
    if auto and phase == "closed" and closed_at is not None:
        return seconds_left(closed_at + reveal_seconds, now)
    return None


def step_to(step: str, phase: str, index: int, count: int) -> tuple[str, int] | None:
    """The (phase, question index) a step of `due` or `skip` moves the room to, or None when it
    does not apply in this phase: "open" starts the first question from the lobby, "close" ends
    the open one, "next" opens the following question after a close, or ends the match."""
    if step == "open" and phase == "lobby":
        return "question", 0
    if step == "close" and phase == "question":
        return "closed", index
    if step == "next" and phase == "closed":
        return ("question", index + 1) if index + 1 < count else ("done", index)
    return None


def paused_clock(deadline: float, paused_left: float | None, now: float) -> tuple[float, float | None]:
    """The host's pause key on an open question, as (deadline, paused_left): a running clock
    freezes with the seconds it had left; a frozen one carries on from the same second."""
    if paused_left is not None:
        return now + paused_left, None
    return deadline, seconds_left(deadline, now)


def resumed_deadline(deadline: float, now: float, seconds: float) -> float:
    """After a restart, the open question keeps its deadline, but never less than a short grace
    (players were mid-answer while the host was down), and never more than a full question."""
    return now + min(float(seconds), max(deadline - now, RESUME_GRACE_SECONDS))


# --- the board, the spread, the podium ----------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One player on the live board."""

    name: str
    points: int
    cleared: int
    answered: int
    rank: int = 0
    outcomes: tuple = field(default=(), compare=False)

    def to_json(self) -> dict:
        return {"rank": self.rank, "name": self.name, "points": self.points, "cleared": self.cleared,
                "answered": self.answered}


def board(names: Sequence[str], grades: Mapping[tuple[str, int], LiveGrade], count: int,
          closed: Iterable[int] | None = None) -> list[Row]:
    """Every player ranked best first by the game's one board (`puzzles.boards`: points, ties
    share a rank, names break the order). `grades` maps (name, question index) to a grade; only
    the questions in `closed` count (all when None), so the board never moves while a question
    is open and two throw-away names cannot read a key from it; a late answer counts as not
    answered and shows as "late"."""
    from puzzles.boards import Entry, build_board

    counted = set(range(count) if closed is None else closed)
    outcomes, entries = {}, []
    for name in names:
        mine = [grades.get((name, i)) if i in counted else None for i in range(count)]
        got = [g for g in mine if g is not None and not g.late]
        outcomes[name] = tuple(g.shown if g else "" for g in mine)
        entries.append(Entry(name, "", sum(g.points for g in got), len(got),
                             sum(g.outcome == Outcome.CLEARED for g in got)))
    return [Row(s.entry.player, s.entry.score, s.entry.cleared, s.entry.answered, s.rank, outcomes[s.entry.player])
            for s in build_board(entries).players]


def podium(rows: Sequence[Row], places: int = 3) -> list[Row]:
    """The rows on the podium: every player ranked within the first `places`."""
    return [r for r in rows if r.rank <= places]


def spread(predictions: Iterable[Mapping[str, Any]], options: Mapping[str, Sequence[str]]) -> dict:
    """What share of the locked answers named each option: {'bottleneck': {id: share}, 'lever':
    {...}, 'locked': n}. Every offered option is listed (in its fixed order), even at zero."""
    chosen = list(predictions)
    out: dict[str, Any] = {"locked": len(chosen)}
    for part, field_name in (("bottleneck", "bottleneck"), ("lever", "lever")):
        counts = {opt: 0 for opt in options.get(part, ())}
        for p in chosen:
            said = p.get(field_name) or ""
            if said:
                counts[said] = counts.get(said, 0) + 1
        total = len(chosen)
        out[part] = {opt: (n / total if total else 0.0) for opt, n in counts.items()}
    return out


def public_card(card: Mapping[str, Any], index: int) -> dict:
    """The card players see while a question is open: the puzzle's JSON without its answer, its
    generated id (which names the seed, and so every key) replaced by the question number, and
    no hints (nobody pays for hints in a live match)."""
    out = {k: v for k, v in card.items() if k != "answer"}
    out["id"] = f"q{index + 1}"
    out["hints"] = []
    return out


# --- exported results -------------------------------------------------------------------------------

def results_csv(rows: Sequence[Row], count: int) -> str:
    """The final board as CSV: rank, name, points, cleared, answered, then each question's outcome."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["rank", "name", "points", "cleared", "answered"] + [f"q{i + 1}" for i in range(count)])
    for r in rows:
        outcomes = list(r.outcomes) + [""] * (count - len(r.outcomes))
        writer.writerow([r.rank, _csv_safe(r.name), r.points, r.cleared, r.answered]
                        + [o or NO_ANSWER for o in outcomes[:count]])
    return buf.getvalue()


def _csv_safe(text: str) -> str:
    """A cell a spreadsheet will not run as a formula."""
    return "'" + text if text[:1] in "=+-@" else text


# --- the facilitator's report ---------------------------------------------------------------------

@dataclass(frozen=True)
class QuestionStats:
    """How the room did on one closed question. `right` counts right answers (cleared or lucky,
    on time), `cleared` those right for the right reason; the most common wrong answer is the
    (bottleneck, lever) pair most named among on-time answers that got either part wrong."""

    index: int
    title: str
    concepts: tuple[str, ...]
    players: int
    answered: int
    right: int
    cleared: int
    late: int
    key: tuple[str, str]
    wrong: tuple[str, str] | None = None
    wrong_count: int = 0

    @property
    def accuracy(self) -> float:
        return self.right / self.players if self.players else 0.0


@dataclass(frozen=True)
class ConceptStats:
    """How the room did on one concept, over every closed question that exercises it."""

    concept: str
    questions: int
    chances: int   # players x questions
    right: int
    cleared: int

    @property
    def accuracy(self) -> float:
        return self.right / self.chances if self.chances else 0.0


@dataclass(frozen=True)
class Report:
    title: str
    count: int
    questions: tuple[QuestionStats, ...]   # closed questions only, in order
    concepts: tuple[ConceptStats, ...]     # in the course's order
    rows: tuple[Row, ...]


def question_stats(index: int, title: str, concepts: Sequence[str], key: tuple[str, str], players: Sequence[str],
                   answers: Mapping[tuple[str, int], tuple[Mapping[str, Any], LiveGrade]]) -> QuestionStats:
    """One question's line in the report, from the locked answers of the players still in."""
    mine = [answers[(name, index)] for name in players if (name, index) in answers]
    on_time = [(p, g) for p, g in mine if not g.late]
    right = sum(g.outcome in (Outcome.CLEARED, Outcome.LUCKY) for _, g in on_time)
    cleared = sum(g.outcome == Outcome.CLEARED for _, g in on_time)
    wrong: dict[tuple[str, str], int] = {}
    for prediction, _ in on_time:
        pair = (str(prediction.get("bottleneck") or ""), str(prediction.get("lever") or ""))
        if pair != tuple(key):
            wrong[pair] = wrong.get(pair, 0) + 1
    top = min(wrong.items(), key=lambda kv: (-kv[1], kv[0])) if wrong else None
    return QuestionStats(index, title, tuple(concepts), len(players), len(on_time), right, cleared,
                         len(mine) - len(on_time), tuple(key), top[0] if top else None, top[1] if top else 0)


def concept_stats(questions: Sequence[QuestionStats]) -> tuple[ConceptStats, ...]:
    """Per concept: every closed question that exercises it, each player a chance to get it right."""
    from puzzles.puzzle import MODULES

    found: dict[str, list[QuestionStats]] = {}
    for q in questions:
        for concept in q.concepts:
            found.setdefault(concept, []).append(q)
    order = [m for m in MODULES if m in found] + sorted(c for c in found if c not in MODULES)
    return tuple(ConceptStats(c, len(found[c]), sum(q.players for q in found[c]), sum(q.right for q in found[c]),
                              sum(q.cleared for q in found[c])) for c in order)


def report(title: str, made: Sequence[Any], players: Sequence[str],
           answers: Mapping[tuple[str, int], tuple[Mapping[str, Any], LiveGrade]], closed: Iterable[int]) -> Report:
    """The facilitator's report over the closed questions: `made` are the match's generated
    puzzles (puzzle + key), `answers` maps (player, question index) to (prediction, grade)."""
    from puzzles.concepts import concepts_of
    from puzzles.grading import objective_bottleneck

    shut = sorted(set(closed))
    stats = tuple(question_stats(i, made[i].puzzle.title, concepts_of(made[i].key),
                                 (objective_bottleneck(made[i].key), made[i].key.best_lever), players, answers)
                  for i in shut)
    grades = {k: g for k, (_, g) in answers.items()}
    return Report(title, len(made), stats, concept_stats(stats), tuple(board(players, grades, len(made), shut)))


def _pct(n: int, of: int) -> str:
    return f"{n}/{of} ({n / of:.0%})" if of else "0/0"


def _pair(pair: tuple[str, str] | None, words) -> str:
    return f"{words('bottleneck', pair[0])} · {words('lever', pair[1])}" if pair else ""


def _plain_words(kind: str, identifier: str) -> str:
    return identifier or "(blank)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_markdown(rep: Report, words=_plain_words, concept_titles: Mapping[str, str] | None = None) -> str:
    """The report as Markdown: questions (accuracy, most common wrong answer), concepts, players."""
    titles = concept_titles or {}
    lines = [f"# {rep.title}", "",
             f"{len(rep.rows)} players · {len(rep.questions)} of {rep.count} questions closed. "
             "Right = the right bottleneck, lever and gain (cleared or lucky); cleared = right for the right "
             "reason; a late answer scores nothing.", "",
             "## Questions", "",
             "| Q | Question | Right answer | Right | Cleared | Late | Most common wrong answer |",
             "|---:|---|---|---:|---:|---:|---|"]
    for q in rep.questions:
        wrong = f"{_pair(q.wrong, words)} ({q.wrong_count})" if q.wrong else "–"
        lines.append(f"| {q.index + 1} | {_cell(q.title)} | {_cell(_pair(q.key, words))} | {_pct(q.right, q.players)} | "
                     f"{q.cleared} | {q.late} | {_cell(wrong)} |")
    lines += ["", "## Concepts", "", "| Concept | Questions | Right | Cleared |", "|---|---:|---:|---:|"]
    for c in rep.concepts:
        lines.append(f"| {_cell(titles.get(c.concept, c.concept))} | {c.questions} | {_pct(c.right, c.chances)} | "
                     f"{c.cleared} |")
    lines += ["", "## Players", "",
              "| # | Player | Points | Cleared | " + " | ".join(f"Q{i + 1}" for i in range(rep.count)) + " |",
              "|---:|---|---:|---:|" + "---|" * rep.count]
    for r in rep.rows:
        outcomes = list(r.outcomes) + [""] * (rep.count - len(r.outcomes))
        lines.append(f"| {r.rank} | {_cell(r.name)} | {r.points} | {r.cleared} | "
                     + " | ".join(o or "–" for o in outcomes[:rep.count]) + " |")
    return "\n".join(lines) + "\n"


def questions_csv(rep: Report) -> str:
    """One row per closed question, for a spreadsheet."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["question", "title", "concepts", "players", "answered", "right", "cleared", "late", "accuracy",
                     "key_bottleneck", "key_lever", "most_common_wrong_bottleneck", "most_common_wrong_lever",
                     "most_common_wrong_count"])
    for q in rep.questions:
        wrong = q.wrong or ("", "")
        writer.writerow([q.index + 1, _csv_safe(q.title), " ".join(q.concepts), q.players, q.answered, q.right,
                         q.cleared, q.late, f"{q.accuracy:.3f}", q.key[0], q.key[1], wrong[0], wrong[1], q.wrong_count])
    return buf.getvalue()


def concepts_csv(rep: Report) -> str:
    """One row per concept the closed questions exercised."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["concept", "questions", "chances", "right", "cleared", "accuracy"])
    for c in rep.concepts:
        writer.writerow([c.concept, c.questions, c.chances, c.right, c.cleared, f"{c.accuracy:.3f}"])
    return buf.getvalue()
