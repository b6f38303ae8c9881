"""Fuzzing a save folder's history: whatever is done to its files, the next answer is recorded
only onto an intact history. When `saves check` finds a problem before an append, the append is
refused with one line pointing at `ridge saves check`, and the problem is still reported after.
Damage is never papered over; an intact history always takes the answer.

Would have caught: deleting the last attempts of a segment, answering once more, and `saves
check` saying "no problems"; a profile read without a size cap; an edited outcome counted.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from helpers.hunt import examples

from helpers.hostile import COUNTS, FUZZ, assert_one_line, byte_damage, damage
from saves import atomic
from saves.errors import SaveError
from puzzles.stats import derive
from saves.store import SaveStore
from helpers.saves_worker import sample_attempt
from helpers.scratch import scratch_dir

TEMPLATE = Path(scratch_dir("ridge-fuzz-save-template-")) / "saves"
_store = SaveStore(TEMPLATE, segment_size=3)
for _i in range(8):  # segments of 3, 3 and 2
    _store.record_attempt("fz", sample_attempt(_i))
_store.record_attempt("fz", sample_attempt(8))  # seals the closed segments
SEGMENTS = ["fz.attempts/000001.toml", "fz.attempts/000002.toml", "fz.attempts/000003.toml"]

edit = st.one_of(
    st.tuples(st.just("bytes"), st.sampled_from(SEGMENTS), byte_damage),
    st.tuples(st.just("drop-table"), st.sampled_from(SEGMENTS), st.integers(0, 2)),
    st.tuples(st.just("replace"), st.sampled_from(SEGMENTS),
              st.sampled_from([('outcome = "cleared"', 'outcome = "missed"'),
                               ('outcome = "missed"', 'outcome = "cleared"'), ("count = 3", "count = 2"),
                               ("seq = 2", "seq = 3"), ('certainty = "low"', 'certainty = "high"')])),
    st.tuples(st.just("delete"), st.sampled_from(SEGMENTS), st.none()),
    st.tuples(st.just("swap"), st.sampled_from(SEGMENTS[:2]), st.none()),
)


def _apply(folder: Path, step) -> None:
    kind, name, arg = step
    path = folder / name
    if not path.exists():
        return
    if kind == "bytes":
        path.write_bytes(damage(path.read_bytes(), arg))
    elif kind == "drop-table":
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        tables = [i for i in range(len(text)) if text.startswith("[[attempts]]", i)]
        if tables:
            at = tables[min(arg, len(tables) - 1)]
            following = [i for i in tables if i > at]
            end = following[0] if following else len(text)
            path.write_text(text[:at] + text[end:], encoding="utf-8", errors="surrogateescape")
    elif kind == "replace":
        raw = path.read_bytes()
        path.write_bytes(raw.replace(arg[0].encode(), arg[1].encode(), 1))
    elif kind == "delete":
        path.unlink()
    else:  # swap this segment with the next one's contents
        other = folder / SEGMENTS[SEGMENTS.index(name) + 1]
        if not other.exists():
            return
        a, b = path.read_bytes(), other.read_bytes()
        path.write_bytes(b)
        other.write_bytes(a)


@settings(max_examples=examples(150), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.lists(edit, min_size=0, max_size=2))
def test_an_answer_never_papers_over_a_damaged_history(steps):
    COUNTS["save"] += 1
    saved, atomic.FSYNC = atomic.FSYNC, False
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "saves"
            shutil.copytree(TEMPLATE, folder)
            for step in steps:
                _apply(folder, step)
            store = SaveStore(folder, segment_size=3)
            before = store.check()
            try:
                store.record_attempt("fz", sample_attempt(99))
            except SaveError as exc:
                event("refused")
                assert_one_line(exc)
                assert before, f"an intact history refused an answer: {exc}"
                assert "ridge saves check" in str(exc) or exc.path is not None
            else:
                event("recorded")
                assert not before, f"an answer was recorded onto a damaged history: {before[0]}"
            after = store.check()
            assert bool(after) == bool(before), (before, after)
            try:
                profile = store.load("fz")
            except SaveError as exc:
                assert_one_line(exc)
                return
            edited = {p.index for p in profile.chain_problems() if p.kind == "edited"}
            assert derive(profile).attempts == len(profile.attempts) - len(edited)
    finally:
        atomic.FSYNC = saved


def test_a_profile_that_never_ends_is_refused(tmp_path):
    (tmp_path / "fz.toml").symlink_to("/dev/zero")
    store = SaveStore(tmp_path)
    try:
        store.load("fz")
    except SaveError as exc:
        assert_one_line(exc)
        assert "is a device" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("read /dev/zero as a profile")
