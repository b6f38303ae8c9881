"""Match codes, result files with their hash chain, merging three players into a board, and edited
files turned away with a clear reason."""
from __future__ import annotations

import datetime as dt
import json
import tomllib

import pytest
import tomli_w

from app.cli import main
from engine.errors import RidgeError
from puzzles import boards
from puzzles import match as rules
from puzzles.boards import Entry, build_board
from puzzles.generator import from_id
from puzzles.grading import grade
from puzzles.match import MatchCode
from saves import match
from saves.match import read_result, result_doc, write_result
from helpers.forms import fill, lock_in
from helpers.pilot import settled
from helpers.match import CODE, START, answers

def test_match_codes():
    code = MatchCode.parse("R-42-3-10")
    assert (code.seed, code.difficulty, code.count, code.speed_bonus) == (42, 3, 10, False)
    assert str(MatchCode.parse("r-7-1-5-s")) == "R-7-1-5-S"
    assert code.puzzle_ids()[:2] == ["gen-s42-d3-0000", "gen-s42-d3-0001"]
    for bad in ("R-42-6-10", "R-42-3-0", "42-3-10", "R-42-3-99"):
        with pytest.raises(RidgeError):
            MatchCode.parse(bad)


@pytest.fixture
def three(tmp_path):
    """Ada (all right, high), Bea (all right, medium), Cy (all wrong, high); Ada and Cy are Red."""
    files = {}
    for player, team, style in (("Ada", "Red", "right"), ("Bea", "Blue", "medium"), ("Cy", "Red", "wrong")):
        path = tmp_path / f"{CODE}-{player}.toml"
        write_result(path, result_doc(CODE, player, team, START, answers(style)))
        files[player] = path
    return files


def test_three_players_merge_into_the_expected_board(three):
    merged = match.merge_files(list(three.values()))
    assert merged.rejected == ()
    board = merged.board
    rows = [(s.rank, s.entry.player, s.entry.team, s.entry.score, s.entry.cleared, s.entry.confident_misses)
            for s in board.players]
    assert rows == [(1, "Ada", "Red", 90, 3, 0), (2, "Bea", "Blue", 60, 3, 0), (3, "Cy", "Red", -180, 0, 3)]
    teams = [(t.rank, t.team, t.score, t.members) for t in board.teams]
    assert teams == [(1, "Blue", 60.0, ("Bea",)), (2, "Red", -45.0, ("Ada", "Cy"))]   # Red: (90 - 180) / 2
    assert board.code == str(CODE) and not board.speed_bonus
    lines = boards.board_lines(board, me="Cy")
    assert "▶" in lines[3] and "Cy" in lines[3]
    out = boards.board_json(board, "Bea")
    assert [r["player"] for r in out["shown"]] == ["Ada", "Bea", "Cy"]


def test_the_board_shows_the_top_five_and_the_players_around_you():
    entries = [Entry(f"P{i}", "", 100 - 10 * i) for i in range(9)]
    entries.append(Entry("Tie", "", 100 - 10 * 7))   # shares 8th place with P7
    board = build_board(entries)
    assert [s.rank for s in board.players][6:] == [7, 8, 8, 10]
    shown = board.shown("P8")
    names = [None if s is None else s.entry.player for s in shown]
    assert names == ["P0", "P1", "P2", "P3", "P4", None, "Tie", "P8"]
    assert [None if s is None else s.entry.player for s in board.shown("P5")] == \
        ["P0", "P1", "P2", "P3", "P4", "P5", "P6"]
    assert len(board.shown("nobody")) == 5


def test_the_speed_bonus_rewards_fast_cleared_answers_only(tmp_path):
    fast = MatchCode(42, 2, 3, speed_bonus=True)
    assert rules.speed_bonus("cleared", 0) == 5 and rules.speed_bonus("cleared", 60) == 2
    assert rules.speed_bonus("cleared", 500) == 0 and rules.speed_bonus("missed", 1) == 0
    path = tmp_path / "fast.toml"
    write_result(path, result_doc(fast, "Ada", "", START, answers("right", seconds=24)))
    assert read_result(path).entry().score == 90 + 3 * 4     # 24 s of the 120 s window keeps 4 of 5
    assert rules.speed_note("cleared", 24) == "Speed bonus: +4 (24 s)"
    assert rules.speed_note("cleared", 500) == "No speed bonus (500 s)."
    assert rules.speed_note("missed", 1) == "No speed bonus (only cleared answers earn one)."


def test_a_code_names_the_same_items_everywhere_and_its_end_names_the_merge(tmp_path):
    code = MatchCode(42, 2, 2)
    items = code.items()
    assert [item.puzzle.id for item in items] == code.puzzle_ids() and items[0].key.best_lever
    path = match.result_path(tmp_path, code, "Ada Lee")
    lines = match.done_lines(code, "Ada Lee", [30, -20], ["cleared", "missed"], path)
    assert lines[0] == "Ada Lee: +10 points, 1 of 2 cleared." and f"  {path}" in lines
    assert lines[-1] == f"  ridge match results {tmp_path}/{code}-*.toml --me NAME"
    assert match.done_lines(code, "Ada Lee", [], [], path, practice=True)[0].startswith("Practice:")


def _edit(path, change):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


def _reason(path) -> str:
    with pytest.raises(match.MatchFileError) as caught:
        read_result(path)
    return str(caught.value)


def test_an_edited_answer_is_rejected_with_a_clear_reason(three):
    path = three["Cy"]
    _edit(path, lambda d: d["answers"][1]["prediction"].update(certainty="low"))
    assert _reason(path) == ("answer 2 was edited after the file was written "
                             "(its contents do not match its hash)")
    merged = match.merge_files(list(three.values()))
    assert [r.player for r in merged.accepted] == ["Ada", "Bea"]
    assert merged.rejected == ((str(path), _reason(path)),)


def test_other_edits_are_caught_too(three, tmp_path):
    renamed = three["Ada"]
    _edit(renamed, lambda d: d.update(player="Zed"))
    assert "header" in _reason(renamed)
    cut = three["Bea"]
    _edit(cut, lambda d: d["answers"].pop())
    assert "seal does not match" in _reason(cut)
    # an outcome changed with every hash recomputed: the chain is intact, the regrade is not
    forged = tmp_path / "forged.toml"
    records = answers("wrong")
    records[0]["outcome"] = "cleared"
    write_result(forged, result_doc(CODE, "Dee", "", START, records))
    assert _reason(forged) == "answer 1: the outcome says cleared, but its prediction grades as missed"
    keyed = tmp_path / "keyed.toml"
    records = answers("right")
    real = records[0]["key"]["bottleneck"]
    records[0]["key"]["bottleneck"] = next(v for v in ("decode-compute", "decode-kv", "kv-capacity")
                                           if v != real and v != from_id(CODE.puzzle_id(1)).key.bottleneck)
    write_result(keyed, result_doc(CODE, "Eve", "", START, records))
    assert "the engine's key was edited" in _reason(keyed)
    junk = tmp_path / "junk.toml"
    junk.write_text("player = [", encoding="utf-8")
    assert _reason(junk).startswith("not valid TOML")


def test_files_from_another_match_or_the_same_player_twice(three, tmp_path):
    other = tmp_path / "other.toml"
    write_result(other, result_doc(MatchCode(7, 2, 3), "Dee", "", START, []))
    twice = tmp_path / "twice.toml"
    write_result(twice, result_doc(CODE, "ada", "", START, []))
    merged = match.merge_files([three["Ada"], other, twice])
    assert [r.player for r in merged.accepted] == ["Ada"]
    reasons = dict(merged.rejected)
    assert reasons[str(other)] == f"it is from match R-7-2-3, not {CODE}"
    assert "already has a result" in reasons[str(twice)]


def test_the_results_command(three, capsys):
    assert main(["match", "results", *map(str, three.values()), "--me", "Cy"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Match {CODE}: 3 player(s)") and "Ada" in out and "-45.0" in out
    _edit(three["Bea"], lambda d: d["answers"][0].update(seconds=1.0))
    assert main(["match", "results", *map(str, three.values()), "--json"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert [r["player"] for r in data["board"]["players"]] == ["Ada", "Cy"]
    assert data["rejected"][0]["reason"].startswith("answer 1 was edited")
    assert f"rejected {three['Bea']}: answer 1 was edited" in captured.err


def test_the_new_command_prints_a_code(capsys):
    assert main(["match", "new", "--seed", "42", "--count", "10", "--difficulty", "3"]) == 0
    assert capsys.readouterr().out.strip() == "R-42-3-10"
    assert main(["match", "new", "--seed", "1", "--count", "99"]) == 2
    assert "1 to 50 puzzles" in capsys.readouterr().err


async def test_the_match_screen_plays_a_code_and_writes_a_checked_result_file(tmp_path):
    import datetime as _dt

    from app.game import make_app
    from app.screens.match import MatchScreen
    from saves.match import read_result
    from saves.store import SaveStore

    import itertools

    when, ticks = _dt.datetime(2026, 3, 2, 12, 0, tzinfo=_dt.timezone.utc), itertools.count()
    clock = lambda: when + _dt.timedelta(minutes=next(ticks))  # noqa: E731 - time passes, as a result file's checks expect
    app = make_app(solo=lambda: MatchScreen(code="R-42-1-1", player="Ada", team="Red"), save_dir=tmp_path,
                  profile="Ada", clock=clock, strict=True, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        screen = app.screen
        await pilot.press("s")
        await settled(pilot)
        assert screen.phase == "question"
        await fill(pilot, screen, screen.items[0], certainty="low")
        await lock_in(pilot)
        assert screen.phase == "reveal"
        path = screen.writer.path
    result = read_result(path)  # the chain checks and every answer regrades
    assert result is not None
    assert SaveStore(tmp_path).load("Ada").attempts[0].mode == "match"
