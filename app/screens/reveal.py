"""The reveal: the grade, the player's answer beside the engine's, why each wrong choice was
wrong for this deployment, every lever's gain ranked, the roofline, and the full derivation."""
from __future__ import annotations

import re
import textwrap
import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from app import labels
from app.errors import Guarded
from app.plots import Point
from app.widgets.charts import LeverChart, RooflinePlot, TextBlock, columns

_DERIVATION_LABEL = re.compile(r"^([A-Z][A-Za-z/ ]{1,11}?)\s{2,}(.*)$")


def derivation_lines_for(lines: list[str], width: int) -> list[str]:
    """The engine's working as two columns: the quantity, then its arithmetic, wrapped beside it."""
    rows = []
    for line in lines:
        match = _DERIVATION_LABEL.match(line)
        if match:
            rows.append((match.group(1).strip(), labels.humanize(match.group(2))))
        else:
            rows.append(("", labels.humanize(line)))
    key_w = 12
    return columns(rows, [key_w, max(20, width - key_w - 1)])


def bullets(items: list[str], width: int) -> list[str]:
    out = []
    for item in items:
        out += textwrap.wrap(item, max(20, width), initial_indent="• ", subsequent_indent="  ") or ["•"]
    return out


def comparison_rows(prediction: dict, key, grade) -> list[tuple[str, str, str, str]]:
    """(part, yours, the engine's, ✓/✗) for every part of the prediction."""
    from puzzles.reasons import REASONS

    parts = getattr(grade, "parts", {})

    def mark(name: str) -> str:
        return "✓" if parts.get(name) else "✗"

    gain = f" ({key.gain:.2f}×)" if getattr(key, "gain", None) else ""
    rows = [
        ("", "You", "The engine", ""),
        ("Bottleneck", labels.bottleneck(prediction["bottleneck"]), labels.bottleneck(key.bottleneck), mark("bottleneck")),
        ("Best lever", labels.lever(prediction["lever"]), labels.lever(key.best_lever), mark("lever")),
        ("Its gain", labels.band(prediction["gain_band"]), labels.band(key.gain_band) + gain, mark("gain_band")),
        ("Because", REASONS.get(prediction["reason"], prediction["reason"]), REASONS.get(key.reason, key.reason),
         mark("reason")),
    ]
    for result in getattr(grade, "estimates", ()):
        yours = "—" if result.value is None else f"{result.value:,.4g}"
        rows.append((labels.estimate_short(result.name), yours, f"{result.truth:,.4g}", "✓" if result.right else "✗"))
    rows.append(("Certainty", prediction["certainty"], "", ""))
    return rows


def comparison_lines(rows, width: int) -> list[str]:
    label_w, mark_w = 13, 1
    cell = max(10, (width - label_w - mark_w - 3) // 2)
    return columns(rows, [label_w, cell, cell, mark_w])


class RevealScreen(Guarded, Screen):
    """What the engine found, and how the locked-in answer fared."""

    HELP = """\
## The reveal

Your grade first — ✓ cleared (right answer, right reason), ~ lucky (right answer, wrong
reason), ≈ close (wrong answer, right reason), ✗ missed — with the points your certainty
earned. Then your answer beside the engine's, why each wrong choice does not hold here, every
lever's gain, where the deployment sits against the ridge, and the full derivation.

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

    def __init__(self, puzzle, prediction: dict, key, grade, hints_used: int, attempt=None,
                 started: float | None = None) -> None:
        super().__init__(id="reveal")
        self.puzzle = puzzle
        self.prediction = prediction
        self.key = key
        self.grade = grade
        self.hints_used = hints_used
        self.attempt = attempt
        self.started = started
        self.drawn_at: float | None = None
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
        grade, key = self.grade, self.key
        left, right = self._column_widths()
        self.set_class(self.app.size.width >= self.WIDE, "-wide")
        self.set_class(self.app.size.width < self.WIDE, "-narrow")
        yield Header()
        with VerticalScroll(id="reveal-body"):
            symbol, word = labels.OUTCOMES.get(grade.outcome, ("?", grade.outcome))
            sign = "+" if grade.points > 0 else ""
            hint_note = f", {self.hints_used} hint{'s' if self.hints_used != 1 else ''} taken" if self.hints_used else ""
            banner = (f"{symbol} {word.upper()}   {sign}{grade.points} points   "
                      f"(certainty {self.prediction['certainty']}{hint_note})")
            feedback = [labels.humanize(line) for line in getattr(grade, "feedback", ())]
            if feedback:
                banner += "\n" + feedback[0]
            yield Static(banner, id="verdict", classes=f"-{grade.outcome}", markup=False)
            rows = comparison_rows(self.prediction, key, grade)
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
                    why_not = self.why_not_lines()
                    yield TextBlock(lambda w: bullets(why_not, w), title="Why the other choices do not hold here",
                                    width_hint=left, id="why-not")
                with Vertical(id="reveal-right", classes="reveal-column"):
                    yield LeverChart([(lv.name, lv.gain, labels.humanize(lv.note)) for lv in key.levers],
                                     key.best_lever, self.prediction["lever"], label=labels.lever,
                                     title="Every lever, ranked by its gain", width_hint=right, id="lever-chart")
                    roofline = self.roofline(right)
                    if roofline is not None:
                        yield roofline
                    derivation = list(key.derivation)
                    yield TextBlock(lambda w: derivation_lines_for(derivation, w),
                                    title="The derivation, with this deployment's numbers", width_hint=right,
                                    id="derivation")
        yield Footer()

    def why_not_lines(self) -> list[str]:
        from engine.analysis import VERDICTS
        from puzzles.explain import why_not_verdict
        from puzzles.reasons import REASONS, reason_fact

        key, puzzle = self.key, self.puzzle
        lines = [labels.humanize(why_not_verdict(v, key)) for v in VERDICTS if v != key.bottleneck]
        for reason in getattr(puzzle, "reasons", ()):
            if reason != key.reason:
                lines.append(f"‘{REASONS.get(reason, reason)}’: {labels.humanize(reason_fact(reason, key.solution))}")
        return lines

    def roofline(self, width_hint: int = 0) -> RooflinePlot | None:
        report = self.key.solution.report
        if not report.fits or not report.intensity:
            return None
        bandwidth = report.deployment.gpu.bandwidth_tbps * 1e12
        points = [Point("this deployment, decoding", report.intensity, "●")]
        best = next((lv for lv in self.key.levers if lv.name == self.key.best_lever), None)
        after = getattr(best, "report", None)
        if after is not None and after.fits and after.intensity and after.peak_flops == report.peak_flops:
            points.append(Point(f"after {labels.lever(best.name)}", after.intensity, "◆"))
        return RooflinePlot(report.peak_flops, bandwidth, points, height=12, id="roofline",
                            title="Where this deployment sits on the roofline", width_hint=width_hint)

    def on_mount(self) -> None:
        self.sub_title = f"Reveal: {self.puzzle.title}"
        self.query_one("#reveal-body").focus()
        self.call_after_refresh(self._drawn)

    def _drawn(self) -> None:
        self.drawn_at = time.perf_counter()

    # -- what next -------------------------------------------------------------------------
    def action_next(self) -> None:
        from app.screens.campaign import open_next

        open_next(self.app, after=self.puzzle.id, replace=True)

    def action_retry_later(self) -> None:
        if not self.queued:
            try:
                self.app.session.queue_retry(self.puzzle.id)
            except Exception as error:  # noqa: BLE001 - tell the player; the reveal stays
                self.notify(f"Could not save the retry queue: {error}", severity="error")
                return
            self.queued = True
        self.notify("Queued: it comes back after your other open puzzles.", title="Retry later")
        from app.screens.campaign import open_next

        open_next(self.app, after=self.puzzle.id, replace=True)

    def action_map(self) -> None:
        from app.screens.campaign import go_to_map

        go_to_map(self.app)

    def action_home(self) -> None:
        from app.screens.home import HomeScreen

        while len(self.app.screen_stack) > 1 and not isinstance(self.app.screen, HomeScreen):
            self.app.pop_screen()
