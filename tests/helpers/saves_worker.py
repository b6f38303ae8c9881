"""A child process for the save durability tests (and a source of sample attempts).

  python tests/helpers/saves_worker.py record DIR PROFILE COUNT TAG
      record COUNT attempts, printing each returned seq on its own line as soon as it returns.
  python tests/helpers/saves_worker.py crash DIR PROFILE KILLS SEED MAX_DELAY SEGMENT_SIZE
      KILLS times: fork a child that records attempts in a loop (reporting each returned seq
      through a pipe), SIGKILL it after a random delay of up to MAX_DELAY seconds (longer on a
      slower machine: 2.4 times one record in a fresh child), then check
      that the files it was writing still parse and validate. Prints one JSON summary.
Forking keeps each kill cheap: the imports (and the validators' building) are paid once, not
once per kill.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from saves.errors import SaveError  # noqa: E402
from saves.model import AttemptIn  # noqa: E402
from saves.store import SaveStore  # noqa: E402
from saves.tomlio import read_toml  # noqa: E402

OUTCOMES = ("cleared", "lucky", "close", "missed")
CERTAINTIES = ("low", "medium", "high")


def prediction_for(outcome: str, certainty: str = "low", **changes) -> dict:
    """A prediction that earns `outcome` against sample_attempt's key (the lever decides the
    answer, the reason id the reason), so re-grading on load keeps it."""
    right_answer = outcome in ("cleared", "lucky")
    right_reason = outcome in ("cleared", "close")
    return {"bottleneck": "decode-kv", "lever": "paged-kv" if right_answer else "batching", "gain_band": "2-4x",
            "reason": "kv-bytes-per-token" if right_reason else "idle-flops", "certainty": certainty,
            "estimates": {"intensity": 57.0}, **changes}


def sample_attempt(i: int = 0, *, tag: str = "t", module: str = "kv-cache", **changes) -> AttemptIn:
    """A valid attempt whose details vary with `i`; its prediction earns its outcome."""
    outcome = changes.get("outcome", OUTCOMES[i % 4])
    fields = dict(
        puzzle_id=f"{module}-{tag}-{i % 7:02d}", module=module, mode="cli",
        prediction=prediction_for(outcome, CERTAINTIES[i % 3], estimates={"intensity": 57.0 + i}),
        outcome=outcome, hints_used=i % 2, seconds_taken=12.5 + i,
        locked_at=dt.datetime(2026, 3, 1, 9, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=i),
        key={"bottleneck": "decode-kv", "best_lever": "paged-kv", "gain_band": "2-4x",
             "reason": "kv-bytes-per-token", "bands": ["2-4x"], "reasons": ["kv-bytes-per-token"]})
    fields.update(changes)
    return AttemptIn(**fields)


def record(folder: str, profile: str, count: int, tag: str) -> None:
    store = SaveStore(Path(folder))
    for i in range(count):
        attempt = store.record_attempt(profile, sample_attempt(i, tag=tag))
        os.write(1, f"{attempt.seq}\n".encode())


def _child(store: SaveStore, profile: str, out: int, kill: int) -> None:
    try:
        i = 0
        while True:
            attempt = store.record_attempt(profile, sample_attempt(i, tag=f"k{kill}"))
            os.write(out, f"{attempt.seq}\n".encode())
            i += 1
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, then exit
        os.write(out, f"ERR {type(exc).__name__}: {exc}\n".encode())
    finally:
        os._exit(1)


def _first_record_seconds(store: SaveStore) -> float:
    """How long a freshly forked child takes to record its first attempt (the child then stops)."""
    read_end, write_end = os.pipe()
    began = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(store, "warm", write_end, -1)   # a profile that has a record already, as in the kills
    os.close(write_end)
    line = b""
    while not line.endswith(b"\n") and (chunk := os.read(read_end, 1)):
        line += chunk
    took = time.perf_counter() - began
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read_end)
    return took


def crash(folder: str, profile: str, kills: int, seed: int, max_delay: float,
          segment_size: int) -> None:
    rng = random.Random(seed)
    # One write to a scratch folder first, so every child inherits the built validators (the save
    # models build theirs at first use) and spends the time before its kill writing.
    with tempfile.TemporaryDirectory() as scratch:
        SaveStore(Path(scratch), segment_size=segment_size).record_attempt("warm", sample_attempt(0))
        # the kills' window follows this machine's pace: a record in a fresh child, timed here,
        # 2.4 times over, and never under MAX_DELAY (the test asks for 30 ms)
        max_delay = max(max_delay, 2.4 * _first_record_seconds(SaveStore(Path(scratch), segment_size=segment_size)))
    store = SaveStore(Path(folder), segment_size=segment_size)
    returned: list[int] = []
    failures: list[str] = []
    for kill in range(kills):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _child(store, profile, write_end, kill)
        os.close(write_end)
        time.sleep(rng.uniform(0, max_delay))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        chunks = []
        while chunk := os.read(read_end, 65536):
            chunks.append(chunk)
        os.close(read_end)
        for line in b"".join(chunks).decode().splitlines():
            if line.startswith("ERR"):
                failures.append(f"kill {kill}: child failed: {line}")
            else:
                returned.append(int(line))
        try:  # the files a kill can interrupt must still parse and validate
            header = read_toml(store.header_path(profile))
            if header is not None:
                store._validate_header(store.header_path(profile), *header)
            segments = store._segments(profile)
            if segments:
                store._read_segment(segments[-1])
        except SaveError as exc:
            failures.append(f"kill {kill}: {exc}")
    print(json.dumps({"kills": kills, "returned": returned, "failures": failures, "window": max_delay}))


if __name__ == "__main__":
    mode, folder, profile, *rest = sys.argv[1:]
    if mode == "record":
        record(folder, profile, int(rest[0]), rest[1])
    elif mode == "crash":
        crash(folder, profile, int(rest[0]), int(rest[1]), float(rest[2]), int(rest[3]))
    else:
        raise SystemExit(f"unknown mode {mode}")
