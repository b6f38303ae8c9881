"""SaveStore: profiles, records, settings, review cards, migration and tamper evidence."""
from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from helpers.saves_worker import sample_attempt
from saves import locations
from saves.chain import GENESIS, chain_hash, verify_chain
from saves.errors import SaveError
from saves.model import AttemptIn
from puzzles.stats import derive
from saves.store import SaveStore
from engine.errors import RidgeError

FIXTURE_V1 = Path(__file__).parents[1] / "fixtures" / "saves" / "v1" / "alice.toml"


# -- locations ------------------------------------------------------------------------------------

def test_locations_prefer_the_override_then_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(locations.ENV_SAVE_DIR, str(tmp_path / "env"))
    assert locations.data_dir(tmp_path / "flag") == tmp_path / "flag"
    assert locations.data_dir() == tmp_path / "env"
    assert locations.log_path() == tmp_path / "env" / "logs" / "ridge.log"
    assert locations.user_catalog_path() == tmp_path / "env" / "catalog.toml"
    monkeypatch.delenv(locations.ENV_SAVE_DIR)
    assert locations.data_dir().name.lower() == "ridge"
    assert SaveStore(tmp_path).dir == tmp_path


# -- profiles -------------------------------------------------------------------------------------

def test_profile_names_are_checked_and_unique(tmp_path):
    store = SaveStore(tmp_path)
    assert store.profiles() == []
    store.create_profile("Ada Lovelace")
    store.create_profile("bob_2-x")
    assert store.profiles() == ["Ada Lovelace", "bob_2-x"]
    for bad in ("", " ada", "a" * 33, "a.b", "../x", "a/b", "settings", "CON", "tab\tname"):
        with pytest.raises(RidgeError):
            store.create_profile(bad)
    with pytest.raises(SaveError, match="already exists"):
        store.create_profile("ada lovelace")
    assert store.load("ADA LOVELACE").name == "Ada Lovelace"
    with pytest.raises(SaveError, match="no profile named 'carol'"):
        store.load("carol")


def test_a_recorded_attempt_reads_back_exactly(tmp_path):
    store = SaveStore(tmp_path)
    attempt = sample_attempt(5, generator={"seed": 42, "difficulty": 3, "index": 7},
                             puzzle_id="gen-s42-d3-0007", module="generated")
    recorded = store.record_attempt("player", attempt)  # creates the profile
    assert recorded.seq == 1 and recorded.prev_hash == store._read_header("player").origin("player") != GENESIS
    loaded = store.load("player").attempts
    assert loaded == (recorded,)
    assert loaded[0].generator.seed == 42
    assert loaded[0].locked_at.tzinfo is not None
    text = store._segments("player")[0].read_text()
    assert "locked_at = 2026-03-01T09:05:00.000Z" in text
    assert "score" not in text and "points" not in text  # totals are never stored


def test_attempt_input_is_validated(tmp_path):
    store = SaveStore(tmp_path)
    good = sample_attempt(0).model_dump()
    for change in ({"outcome": "won"}, {"mode": "arcade"}, {"hints_used": -1},
                   {"locked_at": dt.datetime(2026, 1, 1)}, {"seconds_taken": float("nan")},
                   {"puzzle_id": "x\ud800"}, {"puzzle_id": "a\nb"}, {"surprise": 1}):
        with pytest.raises(SaveError, match="attempt not recorded"):
            store.record_attempt("p", {**good, **change})
    assert store.profiles() == []


def test_times_are_stored_in_utc(tmp_path):
    store = SaveStore(tmp_path)
    plus2 = dt.timezone(dt.timedelta(hours=2))
    a = store.record_attempt("p", sample_attempt(0, locked_at=dt.datetime(2026, 5, 1, 12, tzinfo=plus2)))
    assert a.locked_at == dt.datetime(2026, 5, 1, 10, tzinfo=dt.timezone.utc)
    assert "2026-05-01T10:00:00.000Z" in store._segments("p")[0].read_text()


def test_attempts_roll_over_into_bounded_segments(tmp_path):
    store = SaveStore(tmp_path, segment_size=3)
    for i in range(7):
        store.record_attempt("p", sample_attempt(i))
    assert [p.name for p in store._segments("p")] == ["000001.toml", "000002.toml", "000003.toml"]
    assert [a.seq for a in store.load("p").attempts] == list(range(1, 8))
    assert store.check() == []


def test_settings_and_review_cards_round_trip(tmp_path):
    from fsrs import Card, Rating, Scheduler

    store = SaveStore(tmp_path)
    store.create_profile("p")
    assert store.update_settings("p", theme="textual-light", timer=False, goal=5) == {
        "theme": "textual-light", "timer": False, "goal": 5}
    store.update_settings("p", goal=None)
    card, _ = Scheduler().review_card(Card(), Rating.Good)
    store.save_review_state("p", "kv-cache", card.to_dict())
    store.save_review_state("p", "intensity", Card().to_dict())
    profile = store.load("p")
    assert profile.settings == {"theme": "textual-light", "timer": False}
    restored = Card.from_dict(profile.review_card("kv-cache"))
    assert restored.to_dict() == card.to_dict()
    assert profile.review_card("intensity")["stability"] is None
    assert profile.review_card("nothing") is None
    with pytest.raises(SaveError):
        store.update_settings("p", colours=[1, 2])
    with pytest.raises(SaveError):
        store.update_settings("p", bad="a\x00b")


def test_the_last_profile_is_remembered_for_commands(tmp_path):
    store = SaveStore(tmp_path)
    assert store.choose_profile() is None
    store.record_attempt("ann", sample_attempt(0))
    assert store.choose_profile() == "ann"
    store.record_attempt("ben", sample_attempt(0))
    assert store.choose_profile() == "ben" and store.last_profile() == "ben"
    (tmp_path / "settings.toml").unlink()
    with pytest.raises(SaveError, match="ann, ben.*--profile"):
        store.choose_profile()
    assert store.choose_profile("ANN") == "ann"


def test_a_newer_schema_is_refused_not_rewritten(tmp_path):
    store = SaveStore(tmp_path)
    store.create_profile("p")
    header = store.header_path("p")
    header.write_text(header.read_text().replace("schema_version = 3", "schema_version = 4"))
    before = header.read_bytes()
    with pytest.raises(SaveError, match="newer Ridge"):
        store.load("p")
    with pytest.raises(SaveError, match="newer Ridge"):
        store.record_attempt("p", sample_attempt(0))
    assert header.read_bytes() == before


# -- migration ------------------------------------------------------------------------------------

def _v1(tmp_path: Path) -> SaveStore:
    shutil.copy(FIXTURE_V1, tmp_path / "alice.toml")
    return SaveStore(tmp_path)


def test_a_version_1_file_is_migrated_and_the_original_kept(tmp_path):
    store = _v1(tmp_path)
    assert store.check() == []  # checking never migrates
    assert (tmp_path / "alice.toml").read_bytes() == FIXTURE_V1.read_bytes()
    profile = store.load("alice")
    assert (tmp_path / "alice.v1-backup.toml").read_bytes() == FIXTURE_V1.read_bytes()
    assert [a.puzzle_id for a in profile.attempts] == [
        "two-phases-01", "kv-cache-02", "kv-cache-02", "intensity-03"]
    second = profile.attempts[1]
    assert (second.prediction.certainty, second.outcome, second.hints_used) == ("medium", "close", 1)
    assert profile.attempts[2].locked_at == dt.datetime(2026, 3, 2, 19, 15, tzinfo=dt.timezone.utc)
    assert profile.settings == {"theme": "textual-dark", "timer": True}
    # The file said score = 120; the score is derived: 30 + (-5 - 3) + 20 + (0 - 6).
    assert derive(profile).score == 36
    assert "schema_version = 3" in (tmp_path / "alice.toml").read_text()
    assert store.check() == [] and profile.chain_problems() == []
    again = store.load("alice")
    assert again.attempts == profile.attempts
    assert sorted(p.name for p in tmp_path.glob("alice.v1-backup*")) == ["alice.v1-backup.toml"]
    assert store.record_attempt("alice", sample_attempt(0)).seq == 5


def test_an_interrupted_migration_is_redone(tmp_path, monkeypatch):
    store = _v1(tmp_path)

    def crash(*args, **kwargs):
        raise SaveError("power cut")

    monkeypatch.setattr(store, "_write_header", crash)
    with pytest.raises(SaveError, match="power cut"):
        store.load("alice")
    assert (tmp_path / "alice.toml").read_bytes() == FIXTURE_V1.read_bytes()
    monkeypatch.undo()
    assert len(store.load("alice").attempts) == 4
    assert store.check() == []


def test_a_damaged_version_1_file_is_not_migrated(tmp_path):
    store = _v1(tmp_path)
    path = tmp_path / "alice.toml"
    path.write_text(FIXTURE_V1.read_text().replace('certainty = "low"', 'certainty = "sure"'))
    before = path.read_bytes()
    with pytest.raises(SaveError, match=r"alice.toml: line \d+: attempt #4, certainty"):
        store.load("alice")
    assert path.read_bytes() == before and not (tmp_path / "alice.v1-backup.toml").exists()


# -- tamper evidence ------------------------------------------------------------------------------

def _history(tmp_path: Path, n: int = 6, size: int = 4) -> SaveStore:
    store = SaveStore(tmp_path, segment_size=size)
    for i in range(n):
        store.record_attempt("eve", sample_attempt(i))
    return store


def _blocks(path: Path) -> tuple[str, list[str]]:
    head, *blocks = path.read_text().split("[[attempts]]\n")
    return head, blocks


def test_an_edited_attempt_is_detected(tmp_path):
    store = _history(tmp_path)
    seg = store._segments("eve")[0]
    text = seg.read_text()
    # Attempt 4 was "missed"; make it "cleared" (still a valid file).
    head, blocks = _blocks(seg)
    blocks[3] = blocks[3].replace('outcome = "missed"', 'outcome = "cleared"')
    seg.write_text("[[attempts]]\n".join([head, *blocks]))
    assert seg.read_text() != text
    assert derive(store.load("eve")).by_outcome["missed"] == 0  # loads, but...
    problems = store.check()
    assert [(p.file, p.seq, p.kind) for p in problems] == [("eve.attempts/000001.toml", 4, "edited")]
    assert "000001.toml: attempt 4: edited" in str(problems[0])


def test_a_deleted_attempt_is_detected(tmp_path):
    store = _history(tmp_path)
    seg = store._segments("eve")[0]
    head, blocks = _blocks(seg)
    del blocks[1]
    seg.write_text("[[attempts]]\n".join([head, *blocks]))
    kinds = {(p.seq, p.kind) for p in store.check()}
    assert (3, "deleted") in kinds  # attempt 2 is missing before attempt 3
    assert any(kind == "deleted" for _, kind in kinds)


def test_deleting_the_last_attempt_is_detected(tmp_path):
    store = _history(tmp_path)
    seg = store._segments("eve")[-1]
    head, blocks = _blocks(seg)
    seg.write_text("[[attempts]]\n".join([head, *blocks[:-1]]))
    assert [(p.kind, p.file) for p in store.check()] == [("deleted", "eve.attempts/000002.toml"),
                                                        ("deleted", "eve.attempts")]  # and the header's end


def test_reordered_attempts_are_detected(tmp_path):
    store = _history(tmp_path)
    seg = store._segments("eve")[0]
    head, blocks = _blocks(seg)
    blocks[1], blocks[2] = blocks[2], blocks[1]
    seg.write_text("[[attempts]]\n".join([head, *blocks]))
    assert {p.kind for p in store.check()} == {"reordered"}


def test_a_damaged_file_is_reported_without_a_cascade(tmp_path):
    store = _history(tmp_path, n=10)
    store._segments("eve")[1].write_text("this is not toml")
    problems = store.check()
    assert [(p.file, p.kind) for p in problems] == [("eve.attempts/000002.toml", "bad-file")]


def test_verify_chain_on_plain_records():
    records, prev = [], GENESIS
    for seq in (1, 2, 3):
        rec = {"seq": seq, "player": "ann", "points": seq * 10}
        rec["prev_hash"], rec["hash"] = prev, chain_hash(prev, rec)
        prev = rec["hash"]
        records.append(rec)
    assert verify_chain(records) == []
    forged = [dict(r) for r in records]
    forged[1]["points"] = 99
    assert [(p.seq, p.kind) for p in verify_chain(forged)] == [(2, "edited")]
    assert [(p.seq, p.kind) for p in verify_chain([records[0], records[2]])] == [(3, "deleted")]
    assert verify_chain([records[1], records[2]], prev_hash=None, first_seq=None) == []


def test_attempt_in_is_the_public_constructor():
    a = AttemptIn(puzzle_id="kv-cache-01", module="kv-cache", mode="campaign", outcome="lucky",
                  prediction={"certainty": "medium"}, hints_used=2,
                  locked_at=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
    assert a.points == 5 - 2 * 3
    assert a.prediction.bottleneck == "" and a.key is None


def test_a_moved_and_altered_record_reports_both():
    records, prev = [], GENESIS
    for seq in (1, 2, 3):
        rec = {"seq": seq, "points": seq}
        rec["prev_hash"], rec["hash"] = prev, chain_hash(prev, rec)
        prev = rec["hash"]
        records.append(rec)
    altered = dict(records[2], points=30)
    assert [(p.seq, p.kind) for p in verify_chain([records[0], altered])] == [
        (3, "deleted"), (3, "edited")]
