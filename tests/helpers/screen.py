"""The text a Textual app shows, as plain lines, read back from its SVG screenshot (the public
way to see the whole composed screen), for tests that check what fits."""
from __future__ import annotations

import html
import re

_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
                   r'clip-path="url\(#[\w-]*line-(\d+)\)">([^<]*)</text>')
CELL_WIDTH = 12.2  # Textual's SVG export draws one terminal cell 12.2 units wide


def svg_lines(svg: str, width: int = 0) -> list[str]:
    """Each terminal row of an exported screenshot as a string."""
    rows: dict[int, list[str]] = {}
    for match in _TEXT.finditer(svg):
        col, row = round(float(match.group(1)) / CELL_WIDTH), int(match.group(2))
        text = html.unescape(match.group(3)).replace("\xa0", " ").replace("\n", "")
        line = rows.setdefault(row, [" "] * max(width, 400))
        for i, ch in enumerate(text):
            if col + i < len(line):
                line[col + i] = ch
    if not rows:
        return []
    return ["".join(rows.get(r, [])).rstrip() for r in range(max(rows) + 1)]


def screen_lines(app) -> list[str]:
    return svg_lines(app.export_screenshot(), app.size.width)
