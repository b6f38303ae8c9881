"""Benchmarks of the game, run by hand (not in CI): `.venv/bin/python bench/bench_app.py`.

1. Cold start: Ridge's home screen drawn and taking keys, against a bare Textual app started the
   same way (target: at most 1.5x); how it is timed is in `harness`.
2. Lock-in to reveal. Through Pilot, over the built-in packs: the time from the key that confirms
   a lock-in to the end of the first frame that shows the whole reveal as it finally stands
   (target: under 100 ms), beside the time the same app takes to switch to a trivial screen, as
   the floor on this machine, and the process CPU time spent (which other load on the machine
   does not inflate). "Shows" is judged from what the app sends to the terminal, not from the
   app's own callbacks (`harness.FrameRecorder`).
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import (FrameRecorder, bench_app, cold_start_lines, fill_answer, load_average,  # noqa: E402
                     plain_screen_type, settled, wait_for_player)


async def _lock_in_to_reveal(rounds: int, size: tuple[int, int]) -> tuple[list[float], list[float], list[float]]:
    from app.screens.puzzle import PuzzleScreen
    from app.screens.reveal import RevealScreen

    reveal_ms: list[float] = []
    reveal_cpu_ms: list[float] = []
    plain_ms: list[float] = []
    app = bench_app()
    async with app.run_test(size=size) as pilot:
        recorder = FrameRecorder(app)
        await wait_for_player(pilot)
        ids = [pid for ch in app.session.chapters for pid in ch.puzzle_ids]
        for pid in ids[:rounds]:
            screen = PuzzleScreen(pid)
            app.push_screen(screen)
            await settled(pilot, recorder)
            fill_answer(screen, app.bank.key(screen.puzzle))
            await pilot.pause()
            await pilot.press("l")
            await settled(pilot, recorder)
            since = recorder.start()
            await pilot.press("y")
            while not isinstance(app.screen, RevealScreen):
                await pilot.pause()
            await settled(pilot, recorder)
            wall, cpu = recorder.first_final(RevealScreen, since)
            reveal_ms.append(wall)
            reveal_cpu_ms.append(cpu)
            plain = plain_screen_type()
            since = recorder.start()
            app.switch_screen(plain())  # in the reveal's place, so popping it returns home
            await settled(pilot, recorder)
            plain_ms.append(recorder.first_final(plain, since)[0])
            app.pop_screen()
            await settled(pilot, recorder)
    return reveal_ms, reveal_cpu_ms, plain_ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="cold starts of each kind (default 7)")
    parser.add_argument("--attempts", type=int, default=0,
                        help="answers already in the cold-started player's save (default 0: a new player)")
    parser.add_argument("--rounds", type=int, default=8, help="lock-ins per terminal size (default 8)")
    args = parser.parse_args()

    print("\n".join(cold_start_lines(args.runs, attempts=args.attempts)))
    for size in ((80, 24), (120, 40)):
        before = load_average()
        reveal_ms, cpu_ms, plain_ms = asyncio.run(_lock_in_to_reveal(args.rounds, size))
        print(f"lock-in to drawn reveal at {size[0]}x{size[1]}, {len(reveal_ms)} puzzles "
              f"(load average {before} -> {load_average()}): "
              f"median {statistics.median(reveal_ms):.0f} ms (best {min(reveal_ms):.0f}, worst {max(reveal_ms):.0f}; "
              f"target < 100 ms), of which CPU {statistics.median(cpu_ms):.0f} ms; "
              f"a trivial screen switch here: {statistics.median(plain_ms):.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
