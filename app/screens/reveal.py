"""The reveal: the grade, the player's answer beside the engine's, why each wrong choice was
wrong for this deployment, every lever's gain ranked, the roofline, and the full derivation."""
from __future__ import annotations

import gc
import re
import textwrap

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from app import labels
from app.errors import told
from app.messages import AttemptSaved, ContinueCampaign, GoHome, OpenMap, PredictionLocked
from app.plots import Point
from app.screens.base import RidgeScreen
from app.widgets.charts import LeverChart, RooflinePlot, TextBlock, columns
from app.widgets.footer import RidgeFooter
from app.widgets.titlebar import TitleBar
from puzzles.reveal import (comparison_rows, fidelity_table, measured_start, retry_note, takeaway_lines,
                            why_not_lines)

_DERIVATION_LABEL = re.compile(r"^([A-Z][A-Za-z/ ]{1,11}?)\s{2,}(.*)$")


_LEVER_ROW = re.compile(r"^  (\S.{20}) ( *\S+x| +n/a ) {2}(.{11}) (.*)$")  # engine/derivation.py's table


def derivation_lines_for(lines: list[str], width: int) -> list[str]:
    """The engine's working as two columns: the quantity, then its arithmetic, wrapped beside it.
    The lever table's rows keep their columns, each note wrapped under itself, never back at
    the table's left edge."""
    key_w = 12
    value_w = max(20, width - key_w - 1)
    out: list[str] = []
    for line in lines:
        lever = _LEVER_ROW.match(line)
        if lever:
            name, gain, band, note = (part.strip() for part in lever.groups())
            cells = [labels.humanize(name), gain, band]
            head = f"{cells[0]:<21} {gain:>6}  {band:<11}"
            note_w = value_w - len(head) - 1
            if note_w >= 24:
                wrapped = textwrap.wrap(labels.humanize(note), note_w) or [""]
                out.append(" " * (key_w + 1) + f"{head} {wrapped[0]}".rstrip())
                out += [" " * (key_w + 1 + len(head) + 1) + rest for rest in wrapped[1:]]
            else:
                out.append(" " * (key_w + 1) + head.rstrip())
                out += [" " * (key_w + 5) + rest for rest in textwrap.wrap(labels.humanize(note), value_w - 4)]
            continue
        match = _DERIVATION_LABEL.match(line)
        row = (match.group(1).strip(), labels.humanize(match.group(2))) if match else ("", labels.humanize(line))
        out += columns([row], [key_w, value_w])
    return out


def bullets(items: list[str], width: int) -> list[str]:
    out = []
    for item in items:
        out += textwrap.wrap(item, max(20, width), initial_indent="• ", subsequent_indent="  ") or ["•"]
    return out


def fidelity_lines(table, width: int = 60) -> list[str]:
    """`fidelity_table` laid out for `width`: a long cell wraps inside its column, never back
    at the left edge."""
    if not table:
        return []
    rows, notes = table
    count = len(rows[0]) - 1
    label_w = min(max(len(row[0]) for row in rows), max(10, width // (count + 1)))
    cell = max(8, (width - label_w - count) // count)
    header = ("", "floor", "realistic", "measured")[:count + 1]
    lines = columns([header, *rows], [label_w] + [cell] * count)
    corrections = [n for n in notes if not n.startswith("measured")]
    if corrections:
        lines += textwrap.wrap("corrections that moved the realistic figures:", max(20, width))
        for line in corrections:
            lines += textwrap.wrap(line, max(20, width), initial_indent="  - ", subsequent_indent="    ")
    for line in notes:
        if line.startswith("measured"):
            lines += textwrap.wrap(line, max(20, width), subsequent_indent="  ")
    return lines


def comparison_lines(rows, width: int) -> list[str]:
    label_w, mark_w = 13, 2
    cell = max(10, (width - label_w - mark_w - 3) // 2)
    return columns(rows, [label_w, cell, cell, mark_w])


class RevealScreen(RidgeScreen):
    """What the engine found, and how the locked-in answer fared."""

    HELP = """\
## The reveal

Your grade first — ✓ cleared (right answer, right reason), ~ lucky (right answer, wrong
reason), ≈ close (wrong answer, right reason), ✗ missed — with the points your certainty
earned, and the part that decided it. Then every part judged, estimates included, yours beside
the engine's (◆ marks a part that decided the outcome), why each wrong choice does not hold
here, every lever's gain, where the deployment sits against the ridge, and the full derivation.

An estimate of the quantity that decides the puzzle is part of your reason: wrong, a right
answer is only lucky. Any other estimate is a check on your working: marked, shown, and free.
The band is the realistic gain's; the floor's gain is shown as its ceiling. A gain within 10%
of a band edge accepts both bands.

**n** next puzzle · **r** retry this one later · **m** campaign map · **Escape** home.
"""

    BINDINGS = [
        Binding("n", "next", "Next puzzle", id="reveal.next", tooltip="Go on to your next puzzle"),
        Binding("r", "retry_later", "Retry later", id="reveal.retry",
                tooltip="Put this puzzle back in your queue to try again later"),
        Binding("m", "map", "Map", id="reveal.map", tooltip="Back to the campaign map"),
        Binding("escape", "home", "Home", id="reveal.home", tooltip="Back to the home screen"),
    ]

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # keep in step with WIDE
    AUTO_FOCUS = "#reveal-body"  # arrow keys scroll the reveal from the first frame

    def __init__(self, locked: PredictionLocked) -> None:
        super().__init__(id="reveal")
        self.locked = locked  # the puzzle, prediction, key, grade, hints used and how to record it
        self.measured = None  # the measured column: a Solution, or the line shown instead
        self.attempt = None
        self.saving = None
        self.queued = False

    # -- building --------------------------------------------------------------------------
    WIDE = 110

    def _column_widths(self) -> tuple[int, int]:
        """The widths the left and right text blocks will have (body padding, scrollbar, column
        padding and block padding taken off), so their first draw is already the final one."""
        width = self.app.size.width
        if width < self.WIDE:
            return width - 5, width - 5
        inner = width - 3
        return inner // 2 - 3, inner - inner // 2 - 2

    def compose(self) -> ComposeResult:
        grade, key = self.locked.grade, self.locked.key
        left, right = self._column_widths()
        self.set_class(self.app.size.width >= self.WIDE, "-wide")
        self.set_class(self.app.size.width < self.WIDE, "-narrow")
        yield TitleBar()
        with VerticalScroll(id="reveal-body"):
            symbol, word = labels.OUTCOMES.get(grade.outcome, ("?", grade.outcome))
            sign = "+" if grade.points > 0 else ""
            hints = self.locked.hints_used
            hint_note = f", {labels.plural(hints, 'hint')} taken" if hints else ""
            banner = (f"{symbol} {word.upper()}   {sign}{grade.points} points   "
                      f"(certainty {self.locked.prediction['certainty']}{hint_note})")
            from puzzles.grading import decided_text

            feedback = [labels.humanize(line) for line in getattr(grade, "feedback", ())]
            if feedback:
                banner += "\n" + feedback[0]
            banner += "\n" + labels.humanize(decided_text(grade, labels.words))
            yield Static(banner, id="verdict", classes=f"-{grade.outcome}", markup=False)
            remember = takeaway_lines(key, self.locked.puzzle.objective, labels)
            yield TextBlock(lambda w: bullets(remember, w), title="What to remember",
                            width_hint=self.app.size.width - 5, id="takeaway")
            rows = comparison_rows(self.locked.prediction, key, grade, labels)
            with Horizontal(id="reveal-columns"):
                with Vertical(id="reveal-left", classes="reveal-column"):
                    yield TextBlock(lambda w: comparison_lines(rows, w), title="Your answer and the engine's",
                                    width_hint=left, id="comparison")
                    if len(feedback) > 1:
                        yield TextBlock(lambda w: bullets(feedback[1:], w), title="Part by part",
                                        width_hint=left, id="feedback")
                    misconceptions = [m.text for m in getattr(grade, "misconceptions", ())]
                    if misconceptions:
                        yield TextBlock(lambda w: bullets(misconceptions, w), title="A slip worth naming",
                                        width_hint=left, id="misconceptions")
                    why_not, other_reasons = why_not_lines(self.locked.puzzle, key, labels)
                    yield TextBlock(lambda w: bullets(why_not, w), title="Why not the other bottlenecks",
                                    width_hint=left, id="why-not")
                    if other_reasons:
                        yield TextBlock(lambda w: bullets(other_reasons, w),
                                        title="The other reasons on offer, measured here", width_hint=left,
                                        id="other-reasons")
                with Vertical(id="reveal-right", classes="reveal-column"):
                    chart_title = ("Every lever, ranked by its realistic gain" if key.realistic is not None
                                   else "Every lever, ranked by its gain")
                    yield LeverChart([(lv.name, lv.gain, labels.humanize(lv.note)) for lv in key.band_levers],
                                     key.best_lever, self.locked.prediction["lever"], label=labels.lever,
                                     title=chart_title, width_hint=right, id="lever-chart")
                    self.measured = measured_start(key)
                    if fidelity_table(key, labels) is not None:
                        yield TextBlock(lambda w: fidelity_lines(fidelity_table(key, labels, self.measured), w),
                                        title="The course's floor, the realistic figure and measured kernels",
                                        width_hint=right, id="fidelities")
                    roofline = self.roofline(right)
                    if roofline is not None:
                        yield roofline
                    derivation = list(key.derivation)
                    yield TextBlock(lambda w: derivation_lines_for(derivation, w),
                                    title="The derivation, with this deployment's numbers", width_hint=right,
                                    id="derivation")
        yield RidgeFooter()

    def roofline(self, width_hint: int = 0) -> RooflinePlot | None:
        report = self.locked.key.solution.report
        if not report.fits or not report.intensity:
            return None
        bandwidth = report.deployment.gpu.bandwidth_tbps * 1e12
        points = [Point("this deployment, decoding", report.intensity, "●")]
        best = next((lv for lv in self.locked.key.levers if lv.name == self.locked.key.best_lever), None)
        after = getattr(best, "report", None)
        if after is not None and after.fits and after.intensity and after.peak_flops == report.peak_flops:
            points.append(Point(f"after {labels.lever(best.name)}", after.intensity, "◆"))
        return RooflinePlot(report.peak_flops, bandwidth, points, height=12, id="roofline",
                            title="Where this deployment sits on the roofline", width_hint=width_hint)

    def on_mount(self) -> None:
        self.sub_title = f"Reveal: {self.locked.puzzle.title}"
        if self._taller_than_the_terminal():
            # Textual finds out that the body scrolls only after the first layout, then adds the
            # scrollbar and lays everything out again: the first frame would have no scrollbar
            # and the right column one cell off. Claimed now, the first frame is the final one.
            self.query_one("#reveal-body", VerticalScroll).show_vertical_scrollbar = True
        self.call_after_refresh(self._drawn)

    def _taller_than_the_terminal(self) -> bool:
        """Sure to scroll: the blocks' own lines (already drawn for their widths; margins and
        lines Textual wraps only add to them) outnumber the terminal's rows. When unsure, the
        scrollbar is left to Textual, as a wrong guess would resize every block twice."""
        charts = "TextBlock, LeverChart, RooflinePlot"
        left, right = (sum(chart.drawn_lines for chart in self.query_one(column).query(charts))
                       for column in ("#reveal-left", "#reveal-right"))
        rows = max(left, right) if self.has_class("-wide") else left + right
        return rows > self.app.size.height

    def _drawn(self) -> None:
        """Called after the first refresh: collect garbage again (the lock-in paused it), and write
        the attempt."""
        gc.enable()
        if self.locked.locked_at is not None:
            self.saving = self._save()
        from engine.compare import PENDING

        if self.measured == PENDING:
            self.measure_column()

    @work(thread=True, group="measured", exclusive=True, exit_on_error=False, name="measured kernels")
    def measure_column(self) -> None:
        """Fill the measured column off the UI thread: the first estimate for a model and
        accelerator builds an engine (seconds), so the reveal never waits for it."""
        from engine.compare import measure

        key = self.locked.key
        self.app.call_from_thread(self.measured_arrived, measure(getattr(key, "realistic", None) or key.solution))

    def measured_arrived(self, result) -> None:
        self.measured = result
        for block in self.query("#fidelities"):
            block.redraw_same_width()

    @work(thread=True, group="save", exit_on_error=False, name="save attempt")
    def _save(self) -> None:
        """Write the locked-in attempt (in a worker thread) and post what came of it; a failure
        is told, not fatal."""
        try:
            locked = self.locked
            attempt = self.app.session.record(locked.puzzle, locked.grade, locked.hints_used, locked.seconds,
                                              locked.locked_at)
        except Exception as error:  # noqa: BLE001 - the reveal still teaches; say it was not saved
            from saves.crash_log import log_exception

            path = log_exception(error, self.app.log_file, "recording an attempt")
            line = str(error).splitlines()[0] if str(error) else type(error).__name__
            self.app.call_from_thread(self.notify, f"This attempt could not be saved: {line}. Details in {path}",
                                      severity="error", timeout=10)
            self.post_message(AttemptSaved(None, error))
            return
        self.post_message(AttemptSaved(attempt))

    @on(AttemptSaved)
    def _attempt_saved(self, message: AttemptSaved) -> None:
        self.attempt = message.attempt

    async def saved(self) -> None:
        """Wait until the attempt is written (the next puzzle depends on it)."""
        if self.saving is not None and not self.saving.is_finished:
            await self.saving.wait()

    # -- what next: asked of the app, once the attempt is written ---------------------------
    async def action_next(self) -> None:
        await self.saved()
        self.post_message(ContinueCampaign(after=self.locked.puzzle.id, replace=True))

    async def action_retry_later(self) -> None:
        await self.saved()
        if not self.queued:
            try:
                self.app.session.queue_retry(self.locked.puzzle.id)
            except Exception as error:  # noqa: BLE001 - tell the player; the reveal stays
                self.notify(told(f"Could not save the retry queue: {error}"), severity="error")
                return
            self.queued = True
        self.notify(retry_note(self.app.session.returns_after(self.locked.puzzle.id), labels), title="Retry later")
        self.post_message(ContinueCampaign(after=self.locked.puzzle.id, replace=True))

    async def action_map(self) -> None:
        await self.saved()
        self.post_message(OpenMap())

    async def action_home(self) -> None:
        await self.saved()
        self.post_message(GoHome())
