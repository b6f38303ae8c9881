"""Benchmark: time to generate 1,000 puzzles with their answer keys (target: under one second).

Run by hand: `.venv/bin/python bench/bench_puzzles.py [--count N] [--seed S] [--repeat R] [--against DIR]`.
Prints the best of R runs (and the median), the fallback rate, and the time to load and key the
built-in packs, against their targets.

`--against DIR` (another checkout of Ridge, e.g. `git archive main | tar -x -C DIR`) times the same
draws there too, each run of this tree followed by one of DIR's in a fresh process, and prints
the ratio of the best CPU times: on a machine other work shares, the CPU time of runs taken side
by side is the figure that compares two versions of the generator.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 1.0
# One timed draw in a fresh process of the checkout at sys.argv[1]: CPU and wall seconds, fallbacks.
_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from puzzles import generator
generator.generate(int(sys.argv[2]) + 1000, 20)
wall, cpu = time.perf_counter(), time.process_time()
made = generator.generate(int(sys.argv[2]), int(sys.argv[3]))
print(json.dumps([time.process_time() - cpu, time.perf_counter() - wall, sum(m.target is None for m in made)]))
"""


def _timed(root: Path, seed: int, count: int) -> tuple[float, float, int]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(root), str(seed), str(count)], capture_output=True,
                         text=True, check=True, cwd=root)
    cpu, wall, fallbacks = json.loads(out.stdout.strip().splitlines()[-1])
    return cpu, wall, fallbacks


def against(other: Path, seed: int, count: int, repeat: int) -> None:
    """This tree's generator against `other`'s on the same draws, runs interleaved."""
    runs: dict[str, list] = {"this tree": [], str(other): []}
    for r in range(repeat):
        for name, root in (("this tree", ROOT), (str(other), other)):
            runs[name].append(_timed(root, seed + r, count))
    for name, got in runs.items():
        print(f"{name}: {count} draws, best {min(c for c, _, _ in got):.3f} s CPU "
              f"(median wall {statistics.median(w for _, w, _ in got):.3f} s), fallbacks {got[-1][2]}")
    ratio = min(c for c, _, _ in runs["this tree"]) / min(c for c, _, _ in runs[str(other)])
    print(f"CPU time this tree / {other}: {ratio:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to time side by side")
    args = parser.parse_args()
    if args.against is not None:
        against(args.against.resolve(), args.seed, args.count, args.repeat)
        return 0

    start = time.perf_counter()
    from puzzles import bank, generator

    bank.builtin()
    load = time.perf_counter() - start
    generator.generate(args.seed + 1000, 20)  # warm the catalog and the recipe tables

    runs = []
    for r in range(args.repeat):
        start = time.perf_counter()
        made = generator.generate(args.seed + r, args.count)
        runs.append(time.perf_counter() - start)
    fallbacks = sum(1 for m in made if m.target is None)
    best, median = min(runs), statistics.median(runs)
    scaled = best * 1000 / max(1, args.count)
    verdict = "OK" if scaled < TARGET_SECONDS else "SLOWER THAN TARGET"
    print(f"generate {args.count} puzzles with keys: best {best:.3f} s, median {median:.3f} s over {args.repeat} runs "
          f"({best / max(1, args.count) * 1e6:.0f} µs each; {fallbacks} fell back to any unambiguous draw)")
    print(f"per 1,000: {scaled:.3f} s against a target of {TARGET_SECONDS:.1f} s: {verdict}")
    print(f"load and key the {len(bank.builtin())} built-in puzzles (with imports): {load:.3f} s")
    return 0 if scaled < TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
