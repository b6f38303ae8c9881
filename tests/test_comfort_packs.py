"""The author's loop: a pack in <data>/packs loads beside the built-in ones with its own chapter,
on the map and in `ridge puzzles list|show`; the simulator saves into the player's own chapter;
`ridge puzzles import` checks a shared pack and copies it in."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main
from puzzles import bank


@pytest.fixture(autouse=True)
def _fresh_bank():
    yield
    bank.use_player_packs(None)  # later tests see the built-in packs only


def _shared_pack(folder: Path, chapter_id: str = "team-lunch", title: str = "Team lunch",
                 name: str = "shared.toml") -> Path:
    """A valid pack of two simulator puzzles, as a colleague would share it (a deployment whose key
    holds at every fidelity: the default one's realistic lever lead is too thin to be saved)."""
    from engine.sim.state import Simulator
    from saves import own_pack

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    sim = Simulator(concurrency="256", prompt="512", output="1024")
    own_pack.save_puzzle(sim.result, path)
    sim.edit("gpus", "8")
    own_pack.save_puzzle(sim.result, path)
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
    from screen_text import screen_lines

    _shared_pack(tmp_path / "packs", chapter_id="team-lunch", title="Team lunch puzzles")
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await _on_the_map(app, pilot)
        text = "\n".join(screen_lines(app))
        assert "Builds on" not in text
        assert "Team lunch puzzles" in text and "0/2 cleared" in text


def _old_simulator_pack(folder: Path, name: str = "my-puzzles.toml") -> Path:
    """A pack as the simulator's "save as puzzle" wrote it before the player had a chapter of
    their own: the course's `clearing-test` id, the title "My puzzles"."""
    return _shared_pack(folder, chapter_id="clearing-test", title="My puzzles", name=name)


async def _on_the_map(app, pilot, last: bool = True):
    """Open the campaign map (once the packs are in), on its last chapter."""
    from app.screens.campaign import CampaignScreen

    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.press("m")
    await pilot.pause()
    assert isinstance(app.screen, CampaignScreen)
    if last:
        await pilot.press("end")
        await pilot.pause()


def test_an_old_simulator_pack_loads_into_the_players_chapter_untouched(tmp_path, capsys):
    data = tmp_path / "data"
    path = _old_simulator_pack(data / "packs")
    before = path.read_bytes()
    assert main(["puzzles", "list", "--save-dir", str(data), "--json"]) == 0
    captured = capsys.readouterr()
    mine = [r for r in json.loads(captured.out) if r["id"].startswith("my-")]
    assert len(mine) == 2 and {r["module"] for r in mine} == {"my-puzzles"}
    assert "skipped" not in captured.err
    notes = [line for line in captured.err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "my-puzzles.toml" in notes[0] and "'clearing-test'" in notes[0]
    assert "unchanged" in notes[0]
    assert main(["puzzles", "show", mine[0]["id"], "--save-dir", str(data)]) == 0
    assert "| my-puzzles |" in capsys.readouterr().out
    assert path.read_bytes() == before  # never rewritten behind the player's back
    from puzzles import bank

    assert [c.id for c in bank.chapters()].count("clearing-test") == 1  # the course's chapter, alone
    assert all(p.module == "clearing-test" for p in bank.in_module("clearing-test"))
    assert not any(p.id.startswith("my-") for p in bank.in_module("clearing-test"))


def test_the_simulator_still_adds_to_an_old_pack_and_it_still_shows(tmp_path, capsys):
    from engine.sim.state import Simulator
    from saves import own_pack

    data = tmp_path / "data"
    path = _old_simulator_pack(data / "packs")
    sim = Simulator(concurrency="256", prompt="512", output="1024")
    sim.edit("prompt", "2048")
    own_pack.save_puzzle(sim.result, path)
    assert main(["puzzles", "list", "--module", "my-puzzles", "--save-dir", str(data)]) == 0
    assert capsys.readouterr().out.count("my-puzzles") == 3


def test_an_old_pack_beside_a_new_one_joins_the_players_chapter(tmp_path, capsys):
    data = tmp_path / "data"
    _old_simulator_pack(data / "packs", name="a-old.toml")  # read first, joins last
    new = _shared_pack(data / "packs", chapter_id="my-puzzles", title="My puzzles")
    new.write_text(re.sub(r'id = "my-([0-9a-f]{10})"', r'id = "mine-\1"', new.read_text(encoding="utf-8")),
                   encoding="utf-8")
    assert main(["puzzles", "list", "--module", "my-puzzles", "--save-dir", str(data), "--json"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 4 and "skipped" not in captured.err
    from puzzles import bank

    assert [c.id for c in bank.chapters()].count("my-puzzles") == 1


def test_a_pack_that_reuses_course_ids_is_still_refused_in_one_line(tmp_path, capsys):
    data = tmp_path / "data"
    reused = _old_simulator_pack(data / "packs", name="reused.toml")
    text = reused.read_text(encoding="utf-8")
    first_id = next(line for line in text.splitlines() if line.startswith('id = "my-'))
    reused.write_text(text.replace(first_id, 'id = "clearing-test-01"'), encoding="utf-8")
    borrowed = _old_simulator_pack(data / "packs", name="borrowed.toml")
    text = borrowed.read_text(encoding="utf-8").replace('title = "My puzzles"', 'title = "Mine"', 1)
    borrowed.write_text(re.sub(r'id = "my-([0-9a-f]{10})"', r'id = "b-\1"', text), encoding="utf-8")
    own = _shared_pack(data / "packs", chapter_id="mine", name="own.toml")  # its own chapter, a course id
    text = own.read_text(encoding="utf-8")
    own.write_text(text.replace(next(line for line in text.splitlines() if line.startswith('id = "my-')),
                                'id = "kv-cache-01"'), encoding="utf-8")
    assert main(["puzzles", "list", "--save-dir", str(data), "--json"]) == 0
    captured = capsys.readouterr()
    skipped = [line for line in captured.err.splitlines() if line.startswith("skipped a pack")]
    assert len(skipped) == 3 and "note:" not in captured.err
    assert any("own.toml" in line and "kv-cache-01" in line and "duplicate id" in line for line in skipped)
    assert any("reused.toml" in line and "clearing-test-01" in line and "duplicate id" in line for line in skipped)
    assert any("borrowed.toml" in line and "chapter id 'clearing-test' is already a chapter" in line
               for line in skipped)
    ids = {r["id"] for r in json.loads(captured.out)}
    assert not any(i.startswith(("my-", "b-")) for i in ids)


def test_import_takes_an_old_simulator_pack_into_the_players_chapter(tmp_path, capsys):
    shared = _old_simulator_pack(tmp_path / "inbox", name="old-share.toml")
    data = tmp_path / "data"
    assert main(["puzzles", "import", str(shared), "--save-dir", str(data)]) == 0
    assert "as chapter 'my-puzzles'" in capsys.readouterr().out
    assert (data / "packs" / "old-share.toml").read_bytes() == shared.read_bytes()


async def test_the_map_shows_an_old_pack_as_the_players_own_chapter(tmp_path):
    from app.game import make_app
    from app.screens.campaign import BriefingScreen
    from screen_text import screen_lines

    _old_simulator_pack(tmp_path / "packs")
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 60)) as pilot:  # tall enough to read the whole detail pane
        await _on_the_map(app, pilot)
        text = " ".join(" ".join(screen_lines(app)).split())
        assert "13. My puzzles" in text and "0/2 cleared" in text
        assert "Builds on" not in text and "Your own chapter" in text and "my-puzzles.toml" in text
        assert "older Ridge" in text and "unchanged" in text
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, BriefingScreen)
        text = " ".join(" ".join(screen_lines(app)).split())
        assert "Jumping ahead" not in text and "Your own chapter" in text


async def test_the_map_says_when_a_pack_was_left_out(tmp_path):
    from app.game import make_app

    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "bad.toml").write_text("[chapter\n", encoding="utf-8")
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await _on_the_map(app, pilot, last=False)
        assert any("bad.toml" in str(n.message) for n in app._notifications)
