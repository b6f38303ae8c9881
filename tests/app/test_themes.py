"""Readable in every theme: the deployment card's labels (drawn white on white in the light
themes, because their muted colour was worked out against no background), and no text on the
puzzle or the reveal drawn so faint it cannot be read, in a dark and a light theme. The
snapshots in tests/app/test_snapshots.py show the puzzle in one theme of each family."""
from __future__ import annotations

import pytest

from app.screens.puzzle import PuzzleScreen
from app.screens.reveal import RevealScreen
from helpers.pilot import settled
from helpers.snapshots import build_app
from helpers.forms import answer, key_answer

pytestmark = pytest.mark.ui

READABLE = 3.0  # WCAG's contrast ratio for large or secondary text: the card's labels meet it
FAINT = 2.5  # below this a run of text is hard to read at all (a text box's placeholder sits at 2.6)
FAMILIES = ("textual-dark", "textual-light")


def luminance(color) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = color
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(fg, bg) -> float:
    """WCAG's contrast ratio of two rich colours (1 to 21)."""
    light, dark = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def faint_text(screen, limit: float = FAINT) -> list[tuple[str, str, float]]:
    """(widget, text, contrast) for every run of text drawn below `limit` on what is on screen."""
    found = []
    for widget in screen.walk_children(with_self=False):
        if not widget.display or not widget.region or not widget.is_on_screen:
            continue
        for y in range(widget.size.height):
            for segment in widget.render_line(y):
                style = segment.style
                text = segment.text.strip()
                if not text or style is None or style.color is None or style.bgcolor is None:
                    continue
                if not any(ch.isalnum() for ch in text):
                    continue  # rules, bars and marks are drawn, not read
                ratio = contrast(style.color.get_truecolor(), style.bgcolor.get_truecolor())
                if ratio < limit:
                    found.append((f"{type(widget).__name__}#{widget.id}", text, round(ratio, 2)))
    return found


def card_label_contrast(screen) -> float:
    strip = screen.query_one("#card").render_line(0)
    label = next(s for s in strip if s.text.strip())
    assert label.text.strip() == "Model"
    return contrast(label.style.color.get_truecolor(), label.style.bgcolor.get_truecolor())


@pytest.mark.slow
async def test_the_card_labels_are_readable_in_every_theme(tmp_path):
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        await pilot.press("c", "s")
        await settled(pilot)
        assert isinstance(app.screen, PuzzleScreen)
        weak = {}
        for theme in sorted(app.available_themes):
            if "ansi" in theme:
                continue  # the terminal's own colours: nothing to measure
            app.theme = theme
            await settled(pilot)
            ratio = card_label_contrast(app.screen)
            if ratio < READABLE:
                weak[theme] = round(ratio, 2)
        assert not weak, f"card labels too faint: {weak}"


@pytest.mark.parametrize("theme", FAMILIES)
async def test_nothing_on_the_puzzle_or_the_reveal_is_too_faint_to_read(tmp_path, theme):
    app = build_app(tmp_path, profile="Ada")
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        app.theme = theme
        await pilot.press("c", "s")
        await settled(pilot)
        assert faint_text(app.screen) == []
        await answer(pilot, {**key_answer("fixture-tp-01"), "estimates": {"intensity": "1"}})
        await pilot.press("l", "y")
        await settled(pilot)
        assert isinstance(app.screen, RevealScreen)
        assert faint_text(app.screen) == []
