"""Save benchmarks: recording one attempt with 10,000 already saved, and loading 10,000.

Run with `.venv/bin/python bench/bench_saves.py [--attempts N] [--records R]`. Targets (issue 5):
recording stays under 20 ms however long the history is, and loading takes at most 1.5x what
tomllib alone needs to parse the same bytes.
"""
from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from saves.atomic import write_atomic  # noqa: E402
from saves.model import Attempt, AttemptIn  # noqa: E402
from saves.store import SaveStore  # noqa: E402

OUTCOMES = ("cleared", "lucky", "close", "missed")


def sample(i: int) -> AttemptIn:
    """A realistic attempt: a generated puzzle, estimates, an answer key."""
    return AttemptIn(
        puzzle_id=f"gen-s42-d3-{i:04d}", module="generated", mode="drill",
        generator={"seed": 42, "difficulty": 3, "index": i},
        prediction={"bottleneck": "decode-kv", "lever": "paged-kv", "gain_band": "2-4x",
                    "reason": "kv-bytes-per-token", "certainty": ("low", "medium", "high")[i % 3],
                    "estimates": {"intensity": 57.0 + i % 5}},
        outcome=OUTCOMES[i % 4], hints_used=i % 2, seconds_taken=30.0 + i % 60,
        locked_at=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=i),
        key={"bottleneck": "decode-kv", "best_lever": "paged-kv", "gain_band": "2-4x",
             "reason": "kv-bytes-per-token"})


def seed_history(store: SaveStore, name: str, n: int) -> None:
    """Write `n` chained attempts at once (recording them one by one would take minutes),
    linked from the profile's identity and ending where its header says."""
    store.create_profile(name)
    with store._locked(name):
        header = store._read_header(name)
        history, prev = [], header.origin(name)
        for i in range(n):
            linked = Attempt.link(sample(i), i + 1, prev)
            history.append(linked)
            prev = linked.hash
        store._write_history(name, history)
        store._write_header(name, header.model_copy(update={"last_seq": n, "last_hash": prev}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = SaveStore(Path(tmp))
        seed_history(store, "bench", args.attempts)

        times, cpu = [], []
        for i in range(args.records):
            t0, c0 = time.perf_counter(), time.process_time()
            store.record_attempt("bench", sample(args.attempts + i))
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        med, p95 = statistics.median(times), sorted(times)[int(0.95 * len(times))]
        last = store._segments("bench")[-1]
        floor = []
        for _ in range(50):  # the disk's own cost: one atomic write of a segment-sized file
            t0 = time.perf_counter()
            write_atomic(Path(tmp) / "floor.toml", last.read_bytes())
            floor.append(time.perf_counter() - t0)
        print(f"record one attempt with {args.attempts:,} saved: median {med * 1e3:.2f} ms, "
              f"p95 {p95 * 1e3:.2f} ms (target < 20 ms); CPU {statistics.median(cpu) * 1e3:.2f} ms; "
              f"a bare fsync'd atomic write on this disk: {statistics.median(floor) * 1e3:.2f} ms")

        files = [store.header_path("bench"), *store._segments("bench")]
        blobs = [f.read_bytes() for f in files]
        parse, load = [], []  # (wall, CPU) pairs; the best of 5 damps a busy machine's noise
        for _ in range(5):
            t0, c0 = time.perf_counter(), time.process_time()
            for blob in blobs:
                tomllib.loads(blob.decode("utf-8"))
            parse.append((time.perf_counter() - t0, time.process_time() - c0))
            t0, c0 = time.perf_counter(), time.process_time()
            profile = store.load("bench")
            load.append((time.perf_counter() - t0, time.process_time() - c0))
        n = len(profile.attempts)
        (pw, pc), (lw, lc) = (tuple(min(x[i] for x in runs) for i in (0, 1)) for runs in (parse, load))
        print(f"load {n:,} attempts ({sum(map(len, blobs)) / 1e6:.1f} MB in {len(files)} files): "
              f"{lw * 1e3:.0f} ms vs tomllib alone {pw * 1e3:.0f} ms: ratio {lw / pw:.2f}x wall, "
              f"{lc / pc:.2f}x CPU (target <= 1.5x)")
        from puzzles.stats import derive

        t0 = time.perf_counter()
        stats = derive(profile)
        print(f"derive the figures of {n:,} attempts, each outcome re-graded from its record: "
              f"{(time.perf_counter() - t0) * 1e3:.0f} ms ({stats.attempts:,} counted)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
