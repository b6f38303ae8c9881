"""Save the README's screenshots: the game plays its first puzzle and saves SVGs of the way.

Run from the repository: `.venv/bin/python app/screenshots/take.py`. It uses the built-in packs
and a throwaway save folder, and writes the pictures next to this file with the app's own
`save_screenshot`, so they always show the game as it is.
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

SIZE = (100, 32)


async def main() -> None:
    from textual.widgets import Input

    from engine.ids import Lever, Verdict

    from app.game import make_app

    now = _dt.datetime(2026, 3, 2, 9, 30, tzinfo=_dt.timezone.utc)
    app = make_app(save_dir=tempfile.mkdtemp(prefix="ridge-shots-"), clock=lambda: now,
                   cursor_blink=False, strict=True)

    async def settle(*keys: str) -> None:
        if keys:
            await pilot.press(*keys)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()

    def shot(name: str) -> None:
        app.save_screenshot(f"{name}.svg", str(HERE))
        print("saved", HERE / f"{name}.svg")

    async with app.run_test(size=SIZE) as pilot:
        await settle()
        shot("01-first-run")
        await settle(*"Sam", "enter")
        shot("02-home")
        await settle("c")
        shot("03-briefing")
        await settle("s", "h")
        screen = app.screen
        screen.query_one("#bottleneck").value = Verdict.DECODE_WEIGHTS
        screen.query_one("#lever").value = Lever.SPECULATIVE_DECODING
        screen.query_one("#band").value = "2-4x"
        screen.query_one("#reason").value = "idle-flops"
        screen.query_one("#est-tpot_seconds", Input).value = "141e9 / (4 * 3.35e12)"
        screen.query_one("#certainty").value = "medium"
        await settle("n")
        await settle(*"141e9 / (4 * 3.35e12)", "enter", "escape")
        shot("04-puzzle")
        await settle("l")
        shot("05-lock-in")
        await settle("y")
        shot("06-reveal")
        app.screen.query_one("#lever-chart").scroll_visible(top=True, animate=False)
        await settle()
        shot("07-reveal-levers-roofline")
        await settle("m")
        shot("08-campaign-map")
        from app.screens.simulator import SimulatorScreen

        for tab in ("tab-spec", "tab-roofline"):
            await app.push_screen(SimulatorScreen(predict_first=False, initial_tab=tab))
            await settle()
            shot(f"09-simulator-{tab.removeprefix('tab-')}")
            app.pop_screen()
            await settle()


if __name__ == "__main__":
    asyncio.run(main())
