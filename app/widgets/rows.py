"""A form of labelled fields in stock Textual: each row a Horizontal of a Label, the field and its
unit (a Label), each section title a Label. The simulator's columns are built of these."""
from __future__ import annotations

from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Label


def field_row(name: str, label: str, widget: Widget, unit: str = "", *, gap: bool = False) -> Horizontal:
    """`label`, then `widget`, then `unit` if any (its text can change: `#unit-{name}`), on one
    line; `gap` leaves a blank line above it. The row is `#row-{name}`, so a message can go under it."""
    parts = [Label(label, classes="field-row-label", markup=False), widget]
    if unit:
        parts.append(Label(unit, id=f"unit-{name}", classes="field-row-unit", markup=False))
    return Horizontal(*parts, id=f"row-{name}", classes="field-row -gap" if gap else "field-row")


def section_title(text: str) -> Label:
    """A section's title, after a blank line."""
    return Label(text, classes="field-section", markup=False)
