"""Text plots, as pure functions from numbers to lines: a ranked bar chart and a roofline.

Nothing here imports Textual; a widget (or a command-line simulator) decides where the lines go.
Every mark that matters also has a symbol or a word, so a plot still reads without colour.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

from app.labels import OUTCOMES

FULL = "█"
PARTIALS = " ▏▎▍▌▋▊▉"


def _bar(fraction: float, width: int, track: str = " ") -> str:
    """A horizontal bar `fraction` of `width` cells long, in eighths of a cell, on a track."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    text = FULL * full + (PARTIALS[rest] if rest else "")
    return text.ljust(width, track)


@dataclass(frozen=True)
class Bar:
    """One row of a bar chart: a label, its value, the value as shown, and a marker to its right."""

    label: str
    value: float
    shown: str = ""
    note: str = ""


def bar_chart(bars: list[Bar], width: int = 60, baseline: float = 0.0, label_share: float = 1 / 3,
              top: float | None = None, track: str = " ") -> list[str]:
    """Rows of `label bar shown note`, bars scaled from `baseline` to `top` (default: the largest
    value); labels take at most `label_share` of the width."""
    if not bars:
        return ["(nothing to chart)"]
    longest = max(len(b.label) for b in bars)
    shown_w = max(len(b.shown) for b in bars)
    note_w = max(len(b.note) for b in bars)
    # Labels are never cut: they get their full length when a bar of 8 still fits beside them
    # (or within `label_share` of the width), else each label takes its own line above its bar.
    label_w = longest if longest <= max(8, int(width * label_share)) or \
        width - longest - shown_w - note_w - 5 >= 8 else 0
    bar_w = max(6, width - label_w - shown_w - note_w - (5 if label_w else 4))
    top = max(b.value for b in bars) if top is None else top
    span = top - baseline if top > baseline else 1.0
    lines = []
    for b in bars:
        bar = _bar((b.value - baseline) / span, bar_w, track)
        if label_w:
            line = f"{b.label.ljust(label_w)} {bar} {b.shown.rjust(shown_w)}"
        else:
            lines.append(b.label)
            line = f"  {bar} {b.shown.rjust(shown_w)}"
        if note_w:
            line += f" {b.note}"
        lines.append(line.rstrip())
    return lines


@dataclass(frozen=True)
class Point:
    """A deployment placed on the roofline: its arithmetic intensity in FLOP/byte."""

    label: str
    intensity: float
    symbol: str = "●"


def _si(value: float, unit: str = "") -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}".rstrip()


def _tick(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:g}k"
    if value >= 1:
        return f"{value:g}"
    return f"{value:g}".lstrip("0")


def attainable_flops(intensity: float, peak_flops: float, bandwidth: float) -> float:
    """The roofline: FLOP/s a kernel of this intensity can reach, min(peak, intensity × bandwidth)."""
    return min(peak_flops, intensity * bandwidth)


def roofline(peak_flops: float, bandwidth: float, points: list[Point], width: int = 60,
             height: int = 12) -> list[str]:
    """A log-log roofline: the memory slope, the compute roof, the ridge as a dotted column,
    and each point on the roof at its intensity; then a legend line per point."""
    ridge = peak_flops / bandwidth
    intensities = [p.intensity for p in points if p.intensity and p.intensity > 0] + [ridge]
    lo = 10 ** math.floor(math.log10(min(intensities) / 2))
    hi = max(max(intensities) * 3, ridge * 8)
    lx0, lx1 = math.log10(lo), math.log10(hi)
    y_top = peak_flops
    y_bottom = attainable_flops(lo, peak_flops, bandwidth)
    ly0, ly1 = math.log10(y_bottom), math.log10(y_top)
    axis_w = 9
    plot_w = max(20, width - axis_w - 1)
    rows = max(6, height - 2)
    grid = [[" "] * plot_w for _ in range(rows)]

    def col_of(x: float) -> int:
        c = int((math.log10(x) - lx0) / (lx1 - lx0) * plot_w)
        return min(max(c, 0), plot_w - 1)

    def row_of(y: float) -> int:
        frac = (math.log10(y) - ly0) / (ly1 - ly0) if ly1 > ly0 else 1.0
        r = rows - 1 - int(round(frac * (rows - 1)))
        return min(max(r, 0), rows - 1)

    ridge_col = col_of(ridge)
    # The roof as a braille line: each cell holds 2 x 4 dots, so the slope reads smoothly.
    dots = [[0] * plot_w for _ in range(rows)]
    bits = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
    dot_rows = rows * 4
    previous = None
    for dc in range(plot_w * 2):
        x = 10 ** (lx0 + (dc + 0.5) / (plot_w * 2) * (lx1 - lx0))
        y = attainable_flops(x, peak_flops, bandwidth)
        frac = (math.log10(y) - ly0) / (ly1 - ly0) if ly1 > ly0 else 1.0
        dr = dot_rows - 1 - int(round(min(max(frac, 0.0), 1.0) * (dot_rows - 1)))
        span = range(dr, previous) if previous is not None and previous > dr + 1 else (dr,)
        for d in span:
            dots[d // 4][dc // 2] |= bits[d % 4][dc % 2]
        previous = dr
    for r in range(rows):
        for c in range(plot_w):
            if dots[r][c]:
                grid[r][c] = chr(0x2800 + dots[r][c])
            elif c == ridge_col:
                grid[r][c] = "┊"
    for p in points:
        if not p.intensity or p.intensity <= 0:
            continue
        c = col_of(p.intensity)
        r = row_of(attainable_flops(p.intensity, peak_flops, bandwidth))
        grid[r][c] = p.symbol

    lines = []
    for r in range(rows):
        if r == 0:
            label = _si(peak_flops, "FLOP/s")
            label = label if len(label) <= axis_w - 1 else _si(peak_flops)
        elif r == rows - 1:
            label = _si(y_bottom)
        else:
            label = ""
        lines.append(f"{label.rjust(axis_w - 1)} │" + "".join(grid[r]).rstrip())
    axis = [" "] * plot_w
    ticks = [" "] * (plot_w + 6)
    decade = math.ceil(lx0)
    while decade <= lx1:
        c = col_of(10 ** decade)
        axis[c] = "┴"
        text = _tick(10 ** decade)
        start = max(0, min(c - len(text) // 2, plot_w - len(text)))
        if all(ch == " " for ch in ticks[max(0, start - 1): start + len(text) + 1]):
            ticks[start: start + len(text)] = list(text)
        decade += 1
    lines.append(" " * (axis_w - 1) + " └" + "".join(axis).replace(" ", "─"))
    lines.append(" " * (axis_w + 1) + "".join(ticks).rstrip())
    caption = f"arithmetic intensity, FLOP per byte (log)   ┊ ridge {ridge:,.0f}"
    if axis_w + 1 + len(caption) <= width:
        lines.append(" " * (axis_w + 1) + caption)
    else:  # too long for the width: the ridge's key on a line of its own, never wrapped to the edge
        lines.append(" " * (axis_w + 1) + "arithmetic intensity, FLOP per byte (log)")
        lines.append(" " * (axis_w + 1) + f"┊ ridge {ridge:,.0f}")
    for p in points:
        if not p.intensity or p.intensity <= 0:
            continue
        attained = attainable_flops(p.intensity, peak_flops, bandwidth)
        side = "below" if p.intensity < ridge else "above"
        legend = (f"{p.symbol} {p.label}: {p.intensity:,.3g} FLOP/B, {side} the ridge; "
                  f"reaches {attained / peak_flops:.1%} of peak")
        lines += textwrap.wrap(legend, max(20, width), subsequent_indent="  ") or [legend]
    return lines


def outcome_strip(outcomes: list[str], width: int = 60) -> str:
    """The most recent outcomes as symbols, newest last (✓ ~ ≈ ✗)."""
    marks = [OUTCOMES[o][0] if o in OUTCOMES else "?" for o in outcomes]
    return "".join(marks[-width:])
