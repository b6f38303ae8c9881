"""The author's loop: a pack in <data>/packs loads beside the built-in ones with its own chapter,
on the map and in `ridge puzzles list|show`; the simulator saves into the player's own chapter;
`ridge puzzles import` checks a shared pack and copies it in."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from puzzles import bank


@pytest.fixture(autouse=True)
def _fresh_bank():
    yield
    bank.use_player_packs(None)  # later tests see the built-in packs only


def _shared_pack(folder: Path, chapter_id: str = "team-lunch", title: str = "Team lunch") -> Path:
    """A valid pack of two simulator puzzles, as a colleague would share it."""
    from app import sim_model as sm

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "shared.toml"
    sim = sm.Simulator()
    sm.save_puzzle(sim.result, path)
    sim.edit("gpus", "8")
    sm.save_puzzle(sim.result, path)
    text = path.read_text(encoding="utf-8").replace('id = "my-puzzles"', f'id = "{chapter_id}"', 1)
    path.write_text(text.replace('title = "My puzzles"', f'title = "{title}"', 1), encoding="utf-8")
    return path


def test_the_simulator_writes_the_players_own_chapter(tmp_path):
    from puzzles.pack_writer import CHAPTER
    from puzzles.puzzle import MODULES

    assert CHAPTER["id"] not in MODULES


def test_import_then_list_and_show(tmp_path, capsys):
    shared = _shared_pack(tmp_path / "inbox")
    data = tmp_path / "data"
    assert main(["puzzles", "import", str(shared), "--save-dir", str(data)]) == 0
    assert (data / "packs" / "shared.toml").exists()
    assert "as chapter 'team-lunch'" in capsys.readouterr().out
    assert main(["puzzles", "import", str(shared), "--save-dir", str(data)]) == 2  # already there
    capsys.readouterr()
    assert main(["puzzles", "list", "--save-dir", str(data), "--json"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if r["module"] == "team-lunch"]
    assert len(rows) == 2
    assert main(["puzzles", "show", rows[0]["id"], "--save-dir", str(data)]) == 0
    shown = capsys.readouterr().out
    assert rows[0]["id"] in shown and "team-lunch" in shown


def test_a_pack_dropped_in_honours_the_environment(tmp_path, capsys, monkeypatch):
    data = tmp_path / "env-data"
    _shared_pack(data / "packs", chapter_id="dropped-in")
    monkeypatch.setenv("RIDGE_SAVE_DIR", str(data))
    assert main(["puzzles", "list", "--module", "dropped-in"]) == 0
    assert capsys.readouterr().out.count("dropped-in") == 2


def test_import_refuses_a_broken_pack_or_a_course_chapter_id(tmp_path, capsys):
    broken = tmp_path / "broken.toml"
    broken.write_text('[chapter]\nid = "x"\n', encoding="utf-8")
    assert main(["puzzles", "import", str(broken), "--save-dir", str(tmp_path / "d")]) == 2
    course = _shared_pack(tmp_path / "c", chapter_id="kv-cache")
    assert main(["puzzles", "import", str(course), "--save-dir", str(tmp_path / "d")]) == 2
    assert "already used" in capsys.readouterr().err
    assert not (tmp_path / "d" / "packs" / "shared.toml").exists()


def test_a_broken_player_pack_is_skipped_and_said(tmp_path, capsys):
    data = tmp_path / "data"
    _shared_pack(data / "packs", chapter_id="fine")
    (data / "packs" / "bad.toml").write_text("[chapter\n", encoding="utf-8")
    assert main(["puzzles", "list", "--save-dir", str(data)]) == 0
    captured = capsys.readouterr()
    assert "skipped a pack" in captured.err and "bad.toml" in captured.err
    assert "fine" in captured.out


async def test_a_player_pack_shows_on_the_map(tmp_path):
    from app.game import make_app
    from app.screens.campaign import CampaignScreen
    from screen_text import screen_lines

    _shared_pack(tmp_path / "packs", chapter_id="team-lunch", title="Team lunch puzzles")
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, CampaignScreen)
        await pilot.press("end")
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        assert "Team lunch puzzles" in text and "0/2 cleared" in text
