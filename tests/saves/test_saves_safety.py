"""Nothing Ridge writes can hurt what it replaces, scores are re-graded from the record, and
every refusal is one line (issue 25; issue 22 item 3). Each test is one case a hostile or
careless user tried, run through `ridge` in-process with a throwaway save folder."""
from __future__ import annotations

import json
import os
import shutil
import stat
import tomllib
from pathlib import Path

import pytest
import tomli_w

from app.cli import main
from puzzles.attempts import supported_outcome
from saves.chain import chain_hash
from saves.errors import SaveError
from saves.match import MatchFileError
from saves.store import SaveStore
from helpers.saves_worker import sample_attempt
from helpers.match import CODE, START, answers

FIXTURE_V2 = Path(__file__).parents[1] / "fixtures" / "saves" / "v2"  # written by main before version 3
ANSWER = ["answer", "intensity-01", "--bottleneck", "decode-weights", "--lever", "speculative-decoding",
          "--gain", "2-4x", "--reason", "idle-flops", "--certainty", "high", "--estimate", "intensity=1",
          "--estimate", "ridge=295"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv: str) -> str:
    """The one line a refusal prints (exit 2, nothing on stdout)."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and len(err) <= 301 and "\x1b" not in err and "Traceback" not in err, err
    return err


def _v2(tmp_path: Path) -> Path:
    folder = tmp_path / "saves"
    shutil.copytree(FIXTURE_V2, folder)
    return folder


def _score(capsys, folder: Path) -> dict:
    code, out, _ = run(capsys, "stats", "--save-dir", str(folder), "--json")
    assert code == 0
    return json.loads(out)


# -- 1. writes respect what they replace ------------------------------------------------------

def test_export_never_replaces_a_file_ridge_did_not_write(tmp_path, capsys):
    folder = _v2(tmp_path)
    foreign = tmp_path / "passwd"
    foreign.write_text("root:x:0:0\n")
    foreign.chmod(0o600)
    assert "--force" in refused(capsys, "saves", "export", "--format", "csv", "--save-dir", str(folder),
                                "--output", str(foreign))
    assert foreign.read_text() == "root:x:0:0\n" and stat.S_IMODE(foreign.stat().st_mode) == 0o600
    link = tmp_path / "link.csv"
    link.symlink_to(foreign)
    assert "symbolic link" in refused(capsys, "saves", "export", "--format", "csv", "--save-dir", str(folder),
                                      "--output", str(link))
    inside = folder / "Pat.attempts" / "000001.toml"
    before = inside.read_bytes()
    assert "inside the save folder" in refused(capsys, "saves", "export", "--format", "md", "--save-dir",
                                               str(folder), "--output", str(inside), "--force")
    assert inside.read_bytes() == before
    # its own export is replaced freely; --force replaces a foreign file and keeps its mode
    mine = tmp_path / "history.csv"
    for _ in range(2):
        assert run(capsys, "saves", "export", "--format", "csv", "--save-dir", str(folder), "--output", str(mine))[0] == 0
    assert run(capsys, "saves", "export", "--format", "csv", "--save-dir", str(folder), "--output", str(foreign),
               "--force")[0] == 0
    assert foreign.read_text().startswith("seq,") and stat.S_IMODE(foreign.stat().st_mode) == 0o600


def test_a_write_keeps_the_mode_of_what_it_replaces(tmp_path, capsys):
    folder = tmp_path / "saves"
    assert run(capsys, *ANSWER, "--profile", "Pat", "--save-dir", str(folder))[0] == 0
    header = folder / "Pat.toml"
    assert stat.S_IMODE(header.stat().st_mode) == 0o600  # new save files are the player's alone
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in (folder / "Pat.attempts").iterdir())
    header.chmod(0o640)
    assert run(capsys, *ANSWER, "--profile", "Pat", "--save-dir", str(folder))[0] == 0
    assert stat.S_IMODE(header.stat().st_mode) == 0o640


def test_a_foreign_settings_file_is_never_rewritten(tmp_path, capsys):
    folder = tmp_path / "project"
    folder.mkdir()
    settings = folder / "settings.toml"
    settings.write_text("# my editor settings\n[editor]\ntab = 4\n")
    before = settings.read_bytes()
    assert run(capsys, *ANSWER, "--profile", "Pat", "--save-dir", str(folder))[0] == 0
    assert settings.read_bytes() == before
    code, out, _ = run(capsys, "saves", "check", "--save-dir", str(folder))
    assert code == 1 and "settings.toml" in out and "not Ridge's" in out


def test_a_foreign_file_with_a_profile_name_is_refused_not_rewritten(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    before = (tmp_path / "pyproject.toml").read_bytes()
    with pytest.raises(SaveError, match="not a Ridge save") as exc:
        SaveStore(tmp_path).record_attempt("pyproject", sample_attempt(0))
    assert "\n" not in str(exc.value) and (tmp_path / "pyproject.toml").read_bytes() == before


# -- 2. scores derived, never trusted -----------------------------------------------------------

def _forge(folder: Path, name: str, edit) -> None:
    """Edit every attempt of `name` with `edit`, then recompute the chain and the header's end,
    as someone who read saves.chain would."""
    header_path = folder / f"{name}.toml"
    header = tomllib.loads(header_path.read_text())
    prev = None
    for seg in sorted((folder / f"{name}.attempts").glob("*.toml")):
        doc = tomllib.loads(seg.read_text())
        for rec in doc["attempts"]:
            edit(rec)
            rec["prev_hash"] = prev or rec["prev_hash"]
            rec["hash"] = prev = chain_hash(rec["prev_hash"], rec)
        seg.write_text(tomli_w.dumps(doc))
    header["last_hash"] = prev
    header_path.write_text(tomli_w.dumps(header))


def test_a_version_2_save_keeps_its_score_and_upgrades_once(tmp_path, capsys):
    folder = _v2(tmp_path)
    stats = _score(capsys, folder)
    assert (stats["attempts"], stats["score"], stats["history_intact"]) == (4, -25, True)  # as main said
    assert (folder / "Pat.v2-backup.toml").read_bytes() == (FIXTURE_V2 / "Pat.toml").read_bytes()
    assert 'ridge = "profile"' in (folder / "Pat.toml").read_text()
    upgraded = (folder / "Pat.toml").read_bytes()
    assert _score(capsys, folder)["score"] == -25 and (folder / "Pat.toml").read_bytes() == upgraded
    assert run(capsys, *ANSWER, "--save-dir", str(folder))[0] == 0  # the last player: Pat
    assert _score(capsys, folder)["attempts"] == 5
    assert run(capsys, "saves", "check", "--save-dir", str(folder))[0] == 0


def test_forged_outcomes_with_a_recomputed_chain_are_regraded(tmp_path, capsys):
    folder = tmp_path / "saves"
    store = SaveStore(folder)
    for i in range(8):
        store.record_attempt("Pat", sample_attempt(i))
    honest = _score(capsys, folder)

    def cleared_high(rec):
        rec["outcome"] = "cleared"
        rec["prediction"]["certainty"] = "high"

    _forge(folder, "Pat", cleared_high)
    forged = _score(capsys, folder)
    assert run(capsys, "saves", "check", "--save-dir", str(folder))[0] == 0  # the chain verifies...
    # ...but each outcome is what its prediction earns: no more cleared or lucky than honestly earned
    for outcome in ("cleared", "lucky"):
        assert forged["by_outcome"][outcome] == honest["by_outcome"][outcome]
    assert forged["regraded"] == 6 and forged["score"] < honest["score"]


def test_an_attempt_whose_key_no_longer_matches_its_fingerprint_counts_nothing(tmp_path, capsys):
    folder = tmp_path / "saves"
    store = SaveStore(folder)
    for i in range(4):
        store.record_attempt("Pat", sample_attempt(i))

    def key_to_match(rec):
        rec["key"]["best_lever"] = rec["prediction"]["lever"]

    _forge(folder, "Pat", key_to_match)
    stats = _score(capsys, folder)
    assert stats["attempts"] == 2  # the two whose key was not changed


def test_a_rekey_never_moves_a_past_score():
    """Graded against the key it was answered under, as recorded: the engine's key today is
    never consulted, so a recalibration leaves past outcomes as they were earned."""
    key = {"bottleneck": "decode-kv", "best_lever": "batching", "gain_band": "2-4x", "reason": "kv-read",
           "bands": ["2-4x", "over-4x"], "reasons": ["kv-read"]}
    right = {"bottleneck": "decode-kv", "lever": "batching", "gain_band": "over-4x", "reason": "kv-read",
             "certainty": "high"}
    assert supported_outcome(right, key, "cleared") == "cleared"
    assert supported_outcome({**right, "lever": "paged-kv"}, key, "cleared") == "close"
    assert supported_outcome({**right, "reason": "idle-flops"}, key, "cleared") == "lucky"
    # a key from before the accepted bands and reasons were kept: what it cannot decide may stand
    old = {k: key[k] for k in ("bottleneck", "best_lever", "gain_band", "reason")}
    assert supported_outcome({**right, "reason": "idle-flops"}, old, "cleared") == "cleared"
    assert supported_outcome({**right, "bottleneck": "decode-compute"}, old, "cleared") == "close"
    assert supported_outcome({**right, "bottleneck": "decode-compute", "reason": "x"}, old, "cleared") == "missed"


def _history(folder: Path, name: str = "alice", count: int = 40) -> SaveStore:
    store = SaveStore(folder, segment_size=8)
    for i in range(count):
        store.record_attempt(name, sample_attempt(i))
    return store


def test_a_copied_history_is_caught(tmp_path, capsys):
    folder = tmp_path / "saves"
    _history(folder, "alice")
    _history(folder, "bob", 2)
    shutil.rmtree(folder / "bob.attempts")
    shutil.copytree(folder / "alice.attempts", folder / "bob.attempts")
    code, out, _ = run(capsys, "saves", "check", "--save-dir", str(folder))
    assert code == 1 and "bob.attempts/000001.toml: attempt 1: copied" in out
    code, out, _ = run(capsys, "stats", "--save-dir", str(folder), "--profile", "bob", "--json")
    assert json.loads(out)["attempts"] == 0
    # and whole files renamed: alice.* -> carol.*
    shutil.copy(folder / "alice.toml", folder / "carol.toml")
    shutil.copytree(folder / "alice.attempts", folder / "carol.attempts")
    code, out, _ = run(capsys, "saves", "check", "--save-dir", str(folder))
    assert "carol.attempts/000001.toml: attempt 1: copied" in out
    assert "copied" in refused(capsys, *ANSWER, "--profile", "carol", "--save-dir", str(folder))


def test_a_trimmed_history_is_caught_and_not_appended_to(tmp_path, capsys):
    folder = tmp_path / "saves"
    store = _history(folder)
    last = store._segments("alice")[-1]
    doc = tomllib.loads(last.read_text())
    doc["attempts"] = doc["attempts"][:-3]
    doc["count"] = len(doc["attempts"])  # the count lowered to match
    last.write_text(tomli_w.dumps(doc))
    code, out, _ = run(capsys, "saves", "check", "--save-dir", str(folder))
    assert code == 1 and "attempts 38-40 are gone" in out
    before = last.read_bytes()
    assert "38-40" in refused(capsys, *ANSWER, "--profile", "alice", "--save-dir", str(folder))
    assert last.read_bytes() == before


def test_deleting_the_last_segment_and_its_seals_is_caught(tmp_path, capsys):
    folder = tmp_path / "saves"
    store = _history(folder)
    store._segments("alice")[-1].unlink()
    (folder / "alice.attempts" / ".verified.json").unlink()
    code, out, _ = run(capsys, "saves", "check", "--save-dir", str(folder))
    assert code == 1 and "attempts 33-40 are gone" in out


def test_an_attempts_folder_without_its_profile_is_reported(tmp_path, capsys):
    folder = tmp_path / "saves"
    _history(folder, "p", 5)
    (folder / "p.toml").unlink()
    code, out, _ = run(capsys, "saves", "check", "--save-dir", str(folder))
    assert code == 1 and "p.attempts: orphaned" in out and "no profile p.toml" in out


def test_nothing_appends_to_a_damaged_header(tmp_path, capsys):
    folder = tmp_path / "saves"
    _history(folder, "p", 3)
    header = folder / "p.toml"
    header.write_text(header.read_text().replace("last_seq = 3", "last_seq = three"))
    before = sorted((p.name, p.read_bytes()) for p in (folder / "p.attempts").iterdir())
    refused(capsys, *ANSWER, "--profile", "p", "--save-dir", str(folder))
    assert sorted((p.name, p.read_bytes()) for p in (folder / "p.attempts").iterdir()) == before


# -- 3. one line, exit 2, for every refusal ----------------------------------------------------

SAVE_DIR_COMMANDS = [
    ("stats",), ("saves", "check"), ("saves", "export", "--format", "csv"), ("drill", "plan"),
    ("puzzles", "list"), ("puzzles", "show", "intensity-01"),
    ("play",), ("serve",), (*ANSWER,), ("match", "play", "R-42-3-10"),
]


@pytest.mark.parametrize("command", SAVE_DIR_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_home_folder_that_does_not_exist_is_one_line(capsys, command):
    assert "no home folder" in refused(capsys, *command, "--save-dir", "~nouser-ridge/x")


def test_escape_codes_in_save_dir_are_written_out(tmp_path, capsys):
    odd = str(tmp_path / "a\x1b[31mred")
    err = refused(capsys, "saves", "check", "--save-dir", odd)
    assert "\\x1b[31mred" in err
    code, out, _ = run(capsys, "stats", "--save-dir", odd)
    assert code == 0 and "\x1b" not in out and "\\x1b" in out


def test_a_save_dir_that_loops_is_one_line(tmp_path, capsys):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert "link loop" in refused(capsys, "serve", "--save-dir", str(tmp_path / "a"), "--port", "8712")


def test_generate_is_bounded_and_every_id_it_prints_resolves(capsys, monkeypatch):
    from puzzles.generator import drawing

    made = []
    monkeypatch.setattr(drawing, "make", lambda *a: made.append(a))  # nothing is made before the refusal
    assert "10,000" in refused(capsys, "puzzles", "generate", "--seed", "1", "--count", "100000")
    assert "nine digits" in refused(capsys, "puzzles", "generate", "--seed", "1", "--start", "1000000000")
    assert made == []
    monkeypatch.undo()
    code, out, _ = run(capsys, "puzzles", "generate", "--seed", "1", "--count", "2", "--start", "999999998",
                       "--json")
    ids = [p["id"] for p in json.loads(out)]
    assert code == 0 and ids == ["gen-s1-d4-999999998", "gen-s1-d5-999999999"]
    for pid in ids:
        assert run(capsys, "puzzles", "show", pid, "--json")[0] == 0


def test_generate_streams(capsys, monkeypatch):
    """Each puzzle is printed before the next is made: memory does not grow with --count."""
    from puzzles.generator import drawing

    real, seen = drawing.make, []

    def make(*args):
        seen.append(len(capsys.readouterr().out))  # what was printed before this one was made
        return real(*args)

    monkeypatch.setattr(drawing, "make", make)
    assert main(["puzzles", "generate", "--seed", "4", "--count", "3", "--json"]) == 0
    assert seen[0] == 1 and all(n > 100 for n in seen[1:])  # "[" first, then one puzzle per make


@pytest.mark.parametrize("name", [".hidden.toml", "x.TOML"])
def test_pack_import_refuses_what_the_loader_would_skip(tmp_path, capsys, name):
    source = tmp_path / name
    shutil.copy(Path(__file__).parents[2] / "puzzles" / "packs" / "intensity.toml", source)
    assert "NAME.toml" in refused(capsys, "puzzles", "import", str(source), "--save-dir", str(tmp_path / "d"))
    assert not (tmp_path / "d" / "packs").exists()


def test_napkin_error_columns_count_leading_spaces():
    from puzzles.napkin import NapkinError, evaluate

    for text, column in (("2 +* 3", 3), ("   2 +* 3", 6), ("  (1", 2)):
        with pytest.raises(NapkinError) as exc:
            evaluate(text)
        assert exc.value.column == column and text[column] in "*("


def test_every_layer_refuses_in_one_short_line():
    huge = "x" * 5000
    for error in (SaveError(f"{huge}\n{huge}"), MatchFileError(f"answer 1: outcome {huge!r}\x1b[2J")):
        text = str(error)
        assert "\n" not in text and len(text) <= 300 and "\x1b" not in text


# -- 4. profiles on the command line (issue 22 item 3) -------------------------------------------

def test_answer_records_to_the_player_the_game_would_open(tmp_path, capsys):
    folder = tmp_path / "saves"
    assert "--profile" in refused(capsys, *ANSWER, "--json", "--save-dir", str(folder))
    assert not folder.exists()  # nobody was created
    store = SaveStore(folder)
    store.create_profile("Ann")
    store.create_profile("Pat")  # the game played as Pat last
    code, out, _ = run(capsys, *ANSWER, "--json", "--save-dir", str(folder))
    assert code == 0 and json.loads(out)["recorded"] == {"profile": "Pat", "seq": 1}
    assert sorted(p.name for p in folder.glob("*.toml")) == ["Ann.toml", "Pat.toml", "settings.toml"]


def test_drill_plan_prints_and_only_save_stores(tmp_path, capsys):
    store = SaveStore(tmp_path)
    store.create_profile("Pat")
    before = store.header_path("Pat").read_bytes()
    assert run(capsys, "drill", "plan", "--until", "2031-01-01", "--save-dir", str(tmp_path))[0] == 0
    assert store.header_path("Pat").read_bytes() == before
    assert run(capsys, "drill", "plan", "--until", "2031-01-01", "--save", "--save-dir", str(tmp_path))[0] == 0
    assert store.load("Pat").settings["exam-date"] == "2031-01-01"
    assert os.path.exists(store.header_path("Pat"))


# -- match files ---------------------------------------------------------------------------------

def _results(tmp_path: Path, *files: tuple[str, str, list]) -> list[Path]:
    from saves.match import result_doc, write_result

    paths = []
    for i, (player, code, answers) in enumerate(files):
        path = tmp_path / f"{i}-{player}.toml"
        write_result(path, result_doc(code or CODE, player, "", START, answers))
        paths.append(path)
    return paths


def test_match_files_hold_to_what_a_real_match_can_produce(tmp_path):
    import datetime as dt

    from puzzles.match import MatchCode
    from saves import match

    right = answers("right")
    zero = [{**a, "seconds": 0.0} for a in right]
    future = [{**a, "locked_at": "2999-01-01T00:00:00.000Z"} for a in right]
    slow = [{**a, "seconds": 600.0} for a in right]  # longer than the minute since the answer before
    stray = MatchCode(7, 2, 3)
    paths = _results(tmp_path, ("Zed", str(stray), []), ("Ada", "", right), ("Bea", "", answers("medium")),
                     ("Аda", "", answers("wrong")), ("Eve", "", right), ("Kim", "", zero), ("Lu", "", future),
                     ("Mo", "", slow))
    merged = match.merge_files(paths)
    assert [r.player for r in merged.accepted] == ["Ada", "Bea"]  # a stray file first turns nobody away
    why = {Path(f).name.split("-", 1)[1]: reason for f, reason in merged.rejected}
    assert why["Zed.toml"].startswith("it is from match R-7-2-3")
    assert "already has a result" in why["Аda.toml"]  # Cyrillic А: the same name
    assert "signed as another player" in why["Eve.toml"]
    assert "could have taken" in why["Kim.toml"] and "could have taken" in why["Mo.toml"]
    assert "window" in why["Lu.toml"]
    assert all(len(r) <= 300 and "\n" not in r for r in why.values())
    assert dt.datetime.now(dt.timezone.utc).year < 2999


def test_a_damaged_version_2_history_is_read_as_it_is_not_upgraded(tmp_path, capsys):
    folder = _v2(tmp_path)
    seg = folder / "Pat.attempts" / "000001.toml"
    seg.write_text(seg.read_text().replace('outcome = "missed"', 'outcome = "cleared"'))
    before = {p.name: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    stats = _score(capsys, folder)
    assert stats["attempts"] == 3 and stats["edited_not_counted"] == 1 and not stats["history_intact"]
    assert "damaged" in refused(capsys, *ANSWER, "--save-dir", str(folder))
    after = {p.name: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")}
    assert after == {k: v for k, v in before.items() if not k.startswith(".")}  # nothing upgraded or written


def test_an_outcome_is_graded_again_exactly_from_the_record():
    """An attempt keeps what its grade was made of (the accepted bands and reasons, whether a
    reason was asked, the engine's value of each estimate that counted), so the outcome its
    prediction earns comes back exactly from the record, whatever outcome the file claims: a
    forged 'cleared' counts as what was earned, neither more nor less."""
    from puzzles import bank
    from puzzles.attempts import attempt_fields
    from puzzles.grading import grade
    from puzzles.grading import Prediction
    import datetime as dt

    seen = set()
    for puzzle_id in ("kv-cache-02", "intensity-01", "two-phases-01", "speculative-decoding-02"):
        puzzle = bank.get(puzzle_id)
        key = bank.key(puzzle)
        truth = {n: key.estimates[n] for n in puzzle.estimates}
        for band in ("under-1.25x", "1.25-2x", "2-4x", "over-4x"):
            for reason in (key.reason, "idle-flops", ""):
                for scale in (1.0, 1.4, 1.6, 0.5):
                    p = Prediction(bottleneck=str(key.bottleneck), lever=str(key.best_lever), gain_band=band,
                                   reason=reason or "", certainty="medium",
                                   estimates={n: v * scale for n, v in truth.items()})
                    graded = grade(puzzle, key, p, strict=False)
                    fields = attempt_fields(puzzle, graded, mode="cli", locked_at=dt.datetime.now(dt.timezone.utc))
                    for claimed in ("cleared", "lucky", "close", "missed"):
                        assert supported_outcome(fields["prediction"], fields["key"], claimed) == str(graded.outcome)
                    seen.add(str(graded.outcome))
    assert seen == {"cleared", "lucky", "close", "missed"}
