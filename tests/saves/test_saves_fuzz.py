"""Damaged save files: loading raises only SaveError (never a traceback) and never rewrites them."""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from helpers.hunt import examples

from helpers.saves_worker import sample_attempt
from saves import atomic
from saves.errors import SaveError
from saves.store import SaveStore

FIXTURE_V1 = Path(__file__).parents[1] / "fixtures" / "saves" / "v1" / "alice.toml"
ODD = ["9" * 40, "-9223372036854775809", "9223372036854775807", "1e999", "-inf", "nan", "true",
       "[1, [2, 'x']]", "{ a = 1 }", "1979-05-27", "1979-05-27T07:32:00", "07:32:00", '""',
       '"\\u0000"', '"\\u202e\\ufeff\\u0301"', '"' + "\U0001f600" * 300 + '"', "'''\nx'''",
       "0x7fffffffffffffff", "-0.0", '"\\ud800"', '"' + "x" * 5000 + '"', "[[[[[[[[[[]]]]]]]]]]"]

mutation = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("value"), st.floats(0, 1), st.sampled_from(ODD) | st.text(max_size=12)),
    st.tuples(st.just("bytes"), st.floats(0, 1), st.binary(min_size=1, max_size=12)),
    st.tuples(st.just("text"), st.floats(0, 1), st.text(min_size=1, max_size=12)),
    st.tuples(st.just("drop-line"), st.floats(0, 1)),
    st.tuples(st.just("rename-key"), st.floats(0, 1), st.sampled_from(["seq", "x", "schema_version", "é"])),
)


def _mutate(raw: bytes, steps) -> bytes:
    for step in steps:
        kind, where = step[0], step[1]
        at = int(where * len(raw))
        if kind == "truncate":
            raw = raw[:at]
        elif kind == "bytes":
            raw = raw[:at] + step[2] + raw[at + len(step[2]):]
        elif kind == "text":
            raw = raw[:at] + step[2].encode("utf-8", "surrogatepass") + raw[at:]
        else:
            lines = raw.split(b"\n")
            keyed = [i for i, line in enumerate(lines) if b" = " in line]
            if not keyed:
                continue
            i = keyed[int(where * (len(keyed) - 1))]
            key, _, value = lines[i].partition(b" = ")
            if kind == "drop-line":
                del lines[i]
            elif kind == "value":
                lines[i] = key + b" = " + step[2].encode("utf-8", "surrogatepass")
            else:
                lines[i] = step[2].encode() + b" = " + value
            raw = b"\n".join(lines)
    return raw


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("template")
    store = SaveStore(folder, segment_size=2)
    for i in range(3):
        store.record_attempt("fz", sample_attempt(i, generator={"seed": 1, "difficulty": 2,
                                                                 "index": i}))
    store.update_settings("fz", theme="dark", goal=3)
    store.save_review_state("fz", "kv-cache", {"card_id": 1, "state": 1, "step": 0,
                                               "stability": None, "due": "2026-01-01T00:00:00Z"})
    return folder


@pytest.fixture(scope="module", autouse=True)
def _no_fsync():
    """Power-loss durability is not what these tests look at; skipping fsync keeps them quick."""
    saved, atomic.FSYNC = atomic.FSYNC, False
    yield
    atomic.FSYNC = saved


FILES = ["fz.toml", "fz.attempts/000001.toml", "fz.attempts/000002.toml", "settings.toml"]


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(FILES), steps=st.lists(mutation, min_size=1, max_size=3))
def test_damaged_v2_files_raise_save_error_and_stay_untouched(template, target, steps):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "saves"
        shutil.copytree(template, folder)
        path = folder / target
        path.write_bytes(_mutate(path.read_bytes(), steps))
        store = SaveStore(folder, segment_size=2)
        before = _snapshot(folder)

        error = None
        try:
            store.load("fz")
            event("loaded")
        except SaveError as exc:
            event("SaveError")
            error = exc
            assert "\n" not in str(exc) and str(exc).startswith(str(folder))
        assert _snapshot(folder) == before  # loading never writes
        store.check()  # nor raises: damage becomes a Problem

        damaged = {path} if error is not None and error.path == path else set()
        if target == "settings.toml" and store._folder_settings() is None:
            damaged = {path}
        try:
            store.record_attempt("fz", sample_attempt(9))
        except SaveError:
            pass
        for p in damaged:  # a file that does not parse or validate is never overwritten
            assert p.read_bytes() == before[target]


@settings(max_examples=examples(100), deadline=None)
@given(steps=st.lists(mutation, min_size=1, max_size=3))
def test_damaged_v1_files_are_not_migrated_or_rewritten(steps):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "alice.toml"
        mutated = _mutate(FIXTURE_V1.read_bytes(), steps)
        path.write_bytes(mutated)
        try:
            profile = SaveStore(folder).load("alice")
        except SaveError as exc:
            assert "\n" not in str(exc)
            assert path.read_bytes() == mutated
            assert not (folder / "alice.v1-backup.toml").exists()
        else:
            assert (folder / "alice.v1-backup.toml").read_bytes() == mutated
            assert len(profile.attempts) <= 4


@pytest.mark.parametrize("line, replacement, expected", [
    ("seq = 1", "seq = 99999999999999999999", "seq"),
    ("hints_used = 0", 'hints_used = "0"', "hints_used"),
    ('mode = "cli"', 'mode = "\\u0000"', "mode"),
    ('module = "kv-cache"', "module = [1]", "module"),
    ("locked_at = 2026-03-01T09:00:00.000Z", "locked_at = 2026-03-01T09:00:00", "UTC offset"),
    ("seconds_taken = 12.5", "seconds_taken = inf", "seconds_taken"),
    ("count = 2", "count = -1", "count"),
    ("[[attempts]]", "attempts = 3\n[[x]]", "attempts"),
])
def test_each_kind_of_damage_is_named(template, tmp_path, line, replacement, expected):
    folder = tmp_path / "saves"
    shutil.copytree(template, folder)
    seg = folder / "fz.attempts" / "000001.toml"
    text = seg.read_text()
    assert line in text
    seg.write_text(text.replace(line, replacement, 1))
    with pytest.raises(SaveError) as err:
        SaveStore(folder).load("fz")
    assert "000001.toml" in str(err.value) and expected in str(err.value)


def test_odd_but_valid_unicode_loads_and_is_flagged_as_an_edit(template, tmp_path):
    folder = tmp_path / "saves"
    shutil.copytree(template, folder)
    seg = folder / "fz.attempts" / "000001.toml"
    seg.write_text(seg.read_text().replace('module = "kv-cache"', 'module = "kv-\u202e-é-😀"', 1),
                   encoding="utf-8")
    store = SaveStore(folder)
    assert store.load("fz").attempts[0].module == "kv-\u202e-é-😀"
    assert [(p.seq, p.kind) for p in store.check()] == [(1, "edited")]
