"""How the game feels, run by hand (not in CI): `.venv/bin/python bench/bench_feel.py [--load N]`.

Each interaction is timed, through Pilot at 80×24 over the built-in packs, from its key to the
first frame that already shows the screen as it settles (judged from what reaches the terminal,
with `bench_app.FrameRecorder`), and given as a ratio to a trivial screen switch measured in the
same run, so a busy machine slows both alike. Targets: each ratio at most 2x.

- briefing to puzzle: `s` on a chapter's briefing;
- next puzzle: `n` on a reveal (to the next puzzle of the same chapter);
- palette open: ctrl+p;
- simulator open: `v` on the home screen.

Cold start is `bench_app`'s: Ridge's home screen taking keys against a bare Textual app started
the same way (target at most 1.5x). `--load N` runs N busy processes alongside, for the loaded
figures.
"""
from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from bench_app import FrameRecorder, _settled, cold_start  # noqa: E402


def _spin() -> None:  # pragma: no cover - a load generator
    while True:
        pass


async def _feel(rounds: int, size: tuple[int, int]) -> dict[str, list[float]]:
    from textual.command import CommandPalette
    from textual.screen import Screen
    from textual.widgets import Footer, Header, Input, Select, Static

    from app.game import make_app
    from app.screens.campaign import BriefingScreen
    from app.screens.puzzle import PuzzleScreen
    from app.screens.reveal import RevealScreen
    from app.screens.simulator import SimulatorScreen

    class Plain(Screen):
        def compose(self):
            yield Header()
            yield Static("plain")
            yield Footer()

    times: dict[str, list[float]] = {"switch": [], "briefing→puzzle": [], "next puzzle": [], "palette": [],
                                     "simulator": []}
    app = make_app(save_dir=tempfile.mkdtemp(prefix="ridge-feel-"), profile="bench", cursor_blink=False,
                   ready_exit=False)
    async with app.run_test(size=size) as pilot:
        recorder = FrameRecorder(app)
        await pilot.pause()
        while app.session is None or not app.bank_ready:
            await pilot.pause()
        await _settled(pilot, recorder)
        home = app.screen
        chapters = [ch for ch in app.session.chapters if len(ch.puzzle_ids) >= 2]

        async def timed(kind, key: str | None = None, action=None) -> float:
            await _settled(pilot, recorder)
            since = recorder.start()
            if key is not None:
                await pilot.press(key)
            else:
                action()
            while not isinstance(app.screen, kind):
                await pilot.pause()
            await _settled(pilot, recorder)
            return recorder.first_final(kind, since)[0]

        async def back_home() -> None:
            from app.game import HOME

            if app.current_mode != HOME:
                app._back_to(HOME)  # close every way to play opened above home (a bench may reach in)
                await pilot.pause()
            while app.screen is not home and len(app.screen_stack) > 1:
                await app.pop_screen()
            await _settled(pilot, recorder)

        for n in range(rounds):
            times["switch"].append(await timed(Plain, action=lambda: app.push_screen(Plain())))
            app.pop_screen()
            await _settled(pilot, recorder)

            chapter = chapters[n % len(chapters)]
            app.show_in_campaign(lambda: BriefingScreen(chapter.id, start=chapter.puzzle_ids[0]))
            await _settled(pilot, recorder)
            times["briefing→puzzle"].append(await timed(PuzzleScreen, "s"))
            screen = app.screen
            key = app.bank.key(screen.puzzle)
            screen.query_one("#bottleneck").value = key.bottleneck
            screen.query_one("#lever").value = key.best_lever
            screen.query_one("#band").value = key.gain_band
            if screen.query("#reason"):
                screen.query_one("#reason").value = screen.puzzle.reasons[0]
            for name in screen.puzzle.estimates:
                screen.query_one(f"#est-{name}", Input).value = "1"
            screen.query_one("#certainty").value = "low"
            await pilot.press("l")
            await _settled(pilot, recorder)
            await pilot.press("y")
            while not isinstance(app.screen, RevealScreen):
                await pilot.pause()
            await _settled(pilot, recorder)
            before = app.screen
            times["next puzzle"].append(await timed(PuzzleScreen, "n"))
            assert app.screen is not before
            await back_home()

            times["palette"].append(await timed(CommandPalette, "ctrl+p"))
            await pilot.press("escape")
            await _settled(pilot, recorder)

            times["simulator"].append(await timed(SimulatorScreen, "v"))
            await pilot.press("escape")
            await back_home()
    return times


def report(times: dict[str, list[float]], label: str) -> None:
    switch = statistics.median(times["switch"])
    print(f"{label}: medians of {len(times['switch'])} at 80x24; a trivial screen switch {switch:.0f} ms")
    for name in ("briefing→puzzle", "next puzzle", "palette", "simulator"):
        value = statistics.median(times[name])
        print(f"  {name:<16} {value:6.0f} ms   ratio {value / switch:5.2f}x  (target <= 2x)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each interaction (default 5)")
    parser.add_argument("--runs", type=int, default=5, help="cold starts of each kind (default 5)")
    parser.add_argument("--load", type=int, default=0, help="busy processes to run alongside (default 0)")
    parser.add_argument("--skip-cold", action="store_true", help="only the interactions")
    args = parser.parse_args()
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for spinner in spinners:
        spinner.start()
    label = f"with {args.load} busy process{'es' if args.load != 1 else ''}" if args.load else "quiet"
    try:
        if not args.skip_cold:
            started = cold_start(args.runs)
            bare, ridge = statistics.median(started["bare"]), statistics.median(started["ridge"])
            print(f"cold start ({label}), median of {args.runs} on an 80x24 pty: bare Textual {bare * 1000:.0f} ms, "
                  f"ridge home taking keys {ridge * 1000:.0f} ms, ratio {ridge / bare:.2f}x  (target <= 1.5x)")
        report(asyncio.run(_feel(args.rounds, (80, 24))), label)
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
