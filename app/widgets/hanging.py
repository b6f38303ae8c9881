"""Text that wraps under itself: a lead (a mark, a number, a label) and the words beside it,
whose second line starts under the first word rather than back at the left edge. Rich lays it
out for whatever width it is given, so it stays right when the terminal is resized."""
from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text


def hanging(rows: list[tuple[str, str]], gap: int = 1, lead_width: int | None = None) -> Table:
    """A borderless two-column grid: each lead, then its text wrapped beside it."""
    grid = Table.grid(padding=(0, gap), expand=True)
    grid.add_column(no_wrap=True, width=lead_width)
    grid.add_column(ratio=1, overflow="fold")
    for lead, text in rows:
        grid.add_row(Text(lead), Text(text))
    return grid


def paragraphs(*parts) -> Group:
    """Blocks one under the other: strings become wrapped text, "" a blank line."""
    return Group(*(Text(part) if isinstance(part, str) else part for part in parts))

