"""A form drawn as one widget: labels, units and section titles are the sheet's own text, and
the fields (inputs, switches, selects) are its children, each laid over its own line.

Textual's cost of opening a screen is mostly per widget (the stylesheet applied to each), so a
row built as Horizontal + Label + field + unit Label costs four widgets where the field alone is
needed; a sheet of twenty rows saves some sixty. The sheet knows which line each row is on, so
it can also mount fields lying below the fold after the first frame without anything visible
moving (`SheetRow.later` and `mount_later`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from textual.content import Content
from textual.widget import Widget

from app.widgets.picker import Picker


@dataclass(frozen=True)
class SheetTitle:
    """A section title, after one blank line."""

    text: str


@dataclass
class SheetRow:
    """One field on its own line: `label` in the label column, `widget` over the rest of the line,
    `unit` at the line's end (or, with `unit_after`, just after a widget that wide: a switch's
    on/off). `gap` blank lines come before the row."""

    name: str
    label: str
    widget: Widget
    unit: str = ""
    unit_after: int | None = None
    gap: int = 0
    later: bool = False  # mounted after the first frame (a row below the fold)
    below: list[Widget] = field(default_factory=list)  # flow widgets under the row (its message)


Entry = SheetTitle | SheetRow


class Sheet(Widget):
    """Rows of label, field and unit, and section titles, as one widget with the fields over it."""

    COMPONENT_CLASSES = {"sheet--label", "sheet--unit", "sheet--title"}

    DEFAULT_CSS = """
    Sheet {
        layout: vertical;
        height: auto;
        width: 1fr;
    }
    Sheet > .sheet--label { color: $foreground 75%; }
    Sheet > .sheet--unit { color: $foreground 75%; }
    Sheet > .sheet--title { color: $text-accent; text-style: bold; }
    """

    def __init__(self, entries: list[Entry], label_width: int, *, tail: list[Widget] | None = None,
                 fixed_height: bool = False, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.entries = entries
        self.label_width = label_width
        self.tail = tail or []
        self.fixed_height = fixed_height
        self.rows = {entry.name: entry for entry in entries if isinstance(entry, SheetRow)}
        self._units: dict[str, str] = {}
        self._extra: dict[str, int] = {}  # lines a row's message takes under it
        self._tall: dict[str, int] = {}  # lines a row's field takes beyond its first (an open menu)
        self._place_rows()

    def _place_rows(self) -> None:
        """Each field's margins put it on its row's line, beside its label and before its unit."""
        above = 0  # lines since the previous field
        for entry in self.entries:
            if isinstance(entry, SheetTitle):
                above += 2
                continue
            above += entry.gap
            right = 0 if entry.unit_after is not None or not entry.unit else len(entry.unit) + 1
            entry.widget.styles.margin = (above, right, 0, self.label_width)
            above = 0
        if self.fixed_height:
            self.styles.height = self.line_count()

    def line_count(self) -> int:
        count = 0
        for entry in self.entries:
            if isinstance(entry, SheetTitle):
                count += 2
            else:
                count += entry.gap + self._lines_of(entry.name)
        return count

    def _lines_of(self, name: str) -> int:
        return 1 + self._tall.get(name, 0) + self._extra.get(name, 0)

    def compose(self):
        for entry in self.entries:
            if isinstance(entry, SheetRow) and not entry.later:
                yield entry.widget
                yield from entry.below
        yield from self.tail

    def mount_later(self) -> None:
        """Mount the rows held back for after the first frame, each in its place (nothing when the
        sheet has left the screen first: a player can press Escape before that frame)."""
        if not self.is_mounted or not self.is_attached:
            return
        previous: Widget | None = None
        for entry in self.entries:
            if not isinstance(entry, SheetRow):
                continue
            if entry.later:
                entry.later = False
                widgets = [entry.widget, *entry.below]
                if previous is None:
                    self.mount(*widgets, before=0)
                else:
                    self.mount(*widgets, after=previous)
            previous = entry.below[-1] if entry.below else entry.widget

    def add_below(self, name: str, widget: Widget) -> None:
        """Put `widget` under row `name` (its message), in the flow between it and the next row."""
        row = self.rows[name]
        anchor = row.below[-1] if row.below else row.widget
        row.below.append(widget)
        if not row.later:
            self.mount(widget, after=anchor)

    def set_unit(self, name: str, text: str) -> None:
        """Change the text after a row's field (a switch's on/off)."""
        if self._units.get(name, self.rows[name].unit) != text:
            self._units[name] = text
            self.refresh()

    def set_extra(self, name: str, lines: int) -> None:
        """Leave `lines` blank lines under row `name`, where the widgets under it show."""
        if self._extra.get(name, 0) != lines:
            self._extra[name] = lines
            self._relaid()

    def _relaid(self) -> None:
        if self.fixed_height:
            self.styles.height = self.line_count()
        self.refresh()

    def _fit(self, widget: Widget) -> None:
        """A menu grows when it opens (or when its value wraps): the rows below it move down in
        the flow, and so must their labels."""
        name = next((row.name for row in self.rows.values() if row.widget is widget), None)
        if name is None or not widget.size.width:
            return
        tall = len(widget.lines(widget.size.width)) - 1
        if self._tall.get(name, 0) != tall:
            self._tall[name] = tall
            self._relaid()

    def on_picker_toggled(self, event: Picker.Toggled) -> None:
        self._fit(event.picker)

    def on_picker_changed(self, event: Picker.Changed) -> None:
        self._fit(event.picker)

    def unit(self, name: str) -> str:
        return self._units.get(name, self.rows[name].unit)

    def render(self) -> Content:
        width = self.size.width
        label_style = self.get_visual_style("sheet--label", partial=True)
        unit_style = self.get_visual_style("sheet--unit", partial=True)
        title_style = self.get_visual_style("sheet--title", partial=True)
        lines: list[Content] = []
        for entry in self.entries:
            if isinstance(entry, SheetTitle):
                lines += [Content(""), Content.styled(entry.text[:width], title_style)]
                continue
            lines += [Content("")] * entry.gap
            text = entry.label[:self.label_width - 1]
            line = Content(" ") + Content.styled(text, label_style) + " " * (self.label_width - 1 - len(text))
            unit = self.unit(entry.name)
            if unit and entry.unit_after is not None:
                line = line + " " * (entry.unit_after + 1) + Content.styled(unit, unit_style)
            elif unit:
                line = line + " " * max(1, width - self.label_width - len(unit)) + Content.styled(unit, unit_style)
            lines.append(line)
            lines += [Content("")] * (self._tall.get(entry.name, 0) + self._extra.get(entry.name, 0))
        return Content("\n").join(lines)
