"""Competitions: match codes, one tamper-evident result file per player, scoring and the board.

A match code names the same seeded puzzles on every machine: `R-<seed>-<difficulty>-<count>`,
with `-S` at the end when answers earn a speed bonus (`R-42-3-10-S`). Puzzle n of a match is the
generated puzzle `gen-s<seed>-d<difficulty>-<n-1>`.

Each player's machine writes a result file (plain TOML, rewritten atomically after every answer):
the match code, the player, an optional team, and each answer with the engine's key, its outcome,
and a hash chain (`saves.chain`). The first answer links to a hash of the header, so renaming
the player or changing the team breaks the chain; a seal over the last hash and the number of
answers catches an answer cut from the end. Reading a file also regenerates each puzzle and
grades its prediction again, so an edited outcome or key is caught even when the hashes were
recomputed (the chain alone is tamper evidence, not proof: someone who edits a prediction and
recomputes every hash is not caught, which would need a secret key).

Scoring (every number derived from the answers, never stored): each answer earns the game's
certainty-marked points (`puzzles.scoring`: the right answer for the right reason earns most, a
confident wrong answer costs most), plus, when the match has one, a speed bonus for cleared
answers only, so guessing fast never pays. Teams score the average of their members. The board
shows the top five plus the players around you. Imports no Textual.
"""
from __future__ import annotations

import datetime as _dt
import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bounds import MAX_DEPTH, data_depth, one_line
from engine.errors import RidgeError
from saves.chain import GENESIS, chain_hash, verify_chain

FILE_KIND = "ridge-match-result"
FILE_VERSION = 1
MAX_COUNT = 50
MAX_RESULT_BYTES = 4 << 20  # a 50-answer result file is about 40 KiB
MAX_SEED = 10**12 - 1
SPEED_WINDOW_SECONDS = 120.0
SPEED_BONUS_MAX = 5
TOP = 5
_CODE = re.compile(r"^R-(\d{1,12})-([1-5])-(\d{1,2})(-S)?$", re.IGNORECASE)
_NAME = re.compile(r"^[\w\- ]{1,32}$")


class MatchFileError(RidgeError):
    """A result file that cannot be trusted; the message says why, in one line."""


# --- match codes ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class MatchCode:
    """What a match code encodes: the seed, the difficulty, how many puzzles, the speed bonus."""

    seed: int
    difficulty: int
    count: int
    speed_bonus: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.seed <= MAX_SEED:
            raise RidgeError(f"a match seed is a whole number from 0 to {MAX_SEED}, got {self.seed}")
        if not 1 <= self.difficulty <= 5:
            raise RidgeError(f"a match difficulty is 1 to 5, got {self.difficulty}")
        if not 1 <= self.count <= MAX_COUNT:
            raise RidgeError(f"a match has 1 to {MAX_COUNT} puzzles, got {self.count}")

    def __str__(self) -> str:
        return f"R-{self.seed}-{self.difficulty}-{self.count}" + ("-S" if self.speed_bonus else "")

    @classmethod
    def parse(cls, text: str) -> MatchCode:
        m = _CODE.match(str(text).strip())
        if not m:
            raise RidgeError(f"'{text}' is not a match code (they look like R-42-3-10, or R-42-3-10-S "
                             "with a speed bonus: seed, difficulty 1-5, number of puzzles)")
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), bool(m.group(4)))

    def puzzle_id(self, number: int) -> str:
        """The id of puzzle `number` (1-based) of this match."""
        return f"gen-s{self.seed}-d{self.difficulty}-{number - 1:04d}"

    def puzzle_ids(self) -> list[str]:
        return [self.puzzle_id(n) for n in range(1, self.count + 1)]


# --- scoring -------------------------------------------------------------------------------------

def speed_bonus(outcome: str, seconds: float | None) -> int:
    """Up to SPEED_BONUS_MAX extra points for a cleared answer, falling to 0 at SPEED_WINDOW_SECONDS."""
    if outcome != "cleared" or seconds is None or not math.isfinite(seconds) or seconds < 0:
        return 0
    return round(SPEED_BONUS_MAX * max(0.0, 1.0 - seconds / SPEED_WINDOW_SECONDS))


def answer_score(outcome: str, certainty: str, seconds: float | None = None, with_speed: bool = False) -> int:
    """One answer's score: certainty-marked points, plus the speed bonus when the match has one."""
    from puzzles.scoring import points

    return points(outcome, certainty) + (speed_bonus(outcome, seconds) if with_speed else 0)


# --- the board -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One player's totals, as the board ranks them."""

    player: str
    team: str
    score: int
    answered: int = 0
    cleared: int = 0
    confident_misses: int = 0  # wrong answers given with high certainty


@dataclass(frozen=True)
class Standing:
    rank: int
    entry: Entry


@dataclass(frozen=True)
class TeamStanding:
    rank: int
    team: str
    score: float  # the members' average
    members: tuple[str, ...]


def _ranked(items: list, score) -> list[tuple[int, Any]]:
    """Competition ranking (1, 2, 2, 4) of items already sorted best first."""
    out = []
    for i, item in enumerate(items):
        rank = out[-1][0] if out and score(out[-1][1]) == score(item) else i + 1
        out.append((rank, item))
    return out


@dataclass(frozen=True)
class Board:
    """Every player ranked, every team ranked by its members' average score."""

    players: tuple[Standing, ...]
    teams: tuple[TeamStanding, ...]
    code: str = ""
    speed_bonus: bool = False

    def find(self, player: str | None) -> int | None:
        if not player:
            return None
        folded = player.casefold()
        return next((i for i, s in enumerate(self.players) if s.entry.player.casefold() == folded), None)

    def shown(self, me: str | None = None, top: int = TOP, reach: int = 1) -> list[Standing | None]:
        """The top `top` rows, then (when `me` ranks below them) a gap, shown as None, and the
        rows from `reach` above `me` to `reach` below."""
        rows: list[Standing | None] = list(self.players[:top])
        i = self.find(me)
        if i is None or i < top:
            return rows
        start = max(top, i - reach)
        if start > top:
            rows.append(None)
        rows.extend(self.players[start:i + reach + 1])
        return rows


def build_board(entries: Iterable[Entry], code: str = "", with_speed: bool = False) -> Board:
    """Rank players by score (ties share a rank; names break the order), and teams by average."""
    ordered = sorted(entries, key=lambda e: (-e.score, e.player.casefold(), e.player))
    players = tuple(Standing(rank, e) for rank, e in _ranked(ordered, lambda e: e.score))
    teams: dict[str, list[Entry]] = {}
    for e in ordered:
        if e.team:
            teams.setdefault(e.team, []).append(e)
    averaged = sorted(((name, sum(m.score for m in members) / len(members), tuple(m.player for m in members))
                       for name, members in teams.items()), key=lambda t: (-t[1], t[0].casefold()))
    team_rows = tuple(TeamStanding(rank, name, round(avg, 2), members)
                      for rank, (name, avg, members) in _ranked(averaged, lambda t: round(t[1], 9)))
    return Board(players, team_rows, code, with_speed)


def board_lines(board: Board, me: str | None = None, width: int = 72, top: int = TOP) -> list[str]:
    """The board as text: rank, player, team, score, cleared/answered, confident misses; the top
    `top` rows and the rows around `me`."""
    name_w = max(6, min(20, max((len(s.entry.player) for s in board.players), default=6)))
    team_w = max(4, min(14, max((len(s.entry.team) for s in board.players), default=4)))
    teams = any(s.entry.team for s in board.players)
    team_head = f"{'Team':<{team_w}}  " if teams else ""
    head = f"{'#':>3}  {'Player':<{name_w}}  {team_head}{'Score':>6}  {'Cleared':>7}  {'Sure but wrong':>14}"
    lines = [head[:width]]
    i_me = board.find(me)
    for row in board.shown(me, top=top):
        if row is None:
            lines.append(f"{'…':>3}")
            continue
        e = row.entry
        mark = "▶" if i_me is not None and board.players[i_me] is row else " "
        team = f"{e.team[:team_w] or '-':<{team_w}}  " if teams else ""
        lines.append((f"{row.rank:>3}{mark} {e.player[:name_w]:<{name_w}}  {team}"
                      f"{e.score:>6}  {f'{e.cleared}/{e.answered}':>7}  {e.confident_misses:>14}")[:width])
    if board.teams:
        lines += ["", f"{'#':>3}  {'Team':<{team_w}}  {'Average':>8}  Members"]
        for t in board.teams:
            lines.append(f"{t.rank:>3}  {t.team[:team_w]:<{team_w}}  {t.score:>8.1f}  {', '.join(t.members)}"[:width])
    return lines


def board_json(board: Board, me: str | None = None) -> dict[str, Any]:
    def row(s: Standing) -> dict[str, Any]:
        e = s.entry
        return {"rank": s.rank, "player": e.player, "team": e.team or None, "score": e.score,
                "answered": e.answered, "cleared": e.cleared, "confident_misses": e.confident_misses}

    return {
        "match": board.code or None, "speed_bonus": board.speed_bonus,
        "players": [row(s) for s in board.players],
        "shown": [None if s is None else row(s) for s in board.shown(me)],
        "teams": [{"rank": t.rank, "team": t.team, "score": t.score, "members": list(t.members)}
                  for t in board.teams],
    }


# --- result files --------------------------------------------------------------------------------

def _stamp(moment: _dt.datetime) -> str:
    if moment.tzinfo is None:
        raise RidgeError("match times need a timezone")
    u = moment.astimezone(_dt.timezone.utc)
    return u.strftime("%Y-%m-%dT%H:%M:%S.") + f"{u.microsecond // 1000:03d}Z"


def _header(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: doc.get(k) for k in ("schema_version", "kind", "match", "player", "team", "started")}


def _seal(last_hash: str, doc: dict[str, Any], count: int) -> str:
    return chain_hash(last_hash, {"answers": count, "match": doc.get("match"), "player": doc.get("player")})


def check_name(text: str, what: str = "player") -> str:
    text = str(text).strip()
    if not _NAME.match(text):
        raise RidgeError(f"a {what} name is 1-32 letters, digits, spaces, '-' or '_', got {text!r}")
    return text


def answer_record(puzzle_id: str, prediction: dict, key: Any, outcome: str, seconds: float | None,
                  locked_at: _dt.datetime) -> dict[str, Any]:
    """One answer as the file holds it (before it is linked into the chain). `key` is the engine's
    key (an object with bottleneck, best_lever, gain_band, reason, or a dict of them)."""
    get = (lambda k: key.get(k, "")) if isinstance(key, dict) else (lambda k: getattr(key, k, "") or "")
    pred: dict[str, Any] = {k: str(prediction.get(k) or "") for k in
                            ("bottleneck", "lever", "gain_band", "reason", "certainty")}
    estimates = {str(k): float(v) for k, v in (prediction.get("estimates") or {}).items()}
    if estimates:
        pred["estimates"] = estimates
    rec: dict[str, Any] = {"puzzle_id": puzzle_id, "locked_at": _stamp(locked_at), "outcome": outcome,
                           "prediction": pred,
                           "key": {k: str(get(k)) for k in ("bottleneck", "best_lever", "gain_band", "reason")}}
    if seconds is not None:
        rec["seconds"] = round(float(max(0.0, seconds)), 3)
    return rec


def result_doc(code: MatchCode | str, player: str, team: str, started: _dt.datetime,
               answers: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The whole file: header, answers linked into the chain from the header's hash, and the seal."""
    doc: dict[str, Any] = {"schema_version": FILE_VERSION, "kind": FILE_KIND, "match": str(code),
                           "player": check_name(player), "team": check_name(team, "team") if team else "",
                           "started": _stamp(started)}
    prev = chain_hash(GENESIS, _header(doc))
    linked = []
    for seq, answer in enumerate(answers, 1):
        body = {k: v for k, v in answer.items() if k not in ("seq", "prev_hash", "hash")}
        rec = {"seq": seq, **body, "prev_hash": prev}
        rec["hash"] = chain_hash(prev, rec)
        linked.append(rec)
        prev = rec["hash"]
    doc["answers_count"] = len(linked)
    doc["seal"] = _seal(prev, doc, len(linked))
    if linked:
        doc["answers"] = linked
    return doc


def write_result(path: Path, doc: dict[str, Any]) -> None:
    """Write a result file atomically (the old one or the new one, never half of each)."""
    from saves import atomic
    from saves.tomlio import dumps

    atomic.make_dir(path.parent)
    atomic.write_atomic(path, dumps(doc))


class ResultWriter:
    """Keeps one player's result file up to date: `add` appends an answer and rewrites the file."""

    def __init__(self, path: Path, code: MatchCode, player: str, team: str, started: _dt.datetime) -> None:
        self.path, self.code, self.player, self.team, self.started = Path(path), code, player, team, started
        self.answers: list[dict[str, Any]] = []
        result_doc(code, player, team, started, [])  # checks the names now, before any answer

    def add(self, record: dict[str, Any]) -> dict[str, Any]:
        self.answers.append(record)
        doc = result_doc(self.code, self.player, self.team, self.started, self.answers)
        write_result(self.path, doc)
        return doc


def result_path(folder: Path, code: MatchCode | str, player: str) -> Path:
    """Where a player's result file goes: <folder>/<code>-<player>.toml (spaces as '_')."""
    return Path(folder) / f"{code}-{player.replace(' ', '_')}.toml"


@dataclass(frozen=True)
class Answer:
    seq: int
    puzzle_id: str
    outcome: str
    certainty: str
    seconds: float | None
    prediction: dict = field(compare=False)
    key: dict = field(compare=False)


@dataclass(frozen=True)
class MatchResult:
    """A verified result file."""

    code: MatchCode
    player: str
    team: str
    answers: tuple[Answer, ...]
    source: str = ""

    def entry(self) -> Entry:
        with_speed = self.code.speed_bonus
        score = sum(answer_score(a.outcome, a.certainty, a.seconds, with_speed) for a in self.answers)
        cleared = sum(a.outcome == "cleared" for a in self.answers)
        bold = sum(a.certainty == "high" and a.outcome in ("close", "missed") for a in self.answers)
        return Entry(self.player, self.team, score, len(self.answers), cleared, bold)


def _fail(message: str) -> MatchFileError:
    return MatchFileError(message)


def _need(data: dict, name: str, kind: type | tuple) -> Any:
    value = data.get(name)
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise _fail(f"'{name}' is missing or not {'text' if kind is str else 'a number'}")
    return value


def verify_doc(data: dict[str, Any], source: str = "", regrade: bool = True) -> MatchResult:
    """Check a parsed result file and return it, or raise MatchFileError saying what is wrong."""
    from puzzles.scoring import CERTAINTIES, OUTCOMES

    if data.get("kind") != FILE_KIND:
        raise _fail("not a Ridge match result (its 'kind' is not ridge-match-result)")
    version = data.get("schema_version")
    if version != FILE_VERSION or isinstance(version, bool):
        raise _fail(f"written in result format {version!r}; this Ridge reads format {FILE_VERSION}")
    code = MatchCode.parse(_need(data, "match", str))
    player = _need(data, "player", str)
    team = _need(data, "team", str)
    _need(data, "started", str)
    seal = _need(data, "seal", str)
    stated = _need(data, "answers_count", int)
    answers = data.get("answers", [])
    if not isinstance(answers, list) or not all(isinstance(a, dict) for a in answers):
        raise _fail("'answers' must be a list of tables ([[answers]])")
    start = chain_hash(GENESIS, _header(data))
    if answers and answers[0].get("prev_hash") != start:
        raise _fail("the header (match, player, team or start time) was edited after the file was written")
    for problem in verify_chain(answers, prev_hash=start, first_seq=1):
        detail = problem.detail.replace("attempt", "answer")
        which = f"answer {problem.seq}" if problem.seq is not None else f"answer #{problem.index + 1}"
        raise _fail(f"{which} was {problem.kind} after the file was written ({detail})")
    last = answers[-1]["hash"] if answers else start
    if stated != len(answers) or seal != _seal(last, data, len(answers)):
        raise _fail(f"the seal does not match the {len(answers)} answers in the file: answers were "
                    "removed or added at the end, or the count was edited")
    if len(answers) > code.count:
        raise _fail(f"it holds {len(answers)} answers but match {code} has {code.count} puzzles")
    out = []
    for seq, rec in enumerate(answers, 1):
        expected = code.puzzle_id(seq)
        if rec.get("puzzle_id") != expected:
            raise _fail(f"answer {seq} is for {rec.get('puzzle_id')!r}, but puzzle {seq} of {code} is {expected}")
        pred, key = rec.get("prediction"), rec.get("key")
        if not isinstance(pred, dict) or not isinstance(key, dict):
            raise _fail(f"answer {seq} has no prediction or no key")
        outcome, certainty = rec.get("outcome"), pred.get("certainty")
        if outcome not in OUTCOMES:
            raise _fail(f"answer {seq}: outcome {outcome!r} is not cleared, lucky, close or missed")
        if certainty not in CERTAINTIES:
            raise _fail(f"answer {seq}: certainty {certainty!r} is not low, medium or high")
        seconds = rec.get("seconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or not math.isfinite(seconds) or seconds < 0):
            raise _fail(f"answer {seq}: seconds must be a number of seconds, got {seconds!r}")
        if regrade:
            _regrade(seq, expected, pred, key, outcome)
        out.append(Answer(seq, expected, outcome, certainty, None if seconds is None else float(seconds),
                          dict(pred), dict(key)))
    return MatchResult(code, check_name(player), check_name(team, "team") if team else "", tuple(out), source)


def _regrade(seq: int, puzzle_id: str, pred: dict, key: dict, outcome: str) -> None:
    """The key must be the engine's and the outcome must be what the prediction grades as."""
    from puzzles.generator import from_id
    from puzzles.questions import judge, make_item

    gen = from_id(puzzle_id)
    engine = gen.key
    for name in ("bottleneck", "best_lever", "gain_band", "reason"):
        if key.get(name) != getattr(engine, name):
            raise _fail(f"answer {seq}: the engine's key was edited ({name} says {key.get(name)!r}; "
                        f"the engine says {getattr(engine, name)!r})")
    estimates = pred.get("estimates") or {}
    if not isinstance(estimates, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in estimates.values()):
        raise _fail(f"answer {seq}: estimates must be numbers")
    graded = judge(make_item(gen.puzzle, engine), {**pred, "estimates": estimates}).outcome
    if graded != outcome:
        raise _fail(f"answer {seq}: the outcome says {outcome}, but its prediction grades as {graded}")


def read_result(path: Path | str, regrade: bool = True) -> MatchResult:
    """Read and verify one result file; MatchFileError (one line, without the path) if it fails."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_RESULT_BYTES + 1)  # capped: /dev/zero must not fill memory
    except FileNotFoundError:
        raise _fail("no such file") from None
    except IsADirectoryError:
        raise _fail("is a folder, not a match result") from None
    except OSError as exc:
        raise _fail(f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_RESULT_BYTES:
        raise _fail(f"larger than {MAX_RESULT_BYTES >> 20} MiB, so not a Ridge match result")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise _fail("not UTF-8 text, so not a Ridge match result") from None
    except tomllib.TOMLDecodeError as exc:
        raise _fail(f"not valid TOML ({one_line(exc, 200)})") from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        raise _fail(f"not valid TOML ({type(exc).__name__})") from None
    if data_depth(data) > MAX_DEPTH:
        raise _fail(f"nested more than {MAX_DEPTH} levels deep, so not a Ridge match result")
    return verify_doc(data, str(path), regrade)


@dataclass(frozen=True)
class Merged:
    """The board from the files that passed, and (file, reason) for every file that did not."""

    board: Board | None
    accepted: tuple[MatchResult, ...]
    rejected: tuple[tuple[str, str], ...]


def merge(results: Sequence[MatchResult]) -> Board:
    """The board for verified results of one match."""
    code = results[0].code if results else None
    return build_board((r.entry() for r in results), str(code or ""), bool(code and code.speed_bonus))


def merge_files(paths: Sequence[Path | str], regrade: bool = True) -> Merged:
    """Read every file, keep those that verify, belong to the first good file's match and name a
    player not seen before, and build the board from them."""
    accepted: list[MatchResult] = []
    rejected: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for path in paths:
        try:
            result = read_result(path, regrade)
        except MatchFileError as exc:
            rejected.append((str(path), str(exc)))
            continue
        if accepted and result.code != accepted[0].code:
            rejected.append((str(path), f"it is from match {result.code}, not {accepted[0].code}"))
            continue
        folded = result.player.casefold()
        if folded in seen:
            rejected.append((str(path), f"player {result.player!r} already has a result ({seen[folded]})"))
            continue
        seen[folded] = str(path)
        accepted.append(result)
    board = merge(accepted) if accepted else None
    return Merged(board, tuple(accepted), tuple(rejected))
