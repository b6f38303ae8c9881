"""Benchmark: time to generate 1,000 puzzles with their answer keys (target: under one second).

Run by hand: `.venv/bin/python bench/bench_puzzles.py [--count N] [--seed S] [--repeat R]`.
Prints the best of R runs (and the median), the fallback rate, and the time to load and key the
built-in packs, against their targets.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_SECONDS = 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

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
