"""What the two screens of a live match show, as lines of text: the host's projector (the card,
the answer, the spread of answers, who answered what, the board, the podium) and the terminal
player's board and podium. They read only what the room sends out (`saves.room.Room`'s cards,
reveals and rows, the lobby API's JSON), so what the room sees is decided here, headless, and
the screens only place it. The words are the caller's (the app's labels, a `puzzles.reveal.Words`).
"""
from __future__ import annotations

import textwrap

from engine.ids import Outcome
from engine.text import aligned
from puzzles.live import LATE, NO_ANSWER, podium

BAR_WIDTH = 24
OUTCOME_ORDER = (*Outcome, LATE, NO_ANSWER)  # the grader's outcomes in their order, then the live ones
OUTCOME_WORDS = {LATE: ("⊘", "late"), NO_ANSWER: ("·", "no answer")}
PLACES = {1: "1st", 2: "2nd", 3: "3rd"}


def bar(share: float, width: int = BAR_WIDTH) -> str:
    filled = round(max(0.0, min(1.0, share)) * width)
    return "█" * filled + "░" * (width - filled)


# --- the host's projector -------------------------------------------------------------------

def spread_lines(spread: dict, words, width: int = 80) -> list[str]:
    """What share of the locked answers named each bottleneck and each lever, as bars (shown only
    once the question has closed); in a narrow pane each option's name sits above its bar."""
    lines = [f"{spread['locked']} locked in on time"]
    bar_w = max(8, min(BAR_WIDTH, width - 7))
    for part, said, title in (("bottleneck", words.bottleneck, "Bottleneck"), ("lever", words.lever, "Best lever")):
        lines += ["", title]
        for option, share in spread.get(part, {}).items():
            if width >= 2 + 30 + 1 + BAR_WIDTH + 5:
                lines.append(f"  {said(option)[:30]:<30} {bar(share)} {share:>4.0%}")
            else:
                lines += [f"  {said(option)[:width - 2]}", f"  {bar(share, bar_w)} {share:>4.0%}"]
    return lines


def board_lines(rows, top: int = 10, width: int = 60) -> list[str]:
    """The board, its name column narrowed so every row fits `width` (no row wraps)."""
    if not rows:
        return ["No one has joined yet."]
    name_w = max(6, min(24, width - 21))
    lines = [f"{'#':>3}  {'Player':<{name_w}} {'Points':>6}  Cleared"]
    for r in rows[:top]:
        lines.append(f"{r.rank:>3}  {r.name[:name_w]:<{name_w}} {r.points:>6}  {f'{r.cleared}/{r.answered}':>7}")
    if len(rows) > top:
        lines.append(f"     … and {len(rows) - top} more")
    return lines


def who_lines(players: list[dict], words, width: int = 60) -> list[str]:
    """Who answered what on a closed question, grouped by outcome in OUTCOME_ORDER, each group a
    symbol and a word (never colour alone)."""
    groups: dict[str, list[str]] = {}
    for p in players:
        groups.setdefault(p["outcome"], []).append(p["name"])
    lines = []
    for outcome in OUTCOME_ORDER:
        names = groups.get(outcome)
        if not names:
            continue
        symbol, word = OUTCOME_WORDS.get(outcome) or (words.outcome_symbol(outcome), outcome)
        lines += textwrap.wrap(f"{symbol} {word} ({len(names)}): {', '.join(names)}", max(24, width),
                               subsequent_indent="    ")
    return lines or ["No one answered."]


def answer_lines(answer: dict, words, width: int = 60) -> list[str]:
    """The question's answer: bottleneck, best lever with its band, the reason, what decides it."""
    width = max(24, width)
    rows = [("Bottleneck", words.bottleneck(answer["bottleneck"])),
            ("Best lever", f"{words.lever(answer['best_lever'])} ({words.band(answer['gain_band'])})"),
            ("Because", answer.get("reason_text") or answer["reason"])]
    lines = [line for name, value in rows for line in aligned(name, value, width=width, indent=12).splitlines()]
    return lines + textwrap.wrap(f"What decides it: {answer.get('deciding', '')}", width, subsequent_indent="  ")


def card_lines(card: dict, words, width: int = 60) -> list[str]:
    """The whole card as the players see it: scenario, every input row, what is ruled out, the ask."""
    width = max(24, width)
    lines = textwrap.wrap(card.get("scenario", ""), width) + [""]
    for row in card.get("card") or ():
        lines += aligned(str(row.get("field", "")), str(row.get("value", "")), width=width, indent=15).splitlines()
    for lever, why in (card.get("ruled_out") or {}).items():
        lines += textwrap.wrap(f"Ruled out: {words.lever(lever)}: {why}", width, subsequent_indent="  ")
    ask = card.get("ask") or {}
    if ask.get("bottleneck_question"):
        lines += [""] + textwrap.wrap(ask["bottleneck_question"], width)
    return lines


def podium_lines(rows) -> list[str]:
    return [f"{PLACES.get(r.rank, r.rank)}  {r.name}  ·  {r.points} points, {r.cleared} cleared"
            for r in podium(rows)] or ["No one played."]


# --- the terminal player --------------------------------------------------------------------

def board_text(board: dict, me: str = "", top: int = 5) -> str:
    """The top rows of the board (the lobby API's), plus this player's row when it is further down."""
    rows = board.get("players") or []
    shown = rows[:top]
    lines = [f"{r['rank']:>3}. {r['name']:<24} {r['points']:>5} pts  {r['cleared']} cleared" for r in shown]
    mine = next((r for r in rows if r["name"] == me), None)
    if mine is not None and mine not in shown:
        lines += ["  …", f"{mine['rank']:>3}. {mine['name']:<24} {mine['points']:>5} pts  {mine['cleared']} cleared  ◀ you"]
    return "\n".join(lines) or "No one on the board yet."


def podium_text(board: dict) -> str:
    places = board.get("podium") or [r for r in board.get("players") or [] if r["rank"] <= 3]
    return "\n".join(f"{PLACES.get(r['rank'], r['rank'])}  {r['name']}  {r['points']} pts" for r in places) or "-"


def card_deployment(card: dict):
    """The card's deployment as the engine's Deployment (for the game's card widget), or None
    when this build cannot rebuild it (then the card is shown as plain rows)."""
    try:
        from engine.catalog import builtin_catalog
        from engine.deployment import build_deployment

        values = dict(card.get("deployment") or {})
        model, gpu, route = values.pop("model"), values.pop("gpu"), values.pop("route_model", None)
        return build_deployment(builtin_catalog(), model, gpu, route_model=route, **values)
    except Exception:  # noqa: BLE001 - fall back to plain rows rather than fail the question
        return None
