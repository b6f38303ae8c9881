"""Stats: mastery per chapter, outcomes over time, and calibration — how often the player is
right at each certainty level, against the rate at which that level starts to pay."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Label, Static

from app import labels, plots
from app.screens.base import RidgeScreen
from app.widgets.footer import RidgeFooter
from app.widgets.titlebar import TitleBar
from puzzles.stats import calibration_lines, outcome_lines


class StatsScreen(RidgeScreen):
    """The player's derived figures; nothing here is stored, all recomputed from attempts."""

    HELP = """\
## Stats

**Mastery** per chapter is the share of the puzzles you have tried whose latest attempt was
cleared. **Recall by concept** is the spaced-repetition schedule's chance that you would get
each concept right now (or on your exam's morning, once you set a date): every drill answer and
every campaign, exam or match answer counts, as a recall of the concept that decided the key,
so this agrees with home and `ridge drill plan`. **Outcomes over time** lists your active days: ✓ cleared, ~ lucky, ≈ close, ✗ missed.
**Calibration** compares how often you clear a puzzle at each certainty level with the rate at
which that level starts to pay: saying *high* pays only above four right in five.
"""

    BINDINGS = [Binding("escape", "back", "Back", id="stats.back", tooltip="Back")]

    def __init__(self) -> None:
        super().__init__(id="stats")

    def compose(self) -> ComposeResult:
        session = self.app.session
        stats = session.stats
        yield TitleBar()
        with VerticalScroll(id="stats-body"):
            plural = labels.plural
            yield Static(
                f"{session.name}: {plural(stats.score, 'point')} from {plural(stats.attempts, 'attempt')}, "
                f"{plural(stats.hints_used, 'hint')} taken; streak {plural(stats.streak_days, 'day')}, "
                f"longest {plural(stats.longest_streak_days, 'day')}", id="stats-summary", markup=False)
            yield Label("Mastery by chapter", classes="section-title")
            bars = []
            for ch in session.chapters:
                prog = session.progress(ch)
                shown = f"{prog.mastery:.0%}" if prog.tried else "not tried"
                bars.append(plots.Bar(f"{ch.number}. {ch.title}", prog.mastery, shown,
                                      f"{prog.cleared}/{prog.total} cleared"))
            width = max(60, min(110, self.app.size.width - 6))
            yield Static("\n".join(plots.bar_chart(bars, width=width, label_share=0.5, top=1.0, track="░")),
                         id="mastery", markup=False)
            from puzzles.readiness import recall_by_concept

            heading, rows = recall_by_concept(session.profile, self.app.now())
            recall = [plots.Bar(row.label, row.value, row.shown) for row in rows]
            yield Label("Recall by concept", classes="section-title")
            yield Static(heading + "\n" + "\n".join(plots.bar_chart(recall, width=width, label_share=0.5, top=1.0,
                                                                     track="░")), id="recall", markup=False)
            yield Label("Outcomes over time", classes="section-title")
            recent = [a.outcome for a in session.attempts]
            strip = plots.outcome_strip(recent, 60)
            yield Static((f"Last {len(strip)}: {strip}\n\n" if strip else "")
                         + "\n".join(outcome_lines(stats.outcomes_over_time, labels.outcome_symbol)), id="outcomes", markup=False)
            yield Label("Calibration: are you as sure as you should be?", classes="section-title")
            yield Static("\n".join(calibration_lines(stats.calibration)), id="calibration", markup=False)
        yield RidgeFooter()

    def on_mount(self) -> None:
        self.sub_title = "Stats"
        self.query_one("#stats-body").focus()
