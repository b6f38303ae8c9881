"""Fuzzing the refusals of issue 25: any --save-dir a player can type, and any edit to a history
whose hash chain and header are then recomputed. Derandomized in the suite; RIDGE_HUNT=N runs a
longer random hunt (`RIDGE_HUNT=20 pytest tests/contract/test_fuzz_refusals.py`).

Would have caught: '~nouser/x' and link loops ending in an internal error, escape codes echoed
from a path, and outcomes set to "cleared" counting once the chain was recomputed."""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
import tomllib
from pathlib import Path

import tomli_w
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.cli import main
from helpers.hostile import COUNTS, FUZZ, examples
from puzzles.stats import derive
from saves.chain import chain_hash
from saves.store import SaveStore
from helpers.saves_worker import sample_attempt
from helpers.scratch import scratch_dir

ROOT = Path(scratch_dir("ridge-fuzz-refusals-"))
COMMANDS = (("stats",), ("stats", "--json"), ("saves", "check"), ("saves", "export", "--format", "md"),
            ("drill", "plan", "--until", "2031-01-01"), ("puzzles", "list"))
folder_text = st.one_of(
    st.text(min_size=1, max_size=40),
    st.builds(lambda head, tail: head + tail, st.sampled_from(["~", "~nouser", "~/", "/", "./", "\x1b[31m", "-"]),
              st.text(max_size=20)),
    st.text(alphabet="\x00\x07\x1b\n\r\t\u202e ab/~.", min_size=1, max_size=30),
    st.integers(4001, 6000).map(lambda n: "a" * n),
)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusal (a value that looks like a flag)
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=examples(120), suppress_health_check=list(HealthCheck), **FUZZ)
@given(folder_text, st.sampled_from(COMMANDS))
def test_any_save_dir_is_used_or_refused_in_one_line(text, command):
    COUNTS["save-dir"] += 1
    cwd = os.getcwd()
    os.chdir(ROOT)  # relative folders land in a throwaway place
    try:
        code, out, err = _run([*command, "--save-dir", text])
    finally:
        os.chdir(cwd)
    event(f"exit {code}")
    assert code in (0, 1, 2), (code, err)
    assert "internal error" not in err and "Traceback" not in err, err
    assert "\x1b" not in out and "\x1b" not in err and "\x07" not in err
    if code == 2:
        assert out == "" and err.count("\n") == 1 and len(err) <= 301, err


# -- forged histories ------------------------------------------------------------------------------

TEMPLATE = ROOT / "template"
_store = SaveStore(TEMPLATE, segment_size=4)
for _i in range(10):
    _store.record_attempt("fz", sample_attempt(_i))
FIELDS = {"outcome": ["cleared", "lucky", "close", "missed"], "certainty": ["low", "medium", "high"],
          "lever": ["paged-kv", "batching", "quantization"], "reason": ["kv-bytes-per-token", "idle-flops"],
          "key_lever": ["paged-kv", "batching"], "drop": [True]}
edit = st.tuples(st.integers(0, 9), st.sampled_from(sorted(FIELDS))).flatmap(
    lambda t: st.tuples(st.just(t[0]), st.just(t[1]), st.sampled_from(FIELDS[t[1]])))


def _earns_cleared(rec: dict) -> bool:
    """What a cleared outcome needs from the record itself, whatever its stored outcome says."""
    p, k = rec["prediction"], rec["key"]
    return (p["bottleneck"] == k["bottleneck"] and p["lever"] == k["best_lever"]
            and p["gain_band"] in k.get("bands", [k["gain_band"]]) and p["reason"] in k.get("reasons", [k["reason"]]))


@settings(max_examples=examples(80), suppress_health_check=list(HealthCheck), **FUZZ)
@given(st.lists(edit, min_size=1, max_size=6))
def test_a_forged_history_never_counts_more_than_it_earns(edits):
    COUNTS["forged-history"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "saves"
        shutil.copytree(TEMPLATE, folder)
        segments = sorted((folder / "fz.attempts").glob("*.toml"))
        docs = [tomllib.loads(p.read_text()) for p in segments]
        records = [r for d in docs for r in d["attempts"]]
        for index, field, value in edits:
            rec = records[index]
            if field == "drop":
                rec["drop"] = True
            elif field == "outcome":
                rec["outcome"] = value
            elif field == "key_lever":
                rec["key"]["best_lever"] = value  # the fingerprint is not recomputed: it no longer matches
            else:
                rec["prediction"][field] = value
        prev = records[0]["prev_hash"]
        kept = 0
        for doc in docs:  # recompute the chain over what is left, as a forger would
            doc["attempts"] = [r for r in doc["attempts"] if not r.pop("drop", False)]
            for rec in doc["attempts"]:
                kept += 1
                rec["seq"], rec["prev_hash"] = kept, prev
                rec["hash"] = prev = chain_hash(prev, rec)
            doc["count"] = len(doc["attempts"])
        for path, doc in zip(segments, docs):
            if doc["attempts"]:
                path.write_text(tomli_w.dumps(doc))
            else:
                path.unlink()
        (folder / "fz.attempts" / ".verified.json").unlink(missing_ok=True)
        header = folder / "fz.toml"
        head = tomllib.loads(header.read_text())
        head.update(last_seq=kept, last_hash=prev)
        header.write_text(tomli_w.dumps(head))
        profile = SaveStore(folder, segment_size=4).load("fz")
        counted = profile.counted_attempts()
        by_seq = {r["seq"]: r for d in docs for r in d["attempts"]}
        event(f"counted {len(counted)} of {kept}")
        for a in counted:
            if a.outcome == "cleared":
                assert _earns_cleared(by_seq[a.seq]), a.seq
        assert derive(profile).attempts == len(counted) <= kept
