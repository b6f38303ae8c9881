"""`ridge stats` and `ridge saves check | export`, and the saves layer's import hygiene."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.saves_worker import sample_attempt
from app.cli import main
from puzzles.stats import derive
from saves.store import SaveStore

REPO = Path(__file__).resolve().parents[2]


def _run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse rejects bad options itself, with status 2
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _filled(tmp_path, n=5, name="ann") -> SaveStore:
    store = SaveStore(tmp_path)
    for i in range(n):
        store.record_attempt(name, sample_attempt(i))
    return store


def test_stats_json_on_an_empty_folder_is_zero(tmp_path, capsys):
    code, out, _ = _run(capsys, "stats", "--save-dir", str(tmp_path / "none"), "--json")
    data = json.loads(out)
    assert code == 0 and data["attempts"] == 0 and data["score"] == 0 and data["profile"] is None
    assert not (tmp_path / "none").exists()  # reading never creates the folder


def test_stats_json_is_derived_from_the_attempts(tmp_path, capsys):
    store = _filled(tmp_path)
    code, out, _ = _run(capsys, "stats", "--save-dir", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0 and data["profile"] == "ann"
    assert data["attempts"] == 5
    assert data["score"] == derive(store.load("ann")).score
    assert data["history_intact"] is True
    code, out, _ = _run(capsys, "stats", "--save-dir", str(tmp_path), "--profile", "nobody", "--json")
    assert code == 0 and json.loads(out)["attempts"] == 0 and json.loads(out)["exists"] is False


def test_stats_reads_well(tmp_path, capsys):
    _filled(tmp_path)
    code, out, _ = _run(capsys, "stats", "--save-dir", str(tmp_path), "--profile", "ann")
    assert code == 0
    assert out.startswith("ann: 5 attempts, score ")
    assert "intact" in out and "kv-cache" in out


def test_stats_asks_which_profile_when_it_cannot_tell(tmp_path, capsys):
    _filled(tmp_path, 1, "ann")
    _filled(tmp_path, 1, "ben")
    (tmp_path / "settings.toml").unlink()
    code, out, err = _run(capsys, "stats", "--save-dir", str(tmp_path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "ann, ben" in err and "--profile" in err


def test_a_damaged_profile_is_one_line_and_exit_2(tmp_path, capsys):
    store = _filled(tmp_path, 2)
    seg = store._segments("ann")[0]
    seg.write_bytes(seg.read_bytes()[:-40] + b"\n[[")
    before = seg.read_bytes()
    code, out, err = _run(capsys, "stats", "--save-dir", str(tmp_path), "--json")
    assert code == 2 and out == "" and err.count("\n") == 1 and "000001.toml" in err
    assert "Traceback" not in err and seg.read_bytes() == before


def test_saves_check_exit_codes(tmp_path, capsys):
    store = _filled(tmp_path)
    code, out, _ = _run(capsys, "saves", "check", "--save-dir", str(tmp_path))
    assert code == 0 and "1 profile(s), 5 attempts, no problems" in out
    seg = store._segments("ann")[0]
    seg.write_text(seg.read_text().replace('outcome = "missed"', 'outcome = "cleared"', 1))
    code, out, err = _run(capsys, "saves", "check", "--save-dir", str(tmp_path))
    assert code == 1
    assert out.splitlines() == ["ann.attempts/000001.toml: attempt 4: edited: its contents do not "
                                "match its hash"]
    code, out, _ = _run(capsys, "saves", "check", "--save-dir", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and data["problems"][0]["seq"] == 4
    code, _, err = _run(capsys, "saves", "check", "--save-dir", str(tmp_path / "missing"))
    assert code == 2 and "no save folder" in err
    code, _, err = _run(capsys, "saves", "bogus")
    assert code == 2


def test_saves_export_csv_and_md(tmp_path, capsys):
    _filled(tmp_path, 3)
    code, out, _ = _run(capsys, "saves", "export", "--save-dir", str(tmp_path), "--format", "csv")
    assert code == 0 and len(out.splitlines()) == 4 and out.startswith("seq,locked_at,")
    target = tmp_path.parent / f"{tmp_path.name}-out" / "history.md"  # never inside the save folder
    target.parent.mkdir()
    code, out, _ = _run(capsys, "saves", "export", "--save-dir", str(tmp_path), "--format", "md",
                        "--output", str(target))
    assert code == 0 and out == "" and target.read_text().startswith("# Ridge history: ann")
    code, _, err = _run(capsys, "saves", "export", "--save-dir", str(tmp_path), "--format", "pdf")
    assert code == 2
    code, _, err = _run(capsys, "saves", "export", "--save-dir", str(tmp_path), "--format", "csv",
                        "--profile", "zed")
    assert code == 2 and "no profile named 'zed'" in err


def test_saves_imports_no_textual():
    """The saves' modules and the commands over them, imported one after another in one fresh
    process (what was one process a module, each also importing the four saves modules: importing
    more only loads more, so one process that never loads Textual clears each of them), naming the
    first after which Textual is loaded."""
    modules = ["saves", "saves.store", "puzzles.stats", "saves.export", "saves.migrate", "app.commands.stats",
               "app.commands.saves"]
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            "    assert 'textual' not in sys.modules, f'textual was imported by {name}'\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
