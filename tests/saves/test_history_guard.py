"""A history that is never papered over, and writes that never destroy what is not a file.

Before every append the whole chain and every segment's count are checked (closed segments by
their seals, re-read when they change); a damaged history refuses the new answer with a line
that points at `ridge saves check`, and the check still reports the damage afterwards. A
hand-edited attempt is flagged and never counted. Writes go through a symlink (the link stays)
and refuse devices, pipes and folders.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from saves import atomic
from saves.errors import SaveError
from saves.history import SEALS
from puzzles.stats import derive
from saves.store import SaveStore
from helpers.saves_worker import sample_attempt
from helpers.pilot import settle


def _store(tmp_path: Path, count: int, segment_size: int = 4) -> SaveStore:
    store = SaveStore(tmp_path, segment_size=segment_size)
    for i in range(count):
        store.record_attempt("Ada", sample_attempt(i))
    return store


def _drop_last_table(path: Path, keep_count: bool = True) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:text.rindex("[[attempts]]")], encoding="utf-8")


@pytest.mark.parametrize("segment", ["000001.toml", "000002.toml", "000003.toml"])
def test_a_deleted_attempt_refuses_the_next_answer_and_stays_reported(tmp_path, segment):
    store = _store(tmp_path, 10)  # segments of 4, 4 and 2: two closed, one open
    store.record_attempt("Ada", sample_attempt(10))  # seals the closed segments
    assert (store.segments_dir("Ada") / SEALS).exists()
    _drop_last_table(store.segments_dir("Ada") / segment)
    with pytest.raises(SaveError) as caught:
        store.record_attempt("Ada", sample_attempt(11))
    message = str(caught.value)
    assert "history is damaged" in message and "ridge saves check" in message and segment in message
    assert "\n" not in message
    assert store.check(), "the damage must still be reported after the refused answer"
    assert len(store.load("Ada").attempts) == 10


def test_a_deleted_segment_in_the_middle_is_found(tmp_path):
    store = _store(tmp_path, 10)
    (store.segments_dir("Ada") / "000002.toml").unlink()
    with pytest.raises(SaveError, match="000002.toml: this segment file is missing"):
        store.record_attempt("Ada", sample_attempt(10))


def test_an_edited_closed_segment_is_read_again_despite_its_seal(tmp_path):
    store = _store(tmp_path, 9)
    store.record_attempt("Ada", sample_attempt(9))
    path = store.segments_dir("Ada") / "000001.toml"
    text = path.read_text(encoding="utf-8")
    edited = text.replace('outcome = "cleared"', 'outcome = "missed"', 1)
    assert edited != text
    st = os.stat(path)
    path.write_text(edited, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # even with the old modification time
    with pytest.raises(SaveError, match="000001.toml: attempt 1: edited"):
        store.record_attempt("Ada", sample_attempt(10))


def test_a_damaged_seal_file_only_means_reading_more(tmp_path):
    store = _store(tmp_path, 9)
    store.record_attempt("Ada", sample_attempt(9))
    (store.segments_dir("Ada") / SEALS).write_text("{not json", encoding="utf-8")
    store.record_attempt("Ada", sample_attempt(10))
    assert store.check() == [] and len(store.load("Ada").attempts) == 11


def test_a_hand_edited_attempt_is_never_counted(tmp_path):
    store = _store(tmp_path, 6)
    before = store.load("Ada")
    honest = derive(before)
    forged = next(a for a in before.attempts if a.outcome == "missed")
    path = store.segments_dir("Ada") / "000001.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('outcome = "missed"', 'outcome = "cleared"', 1), encoding="utf-8")
    profile = store.load("Ada")
    assert any(p.kind == "edited" for p in profile.chain_problems())
    assert len(profile.counted_attempts()) == 5
    stats = derive(profile)
    # neither the forged "cleared" nor the honest "missed" it replaced is counted
    assert stats.attempts == 5 and stats.score == honest.score - forged.points
    assert stats.by_outcome["cleared"] == honest.by_outcome["cleared"]


def test_an_export_through_a_symlink_keeps_the_link(tmp_path):
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    real.write_text("old", encoding="utf-8")
    link.symlink_to(real)
    atomic.write_atomic(link, "new")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new"
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "made.csv")
    atomic.write_atomic(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "made.csv").read_text(encoding="utf-8") == "made"


def test_devices_pipes_and_folders_are_never_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (Path(os.devnull), fifo, tmp_path):
        before = os.lstat(target)
        with pytest.raises(SaveError, match="not a regular file; it was not replaced"):
            atomic.write_atomic(target, "x")
        after = os.lstat(target)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode)
    link = tmp_path / "to-null"
    link.symlink_to(os.devnull)
    with pytest.raises(SaveError, match="a device"):
        atomic.write_atomic(link, "x")
    assert link.is_symlink()


def test_a_deleted_last_segment_is_found_by_its_sealed_predecessor(tmp_path):
    store = _store(tmp_path, 9)  # 4, 4 and 1
    store.record_attempt("Ada", sample_attempt(9))  # seals 000001 and 000002
    (store.segments_dir("Ada") / "000003.toml").unlink()
    with pytest.raises(SaveError, match="segments after it are gone"):
        store.record_attempt("Ada", sample_attempt(10))
    assert any(p.kind == "deleted" for p in store.check())


async def test_the_app_asks_before_setting_a_damaged_history_aside(tmp_path):
    from app.screens.dialogs import ConfirmDialog
    from helpers.snapshots import build_app
    SIZE = (80, 24)

    store = _store(tmp_path, 6, segment_size=SaveStore(tmp_path).segment_size)
    _drop_last_table(store.segments_dir("Ada") / "000001.toml")
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog) and app.screen.id == "damaged-save"
        assert "history is damaged" in app.screen.body
        await settle(pilot, "n")
        assert app.session is None
    assert store.check(), "left as it is"
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await settle(pilot, "y")
        assert app.session is not None and app.session.name == "Ada"
    assert any(p.name.startswith("Ada.damaged-") for p in tmp_path.iterdir())
    assert SaveStore(tmp_path).check() == []


def test_a_save_file_is_parsed_again_only_when_its_bytes_change(tmp_path):
    """The store keeps the header and the open segment it last read or wrote with the exact bytes
    they came from, so an append parses no whole file. What it keeps must be what a fresh read
    gives, and a file changed behind its back (same store, no new process) must be read afresh:
    a header cut short by hand, or an attempt dropped from the open segment, is refused."""
    store = _store(tmp_path, 3)
    store.update_settings("Ada", theme="nord")
    store.save_review_state("Ada", "kv-cache", {"card_id": 1, "state": 2, "step": None, "stability": 3.5,
                                                "difficulty": 5.0, "due": "2026-12-01T00:00:00Z",
                                                "last_review": "2026-11-30T00:00:00Z"})
    for i in range(3, 6):  # fills segment 1 (4), then opens segment 2 and appends to it
        store.record_attempt("Ada", sample_attempt(i))
    path, last = store.header_path("Ada"), store._segments("Ada")[-1]
    fresh = SaveStore(tmp_path, segment_size=4)
    with store._locked("Ada"):
        kept, kept_segment = store._read_header("Ada"), store._read_segment(last)
        assert kept is store._known[path][1] and kept_segment is store._known[last][1]
        assert fresh._read_header("Ada") == kept and kept.last_seq == 6
        assert fresh._read_segment(last) == kept_segment and kept_segment[0]["count"] == 2
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("last_seq = 6", "last_seq = 5"), encoding="utf-8")  # cut short, by hand
    with pytest.raises(SaveError, match="damaged"):
        store.record_attempt("Ada", sample_attempt(10))
    path.write_text(text, encoding="utf-8")
    store.record_attempt("Ada", sample_attempt(11))
    _drop_last_table(last)
    with pytest.raises(SaveError, match="damaged"):
        store.record_attempt("Ada", sample_attempt(12))
    assert len(SaveStore(tmp_path).check_report().problems) >= 1
