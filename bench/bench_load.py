"""Benchmark: 10,000 requests through the load simulation (target: under 0.5 s, floor or realistic).

Run by hand: `.venv/bin/python bench/bench_load.py [--requests N] [--repeat R]`.
Each scenario is timed from a fresh step-time cache (the first run of a deployment pays for its
step shapes, as `ridge load` does) and again warm; the best of R runs is printed with the run's
P99 TTFT and TPOT, and the ratio to a baseline timed in the same run (one engine
analysis of the same deployment, x 1,000), so figures from a busy machine still compare.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_SECONDS = 0.5


def _scenarios():
    from engine.load.spec import LoadSpec

    return [
        ("8B, 1k/256, Poisson at 80% of saturation", "llama-3.1-8b", 1, 1024, 256, dict(share=0.8)),
        ("8B, 8k/256, chunked 2048, exponential lengths", "llama-3.1-8b", 1, 8192, 256,
         dict(qps=1.6, chunk_tokens=2048, lengths="exponential")),
        ("70B TP4, 2k/512, bursty at 80% of saturation", "llama-3.1-70b", 4, 2048, 512,
         dict(share=0.8, arrival="bursty")),
        ("8B, 4 replicas, closed loop of 400 users", "llama-3.1-8b", 1, 1024, 256,
         dict(arrival="closed", users=400, think_seconds=2.0, replicas=4)),
        ("8B split 2:2 over InfiniBand, 4k/256", "llama-3.1-8b", 1, 4096, 256, dict(qps=10.0, disaggregate=(2, 2))),
    ], LoadSpec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from engine.analysis import analyze
    from engine.catalog import builtin_catalog
    from engine.deployment import build_deployment
    from engine.load.run import saturation_qps, simulate, step_times

    catalog = builtin_catalog()
    scenarios, LoadSpec = _scenarios()
    worst = 0.0
    for fidelity in ("floor", "realistic"):
        print(f"--- {fidelity} step times, {args.requests:,} requests each")
        for title, model, gpus, prompt, output, extra in scenarios:
            dep = build_deployment(catalog, model, "h100-sxm", gpus=gpus, prompt=prompt, output=output, fidelity=fidelity)
            extra = dict(extra)
            share = extra.pop("share", None)
            spec = LoadSpec(requests=args.requests, **extra)
            if share is not None:   # a share of this fidelity's own saturation rate
                spec = LoadSpec(requests=args.requests, qps=share * saturation_qps(dep, spec), **extra)
            start = time.perf_counter()
            for _ in range(1000):
                analyze(dep)
            baseline = time.perf_counter() - start
            cold = warm = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                result = simulate(dep, spec)          # a fresh step-time cache
                cold = min(cold, time.perf_counter() - start)
            times = step_times(dep)
            simulate(dep, spec, times)
            for _ in range(args.repeat):
                start = time.perf_counter()
                simulate(dep, spec, times)
                warm = min(warm, time.perf_counter() - start)
            worst = max(worst, cold)
            f = result.figures
            print(f"{title:<48} cold {cold:.3f} s, warm {warm:.3f} s "
                  f"({cold / baseline:.2f}x the baseline of {baseline:.3f} s); "
                  f"P99 TTFT {f['ttft_p99_seconds']:.3g} s, P99 TPOT {f['tpot_p99_seconds'] * 1e3:.3g} ms")
    verdict = "OK" if worst < TARGET_SECONDS else "SLOWER THAN TARGET"
    print(f"slowest scenario: {worst:.3f} s for {args.requests:,} requests against a target of "
          f"{TARGET_SECONDS} s: {verdict}")
    return 0 if worst < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
