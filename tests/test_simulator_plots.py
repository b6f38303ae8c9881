"""The simulator's text plots, as pure functions: they fit their width, say their units, and mark
what matters with symbols as well as position."""
import numpy as np
import pytest

from app import plots as sp
from engine.sim.result import changed_inputs, compare
from engine.sim.state import Simulator


@pytest.fixture(scope="module")
def sim():
    return Simulator()


def chart_rows(lines):
    """The plotting area and x axis of a chart: the lines drawn against the y axis."""
    return [line for line in lines if "│" in line or "┤" in line or "└" in line]


def test_line_chart_draws_a_braille_curve_inside_its_width():
    xs = np.arange(1, 1001, dtype=float)
    lines = sp.line_chart([sp.Series(xs, 1000 / xs, "falling")], width=50, height=10, x_log=True, y_log=True,
                          y_label="y, units", x_label="x, units")
    assert lines[0] == "y, units"
    rows = chart_rows(lines)
    assert len(rows) == 11 and all(len(r) <= 50 for r in rows)
    assert any(0x2800 < ord(ch) <= 0x28FF for ch in "".join(rows))
    assert any(line.strip() == "x, units" for line in lines) and "⠤⠤ falling" in lines
    ticks = lines[lines.index(rows[-1]) + 1]
    assert "1" in ticks and "1k" in ticks


def test_a_falling_curve_runs_from_top_left_to_bottom_right():
    xs = np.linspace(0, 10, 1000)
    lines = sp.line_chart([sp.Series(xs, 10 - xs, "")], width=40, height=8)
    rows = [r.split("│", 1)[-1] if "│" in r else r.split("┤", 1)[-1] for r in chart_rows(lines)[:-1]]
    first_dot = [next((i for i, ch in enumerate(r) if ch.strip()), None) for r in rows]
    assert first_dot[0] is not None and first_dot[-1] is not None and first_dot[0] < first_dot[-1]


def test_marks_lines_and_legend():
    xs = np.arange(1, 101, dtype=float)
    lines = sp.line_chart([sp.Series(xs, xs, "rising")], width=40, height=8, y_range=(0, 120),
                          hlines=[sp.HLine(50, "budget", "═")], vlines=[sp.VLine(30, "ridge")],
                          marks=[sp.Mark(70, 70, "now", "●")])
    body = "\n".join(chart_rows(lines))
    assert "═" in body and "┊" in body and "●" in body
    assert "══ budget" in lines and "┊  ridge" in lines and "●  now" in lines


def test_nan_points_are_left_out():
    xs = np.arange(1, 11, dtype=float)
    ys = np.where(xs > 5, np.nan, xs)
    lines = sp.line_chart([sp.Series(xs, ys, "")], width=30, height=5, x_range=(1, 10))
    last = [max((i for i, ch in enumerate(r) if 0x2800 < ord(ch) <= 0x28FF), default=0) for r in chart_rows(lines)]
    assert 0 < max(last) < 20


@pytest.mark.parametrize("width", [40, 86])
def test_every_tab_fits_its_width(sim, width):
    tabs = [sp.roofline_lines(sim.roofline(), width, 10), sp.spec_lines(sim.spec(), width, 10),
            sp.concurrency_lines(sim.concurrency_curve(), width, 10), sp.cost_tpot_lines(sim.cost_tpot(), width, 10)]
    for lines in tabs:
        for row in chart_rows(lines):
            assert len(row) <= width, row
        ticks = [lines[i + 1] for i, line in enumerate(lines) if "└" in line and i + 1 < len(lines)]
        assert all(len(t) <= width for t in ticks)


def test_roofline_text_says_the_ridge_and_units(sim):
    lines = sp.roofline_lines(sim.roofline(), 60, 10)
    text = "\n".join(lines)
    assert "FLOP/s" in text and "FLOP per byte" in text and "ridge = peak ÷ bandwidth = 295 FLOP/B" in text
    assert "● now, batch 286" in text.replace("●  now", "● now") and "○  batch 1" in text


def test_spec_text_says_where_it_turns_slower():
    small = Simulator(model="llama-3-8b", gpus="1", prompt="128", output="128", concurrency="8")
    text = "\n".join(sp.spec_lines(small.spec(), 60, 10))
    assert "From 200 in flight it is slower" in text
    assert "1× break-even" in text and "speedup (×)" in text


def test_concurrency_text_has_the_course_table(sim):
    lines = sp.concurrency_lines(sim.concurrency_curve(), 60, 10)
    table = [line.split() for line in lines if line.strip().startswith(("1,024", "4,096", "32,768", "131,072"))]
    assert [row[-1] for row in table] == ["501", "125", "15", "3"]


def test_cost_text_marks_the_cheapest_batch_within_budget(sim):
    text = "\n".join(sp.cost_tpot_lines(sim.cost_tpot(), 60, 12))
    assert "TPOT budget 50.0 ms" in text and "◆  cheapest within budget" in text
    assert "$ per million output tokens" in text and "ms per token" in text


def test_results_rank_every_lever(sim):
    lines = sp.results_lines(sim.result, 60)
    assert lines[0].startswith("Verdict") and "KV cache caps the batch" in lines[0]
    start = next(i for i, line in enumerate(lines) if line.startswith("Levers, ranked"))
    bars = lines[start + 1: start + 10]
    assert all(line.rstrip().endswith(("×", "★ best")) for line in bars)
    assert "★ best" in bars[0] and "█" in bars[0]
    assert bars[-1].rstrip().endswith("1.00×") and "█" not in bars[-1]  # bars start at 1×


def test_compare_lines(sim):
    assert "Nothing is pinned yet." in sp.compare_lines(None, sim.result, [], [])
    other = Simulator(gpus="8")
    rows = compare(sim.result, other.result)
    lines = sp.compare_lines(sim.result, other.result, rows, changed_inputs(sim.result, other.result))
    assert "Changed: gpus 4 → 8" in lines
    assert any(line.startswith("max concurrency") and "2.84×" in line and "✓ better" in line for line in lines)
