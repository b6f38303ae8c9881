"""Saves survive kills, concurrent writers and full disks (issue 5, "How it is checked")."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.saves_worker import sample_attempt
from saves import atomic
from saves.errors import SaveError
from saves.store import SaveStore

WORKER = Path(__file__).parents[1] / "helpers" / "saves_worker.py"
posix_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.endswith(".lock")}


@pytest.mark.slow
@posix_only
def test_sigkill_at_random_moments_loses_nothing_that_returned(tmp_path):
    # Two workers in parallel (2 cores), 100 kills each, share one profile: kills land while
    # holding the lock, mid-write, mid-rename and while waiting for the other worker. A record
    # writes the segment and then the header (its end); kills come within 2.4 times one record in
    # a fresh child (the worker times one first: 25-35 ms with scratch files in memory at load 5)
    # and never under 30 ms, so most land inside a write and enough writes finish to mean
    # something (hundreds per worker), however busy the machine.
    runs = [subprocess.Popen([sys.executable, str(WORKER), "crash", str(tmp_path), "alice",
                              "100", str(seed), "0.03", "4"], stdout=subprocess.PIPE, text=True)
            for seed in (1, 2)]
    summaries = [json.loads(run.communicate(timeout=120)[0]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert sum(s["kills"] for s in summaries) >= 200
    failures = [f for s in summaries for f in s["failures"]]
    assert failures == []
    returned = [seq for s in summaries for seq in s["returned"]]
    assert len(returned) >= 10, "too few writes finished for the test to mean anything"
    assert len(returned) == len(set(returned)), "two returned attempts share a seq"

    store = SaveStore(tmp_path, segment_size=4)
    profile = store.load("alice")
    seqs = [a.seq for a in profile.attempts]
    assert seqs == list(range(1, len(seqs) + 1))
    assert set(returned) <= set(seqs)
    assert store.check() == []
    # Stale temporary files from killed writers are swept by the next write.
    store.record_attempt("alice", sample_attempt(0))
    assert not [p for p in tmp_path.rglob("*.tmp")]


@pytest.mark.slow
@posix_only
def test_two_processes_recording_500_each_keep_all_1000(tmp_path):
    # Locking is what is under test, not power-loss durability: skip fsync so a slow disk
    # does not turn 1,000 serialised writes into minutes.
    env = {**os.environ, "RIDGE_SAVE_FSYNC": "0"}
    runs = [subprocess.Popen([sys.executable, str(WORKER), "record", str(tmp_path), "bob", "500",
                              tag], stdout=subprocess.PIPE, text=True, env=env)
            for tag in ("a", "b")]
    outputs = [run.communicate(timeout=240)[0] for run in runs]
    assert all(run.returncode == 0 for run in runs)
    a, b = ({int(x) for x in out.split()} for out in outputs)
    assert len(a) == len(b) == 500 and not a & b
    store = SaveStore(tmp_path)
    profile = store.load("bob")
    assert len(profile.attempts) == 1000
    assert [x.seq for x in profile.attempts] == list(range(1, 1001))
    assert {x.puzzle_id.split("-")[2] for x in profile.attempts} == {"a", "b"}
    assert profile.chain_problems() == [] and store.check() == []


def test_each_write_fsyncs_the_file_and_its_folder(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(atomic, "FSYNC", True)
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    atomic.write_atomic(tmp_path / "x.toml", "a = 1\n")
    assert len(synced) == 2  # the temporary file before the rename, the folder after it


def test_a_full_disk_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    store = SaveStore(tmp_path)
    store.record_attempt("alice", sample_attempt(0))
    before = _files(tmp_path)

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "write", full)
    with pytest.raises(SaveError, match="No space left on device.*unchanged"):
        store.record_attempt("alice", sample_attempt(1))
    monkeypatch.undo()
    assert _files(tmp_path) == before
    assert len(store.load("alice").attempts) == 1


def test_a_failed_rename_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "x.toml"
    target.write_text("a = 1\n")

    def broken(src, dst):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(atomic.os, "replace", broken)
    with pytest.raises(SaveError, match="x.toml"):
        atomic.write_atomic(target, "a = 2\n")
    assert target.read_text() == "a = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.toml"]


def test_a_damaged_file_is_kept_until_quarantine_and_then_set_aside(tmp_path):
    store = SaveStore(tmp_path)
    store.record_attempt("alice", sample_attempt(0))
    seg = store._segments("alice")[0]
    seg.write_text(seg.read_text().replace('outcome = "cleared"', 'outcome = "won"'))
    damaged = _files(tmp_path)
    for _ in range(2):
        with pytest.raises(SaveError) as err:
            store.load("alice")
        assert "000001.toml" in str(err.value) and "outcome" in str(err.value)
        assert err.value.line is not None and "\n" not in str(err.value)
        with pytest.raises(SaveError):  # recording must not rewrite the damaged segment
            store.record_attempt("alice", sample_attempt(1))
        assert _files(tmp_path) == damaged

    moved = store.quarantine("alice")
    names = sorted(p.name for p in moved)
    assert names[0].startswith("alice.damaged-") and names[0].endswith(".attempts")
    assert names[1].startswith("alice.damaged-") and names[1].endswith(".toml")
    assert store.profiles() == []
    assert (moved[1] / "000001.toml").read_bytes() == damaged["alice.attempts/000001.toml"] \
        if moved[1].is_dir() else (moved[0] / "000001.toml").exists()
    fresh = store.record_attempt("alice", sample_attempt(2))
    assert fresh.seq == 1 and store.profiles() == ["alice"]
    assert len(store.load("alice").attempts) == 1


def test_a_report_written_again_is_kept_beside_the_last_one(tmp_path):
    """The exam's report (saves.atomic.write_new): a second and third report on the same name
    get -2 and -3 before the suffix, and every earlier one stays as it was."""
    folder = tmp_path / "reports"  # made on the first write
    paths = [atomic.write_new(folder, "exam.md", f"take {n}") for n in range(3)]
    assert [p.name for p in paths] == ["exam.md", "exam-2.md", "exam-3.md"]
    assert [p.read_text() for p in paths] == ["take 0", "take 1", "take 2"]
