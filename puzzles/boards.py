"""Boards: ranking players and teams by the points their answers earned, and the board as text
and JSON. One board for every mode that ranks players (match files, hot-seat, the live host).

Each player's entry is derived from their answers (`entry_for`): the score (certainty-marked
points, plus the speed bonus when the match has one), how many answered and cleared, and the
confident misses (wrong answers given with high certainty). Ties share a rank (1, 2, 2, 4); names
break the order. Teams score the average of their members. The board shows the top five plus
the players around you. Imports no Textual.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.ids import Certainty, Outcome
from puzzles.match import answer_score

TOP = 5


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



def entry_for(player: str, team: str, answers: Iterable[tuple[str, str, float | None]], with_speed: bool = False) -> Entry:
    """A player's entry from their answers, each (outcome, certainty, seconds or None)."""
    answers = list(answers)
    score = sum(answer_score(o, c, s, with_speed) for o, c, s in answers)
    cleared = sum(o == Outcome.CLEARED for o, _, _ in answers)
    bold = sum(c == Certainty.HIGH and o in (Outcome.CLOSE, Outcome.MISSED) for o, c, _ in answers)
    return Entry(player, team, score, len(answers), cleared, bold)


# --- hot-seat: several players answer each puzzle in turn on one screen -----------------------

def hotseat_board(players: Sequence[str], answers: Sequence[Mapping[str, Any]]) -> Board:
    """The running board: each player's graded answers so far (`answers` holds, per puzzle, a
    turn with its `judged` grade under each name that has answered it)."""
    entries = []
    for name in players:
        turns = [puzzle[name] for puzzle in answers if name in puzzle]
        entries.append(entry_for(name, "", ((t.judged.outcome, t.judged.certainty, None) for t in turns)))
    return build_board(entries)


PART_LETTERS = {"bottleneck": "B", "lever": "L", "gain_band": "G", "reason": "R"}


def hotseat_reveal_lines(key, players: Sequence[str], judged: Mapping[str, Any], words) -> list[str]:
    """The shared reveal of one puzzle: the engine's answer, then each player's outcome, points,
    a mark per part and their certainty, with the part that decided it and every estimate or
    deciding miss beside the engine's. `judged` is each player's grade; `words` the app's labels
    (a `puzzles.reveal.Words`)."""
    from puzzles.grading import decided_text, objective_bottleneck, part_title, value_text
    from puzzles.keys import shown_gain

    said = words.words
    gain = shown_gain(key) if key.gain is not None else "makes it fit"
    lines = [f"Bottleneck  {words.bottleneck(objective_bottleneck(key))}",
             f"Best lever  {words.lever(key.best_lever)}, {words.band(key.gain_band)} ({gain})",
             f"Because     {said('reason', key.reason)}",
             f"Deciding    {words.humanize(key.deciding)}", ""]
    width = max(6, max(len(p) for p in players))
    heads = " ".join("E" if part.estimate else PART_LETTERS.get(part.name, "?") for part in judged[players[0]].parts)
    lines.append(f"{'Player':<{width}}  {'Outcome':<9}  {'Pts':>4}  {('Parts ' + heads):<22}  Sure")
    for name in players:
        j = judged[name]
        marks = " ".join("✓" if part.right else "✗" for part in j.parts)
        lines.append(f"{name:<{width}}  {words.outcome(j.outcome):<9}  {j.points:>+4}  {('      ' + marks):<22}  {j.certainty}")
        lines.append(f"{'':<{width}}  {words.humanize(decided_text(j, said))}")
        for part in j.parts:
            if part.estimate is not None or (part.decided and not part.right):
                mark = "✓" if part.right else "✗"
                flag = " ◆" if part.decided else ""
                lines.append(f"{'':<{width}}  {mark}{flag} {part_title(part, said)}: {value_text(part, part.yours, said)}"
                             f" → engine: {value_text(part, part.engine, said)}")
    return lines
