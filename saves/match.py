"""Match result files: one tamper-evident TOML file per player, written and read back.

Each player's machine writes a result file (plain TOML, rewritten atomically after every answer):
the match code, the player, an optional team, and each answer with the engine's key, its outcome,
and a hash chain (`saves.chain`). The first answer links to a hash of the header, so renaming
the player or changing the team breaks the chain; a seal over the last hash and the number of
answers catches an answer cut from the end. Reading a file also regenerates each puzzle and
grades its prediction again (`puzzles.match.regrade_problem`, through the one grader), so an
edited outcome or key is caught even when the hashes were recomputed (the chain alone is tamper
evidence, not proof: someone who edits a prediction and recomputes every hash is not caught,
which would need a secret key).

The rules live in `puzzles`: match codes and scoring in `puzzles.match`, the board in
`puzzles.boards`. This module is persistence only. Imports no Textual.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bounds import MAX_DEPTH, NotAFile, TooLarge, data_depth, one_line, read_regular, shown
from engine.errors import RidgeError
from saves.chain import GENESIS, chain_hash, verify_chain

from puzzles.boards import Board, Entry, build_board, entry_for
from puzzles.match import MatchCode, check_name, regrade_problem

FILE_KIND = "ridge-match-result"
FILE_VERSION = 1
MAX_RESULT_BYTES = 4 << 20  # a 50-answer result file is about 40 KiB
# What a result file's times may say (times cannot be proven without a secret key, only held to
# what a real match can produce): every answer takes some time (more than 0 s) and at most
# QUESTION_LIMIT_SECONDS, and no more than the time since the answer before it (or the start) was
# locked in; lock times run in order, within the match's window of QUESTION_LIMIT_SECONDS per
# puzzle from its start, and not later than now (allowing CLOCK_SKEW_SECONDS between clocks).
QUESTION_LIMIT_SECONDS = 3600.0
CLOCK_SKEW_SECONDS = 300.0
_TOLERANCE = 1.0  # seconds: a lock time is stored to the millisecond, the answer's time is measured apart


class MatchFileError(RidgeError):
    """A result file that cannot be trusted; the message says why, in one line (RidgeError holds
    it to 300 characters: an edited value once made a 3,054-character line)."""


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


def answer_record(puzzle_id: str, grade: Any, seconds: float | None, locked_at: _dt.datetime) -> dict[str, Any]:
    """One graded answer as the file holds it (before it is linked into the chain): the
    prediction and the key it was judged against, as `puzzles.attempts` states them."""
    from puzzles.attempts import key_fields, prediction_fields

    pred: dict[str, Any] = prediction_fields(grade)
    if not pred["estimates"]:
        del pred["estimates"]
    rec: dict[str, Any] = {"puzzle_id": puzzle_id, "locked_at": _stamp(locked_at), "outcome": str(grade.outcome),
                           "prediction": pred, "key": key_fields(grade)}
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


def done_lines(code: MatchCode, player: str, scores: Sequence[int], outcomes: Sequence[str], path: Path,
               practice: bool = False) -> list[str]:
    """The end of a match played here: the player's points and clears, their result file and the
    host's command that merges everyone's (a replay is practice: its first play's file stands)."""
    from engine.ids import Outcome

    cleared = list(outcomes).count(Outcome.CLEARED)
    return (["Practice: nothing was written; your first play's result file stands.", ""] if practice else []) + [
        f"{player}: {sum(scores):+d} points, {cleared} of {len(outcomes)} cleared.", "",
        "Your result file:", f"  {path}", "",
        "Send it to the host. The host puts everyone's files in one folder and runs:",
        f"  ridge match results {Path(path).parent if path else '.'}/{code}-*.toml --me NAME"]


@dataclass(frozen=True)
class Answer:
    seq: int
    puzzle_id: str
    outcome: str
    certainty: str
    seconds: float | None
    prediction: dict = field(compare=False)
    key: dict = field(compare=False)
    locked_at: str = field(default="", compare=False)


@dataclass(frozen=True)
class MatchResult:
    """A verified result file."""

    code: MatchCode
    player: str
    team: str
    answers: tuple[Answer, ...]
    source: str = ""

    def entry(self) -> Entry:
        return entry_for(self.player, self.team, ((a.outcome, a.certainty, a.seconds) for a in self.answers),
                         self.code.speed_bonus)


MESSAGE_LIMIT = 300  # characters in a refusal: one line a terminal shows whole


def _fail(message: str) -> MatchFileError:
    """The refusal, made fit for one line of at most MESSAGE_LIMIT characters: every value a file
    puts in it is shortened in the middle (an edited format of 3,000 characters was echoed whole)."""
    return MatchFileError(one_line(message, MESSAGE_LIMIT))


def _time(value: object, what: str) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise _fail(f"{what} is not a time like 2026-03-02T12:00:00.000Z") from None
    else:
        raise _fail(f"{what} is missing or not a time")
    if moment.tzinfo is None:
        raise _fail(f"{what} has no time zone")
    return moment.astimezone(_dt.timezone.utc)


def _check_times(code: MatchCode, started: _dt.datetime, answers: list[dict], now: _dt.datetime) -> None:
    """Lock times in order inside the match's window, each answer's seconds possible (see the
    limits above); MatchFileError naming the first answer that is not."""
    window_end = started + _dt.timedelta(seconds=QUESTION_LIMIT_SECONDS * code.count)
    latest = now + _dt.timedelta(seconds=CLOCK_SKEW_SECONDS)
    if started > latest:
        raise _fail("the match starts in the future")
    before = started
    for seq, rec in enumerate(answers, 1):
        at = _time(rec.get("locked_at"), f"answer {seq}: locked_at")
        if at < before:
            raise _fail(f"answer {seq} was locked in before the {'start' if seq == 1 else 'answer before it'}")
        if at > window_end or at > latest:
            raise _fail(f"answer {seq} was locked in after the match's window "
                        f"({QUESTION_LIMIT_SECONDS:g} s per puzzle from its start) or in the future")
        seconds = rec.get("seconds")
        if seconds is not None:
            room = (at - before).total_seconds() + _TOLERANCE
            if not 0 < seconds <= min(QUESTION_LIMIT_SECONDS, room):
                raise _fail(f"answer {seq}: {seconds:g} s is not a time it could have taken (more than 0 s, "
                            f"at most {min(QUESTION_LIMIT_SECONDS, room):g} s since the answer before it)")
        before = at


def _need(data: dict, name: str, kind: type | tuple) -> Any:
    value = data.get(name)
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise _fail(f"'{name}' is missing or not {'text' if kind is str else 'a number'}")
    return value


def verify_doc(data: dict[str, Any], source: str = "", regrade: bool = True,
               now: _dt.datetime | None = None) -> MatchResult:
    """Check a parsed result file and return it, or raise MatchFileError saying what is wrong."""
    from puzzles.scoring import CERTAINTIES, OUTCOMES

    if data.get("kind") != FILE_KIND:
        raise _fail("not a Ridge match result (its 'kind' is not ridge-match-result)")
    version = data.get("schema_version")
    if version != FILE_VERSION or isinstance(version, bool):
        raise _fail(f"written in result format {shown(repr(version), 40)}; this Ridge reads format {FILE_VERSION}")
    code = MatchCode.parse(_need(data, "match", str))
    player = _need(data, "player", str)
    team = _need(data, "team", str)
    started = _time(_need(data, "started", str), "started")
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
                          dict(pred), dict(key), str(rec.get("locked_at", ""))))
    _check_times(code, started, answers, now or _dt.datetime.now(_dt.timezone.utc))
    return MatchResult(code, check_name(player), check_name(team, "team") if team else "", tuple(out), source)


def _regrade(seq: int, puzzle_id: str, pred: dict, key: dict, outcome: str) -> None:
    problem = regrade_problem(puzzle_id, pred, key, outcome)
    if problem:
        raise _fail(f"answer {seq}: {problem}")


def read_result(path: Path | str, regrade: bool = True) -> MatchResult:
    """Read and verify one result file; MatchFileError (one line, without the path) if it fails."""
    path = Path(path)
    try:
        raw = read_regular(path, MAX_RESULT_BYTES)  # capped, and never blocks on a pipe
    except FileNotFoundError:
        raise _fail("no such file") from None
    except (IsADirectoryError, NotAFile) as exc:
        raise _fail(f"is {getattr(exc, 'kind', 'a folder')}, not a match result") from None
    except TooLarge:
        raise _fail(f"larger than {MAX_RESULT_BYTES >> 20} MiB, so not a Ridge match result") from None
    except OSError as exc:
        raise _fail(f"cannot be read ({exc.strerror or exc})") from None
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
    try:
        return verify_doc(data, str(path), regrade)
    except MatchFileError:
        raise
    except RidgeError as exc:  # a bad match code or puzzle id: this file is turned away, not the merge
        raise _fail(one_line(exc, 300)) from None


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
    """Read every file and keep those that verify, belong to the match most of them are from (the
    first such file's on a tie: a stray file never turns the others away), name a player not seen
    before (names compared by `puzzles.names.name_key`, so a look-alike letter is the same name)
    and do not repeat another file's answers under a new name; build the board from them."""
    from puzzles.names import name_key

    results: list[tuple[str, MatchResult]] = []
    rejected: list[tuple[str, str]] = []
    for path in paths:
        try:
            results.append((str(path), read_result(path, regrade)))
        except MatchFileError as exc:
            rejected.append((str(path), str(exc)))
    codes = [r.code for _, r in results]
    code = max(codes, key=lambda c: (codes.count(c), -codes.index(c))) if codes else None
    accepted: list[MatchResult] = []
    seen: dict[str, str] = {}
    answered: dict[tuple, str] = {}
    for path, result in results:
        if result.code != code:
            rejected.append((path, f"it is from match {result.code}, not {code}"))
            continue
        key = name_key(result.player)
        if key in seen:
            rejected.append((path, f"player {result.player!r} already has a result ({seen[key]})"))
            continue
        trace = tuple((a.locked_at, json.dumps(a.prediction, sort_keys=True)) for a in result.answers)
        if trace and trace in answered:
            rejected.append((path, f"its answers are those of {answered[trace]}, signed as another player"))
            continue
        seen[key] = path
        answered.setdefault(trace, path)
        accepted.append(result)
    board = merge(accepted) if accepted else None
    return Merged(board, tuple(accepted), tuple(rejected))
