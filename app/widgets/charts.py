"""Chart widgets: the ranked lever gains and the roofline, drawn by `app.plots` to fit the width."""
from __future__ import annotations

from textual.content import Content
from textual.events import Resize
from textual.widgets import Static

from app import plots


class _Chart(Static, can_focus=True):
    """A Static that draws its lines for its width, with an optional title line, and redraws
    whenever the width changes. `width_hint` lets the first draw match the final width."""

    DEFAULT_CSS = """
    _Chart {
        height: auto;
        padding: 0 1;
        margin-top: 1;
        &:focus { background: $boost; }
    }
    """

    def __init__(self, title: str = "", width_hint: int = 0, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self.title = title
        self.drawn_lines = 0  # lines in the last draw, title included
        self._drawn_width = 0
        self._width_hint = width_hint

    def lines(self, width: int) -> list[str]:  # pragma: no cover - overridden
        return []

    def style_line(self, line: str) -> Content:
        return Content(line)

    def redraw(self, width: int) -> None:
        width = max(30, width)
        self._drawn_width = width
        body = [self.style_line(line) if isinstance(line, str) else line for line in self.lines(width)]
        if self.title:
            body.insert(0, Content.from_markup("[bold $text-accent]$title[/]", title=self.title))
        self.drawn_lines = len(body)
        self.update(Content("\n").join(body))

    def redraw_same_width(self) -> None:
        """Draw again at the width last drawn: what the lines show has changed."""
        self.redraw(self._drawn_width or self._width_hint or self.content_size.width or 60)

    def on_mount(self) -> None:
        self.redraw(self._width_hint or self.content_size.width or 60)

    def on_resize(self, event: Resize) -> None:
        width = self.content_size.width
        if width and width != self._drawn_width:
            self.redraw(width)


class LeverChart(_Chart):
    """Every lever's gain on the objective, best first, with the player's pick marked."""

    HELP = """\
## Every lever, ranked

Each bar is one lever's gain on the puzzle's objective: the objective before it, divided by
the objective after it, at the realistic fidelity that keys the gain band (the course's floor,
its ceiling, is in the table of fidelities beside it). Bars start at `×1.00`, no change, so an
empty bar is a lever that does nothing here (the note under the chart says why) and *worse*
marks one that hurts. **★** marks the engine's best lever, **◀** the one you picked.
"""

    def __init__(self, levers: list[tuple[str, float | None, str]], best: str, picked: str,
                 label=lambda s: s, notes: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.levers = levers
        self.best = best
        self.picked = picked
        self.label = label
        self.notes = notes

    def lines(self, width: int) -> list:
        bars = []
        for name, gain, _note in self.levers:
            marks = []
            if name == self.best:
                marks.append("★ best")
            if name == self.picked:
                marks.append("◀ yours")
            if gain is not None and gain < 0.995:
                marks.insert(0, "worse")
            shown = "n/a" if gain is None else f"×{gain:,.2f}"
            bars.append(plots.Bar(self.label(name), gain or 1.0, shown, " ".join(marks)))
        # bars start at ×1 (no change), so an empty bar means the lever does nothing here
        out: list = plots.bar_chart(bars, width=width, baseline=1.0)
        if self.notes:
            import textwrap

            for name, _gain, note in self.levers:
                text = f"{self.label(name)}: {note}"
                for line in textwrap.wrap(text, width, subsequent_indent="   ") or [""]:
                    out.append(Content.styled(line, "$text-muted"))
        return out

    def style_line(self, line: str) -> Content:
        content = Content(line)
        if "★" in line:
            content = content.stylize("$text-accent bold")
        return content


class TextBlock(_Chart):
    """A titled block of text whose lines are laid out for the width by `layout(width)`:
    used for tables with wrapped cells, which a plain Static cannot indent."""

    def __init__(self, layout, **kwargs) -> None:
        super().__init__(**kwargs)
        self.layout_lines = layout

    def lines(self, width: int) -> list:
        return self.layout_lines(width)


def columns(rows: list[tuple[str, ...]], widths: list[int], gap: int = 1) -> list[str]:
    """Rows of cells laid out in fixed-width columns, each cell wrapped within its column;
    a width of 0 means "whatever is left" (one such column at most)."""
    import textwrap

    lines = []
    for row in rows:
        wrapped = [textwrap.wrap(cell, w) or [""] if w > 0 else [cell] for cell, w in zip(row, widths)]
        depth = max(len(cell) for cell in wrapped)
        for i in range(depth):
            parts = [(cell[i] if i < len(cell) else "").ljust(w) for cell, w in zip(wrapped, widths)]
            lines.append((" " * gap).join(parts).rstrip())
    return lines


class RooflinePlot(_Chart):
    """The roofline of this GPU, the ridge, and the deployment's place on it."""

    HELP = """\
## The roofline

Horizontal: arithmetic intensity, the FLOPs done per byte read from memory (log scale).
Vertical: the FLOP/s the GPU can reach at that intensity (log scale). Left of the ridge
(**┊**) the line climbs with intensity — memory bandwidth limits you; right of it the line is
flat at peak — the arithmetic units do. **●** is this deployment during decode; **◆** is the
same deployment after the best lever.
"""

    def __init__(self, peak_flops: float, bandwidth: float, points: list[plots.Point],
                 height: int = 12, **kwargs) -> None:
        super().__init__(**kwargs)
        self.peak_flops = peak_flops
        self.bandwidth = bandwidth
        self.points = points
        self.plot_height = height

    def lines(self, width: int) -> list[str]:
        return plots.roofline(self.peak_flops, self.bandwidth, self.points, width=width,
                              height=self.plot_height)

    def style_line(self, line: str) -> Content:
        content = Content(line)
        for symbol in ("●", "◆"):
            start = line.find(symbol)
            while start != -1:
                content = content.stylize("$text-accent bold", start, start + 1)
                start = line.find(symbol, start + 1)
        return content
