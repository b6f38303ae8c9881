"""Text plots, as pure functions from numbers to lines: a ranked bar chart, a roofline, and the
simulator's line charts drawn in braille with the lines of each of its results tabs.

Nothing here imports Textual; a widget (or a command-line simulator) decides where the lines go,
so every chart can be tested (and benchmarked) on its own. Every mark that matters also has a
symbol or a word, and every axis says its unit, so a plot still reads without colour.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from app import labels
from app.labels import OUTCOMES
from engine import units as u

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


# --- the simulator's charts and tabs ---------------------------------------------------------

BRAILLE_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
CURVE_SAMPLE = "⠤⠤"


@dataclass(frozen=True)
class Series:
    """One curve: x and y arrays (NaN where undefined), drawn as a braille line."""

    xs: np.ndarray
    ys: np.ndarray
    label: str


@dataclass(frozen=True)
class HLine:
    y: float
    label: str
    glyph: str = "┄"


@dataclass(frozen=True)
class VLine:
    x: float
    label: str
    glyph: str = "┊"


@dataclass(frozen=True)
class Mark:
    x: float
    y: float
    label: str
    glyph: str = "●"


# --- number formats ---------------------------------------------------------------------------

def short(value: float) -> str:
    """A tick label: 3 significant figures with k/M/G for large numbers, trimmed."""
    if value is None or not math.isfinite(value):
        return "n/a"
    a = abs(value)
    for scale, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= scale:
            return f"{value / scale:.3g}{suffix}"
    if a >= 1 or a == 0:
        return f"{value:.3g}"
    return f"{value:.2g}"


def si(value: float, unit: str) -> str:
    """A value with an SI prefix on its unit: 3.96 PFLOP/s, 13.4 TB/s."""
    text = short(value)
    if text[-1] in "kMGTP":
        return f"{text[:-1]} {text[-1]}{unit}"
    return f"{text} {unit}"


def tokens(value: float) -> str:
    """Token counts in binary thousands, as context lengths are said: 1K, 4K, 128K."""
    if value >= 1024 and value % 1024 == 0:
        return f"{int(value // 1024)}K"
    if value >= 1024:
        return f"{value / 1024:.3g}K"
    return f"{value:.0f}"


def millis(value: float) -> str:
    return f"{value * 1e3:.3g}"


def count(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:,.0f}"


# --- the chart --------------------------------------------------------------------------------

def _nice_linear_ticks(lo: float, hi: float, want: int = 4) -> list[float]:
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / max(1, want)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _decade_ticks(lo: float, hi: float) -> list[float]:
    ticks = [10.0 ** e for e in range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9) + 1)]
    if len(ticks) < 2:  # a narrow span: add 2x and 5x marks so the axis still reads
        ticks = sorted({t * m for t in [10.0 ** math.floor(math.log10(lo))] * 1 for m in (1, 2, 5, 10, 20, 50)
                        if lo <= t * m <= hi} | set(ticks))
    return ticks


def line_chart(series: Sequence[Series], *, width: int, height: int, x_log: bool = False,
               y_log: bool = False, x_range: tuple[float, float] | None = None,
               y_range: tuple[float, float] | None = None, hlines: Sequence[HLine] = (),
               vlines: Sequence[VLine] = (), marks: Sequence[Mark] = (),
               x_ticks: Sequence[tuple[float, str]] | None = None,
               y_ticks: Sequence[float] = (),
               x_fmt: Callable[[float], str] = short, y_fmt: Callable[[float], str] = short,
               y_label: str = "", x_label: str = "") -> list[str]:
    """A chart `width` columns wide and `height` rows tall for the plotting area, plus the y-axis
    title above, the x axis, its ticks and title below, and one legend line per labelled element."""
    xs_all = [np.asarray(s.xs, dtype=float) for s in series]
    ys_all = [np.asarray(s.ys, dtype=float) for s in series]

    def usable(a: np.ndarray, log: bool) -> np.ndarray:
        a = a[np.isfinite(a)]
        return a[a > 0] if log else a

    if x_range is None:
        pool = np.concatenate([usable(x, x_log) for x in xs_all] or [np.array([1.0])])
        x_range = (float(pool.min()), float(pool.max())) if pool.size else (1.0, 10.0)
    if y_range is None:
        extra = [h.y for h in hlines] + [m.y for m in marks]
        pool = np.concatenate([usable(y, y_log) for y in ys_all] + [usable(np.array(extra, dtype=float), y_log)])
        y_range = (float(pool.min()), float(pool.max())) if pool.size else (1.0, 10.0)
    x0, x1 = x_range
    y0, y1 = y_range
    if x1 <= x0:
        x1 = x0 * 10 if x_log else x0 + 1
    if y1 <= y0:
        y1, y0 = (y0 * 2, y0 / 2) if y_log else (y0 + 1, y0 - 1)

    def tx(v):
        return np.log10(v) if x_log else v

    def ty(v):
        return np.log10(v) if y_log else v

    tx0, tx1, ty0, ty1 = tx(x0), tx(x1), ty(y0), ty(y1)
    y_ticks = list(y_ticks) + (_decade_ticks(y0, y1) if y_log else _nice_linear_ticks(y0, y1))
    y_ticks = [t for t in y_ticks if y0 * (1 - 1e-9) <= t <= y1 * (1 + 1e-9)] or [y0, y1]
    axis_w = max(len(y_fmt(t)) for t in y_ticks) + 1
    plot_w = max(10, width - axis_w - 1)
    rows = max(3, height)
    grid = [[" "] * plot_w for _ in range(rows)]

    def col_of(x: float) -> int | None:
        if not math.isfinite(x) or (x_log and x <= 0):
            return None
        f = (tx(x) - tx0) / (tx1 - tx0)
        if f < -1e-9 or f > 1 + 1e-9:
            return None
        return min(plot_w - 1, max(0, int(f * plot_w)))

    def row_of(y: float) -> int | None:
        if not math.isfinite(y) or (y_log and y <= 0):
            return None
        f = (ty(y) - ty0) / (ty1 - ty0)
        if f < -1e-9 or f > 1 + 1e-9:
            return None
        # The cell holding the braille dot a curve through y would light, so marks sit on curves.
        dot = rows * 4 - 1 - int(round(min(1.0, max(0.0, f)) * (rows * 4 - 1)))
        return dot // 4

    for v in vlines:
        c = col_of(v.x)
        if c is not None:
            for r in range(rows):
                grid[r][c] = v.glyph
    for h in hlines:
        r = row_of(h.y)
        if r is not None:
            for c in range(plot_w):
                if grid[r][c] == " ":
                    grid[r][c] = h.glyph

    # The curves, at braille resolution: 2 dots across and 4 down per cell.
    dots = np.zeros((rows, plot_w), dtype=np.int32)
    dot_cols, dot_rows = plot_w * 2, rows * 4
    centres = tx0 + (np.arange(dot_cols) + 0.5) / dot_cols * (tx1 - tx0)
    for xs, ys in zip(xs_all, ys_all):
        ok = np.isfinite(xs) & np.isfinite(ys)
        if x_log:
            ok &= xs > 0
        if y_log:
            ok &= ys > 0
        if ok.sum() < 1:
            continue
        px, py = tx(xs[ok]), ty(ys[ok])
        order = np.argsort(px, kind="stable")
        px, py = px[order], py[order]
        inside = (centres >= px[0] - 1e-12) & (centres <= px[-1] + 1e-12)
        values = np.interp(centres, px, py)
        frac = np.clip((values - ty0) / (ty1 - ty0), 0.0, 1.0)
        drow = (dot_rows - 1 - np.round(frac * (dot_rows - 1))).astype(int)
        previous = None
        for dc in np.nonzero(inside)[0]:
            d = int(drow[dc])
            if previous is None or abs(previous - d) <= 1:
                span = (d,)
            elif previous < d:
                span = range(previous + 1, d + 1)
            else:
                span = range(d, previous)
            for dd in span:
                dots[dd // 4, dc // 2] |= BRAILLE_BITS[dd % 4][dc % 2]
            previous = d
    for r, c in zip(*np.nonzero(dots)):
        grid[r][c] = chr(0x2800 + int(dots[r, c]))

    for m in marks:
        c, r = col_of(m.x), row_of(m.y)
        if c is not None and r is not None:
            grid[r][c] = m.glyph

    tick_rows: dict[int, str] = {}
    for t in y_ticks:
        r = row_of(t)
        if r is not None and r not in tick_rows and not any(abs(r - other) < 2 for other in tick_rows):
            tick_rows[r] = y_fmt(t)
    lines = [y_label] if y_label else []
    for r in range(rows):
        label = tick_rows.get(r, "")
        lines.append(f"{label.rjust(axis_w - 1)} {'┤' if label else '│'}" + "".join(grid[r]).rstrip())

    if x_ticks is None:
        values = _decade_ticks(x0, x1) if x_log else _nice_linear_ticks(x0, x1)
        x_ticks = [(v, x_fmt(v)) for v in values]
    axis = ["─"] * plot_w
    tick_text = [" "] * plot_w
    for value, text in x_ticks:
        c = col_of(value)
        if c is None:
            continue
        start = max(0, min(c - len(text) // 2, plot_w - len(text)))
        if all(ch == " " for ch in tick_text[max(0, start - 1): start + len(text) + 1]):
            axis[c] = "┴"
            tick_text[start: start + len(text)] = list(text)
    lines.append(" " * (axis_w - 1) + " └" + "".join(axis))
    lines.append(" " * (axis_w + 1) + "".join(tick_text).rstrip())
    if x_label:
        lines.append(" " * (axis_w + 1) + x_label)
    for s in series:
        if s.label:
            lines.append(f"{CURVE_SAMPLE} {s.label}")
    for h in hlines:
        if h.label:
            lines.append(f"{h.glyph * 2} {h.label}")
    for v in vlines:
        if v.label:
            lines.append(f"{v.glyph}  {v.label}")
    for m in marks:
        if m.label:
            lines.append(f"{m.glyph}  {m.label}")
    return lines


# --- the tabs ---------------------------------------------------------------------------------

def deployment_line(dep) -> str:
    spec = f", speculating k={dep.spec_k}" if dep.spec_k else ""
    return (f"{dep.model.name} on {dep.gpus} × {dep.gpu.name}: prompt {dep.prompt:,} + output {dep.output:,} "
            f"tokens, {dep.concurrency:,} wanted in flight, weights {dep.weights}, KV {dep.kv}, "
            f"{dep.scheduler} batching, {dep.allocator} KV{spec}")


def results_lines(result, width: int = 60, with_derivation: bool = True) -> list[str]:
    """The headline figures, every lever ranked on the objective, and the engine's derivation."""
    r, dep, sol = result.report, result.deployment, result.solution
    lines = [
        f"Verdict       {labels.bottleneck(r.bottleneck)}",
        "",
        f"Weights       {u.gib(r.weight_bytes)} ({u.gb(r.weight_bytes)})",
        f"KV per token  {u.small_bytes(r.kv_bytes_per_token)}",
        f"Left for KV   {u.gib(r.usable_kv_bytes)} (reserve {u.gib(r.reserve_bytes)})",
        f"Max in flight {r.max_concurrency:,} at S = {r.seq_len_avg:,.0f} tokens",
        f"Batch         {r.batch:,} ({dep.concurrency:,} wanted)",
        f"Intensity     {r.intensity:,.3g} FLOP/B; ridge {r.ridge:,.0f}",
        f"Decode step   memory {u.seconds(r.decode_memory_seconds)}, compute {u.seconds(r.decode_compute_seconds)}",
        f"TPOT          {u.seconds(r.tpot_seconds)} per token, per user",
        f"TTFT          {u.seconds(r.ttft_seconds)}",
        f"Prefill share {r.prefill_share:.0%} of GPU time",
        f"Throughput    {r.throughput_tokens_per_s:,.0f} output tokens/s",
        f"Cost          {u.dollars(r.cost_per_million_output_tokens)} per M output tokens",
    ]
    if r.spec_expected_tokens is not None:
        lines.append(f"Speculation   {r.spec_expected_tokens:.2f} tokens per verification")
    lines += ["", f"Levers, ranked by gain (bars from 1×): {labels.objective(dep.objective)}"]
    bars = []
    for lv in sol.levers:
        gain = lv.gain if lv.gain is not None else 0.0
        shown = f"{lv.gain:.2f}×" if lv.gain is not None else "n/a"
        bars.append(Bar(labels.lever_short(lv.name), gain, shown, "★ best" if lv is sol.best else ""))
    lines += bar_chart(bars, width=max(30, width), baseline=1.0)
    from engine.compare import side_by_side_lines

    lines += ["", "The course's floor, the realistic figure and measured kernels:"]
    lines += side_by_side_lines(sol, indent="", measured=getattr(result, "measured", None))
    if with_derivation:
        lines += ["", "How the engine got there:"] + derivation(result)
    return lines


def derivation(result) -> list[str]:
    """The engine's worked derivation for this deployment, step by step with its numbers."""
    try:
        from engine.derivation import derivation_lines

        return list(derivation_lines(result.solution))
    except Exception:  # noqa: BLE001 - the figures stand without the derivation
        return ["(the derivation is not available)"]


def roofline_lines(data, width: int, height: int) -> list[str]:
    roof = lambda i: min(data.peak, i * data.bandwidth)  # noqa: E731 - the roofline itself
    marks = [Mark(data.batch_one_intensity, roof(data.batch_one_intensity),
                  f"batch 1: {data.batch_one_intensity:,.3g} FLOP/B", "○")]
    if data.max_batch != data.batch:
        marks.append(Mark(data.max_batch_intensity, roof(data.max_batch_intensity),
                          f"largest batch that fits, {data.max_batch:,}: {data.max_batch_intensity:,.3g} FLOP/B", "◆"))
    marks.append(Mark(data.point_intensity, data.point_attainable,
                      f"now, batch {data.batch:,}: {data.point_intensity:,.3g} FLOP/B", "●"))
    chart = line_chart(
        [Series(data.intensity, data.attainable, "attainable = min(peak, intensity × bandwidth)")],
        width=width, height=height, x_log=True, y_log=True,
        vlines=[VLine(data.ridge, f"ridge = peak ÷ bandwidth = {data.ridge:,.0f} FLOP/B")], marks=marks,
        y_ticks=[data.peak], y_fmt=short, y_label="attainable FLOP/s, all GPUs together (log)",
        x_label="arithmetic intensity, FLOP per byte (log)")
    lines = ["The roofline"] + chart
    where = "below" if data.point_intensity < data.ridge else "above"
    lines += [
        "",
        f"Peak {si(data.peak, 'FLOP/s')} ÷ {si(data.bandwidth, 'B/s')} of bandwidth = a ridge at {data.ridge:,.0f} FLOP/B.",
        f"At batch {data.batch:,} a decode step does {data.point_intensity:,.3g} FLOP per byte read, {where} "
        f"the ridge: the GPUs reach {data.point_attainable / data.peak:.1%} of their peak.",
    ]
    if data.max_batch_intensity < data.ridge:
        lines.append(f"Even the largest batch the KV cache holds ({data.max_batch:,}) stays below the ridge: each "
                     f"extra sequence brings its own KV reads, so intensity levels off.")
    if data.mfu < 1:
        lines.append(f"Compute terms run at MFU {data.mfu:g}, so decode turns compute-bound at "
                     f"{data.ridge * data.mfu:,.0f} FLOP/B rather than at the ridge.")
    return lines


def spec_lines(data, width: int, height: int) -> list[str]:
    top = max(1.2, float(np.nanmax(data.speedup)) * 1.08) if np.isfinite(data.speedup).any() else 2.0
    marks = [Mark(data.current_concurrency, data.current_speedup,
                  f"now: {data.current_concurrency:,} in flight → {data.current_speedup:.2f}×")]
    vlines = []
    if data.compute_bound_from is not None:
        vlines.append(VLine(data.compute_bound_from, f"plain decode turns compute-bound at batch "
                                                     f"{data.compute_bound_from:,}"))
    chart = line_chart(
        [Series(data.concurrency, data.speedup, f"speedup = TPOT without ÷ TPOT with (k={data.k}, "
                                               f"α={data.alpha:g}, draft {data.draft_cost:g} step/token)")],
        width=width, height=height, x_log=True, y_range=(0.0, top),
        hlines=[HLine(1.0, "1× break-even: below it, speculating slows decode down")],
        vlines=vlines, marks=marks,
        y_label="speedup (×)",
        x_label=f"in flight (log); batch = min(in flight, {data.max_batch:,})")
    lines = ["Speculative decoding against batch size"] + chart + [""]
    lines.append(f"{data.expected_tokens:.2f} tokens are accepted per verification; each verification costs "
                 f"{data.k + 1}× the FLOPs of a plain step.")
    first = float(data.speedup[0])
    lines.append(f"At batch 1 it is {first:.2f}× faster.")
    if data.first_below_one is not None:
        lines.append(f"From {data.first_below_one:,} in flight it is slower than not speculating at all.")
    elif data.max_batch < data.concurrency[-1]:
        capped = float(data.speedup[-1])
        lines.append(f"The KV cache stops the batch at {data.max_batch:,}, where speculating still gives "
                     f"{capped:.2f}×.")
    else:
        lines.append(f"It stays above 1× up to {int(data.concurrency[-1]):,} in flight here.")
    if data.compute_bound_from is not None:
        lines.append(f"Plain decode turns compute-bound at batch {data.compute_bound_from:,}: from there the "
                     f"extra verification FLOPs cost time instead of using idle arithmetic.")
    return lines


def _length_ticks(lo: float, hi: float) -> list[tuple[float, str]]:
    ticks = []
    v = 2 ** math.ceil(math.log2(lo))
    while v <= hi:
        if v in (1024, 4096, 32768, 131072) or v in (256, 16384):
            ticks.append((float(v), tokens(v)))
        v *= 2
    return ticks


def concurrency_lines(data, width: int, height: int) -> list[str]:
    marks = [Mark(data.point_seq_len, max(data.point_max_concurrency, 1),
                  f"now: S = {data.point_seq_len:,.0f} → {data.point_max_concurrency:,} fit")]
    vlines = []
    if data.context < data.seq_len[-1]:
        vlines.append(VLine(float(data.context), f"the model's context, {tokens(data.context)} tokens"))
    finite = data.max_concurrency[data.max_concurrency > 0]
    low = max(0.8, float(finite.min()) * 0.8) if finite.size else 0.8
    high = max(float(finite.max()) if finite.size else 1.0, data.demand, data.point_max_concurrency) * 1.2
    chart = line_chart(
        [Series(data.seq_len, np.where(data.max_concurrency > 0, data.max_concurrency, np.nan),
                "max concurrency = floor(usable KV ÷ (KV per token × S)), paged, no shared prefix")],
        width=width, height=height, x_log=True, y_log=True, y_range=(low, high),
        hlines=[HLine(data.demand, f"wanted in flight: {data.demand:,}")], vlines=vlines, marks=marks,
        x_ticks=_length_ticks(data.seq_len[0], data.seq_len[-1]), y_fmt=short,
        y_label="max concurrent sequences (log)", x_label="average sequence length S, tokens (log)")
    lines = ["How many sequences the KV cache holds"] + chart + [""]
    lines.append(f"{u.gib(data.usable_bytes)} left for the cache; {u.small_bytes(data.kv_bytes_per_token)} per token.")
    lines.append(f"{'S':>9}  {'KV/seq':>10}  {'max in flight':>13}")
    for s, gib_per_seq, conc, beyond in data.table:
        note = "  (longer than the context)" if beyond else ""
        lines.append(f"{s:>9,}  {gib_per_seq:>6.2f} GiB  {conc:>13,}{note}")
    lines.append("The course's figures for Llama 3 70B on 4 × H100 with 32 GiB held back: 501 / 125 / 15 / 3.")
    return lines


def cost_tpot_lines(data, width: int, height: int) -> list[str]:
    half = max(4, height // 2)
    marks_cost = [Mark(data.current_concurrency, data.current_cost, "")]
    marks_tpot = [Mark(data.current_concurrency, data.current_tpot,
                       f"now: {data.current_concurrency:,} in flight → {u.dollars(data.current_cost)}/M, "
                       f"TPOT {u.seconds(data.current_tpot)}")]
    vlines = []
    if data.best_concurrency is not None:
        marks_cost.append(Mark(data.best_concurrency, data.best_cost, "", "◆"))
        marks_tpot.append(Mark(data.best_concurrency, data.best_tpot,
                               f"cheapest within budget: {data.best_concurrency:,} in flight → "
                               f"{u.dollars(data.best_cost)}/M, TPOT {u.seconds(data.best_tpot)}", "◆"))
    x_label = f"in flight (log); batch = min(in flight, {data.max_batch:,})"
    cost = line_chart([Series(data.concurrency, data.cost, "")], width=width, height=half, x_log=True, y_log=True,
                      marks=marks_cost, vlines=vlines, y_fmt=lambda v: u.dollars(v, axis=True),
                      y_label="cost, $ per million output tokens (log)")
    finite = data.tpot[np.isfinite(data.tpot)]
    top = max(float(finite.max()) if finite.size else 0.0, data.budget_seconds) * 1.1
    tpot = line_chart([Series(data.concurrency, data.tpot, "")], width=width, height=half, x_log=True,
                      y_range=(0.0, top), y_fmt=millis,
                      hlines=[HLine(data.budget_seconds, f"TPOT budget {u.seconds(data.budget_seconds)}", "═")],
                      marks=marks_tpot, y_label="TPOT, ms per token per user", x_label=x_label)
    # The cost chart shares the x axis with the TPOT chart below it: drop its tick labels.
    cost = cost[:-1]
    lines = ["Cost and TPOT against batch size"] + cost + tpot + [""]
    if data.best_concurrency is None:
        lines.append(f"No batch meets a TPOT budget of {u.seconds(data.budget_seconds)} here.")
    else:
        lines.append("More batch lowers the cost per token and raises every user's TPOT: pick the largest "
                     "batch the budget allows.")
    return lines


def _fmt(kind: str, value) -> str:
    if value is None:
        return "n/a"
    if kind == "count":
        return f"{value:,.0f}"
    if kind == "seconds":
        return u.seconds(value)
    if kind == "pct":
        return f"{value:.0%}"
    if kind == "dollars":
        return u.dollars(value)
    if kind == "gib":
        return f"{value / 2**30:,.1f}"
    return short(value)


BETTER_MARK = {"better": "✓ better", "worse": "✗ worse", "same": "= same", "": ""}


def compare_lines(pinned, current, rows, changes, width: int = 60) -> list[str]:
    """A and B side by side, quantity by quantity, with the ratio B/A."""
    if pinned is None:
        return ["Nothing is pinned yet.", "",
                "Press p to pin the current deployment as A, then change any input: B is always the "
                "current deployment, and every quantity is shown for both with the ratio B/A."]  # one line: wrapped to fit
    lines = [f"A  {deployment_line(pinned.deployment)}", f"B  {deployment_line(current.deployment)}", ""]
    if changes:
        lines.append("Changed: " + "; ".join(f"{name} {a} → {b}" for name, a, b in changes))
    else:
        lines.append("Changed: nothing yet; B is the same deployment as A.")
    lines.append("")
    label_w = max(len(r.label) for r in rows)
    lines.append(f"{'quantity':<{label_w}}  {'A':>9}  {'B':>9}  {'B/A':>7}")
    for r in rows:
        ratio = f"{r.ratio:.2f}×" if r.ratio is not None else "n/a"
        lines.append(f"{r.label:<{label_w}}  {_fmt(r.kind, r.a):>9}  {_fmt(r.kind, r.b):>9}  {ratio:>7}  "
                     f"{BETTER_MARK[r.better]}".rstrip())
    a, b = pinned.report.bottleneck, current.report.bottleneck
    lines.append(f"{'verdict':<{label_w}}  A {labels.bottleneck(a)}; B {labels.bottleneck(b)}")
    lines.append(f"{'best lever':<{label_w}}  A {labels.lever(pinned.solution.best_lever)}; "
                 f"B {labels.lever(current.solution.best_lever)}")
    return lines


# --- the Load tab ------------------------------------------------------------------------------

def load_lines(curve, width: int, height: int, guess: float | None = None) -> list[str]:
    """Latency and goodput against the offered rate (P50 and P99, the SLO lines, the knee and
    capacity marked; the player's knee too, once guessed), and the queue over one run at the
    chosen rate. Every curve's points carry their own glyph, so they read without colour."""
    h = max(4, height // 2)
    rates, sat = curve.rates, curve.saturation_qps
    x_range = (0.0, float(rates.max()) * 1.02)
    vlines = [VLine(sat, f"steady-state capacity {short(sat)} req/s", "╎")]
    if curve.knee_qps is not None:
        vlines.insert(0, VLine(curve.knee_qps, f"knee ≈ {short(curve.knee_qps)} req/s (P99 TTFT 3× its low-load "
                                               "value)", "┊"))
    if guess is not None:
        vlines.append(VLine(guess, f"your knee {short(guess)} req/s", "?"))
    f = curve.run.figures
    head = [f"Load: the same traffic at {len(rates)} rates up to {short(float(rates.max()))} req/s "
            f"(continuous batching, paged KV, prompts prefilled first)",
            f"At {short(curve.rate)} req/s ({curve.rate / sat:.0%} of capacity): TTFT P50 {u.seconds(f['ttft_p50_seconds'])}, "
            f"P99 {u.seconds(f['ttft_p99_seconds'])}; TPOT P99 {u.seconds(f['tpot_p99_seconds'])}; goodput "
            f"{short(f['goodput_requests_per_s'])} req/s; {short(f['mean_in_system'])} in the system", ""]
    marks = [Mark(x, y, "", "○") for x, y in zip(rates, curve.ttft_p50)]
    marks += [Mark(x, y, "", "▲") for x, y in zip(rates, curve.ttft_p99)]
    marks[0] = Mark(rates[0], curve.ttft_p50[0], "P50 (median) at each rate", "○")
    marks[len(rates)] = Mark(rates[0], curve.ttft_p99[0], "P99 at each rate", "▲")
    ttft = line_chart([Series(rates, curve.ttft_p50, ""), Series(rates, curve.ttft_p99, "")], width=width,
                      height=h, y_log=True, x_range=x_range, marks=marks, vlines=vlines,
                      hlines=[HLine(curve.slo_ttft, f"TTFT SLO {u.seconds(curve.slo_ttft)}", "═")],
                      y_fmt=lambda v: u.seconds(v), y_label="time to first token (log)",
                      x_label="offered rate, requests per second")
    tpot_marks = [Mark(x, y, "", "▲") for x, y in zip(rates, curve.tpot_p99)]
    tpot_marks[0] = Mark(rates[0], curve.tpot_p99[0], "P99 TPOT", "▲")
    tpot = line_chart([Series(rates, curve.tpot_p99, "")], width=width, height=max(3, h - 1), x_range=x_range,
                      y_range=(0.0, max(float(np.nanmax(curve.tpot_p99)), curve.slo_tpot) * 1.1),
                      marks=tpot_marks, vlines=vlines[:1],
                      hlines=[HLine(curve.slo_tpot, f"TPOT SLO {u.seconds(curve.slo_tpot)}", "═")],
                      y_fmt=millis, y_label="time per output token, P99 (ms)", x_label="offered rate, requests per second")
    good_marks = [Mark(x, y, "", "●") for x, y in zip(rates, curve.goodput)]
    good_marks[0] = Mark(rates[0], curve.goodput[0], "goodput: requests per second within both SLOs", "●")
    good = line_chart([Series(rates, rates, "offered (every request in time)"), Series(rates, curve.goodput, "")],
                      width=width, height=h, x_range=x_range, y_range=(0.0, float(rates.max()) * 1.05),
                      marks=good_marks, vlines=vlines[:1], y_label="requests per second",
                      x_label="offered rate, requests per second")
    qt, qn = curve.run.queue
    if not len(qn) or float(np.max(qn)) <= 0.0:   # a flat line at zero says less than a sentence
        queue = [f"No request waited at {short(curve.rate)} req/s: each joined the running batch as it arrived "
                 f"({short(f['mean_batch'])} in flight on average). Set a rate past the knee to watch a queue form."]
    else:
        queue = line_chart([Series(np.asarray(qt), np.asarray(qn), "")], width=width, height=max(3, h - 1),
                           y_range=(0.0, max(1.0, float(np.max(qn)) * 1.1)),
                           y_label=f"requests waiting at {short(curve.rate)} req/s",
                           x_label="time into the run, seconds")
    return (head + ["Time to first token against the offered rate"] + ttft + [""]
            + ["Time per output token against the offered rate"] + tpot + [""]
            + ["Goodput against the offered rate"] + good + [""]
            + ["Queue over one run"] + queue)
