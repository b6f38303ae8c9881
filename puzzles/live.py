"""The rules of a live match, headless: who may join, when an answer counts, how it scores, when a
question closes, the board, the answer spread and the exported results.

A host runs the room (`ridge host`); players only ever send predictions. The host's clock decides
everything: a question is open from `opened` to `deadline` (wall-clock seconds, so a restarted
host can carry on), and an answer counts when it reaches the host while its question is open.
Each player answers each question once. An answer that arrives after the close is refused, but
what that player had filled in is kept, locked at zero points, so the reveal can show it.

Every answer is graded by THE grader (`puzzles.grading.grade`) through `grade_answer`, the one
call site, so a change in the grader's signature is one edit here. Scores are derived from the
recorded predictions whenever they are needed, never stored. Imports no Textual, no saves.
"""
from __future__ import annotations

import csv
import io
import math
import re
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
PIN_PATTERN = re.compile(r"^\d{4,8}$")
_NICK = re.compile(r"^[\w][\w \-.']{0,23}$")


class LiveRefusal(Exception):
    """A request the room turns down: an HTTP-like status and one line saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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


def check_join(pin_given: Any, pin: str, name: Any, taken: Iterable[str], players: int, max_players: int) -> str:
    """The cleaned nickname when this join may go ahead; LiveRefusal otherwise, checked in the
    order a player can act on: the pin (403), the name (400, 409), then room (503)."""
    check_pin_given(pin_given, pin)
    nick = clean_name(name)
    if fold(nick) in {fold(t) for t in taken}:
        raise LiveRefusal(409, f"the nickname {nick!r} is taken in this room: pick another")
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

    def to_json(self) -> dict:
        return {"outcome": self.outcome, "points": self.points, "late": self.late, "parts": list(self.parts)}


def _parts_json(parts: Any) -> tuple:
    """The grader's parts as plain JSON rows (it may give a dict of name -> right, or rows)."""
    if isinstance(parts, Mapping):
        return tuple({"name": str(k), "right": bool(v)} for k, v in parts.items())
    import dataclasses

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


def answer_refusal(phase: str, open_index: int, index: int, already: bool) -> LiveRefusal | None:
    """Why an answer to question `index` cannot be taken now (None when it can)."""
    if already:
        return LiveRefusal(409, f"you already locked in an answer to question {index + 1}: it is final")
    if phase == "question" and index == open_index:
        return None
    if phase == "lobby":
        return LiveRefusal(409, "the match has not started: wait for the first question")
    if index < open_index or (index == open_index and phase in ("closed", "done")):
        return LiveRefusal(409, f"question {index + 1} has closed: too late, what you filled in is locked at zero points")
    return LiveRefusal(409, f"question {index + 1} is not open (question {open_index + 1} is)")


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


def board(names: Sequence[str], grades: Mapping[tuple[str, int], LiveGrade], count: int) -> list[Row]:
    """Every player ranked best first by the game's one board (`puzzles.boards`: points, ties
    share a rank, names break the order). `grades` maps (name, question index) to a grade; a late
    answer counts as not answered."""
    from puzzles.boards import Entry, build_board

    outcomes, entries = {}, []
    for name in names:
        mine = [grades.get((name, i)) for i in range(count)]
        got = [g for g in mine if g is not None and not g.late]
        outcomes[name] = tuple(g.outcome if g else "" for g in mine)
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


def results_markdown(rows: Sequence[Row], count: int, title: str, keys: Sequence[Mapping[str, Any]] = ()) -> str:
    """The final board as a Markdown table, with each question's answer underneath."""
    lines = [f"# {title}", "", "| # | Player | Points | Cleared | " + " | ".join(f"Q{i + 1}" for i in range(count)) + " |",
             "|---:|---|---:|---:|" + "---|" * count]
    for r in rows:
        outcomes = list(r.outcomes) + [""] * (count - len(r.outcomes))
        name = r.name.replace("|", "\\|")
        lines.append(f"| {r.rank} | {name} | {r.points} | {r.cleared}/{count} | "
                     + " | ".join(o or "–" for o in outcomes[:count]) + " |")
    if keys:
        lines += ["", "## The answers", ""]
        for i, k in enumerate(keys):
            lines.append(f"{i + 1}. {k.get('title', '')}: {k.get('bottleneck')} · best lever {k.get('best_lever')} "
                         f"({k.get('gain_band')}) · because {k.get('reason')}")
    return "\n".join(lines) + "\n"
