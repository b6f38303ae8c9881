"""Benchmark for the Lab (issue 8): run the default lab once and print its figures against targets.

    .venv/bin/python bench/bench_lab.py [--seed N] [--json PATH]

Targets: paged with continuous batching at least 2× naive tokens/s, paged KV utilisation at least
90% (naive reported), the ablation split and the change it credits, the batch-1 decode step's
achieved bandwidth at least half of the measured bandwidth, identical tokens from every server,
and the whole run within two minutes. Exits 1 when a target is missed. Timings need a quiet
machine: the load average before and after the run is printed so a busy one is obvious.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.lab.report import decode_plot, machine_lines  # noqa: E402
from engine.lab.runner import lab_settings, run_lab  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the full result here")
    args = parser.parse_args()

    def progress(fraction: float, label: str) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r{fraction * 100:3.0f}% {label:<40}")
            sys.stderr.flush()

    result = run_lab(lab_settings(seed=args.seed), progress)
    if sys.stderr.isatty():
        sys.stderr.write("\r" + " " * 48 + "\r")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")

    roof = result["roofline"]
    batch1 = roof["points"][0]
    rows = [
        ("identical tokens from all four servers", "yes" if result["identical_outputs"] else "no",
         "required", result["identical_outputs"]),
        ("paged+continuous tokens/s over naive", f"{result['speedup']:.2f}×", ">= 2×", result["speedup"] >= 2),
        ("paged KV utilisation", f"{result['paged_utilization'] * 100:.1f}%", ">= 90%",
         result["paged_utilization"] >= 0.9),
        ("naive KV utilisation", f"{result['naive_utilization'] * 100:.1f}%", "reported", True),
        ("continuous batching alone (contiguous)", f"{result['continuous_contiguous_speedup']:.2f}×",
         "ablation", True),
        ("paged allocation alone (static batches)", f"{result['static_paged_speedup']:.2f}×", "ablation", True),
        ("most of the gain from", result["most_gain_from"], "reported", True),
        ("batch-1 decode bandwidth / measured",
         f"{result['bandwidth_fraction'] * 100:.0f}% ({batch1['achieved_bytes_per_s'] / 1e9:.1f} of "
         f"{roof['bandwidth_bytes_per_s'] / 1e9:.1f} GB/s)", ">= 50%", result["bandwidth_fraction"] >= 0.5),
        ("default run time", f"{result['run_seconds']:.0f} s", "<= 120 s", result["run_seconds"] <= 120),
    ]
    print(f"Ridge lab benchmark: default workload, seed {args.seed}, {os.cpu_count()} CPUs, "
          f"load average {result['load_average'][0]:.2f} before / {result['load_average'][1]:.2f} after")
    for name, value, target, ok in rows:
        verdict = "" if target in ("reported", "ablation") else ("PASS" if ok else "MISS")
        print(f"  {name:<42} {value:<28} {target:<9} {verdict}")
    print()
    for name, s in result["servers"].items():
        share = s["pool_share"]
        print(f"  {name:<22} {s['tokens_per_s']:7.1f} tok/s  {s['wall_seconds']:6.1f} s  util {s['utilization'] * 100:5.1f}%"
              f"  mean batch {s['mean_concurrency']:5.1f}  peak {s['peak_concurrency']:3d}"
              f"  resv {share['reservation'] * 100:4.1f}%  int {share['internal_fragmentation'] * 100:4.1f}%"
              f"  ext {share['external_fragmentation'] * 100:4.1f}%  preempt {s['preemptions']}")
    print()
    for line in [*machine_lines(result), "", *decode_plot(result)]:
        print("  " + line)
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
