"""The prediction form: bottleneck, best lever, size of its gain, the reason, numeric estimates
where the puzzle asks for them, and how sure the player is. Locking it makes every part read-only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Label

from app import labels
from puzzles.napkin import NapkinError, evaluate, format_number, measure
from app.widgets.inputs import OrderedInput
from app.widgets.picker import ChoiceList, Picker

if TYPE_CHECKING:
    from puzzles.cards import FormSpec

CERTAINTY_STAKES = {"low": "+10 or 0", "medium": "+20 or −20",  # points if right, or if wrong
                    "high": "+30 or −60"}


FIELD_HELP = {
    "bottleneck": """\
## Bottleneck

What bounds the figure this puzzle asks you to lower, so only the verdicts that can bound it are
offered. For cost, the whole deployment, judged in order: does it fit at all; does the KV cache
cap the batch below what the traffic wants; does prompt processing (prefill) take most of the GPU
time; and during decode, is a step limited by its arithmetic, by reading the KV cache, or by
reading the weights? For the time per output token, what bounds one decode step. For the time to
first token (and a stream's longest pause), what bounds one request's prefill: its arithmetic,
or reading the weights.""",
    "lever": """\
## Best lever

The one change that most improves the puzzle's objective here. Every lever is tried by the
engine after you lock in, and you will see all of them ranked.""",
    "band": """\
## Size of the gain

How much the best lever improves the objective: the value before divided by the value after.
Pick the band you expect. The band is keyed on the realistic estimate, not on the course's
floor, which is only a ceiling (halving the bytes gains 2x at the floor, less on real
hardware). When the gain lies within 10% of the edge between two bands, both bands are
accepted. A deployment that does not fit has no gain to measure: a lever that makes it fit
counts as over 4x, and the best one fits with the best objective.""",
    "reason": """\
## Reason

The quantity that decides the answer. The right answer with the wrong reason grades as
*lucky*; the right reason with a wrong answer grades as *close*. Any reason that holds and
decides here is right, not only the one the key names.""",
    "estimates": """\
## Estimates

Numbers the puzzle asks you to work out, right within a factor of 1.5 either way (a log
scale). An estimate of the quantity that decides the puzzle is part of your reason: wrong, a
right answer is only *lucky*, and the reveal says so. Any other estimate is a check on your
working: it is marked beside the engine's value and costs nothing. You may type arithmetic
here, just as on the napkin: `2 * 8 * 128 * 80 * 2`.""",
    "certainty": """\
## Certainty

How sure you are. High certainty pays most when you are right and costs most when you are
wrong, so it only pays to say *high* when you are right more than four times in five, and
*medium* when you are right more than two times in three.""",
}


class FormField(Vertical):
    """A label above one control, carrying the help text F1 shows for it."""

    DEFAULT_CSS = """
    FormField {
        height: auto;
        padding: 0 1;
        & > .field-label { color: $text-muted; width: 1fr; margin-top: 1; }
        & > .field-note { color: $text-muted; padding-left: 2; width: 1fr; }
        & > .field-note.-error { color: $text-error; }
    }
    """

    def __init__(self, title: str, *children, help_text: str = "", **kwargs) -> None:
        super().__init__(Label(title, classes="field-label", markup=False), *children, **kwargs)
        self.ridge_help = help_text


class PredictionForm(Vertical):
    """The whole prediction. `prediction()` returns ids; `missing()` names what is unanswered."""

    HELP = FIELD_HELP["bottleneck"]

    DEFAULT_CSS = """
    PredictionForm {
        height: auto;
        & FormField { border-left: blank; }
        & FormField:focus-within { border-left: thick $accent; }
        & Input { width: 1fr; }
    }
    """

    @dataclass
    class Changed(Message):
        """Some part of the prediction changed."""

        form: PredictionForm

        @property
        def control(self) -> "PredictionForm":
            return self.form

    def __init__(self, spec: FormSpec, cursor_blink: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self._cursor_blink = cursor_blink
        self.frozen = False

    def compose(self) -> ComposeResult:
        spec = self.spec
        yield FormField(
            spec.bottleneck_question,
            Picker([(labels.bottleneck(b), b) for b in spec.bottlenecks], prompt="choose the bottleneck",
                   id="bottleneck"),
            help_text=FIELD_HELP["bottleneck"], id="field-bottleneck")
        yield FormField(
            "Best lever",
            Picker([(labels.lever(lv), lv) for lv in spec.levers], prompt="choose a lever", id="lever"),
            help_text=FIELD_HELP["lever"], id="field-lever")
        yield FormField(
            "Its gain",
            Picker([(labels.band(b), b) for b in spec.bands], prompt="choose a size", id="band"),
            Label("Within 10% of a band edge, both bands count.", classes="field-note", markup=False),
            help_text=FIELD_HELP["band"], id="field-band")
        if spec.reasons:
            yield FormField(
                "Because",
                Picker([(text, rid) for rid, text in spec.reasons], prompt="choose the deciding quantity",
                       id="reason"),
                help_text=FIELD_HELP["reason"], id="field-reason")
        for est in spec.estimates:
            title = spec.estimate_labels.get(est) or labels.estimate(est)
            yield FormField(
                f"Estimate: {title}",
                OrderedInput(placeholder=("a number or a sum, e.g. 12 ms" if est.endswith("_seconds")
                                   else "a number or a sum, e.g. 2 * 80 * 8"), compact=True, id=f"est-{est}"),
                Label("", id=f"est-{est}-note", classes="field-note", markup=False),
                help_text=FIELD_HELP["estimates"], classes="estimate")
        yield FormField(
            "How sure are you? (points if right, or wrong)",
            ChoiceList([(f"{c}: {CERTAINTY_STAKES.get(c, '')}", c) for c in spec.certainties], id="certainty"),
            help_text=FIELD_HELP["certainty"], id="field-certainty")

    def on_mount(self) -> None:
        for field_input in self.query(Input):
            field_input.cursor_blink = self._cursor_blink

    # -- reading the form ----------------------------------------------------------------
    def _select_value(self, widget_id: str) -> str:
        if not self.query(f"#{widget_id}"):
            return ""
        value = self.query_one(f"#{widget_id}", Picker).value
        return "" if value is Picker.NULL or value is None else str(value)

    def certainty(self) -> str:
        value = self.query_one("#certainty", ChoiceList).value
        return "" if value is ChoiceList.NULL else str(value)

    def estimates(self) -> dict[str, float]:
        out = {}
        for est in self.spec.estimates:
            text = self.query_one(f"#est-{est}", Input).value
            if text.strip():
                try:
                    out[est] = evaluate(text)
                except NapkinError:
                    pass
        return out

    def prediction(self) -> dict:
        """The prediction as ids: bottleneck, lever, gain_band, reason, certainty, estimates."""
        if self.frozen:
            return dict(self._snapshot)
        return {
            "bottleneck": self._select_value("bottleneck"),
            "lever": self._select_value("lever"),
            "gain_band": self._select_value("band"),
            "reason": self._select_value("reason"),
            "certainty": self.certainty(),
            "estimates": self.estimates(),
        }

    def missing(self) -> list[tuple[str, str]]:
        """(what, widget id) for every part still unanswered, in form order."""
        p = self.prediction()
        gaps = []
        for key, wid, what in (("bottleneck", "bottleneck", "the bottleneck"), ("lever", "lever", "the best lever"),
                               ("gain_band", "band", "the size of its gain")):
            if not p[key]:
                gaps.append((what, wid))
        if self.spec.reasons and not p["reason"]:
            gaps.append(("the reason", "reason"))
        for est in self.spec.estimates:
            text = self.query_one(f"#est-{est}", Input).value
            if not text.strip() or est not in p["estimates"]:
                gaps.append((f"the estimate of {labels.estimate(est)}", f"est-{est}"))
        if not p["certainty"]:
            gaps.append(("how sure you are", "certainty"))
        return gaps

    def is_dirty(self) -> bool:
        p = self.prediction()
        return any(p[k] for k in ("bottleneck", "lever", "gain_band", "reason", "certainty")) or bool(p["estimates"])

    # -- changes -------------------------------------------------------------------------
    @on(Picker.Changed)
    def _select_changed(self, event: Picker.Changed) -> None:
        self.post_message(self.Changed(self))

    @on(ChoiceList.Changed)
    def _certainty_changed(self) -> None:
        self.post_message(self.Changed(self))

    @on(Input.Changed)
    def _estimate_changed(self, event: Input.Changed) -> None:
        if not (event.input.id or "").startswith("est-"):
            return
        note = self.query_one(f"#{event.input.id}-note", Label)
        text = event.value.strip()
        if not text:
            note.update("")
            note.remove_class("-error")
        else:
            try:
                note.update(f"= {format_number(*measure(text))}")
                note.remove_class("-error")
            except NapkinError as error:
                note.update(f"✗ {error}")
                note.add_class("-error")
        self.post_message(self.Changed(self))

    def freeze(self) -> None:
        """Lock-in: from now on `prediction()` returns this snapshot, whatever the controls say,
        and the controls stop taking input. Nothing here changes the form's look: the puzzle
        screen is replaced by the reveal at once, and disabling the controls or adding a class
        would restyle the whole form (about 15 ms) for a frame no one sees."""
        self._snapshot = self.prediction()
        self.frozen = True
        for control in self.query("Picker, Input, ChoiceList"):
            control.can_focus = False
