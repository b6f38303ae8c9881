"""How the game feels, run by hand (not in CI): `.venv/bin/python bench/bench_feel.py [--load N]`.

Each interaction is timed, through Pilot at 80×24 over the built-in packs, from its key to the
first frame that already shows the screen as it settles (judged from what reaches the terminal,
with `harness.FrameRecorder`), and given as a ratio to a trivial screen switch measured in the
same run, so a busy machine slows both alike. Targets: each ratio at most 2x.

- briefing to puzzle: `s` on a chapter's briefing;
- next puzzle: `n` on a reveal (to the next puzzle of the same chapter);
- palette open: ctrl+p;
- simulator open: `v` on the home screen. The app is made as `ridge play` makes it (`warm`), so
  the simulator is built behind the home screen once the player has been there a moment, and
  kept while Ridge runs. Three figures: the first open in the run (after that moment: built
  ahead), later opens (kept), and an open that builds it on the key (the kept one discarded
  first: what a player pays who presses `v` at once, or what every open cost before it was
  kept). The bench imports none of the screens it times, so the first build pays for its own
  imports as a player's does (the packs' worker may have done some of them already, as it does
  for a player who waits as long).

Each figure is the median over the rounds with its spread (min-max); ratios are of medians.
Cold start is `harness`'s: Ridge's home screen taking keys against a bare Textual app started the
same way (target at most 1.5x). `--load N` runs N busy processes alongside, for the loaded
figures; the machine's load average is printed with every block of figures.
"""
from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import (FrameRecorder, bench_app, cold_start_lines, fill_answer, is_a,  # noqa: E402
                     load_average, plain_screen_type, settled, spread, wait_for_player)

INTERACTIONS = ("briefing→puzzle", "next puzzle", "palette", "simulator, first open", "simulator, later opens",
                "simulator, built on the key")


def _spin() -> None:  # pragma: no cover - a load generator
    while True:
        pass


async def _feel(rounds: int, size: tuple[int, int]) -> dict[str, list[float]]:
    from textual.command import CommandPalette

    from app.game import HOME

    # The screens timed are named, not imported: each first open pays for its own imports, as a
    # player's does.
    puzzle, reveal, simulator = "PuzzleScreen", "RevealScreen", "SimulatorScreen"

    def briefing(chapter):
        from app.screens.campaign import BriefingScreen

        return BriefingScreen(chapter.id, start=chapter.puzzle_ids[0])

    times: dict[str, list[float]] = {"switch": [], **{name: [] for name in INTERACTIONS}}
    app = bench_app()
    async with app.run_test(size=size) as pilot:
        recorder = FrameRecorder(app)
        await wait_for_player(pilot)
        await settled(pilot, recorder)
        chapters = [ch for ch in app.session.chapters if len(ch.puzzle_ids) >= 2]

        async def timed(kind, key: str | None = None, action=None) -> float:
            await settled(pilot, recorder)
            since = recorder.start()
            if key is not None:
                await pilot.press(key)
            else:
                action()
            while not is_a(app.screen, kind):
                await pilot.pause()
            await settled(pilot, recorder)
            return recorder.first_final(kind, since)[0]

        async def back_home() -> None:
            """Close every way to play opened above home, as the app's own Home request does."""
            from app.messages import GoHome

            if app.current_mode != HOME:
                app.post_message(GoHome())
            while app.current_mode != HOME:
                await pilot.pause()
            while len(app.screen_stack) > 1:
                await app.pop_screen()
            await settled(pilot, recorder)

        for n in range(rounds):
            plain = plain_screen_type()
            times["switch"].append(await timed(plain, action=lambda: app.push_screen(plain())))
            app.pop_screen()
            await settled(pilot, recorder)

            chapter = chapters[n % len(chapters)]
            app.show_in_campaign(lambda: briefing(chapter))
            await settled(pilot, recorder)
            times["briefing→puzzle"].append(await timed(puzzle, "s"))
            screen = app.screen
            fill_answer(screen, app.bank.key(screen.puzzle))
            await pilot.press("l")
            await settled(pilot, recorder)
            await pilot.press("y")
            while not is_a(app.screen, reveal):
                await pilot.pause()
            await settled(pilot, recorder)
            before = app.screen
            times["next puzzle"].append(await timed(puzzle, "n"))
            assert app.screen is not before
            await back_home()

            times["palette"].append(await timed(CommandPalette, "ctrl+p"))
            await pilot.press("escape")
            await settled(pilot, recorder)

            if n == 0:
                while "simulator" not in app.kept:  # a player who has been on home a moment
                    await pilot.pause()
                times["simulator, first open"].append(await timed(simulator, "v"))
            else:
                times["simulator, later opens"].append(await timed(simulator, "v"))
            await pilot.press("escape")
            await back_home()
            app._discard("simulator")  # as if never built: this open builds it on the key
            times["simulator, built on the key"].append(await timed(simulator, "v"))
            await pilot.press("escape")
            await back_home()
    return times


def report(times: dict[str, list[float]], label: str, load: str) -> list[str]:
    """Per interaction: median (min-max) ms and the ratio of its median to the switch's."""
    switch = statistics.median(times["switch"])
    lines = [f"feel ({label}), {len(times['switch'])} rounds at 80x24, load average {load}:",
             f"  {'trivial screen switch':<28} {spread(times['switch']):<22} (the floor: ratios are to it)"]
    for name in INTERACTIONS:
        values = times[name]
        if not values:
            continue
        ratio = statistics.median(values) / switch
        lines.append(f"  {name:<28} {spread(values):<22} ratio {ratio:5.2f}x  (target <= 2x)")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each interaction (default 5)")
    parser.add_argument("--runs", type=int, default=7, help="cold starts of each kind (default 7)")
    parser.add_argument("--attempts", type=int, default=0,
                        help="answers already in the cold-started player's save (default 0: a new player)")
    parser.add_argument("--load", type=int, default=0, help="busy processes to run alongside (default 0)")
    parser.add_argument("--skip-cold", action="store_true", help="only the interactions")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (the first simulator open is reported apart)")
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for spinner in spinners:
        spinner.start()
    label = f"with {args.load} busy process{'es' if args.load != 1 else ''}" if args.load else "quiet"
    try:
        if not args.skip_cold:
            print("\n".join(cold_start_lines(args.runs, label, args.attempts)))
        before = load_average()
        times = asyncio.run(_feel(args.rounds, (80, 24)))
        print("\n".join(report(times, label, f"{before} -> {load_average()}")))
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
