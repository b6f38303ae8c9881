"""`ridge lab run`: the toy serving lab from the command line.

Prints a readable report, or with `--json` one JSON object on stdout. A progress bar goes to
stderr when stderr is a terminal (never with `--quiet`), so stdout stays clean for pipes.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time


def build(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run_p = sub.add_parser("run", help="build the toy model, measure this CPU, serve one workload four ways",
                           description="Serve one seeded workload with a naive server, a paged server with "
                                       "continuous batching, and the two half-way ablations.")
    run_p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    run_p.add_argument("--quick", action="store_true",
                       help="a tiny model and workload that run in seconds (for tests and demos; its "
                            "model fits in the CPU caches, so its bandwidth figures mean little)")
    run_p.add_argument("--seed", type=int, default=0, help="seed for the weights and the workload (default 0)")
    run_p.add_argument("--quiet", action="store_true", help="no progress bar")


class _Bar:
    """A one-line progress bar redrawn in place on stderr, at most ten times a second."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.last = 0.0

    def __call__(self, fraction: float, label: str) -> None:
        now = time.monotonic()
        if now - self.last < 0.1 and fraction < 1.0:
            return
        self.last = now
        cols = shutil.get_terminal_size((80, 24)).columns
        width = max(10, min(40, cols - 40))
        filled = int(round(fraction * width))
        text = f"\r[{'#' * filled}{'.' * (width - filled)}] {fraction * 100:3.0f}% {label}"
        self.stream.write(text[:cols - 1].ljust(cols - 1))
        self.stream.flush()

    def close(self) -> None:
        cols = shutil.get_terminal_size((80, 24)).columns
        self.stream.write("\r" + " " * (cols - 1) + "\r")
        self.stream.flush()


def run(args: argparse.Namespace) -> int:
    from engine.errors import RidgeError
    from engine.lab.report import text_report
    from engine.lab.runner import lab_settings, run_lab

    if args.action != "run":
        raise RidgeError(f"unknown lab action {args.action!r}")
    bar = _Bar(sys.stderr) if sys.stderr.isatty() and not args.quiet else None
    try:
        result = run_lab(lab_settings(quick=args.quick, seed=args.seed), bar)
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print("\n".join(text_report(result)))
    return 0
