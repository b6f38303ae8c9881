"""The simulator's A/B tab, with nothing pinned, reads as one paragraph at 80x24: its sentence is
wrapped once for the pane, not broken by hand and then wrapped again (which left "the" alone on
a line)."""
from __future__ import annotations

import re

from app.game import make_app
from helpers.screen import screen_lines
from helpers.pilot import settle


async def test_the_ab_tab_sentence_wraps_once(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False, strict=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await settle(pilot, "v")
        await settle(pilot, "f")
        await settle(pilot, "b")
        pane = [line.rsplit("▕", 1)[-1].strip() for line in screen_lines(app) if "▕" in line]
        assert "Nothing is pinned yet." in pane
        words = [line for line in pane if line]
        start = next(i for i, line in enumerate(words) if line.startswith("Press p"))
        text = " ".join(words[start:start + 6])
        assert "B is always the current deployment, and every quantity" in re.sub(r"\s+", " ", text), words
        assert all(len(line.split()) > 1 for line in words[start:start + 4]), words
