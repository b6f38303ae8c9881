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
from engine.ids import Certainty
from puzzles.scoring import pays_above

# The share of right answers above which each certainty level earns more than the one below it,
# read from the marking table (medium beats low above 2/3, high beats medium above 4/5).
PAYS_ABOVE = {c: pays_above(c) for c in Certainty}
FEW = 5


def calibration_lines(calibration: dict) -> list[str]:
    """One row per certainty level: answers, cleared share, where it pays, and a verdict."""
    rows = [f"{'certainty':<10} {'answers':>7} {'cleared':>8}  {'pays above':>10}  verdict"]
    for level in (Certainty.LOW, Certainty.MEDIUM, Certainty.HIGH):
        cal = calibration.get(level)
        count = getattr(cal, "count", 0)
        share = getattr(cal, "share_cleared", None)
        shown = "—" if share is None else f"{share:.0%}"
        pays = "always" if level == Certainty.LOW else f"{PAYS_ABOVE[level]:.0%}"
        if count < FEW:
            verdict = f"too few to say ({count} of {FEW})"
        elif level == Certainty.HIGH and share < PAYS_ABOVE[Certainty.HIGH]:
            verdict = "over-confident: say medium more often"
        elif level == Certainty.MEDIUM and share < PAYS_ABOVE[Certainty.MEDIUM]:
            verdict = "over-confident: say low more often"
        elif level == Certainty.MEDIUM and share > PAYS_ABOVE[Certainty.HIGH]:
            verdict = "under-confident: high would pay"
        elif level == Certainty.LOW and share > PAYS_ABOVE[Certainty.MEDIUM]:
            verdict = "under-confident: medium would pay"
        else:
            verdict = "well judged"
        rows.append(f"{level:<10} {count:>7} {shown:>8}  {pays:>10}  {verdict}")
    return rows


def outcome_lines(over_time: dict, days: int = 14) -> list[str]:
    """The last `days` active days, each with its outcomes as symbols and counts."""
    lines = []
    for day, counts in list(over_time.items())[-days:]:
        marks = "".join(labels.outcome_symbol(o) * n for o, n in counts.items())
        summary = ", ".join(f"{n} {o}" for o, n in counts.items() if n)
        lines.append(f"{day}  {marks[:30]:<30}  {summary}")
    return lines or ["No attempts yet: your results will build up here, day by day."]


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
                         + "\n".join(outcome_lines(stats.outcomes_over_time)), id="outcomes", markup=False)
            yield Label("Calibration: are you as sure as you should be?", classes="section-title")
            yield Static("\n".join(calibration_lines(stats.calibration)), id="calibration", markup=False)
        yield RidgeFooter()

    def on_mount(self) -> None:
        self.sub_title = "Stats"
        self.query_one("#stats-body").focus()
