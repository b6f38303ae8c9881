"""The serving simulator: every input of a deployment on the left, its results and plots on the
right, recomputed on every keystroke. With predict-first on, the results stay hidden behind a
prediction (bottleneck, best lever, size of its gain) until the player locks it in.

The state and the plots' data live in `engine.sim`, predict-first grading in `puzzles.sim`, saving
as a puzzle in `saves.own_pack` and the text in `app.plots`, all free of Textual; this screen only wires widgets to them. Plots are drawn for the visible tab only and
redrawn for the others when they are shown.
"""
from __future__ import annotations

import textwrap
import time
from pathlib import Path
from weakref import WeakKeyDictionary

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Key, Resize
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import (Button, Collapsible, Header, Input, Static, Switch,
                             TabbedContent, TabPane)

from app import labels
from app import plots as sp
from app.errors import told
from saves.crash_log import log_exception
from app.screens.base import RidgeScreen
from app.widgets.footer import RidgeFooter
from app.widgets.inputs import OrderedInput
from app.widgets.picker import Picker
from app.widgets.sheet import Sheet, SheetRow, SheetTitle
from engine.errors import RidgeError
from engine.ids import Outcome
from engine.sim.inputs import FIELD_BY_NAME, FIELDS, Field, player_words
from engine.sim.result import changed_inputs
from engine.sim.state import Simulator
from puzzles.sim import grade_lines, grade_prediction, knee_lines
from saves import own_pack

TABS = (("tab-results", "Results"), ("tab-roofline", "Roofline"), ("tab-spec", "Spec"),
        ("tab-kv", "KV"), ("tab-cost", "Cost"), ("tab-load", "Load"), ("tab-compare", "A/B"))

TAB_HELP = {
    "tab-results": "The headline figures of the deployment, every lever ranked on the objective, and the "
                   "engine's worked derivation.",
    "tab-roofline": "The roofline: FLOP/s the GPUs can reach at each arithmetic intensity, the ridge, and "
                    "where this deployment's decode step sits as its batch changes.",
    "tab-spec": "Speculative decoding's speedup against batch size: above 1× it helps, below 1× it hurts.",
    "tab-kv": "How many sequences the KV cache holds against the average sequence length.",
    "tab-cost": "Cost per million output tokens and TPOT against batch size, with a TPOT budget you set.",
    "tab-load": "The deployment under traffic, request by request: time to first token and per output token "
                "(P50 and P99) and goodput as the offered rate rises, the SLO lines, the knee and the capacity "
                "marked, and the queue over one run at the rate you set. With predict first on, say where the "
                "knee is before the curves show.",
    "tab-compare": "The pinned deployment A beside the current one B, quantity by quantity, with B/A.",
}

LOAD_PREDICT = ("Predict first: past what rate does the slowest 1% of first tokens take off? Type your knee in "
                "requests per second above and press Enter; the curves follow.")

PREDICT_HELP = """\
## Predict first

Before the numbers show, say what limits this deployment, which single lever would help its
objective most, and by roughly how much. Lock in with **l** or the button; the engine then grades
you the way puzzles are graded (the gain band may be the neighbouring one when the true gain sits
within 10% of the edge). Changing any input asks again. Press **f** to switch predicting off.
"""


class NumberInput(OrderedInput):
    """A one-line Input for a number. Letters other than `e` (and the tab keys [ ]) pass through
    to the screen's key bindings instead of being swallowed. Its width is fixed by the stylesheet,
    so a keystroke repaints the field without laying out the whole screen again."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def __init__(self, *args, **kwargs) -> None:
        # Validating the first value sets the -valid class before the field is mounted, and so
        # styles it once more (a millisecond per field on opening): validation starts on mount.
        kwargs.setdefault("validate_on", ())
        super().__init__(*args, **kwargs)

    def on_mount(self) -> None:
        self.validate_on = {"blur", "changed", "submitted"}

    @staticmethod
    def _not_numeric(char: str | None) -> bool:
        return bool(char) and (char.isalpha() and char not in "eE" or char in "[]")

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return super().check_consume_key(key, character) and not self._not_numeric(character)

    async def on_key(self, event: Key) -> None:
        if event.is_printable and self._not_numeric(event.character):
            event.prevent_default()  # skip Input's own handler; the key bubbles on to the bindings


def wrap_lines(lines: list[str], width: int) -> list[str]:
    """Lines folded to `width` at spaces, continuation lines indented by two, so the widget never
    wraps by itself and its height is simply the number of lines."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip(" "))
        out += textwrap.wrap(line, width=width, subsequent_indent=" " * (indent + 2), break_long_words=True,
                             break_on_hyphens=False, drop_whitespace=True) or [""]
    return out


LABEL_WIDTH = 13          # the fields' label column, its padding included
PREDICT_LABEL_WIDTH = 14  # the prediction's
SWITCH_WIDTH = 4          # a switch, borderless (its on/off follows it)
BUDGET_WIDTH = 10         # the TPOT budget field (its "ms" follows it)
INPUTS_WIDTH = 36  # the inputs column, its border included (#sim-inputs in simulator.tcss)
MAIN_PADDING = 1  # the results column's left padding (#sim-main)
ERROR_WIDTH = 31  # the inputs column less its padding, scrollbar and the message's indent


# The text each Static of this screen shows, as set_text last set it (a Static keeps no public copy).
_SHOWN: WeakKeyDictionary[Static, str] = WeakKeyDictionary()


def _shown(widget: Static, text: str) -> Static:
    """A Static made showing `text`, known to `set_text`."""
    _SHOWN[widget] = text
    return widget


def set_text(widget: Static, text: str) -> bool:
    """Show `text` in `widget`; a full layout only when its number of lines changes. False when the
    text was already showing."""
    old = _SHOWN.get(widget)
    if old == text:
        return False
    same_height = old is not None and old.count("\n") == text.count("\n")
    _SHOWN[widget] = text
    widget.update(text, layout=not same_height)
    return True


class SimulatorScreen(RidgeScreen):
    """Edit a deployment and watch every figure and plot follow; optionally predict first."""

    CSS_PATH = str(Path(__file__).resolve().parent.parent / "simulator.tcss")
    SUB_TITLE = "Serving simulator"  # set before the header is composed: no retitling after the first frame

    HELP = """\
## The serving simulator

Every input of a deployment is on the left; every result and plot on the right follows as you
type. A value that makes no sense, or a deployment that does not fit, gets a message beside its
field, and the last good results stay on show until it is fixed.

Tabs: **Results** (figures and ranked levers), **Roofline**, **Spec** (speculative decoding
against batch), **KV** (concurrency against sequence length), **Cost** (cost and TPOT against
batch, with your TPOT budget), **Load** (percentiles, goodput and the knee under traffic, at the
rate and SLOs you set) and **A/B** (compare with a pinned deployment).

Leaving keeps the simulator as it is: the deployment, your prediction, the pinned A and the tab
are there when you come back, until Ridge closes or another player takes over.

Keys: **l** lock in a prediction, **f** predict first on or off, **p** pin as A, **s** save as a
puzzle in your own chapter, **Escape** back. Tabs: **]** next, **[** previous, or straight to
one: **r** Results, **o** Roofline, **x** Spec, **k** KV, **c** Cost, **t** Load, **b** A/B. Letter keys work
while a number field has focus.
"""

    BINDINGS = [
        Binding("l", "lock_in", "Lock in", id="sim.lock_in", tooltip="Lock in your prediction and see the results"),
        Binding("f", "toggle_predict", "Predict first", id="sim.predict_first",
                tooltip="Switch predict-first on or off"),
        Binding("right_square_bracket", "next_tab(1)", "Next tab", id="sim.next_tab",
                tooltip="Show the next results tab ([ for the one before)"),
        Binding("left_square_bracket", "next_tab(-1)", "Previous tab", id="sim.previous_tab", show=False,
                tooltip="Show the results tab before"),
        Binding("r", "show_tab('tab-results')", "Results tab", id="sim.tab_results", show=False,
                tooltip="Show the headline figures and the ranked levers"),
        Binding("o", "show_tab('tab-roofline')", "Roofline tab", id="sim.tab_roofline", show=False,
                tooltip="Show where the decode step sits on the roofline"),
        Binding("x", "show_tab('tab-spec')", "Speculation tab", id="sim.tab_spec", show=False,
                tooltip="Show speculative decoding's speedup against batch"),
        Binding("k", "show_tab('tab-kv')", "KV tab", id="sim.tab_kv", show=False,
                tooltip="Show how many sequences the KV cache holds against length"),
        Binding("c", "show_tab('tab-cost')", "Cost tab", id="sim.tab_cost", show=False,
                tooltip="Show cost and TPOT against batch, with your TPOT budget"),
        Binding("t", "show_tab('tab-load')", "Load tab", id="sim.tab_load", show=False,
                tooltip="Percentiles, goodput and the knee under traffic"),
        Binding("b", "show_tab('tab-compare')", "A/B tab", id="sim.tab_compare", show=False,
                tooltip="Compare the pinned deployment A with the current one"),
        Binding("p", "pin", "Pin A", id="sim.pin", show=False,
                tooltip="Pin the current deployment as A, to compare against (kept until Ridge closes)"),
        Binding("s", "save_puzzle", "Save puzzle", id="sim.save", show=False,
                tooltip="Save the current deployment as a puzzle in your own chapter"),
        Binding("escape", "back", "Back", id="sim.back", tooltip="Leave the simulator"),
        # shown: F1 lists the keys the footer has no room for (pin, save, every tab)
        Binding("f1", "help", "Help", id="sim.help", tooltip="Help for the part that has focus, and every key"),
    ]

    def __init__(self, simulator: Simulator | None = None, pack_path: str | Path | None = None,
                 predict_first: bool = True, initial_tab: str | None = None, name: str | None = None,
                 id: str | None = "simulator") -> None:
        super().__init__(name=name, id=id)
        self.initial_tab = initial_tab
        self.sim = simulator
        self.pack_path = Path(pack_path) if pack_path is not None else None
        self.predict_first = predict_first
        self.locked_version: int | None = None
        self.last_grade = None  # a puzzles.grading.Grade
        self._dirty: set[str] = {tab for tab, _ in TABS}
        self._drawn_size: tuple[int, int] = (0, 0)
        self.last_redraw_seconds = 0.0
        self.last_edit_finished = 0.0
        self.notice = ""
        self._bindings_armed: bool | None = None
        self._outs: dict[str, Static] = {}  # each results tab's text, once its contents exist
        self._derivation: Static | None = None
        self._errors: dict[str, Static] = {}  # each field's message line, once it has had one
        self.measuring_result = None  # the result whose measured column a worker is filling

    # -- building --------------------------------------------------------------------------
    def _simulator(self) -> Simulator:
        if self.sim is None:
            user_catalog = None
            try:
                from saves.locations import user_catalog_path

                user_catalog = user_catalog_path(getattr(self.app, "save_dir", None))
            except Exception:  # noqa: BLE001 - the built-in catalog is enough to start
                user_catalog = None
            self.sim = Simulator(user_catalog=user_catalog)
        return self.sim

    def _field_widget(self, f: Field, blink: bool):
        sim = self.sim
        wid = f"in-{f.name}"
        if f.kind == "choice":
            options = [(self._choice_label(f.name, c), c) for c in sim.choices(f.name)]
            widget = Picker(options, value=sim.raw[f.name], allow_blank=False, id=wid,
                            tooltip=f.help)
        elif f.kind == "bool":
            widget = Switch(value=bool(sim.raw[f.name]), animate=False, id=wid, tooltip=f.help)
        elif f.kind == "path":
            widget = OrderedInput(str(sim.raw[f.name]), placeholder="config.json or .toml", id=wid,
                           tooltip=f.help)
            widget.cursor_blink = blink
        else:
            widget = NumberInput(str(sim.raw[f.name]), id=wid, tooltip=f.help,
                                 type="integer" if f.kind == "int" else "number", select_on_focus=False,
                                 placeholder=f.blank)
            widget.cursor_blink = blink
        widget.ridge_help = f"## {f.label}\n\n{f.help}" + (f"\n\nUnit: {f.unit}." if f.unit else "")
        return widget

    def _choice_label(self, name: str, choice: str) -> str:
        if name == "objective":
            return {"cost": "cost", "tpot": "TPOT", "ttft": "TTFT", "stall": "stall"}.get(choice, choice)
        if name == "model" and choice in self.sim.file_models:
            return f"{choice} (file)"
        return choice

    def compose(self) -> ComposeResult:
        sim = self._simulator()
        blink = getattr(self.app, "blink", True)
        armed = self._armed()
        # Focus goes straight to the first field the player needs (Textual's default focuses the
        # first focusable widget, the inputs' scroll, and moving it on restyles the whole column).
        # The model field is focused once laid out (`on_mount`): focused before, it is judged out of
        # view (the column's scrollbar is not there yet) and the column scrolls.
        self.AUTO_FOCUS = "#sim-guess-bottleneck" if armed else ""
        yield Header()
        with Horizontal(id="sim-body"):
            fields = self._fields_sheet(sim, blink)
            with VerticalScroll(id="sim-inputs", classes=self._overflow_class(fields)):
                yield fields
            with Vertical(id="sim-main"):
                yield Static("", id="sim-status", markup=False)
                with VerticalScroll(id="sim-predict"):
                    yield self._prediction_sheet()
                yield Static("", id="sim-grade", markup=False)  # above the tabs: seen on every one
                tabs = TabbedContent(id="sim-tabs")
                tabs.ridge_help = "## The results\n\n" + "\n\n".join(
                    f"**{title}**: {TAB_HELP[tab_id]}" for tab_id, title in TABS)
                with tabs:
                    for tab_id, title in TABS:
                        with TabPane(title, id=tab_id):
                            # Waiting for a prediction, the tabs are hidden: each one's contents are
                            # mounted when it is first drawn (`_draw`), not on opening.
                            if not armed:
                                yield self._tab_body(tab_id, "")
        yield RidgeFooter()

    def _fields_sheet(self, sim: Simulator, blink: bool) -> Sheet:
        """Every input as one sheet of rows; the rows below the first screenful mount after the
        first frame (`on_mount`), in their places."""
        switch = Switch(value=self.predict_first, animate=False, id="sim-predict-first",
                        tooltip="Predict before the results show")
        switch.ridge_help = PREDICT_HELP
        entries: list = [SheetRow("predict-first", "Predict 1st", switch, "on" if self.predict_first else "off",
                                  unit_after=SWITCH_WIDTH)]
        visible = self._column_lines()
        line, section = 1, None
        for f in FIELDS:
            if f.section != section:
                section = f.section
                entries.append(SheetTitle(section))
                line += 2
            if f.kind == "bool":
                unit, after = ("on" if sim.raw[f.name] else "off"), SWITCH_WIDTH
            else:
                unit, after = f.unit, None
            entries.append(SheetRow(f.name, f.label, self._field_widget(f, blink), unit, unit_after=after,
                                    later=line >= visible))
            line += 1
        return Sheet(entries, LABEL_WIDTH, fixed_height=True, id="sim-fields")

    def _column_lines(self) -> int:
        """The inputs column's lines between the header and the footer."""
        return max(1, self.app.size.height - 2)

    def _overflow_class(self, fields: Sheet) -> str:
        """"-overflows" when the fields are taller than their column (see simulator.tcss)."""
        return "-overflows" if fields.line_count() > self._column_lines() else ""

    def _tab_body(self, tab_id: str, text: str) -> VerticalScroll:
        """The contents of one results tab, showing `text`: its plot or figures in a scroll (with
        the Cost tab's budget field above, the Results tab's derivation below)."""
        sim, title = self.sim, dict(TABS)[tab_id]
        children: list = []
        if tab_id == "tab-cost":
            budget = NumberInput(f"{sim.tpot_budget_ms:g}", id="in-budget", type="number",
                                 select_on_focus=False, tooltip="The TPOT budget line, in milliseconds")
            budget.cursor_blink = getattr(self.app, "blink", True)
            budget.ridge_help = ("## TPOT budget\n\nThe most time per output token a user should wait, in "
                                 "milliseconds. The chart marks the cheapest batch that stays within it.")
            children.append(Sheet([SheetRow("budget", "TPOT budget", budget, "ms", unit_after=BUDGET_WIDTH)], LABEL_WIDTH,
                                  id="row-budget"))
            children.append(Static("", id="err-budget", classes="sim-error", markup=False))
        if tab_id == "tab-load":
            children.extend(self._load_inputs())
        out = self._outs[tab_id] = _shown(Static(text, id=f"out-{tab_id[4:]}", classes="sim-out", markup=False), text)
        children.append(out)
        if tab_id == "tab-results":
            self._derivation = _shown(Static("", id="out-derivation", classes="sim-out", markup=False), "")
            children.append(Collapsible(self._derivation, title="How the engine got there", collapsed=True,
                                        id="sim-derivation"))
        scroll = VerticalScroll(*children, classes="sim-out-scroll")
        scroll.ridge_help = f"## {title}\n\n{TAB_HELP[tab_id]}"
        return scroll

    def _load_inputs(self) -> list:
        """The Load tab's fields: the rate and the two SLOs, and (predicting first) the knee."""
        sim, blink = self.sim, getattr(self.app, "blink", True)
        rows = []
        for name, label, value, unit, tip in (
                ("rate", "Rate", "" if sim.load_rate is None else f"{sim.load_rate:g}", "req/s",
                 "Requests per second for the queue-over-time run (blank: 90% of capacity)"),
                ("ttft", "TTFT SLO", f"{sim.load_slo_ttft:g}", "s", "The P99 time-to-first-token target"),
                ("tpot", "TPOT SLO", f"{sim.load_slo_tpot_ms:g}", "ms", "The P99 time-per-output-token target")):
            field = NumberInput(value, id=f"load-{name}", type="text", select_on_focus=False, tooltip=tip,
                                placeholder="90% cap." if name == "rate" else "")
            field.cursor_blink = blink
            field.ridge_help = f"## {label}\n\n{tip}."
            rows.append(SheetRow(f"load-{name}", label, field, unit, unit_after=BUDGET_WIDTH))
        knee = NumberInput("", id="load-knee", type="text", select_on_focus=False, placeholder="guess",
                           tooltip="Your guess at the knee, in requests per second (Enter to lock it in)")
        knee.cursor_blink = blink
        knee.ridge_help = "## Your knee\n\n" + LOAD_PREDICT
        rows.append(SheetRow("load-knee", "Your knee", knee, "req/s", unit_after=BUDGET_WIDTH))
        sheet = Sheet(rows, LABEL_WIDTH, id="row-load")
        return [sheet, Static("", id="load-error", classes="sim-error", markup=False)]

    def _prediction_sheet(self) -> Sheet:
        from engine.ids import Verdict
        from engine.levers import GAIN_BANDS, LEVERS
        from engine.physics import VERDICT_CODES as STEADY_VERDICTS   # the load run's verdicts are the Load tab's

        rows = (
            ("Bottleneck", "sim-guess-bottleneck", [(labels.bottleneck(v), v) for v in Verdict if v in STEADY_VERDICTS],
             "What bounds the objective chosen on the left: for cost the whole deployment (fit, KV capacity, "
             "prefill, then the decode step), for TPOT one decode step, for TTFT one request's prefill. "
             "Within 10% of a band edge, both bands count."),
            ("Best lever", "sim-guess-lever", [(labels.lever(v), v) for v in LEVERS],
             "The one change that most improves the objective chosen on the left."),
            ("Its gain", "sim-guess-band", [(labels.band(v), v) for v in GAIN_BANDS],
             "The objective before the lever divided by the objective after it."),
        )
        entries: list = [SheetTitle("Your prediction, before the numbers")]
        for label, wid, options, help_text in rows:
            select = Picker(options, prompt="choose", id=wid, tooltip=help_text)
            select.ridge_help = f"## {label}\n\n{help_text}"
            entries.append(SheetRow(wid, label, select, gap=1))
        tail = [Static("", id="sim-predict-error", classes="sim-error", markup=False),
                Button("Lock in (l)", id="sim-lock", variant="primary", compact=True),
                Static("Changing any input asks again. f switches predicting off.", classes="sim-note", markup=False)]
        return Sheet(entries, PREDICT_LABEL_WIDTH, tail=tail, id="sim-guesses")

    def on_mount(self) -> None:
        if self.initial_tab:
            self.query_one("#sim-tabs", TabbedContent).active = self.initial_tab
        self._show_figures(changed=True)
        if self.focused is None:
            try:
                self.query_one("#sim-guess-bottleneck" if self._armed() else "#in-model").focus()
            except Exception:  # noqa: BLE001 - focus is a nicety
                pass
        self.call_after_refresh(self.call_after_refresh, self.query_one("#sim-fields", Sheet).mount_later)

    # -- state -----------------------------------------------------------------------------
    def _armed(self) -> bool:
        """True while the results wait for a prediction on the current deployment."""
        sim = self.sim
        return (self.predict_first and sim is not None and sim.result is not None
                and self.locked_version != sim.version)

    @property
    def results_visible(self) -> bool:
        return self.sim is not None and self.sim.result is not None and not self._armed()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "lock_in":
            return self._armed()
        return True

    # -- editing ---------------------------------------------------------------------------
    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        wid = event.input.id or ""
        if wid in ("load-rate", "load-ttft", "load-tpot"):
            self._set_load(wid[5:], event.value)
        elif wid == "in-budget":
            self._set_budget(event.value)
        elif wid.startswith("in-") and wid != "in-config":
            self.edit(wid[3:], event.value)

    @on(Input.Submitted, "#load-knee")
    def _knee_submitted(self, event: Input.Submitted) -> None:
        problem = self.sim.guess_knee(event.value)
        self._load_error(problem)
        if not problem:
            self._dirty.add("tab-load")
            self._draw_visible()

    def _load_error(self, problem: str | None) -> None:
        err = self.query_one("#load-error", Static)
        err.update(f"✗ {problem}" if problem else "")
        err.set_class(bool(problem), "-shown")

    def _set_load(self, name: str, text: str) -> None:
        problem = self.sim.set_load(name, text)
        self._load_error(problem)
        if not problem:
            self._dirty.add("tab-load")
            self._draw_visible()

    def _load_waiting(self) -> bool:
        """True while the Load tab waits for the player's knee (predict first, not yet given)."""
        return self.predict_first and self.sim.knee_guess() is None

    @work(thread=True, group="load", exclusive=True, exit_on_error=False, name="load curve")
    def _run_load(self, key: tuple) -> None:
        """Run the traffic off the UI thread (a few hundred milliseconds); a newer request cancels
        this one, and a cancelled or outdated curve is dropped."""
        from textual.worker import get_current_worker

        try:
            self.sim.load_curve()
            problem = None
        except RidgeError as exc:
            problem = str(exc)
        except Exception as error:  # noqa: BLE001 - the tab says so; the simulator stays
            path = log_exception(error, getattr(self.app, "log_file", None), "simulator load curve")
            problem = f"the load run failed ({type(error).__name__}); details in {path}"
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._load_ready, key, problem)

    def _load_ready(self, key: tuple, problem: str | None) -> None:
        self._load_problem = (key, problem) if problem else None
        if key == self.sim.load_key():
            self._dirty.add("tab-load")
            self._draw_visible()

    def load_lines(self, width: int, height: int) -> list[str]:
        """The Load tab's text: its curves once run (starting the run when they are not), the
        prediction it waits for, or why there are none."""
        sim = self.sim
        if self._load_waiting():
            return [LOAD_PREDICT]
        curve = sim.cached_load_curve()
        if curve is None:
            problem = getattr(self, "_load_problem", None)
            if problem is not None and problem[0] == sim.load_key():
                return [f"No load curve for this deployment: {player_words(problem[1])}"]
            self._run_load(sim.load_key())
            return ["Running the traffic at twelve rates (a fraction of a second)…"]
        lines = sp.load_lines(curve, width, height, sim.knee_guess())
        guess = sim.knee_guess()
        if self.predict_first and guess is not None:
            lines = knee_lines(guess, curve, sp.short) + lines
        return lines

    @on(Input.Submitted, "#in-config")
    def _config_submitted(self, event: Input.Submitted) -> None:
        self.edit("config", event.value, force=True)

    @on(Picker.Changed)
    def _select_changed(self, event: Picker.Changed) -> None:
        wid = event.control.id or ""
        if not wid.startswith("in-") or event.value is Picker.NULL:
            if wid.startswith("sim-guess"):
                self.query_one("#sim-predict-error", Static).update("")
            return
        self.edit(wid[3:], event.value)

    @on(Switch.Changed)
    def _switch_changed(self, event: Switch.Changed) -> None:
        wid = event.switch.id or ""
        if wid == "sim-predict-first":
            self._set_predict_first(event.value)
        elif wid.startswith("in-"):
            name = wid[3:]
            self.query_one("#sim-fields", Sheet).set_unit(name, "on" if event.value else "off")
            self.edit(name, event.value)

    def edit(self, name: str, value, force: bool = False) -> bool:
        """Apply one input to the simulator and refresh what it changed; True if the result changed."""
        sim = self.sim
        if not force and sim.raw.get(name) == value:
            return False
        self.notice = ""  # "saved" / "not saved" spoke of the deployment before this edit
        started = time.perf_counter()
        try:
            changed = sim.edit(name, value)
        except Exception as error:  # noqa: BLE001 - never a traceback: log it and say so inline
            path = log_exception(error, getattr(self.app, "log_file", None), f"simulator editing {name}")
            sim.errors[name] = f"unexpected error ({type(error).__name__}); details in {path}"
            changed = False
        if name == "config":
            self._sync_choices()
        self._show_figures(changed)
        self.last_edit_finished = time.perf_counter()
        self.last_redraw_seconds = self.last_edit_finished - started
        return changed

    def _sync_choices(self) -> None:
        """After a file loads, offer its models and GPUs and show the model it selected."""
        sim = self.sim
        for name in ("model", "gpu"):
            select = self.query_one(f"#in-{name}", Picker)
            options = [(self._choice_label(name, c), c) for c in sim.choices(name)]
            select.set_options(options)
            if sim.raw[name] in sim.choices(name):
                select.value = sim.raw[name]

    def _set_budget(self, text: str) -> None:
        problem = self.sim.set_budget(text)
        err = self.query_one("#err-budget", Static)
        err.update(f"✗ {problem}" if problem else "")
        err.set_class(bool(problem), "-shown")
        if not problem:
            self._dirty.add("tab-cost")
            self._draw_visible()

    def _set_predict_first(self, on_: bool) -> None:
        self.predict_first = on_
        self.query_one("#sim-fields", Sheet).set_unit("predict-first", "on" if on_ else "off")
        if on_:
            self.locked_version = None
            self.last_grade = None
        self._show_figures(changed=False)
        if on_:
            self.query_one("#sim-guess-bottleneck").focus()

    # -- drawing ---------------------------------------------------------------------------
    def _show_figures(self, changed: bool) -> None:
        sim = self.sim
        sheet = self.query_one("#sim-fields", Sheet)
        for f in FIELDS:
            message = player_words(sim.errors.get(f.name, ""))
            err = self._errors.get(f.name)
            if err is None:
                if not message:
                    continue
                # A field's message line is made the first time it has something to say.
                err = self._errors[f.name] = Static("", id=f"err-{f.name}", classes="sim-error", markup=False)
                sheet.add_below(f.name, err)
            text = "\n".join(wrap_lines([f"✗ {message}"], ERROR_WIDTH)) if message else ""
            if set_text(err, text):
                err.set_class(bool(message), "-shown")
                sheet.set_extra(f.name, text.count("\n") + 1 if message else 0)
        if changed:
            self._dirty = {tab for tab, _ in TABS}
            if self.predict_first:
                self.last_grade = None
        self._show_status()
        self._show_panels()
        self._draw_visible()
        armed = self._armed()
        if armed != self._bindings_armed:
            self._bindings_armed = armed
            self.refresh_bindings()

    def measure_when_shown(self) -> None:
        """Start the worker that fills the results' measured column, if it can be filled."""
        from engine.compare import PENDING

        result = self.sim.result
        if result is not None and result.measured == PENDING and self.measuring_result is not result:
            self.measuring_result = result
            self.measure_column(result)

    @work(thread=True, group="measured", exclusive=True, exit_on_error=False, name="measured kernels")
    def measure_column(self, result) -> None:
        """Measure one result off the UI thread (the first engine build takes seconds); a newer
        result cancels it, and a cancelled answer is dropped."""
        from textual.worker import get_current_worker

        from engine.compare import measure

        measured = measure(result.solution)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.measured_arrived, result, measured)

    def measured_arrived(self, result, measured) -> None:
        result.measured = measured
        if result is self.sim.result:
            self._dirty.add("tab-results")
            self._draw_visible()

    def _show_status(self) -> None:
        sim = self.sim
        status = self.query_one("#sim-status", Static)
        lines = []
        r = sim.result
        if r is None:
            lines.append("No deployment yet: fix the inputs marked ✗.")
        elif self._armed():
            lines.append("Predict first: what limits this deployment, which lever helps most, and by how much?")
        else:
            rep = r.report
            best = r.solution.best
            gain = f" {best.gain:.2f}×" if best.gain is not None else ""
            lines.append(f"→ {labels.bottleneck(rep.bottleneck)} · {labels.lever_short(best.name)}{gain}"
                         f" · {sp.u.dollars(rep.cost_per_million_output_tokens)}/M · "
                         f"{sp.u.seconds(rep.tpot_seconds)}/token")
        if sim.errors:
            name, message = next(iter(sim.errors.items()))
            label = FIELD_BY_NAME[name].label if name in FIELD_BY_NAME else name
            message = player_words(message)
            said = message if message.startswith(label) else f"{label}: {message}"
            lines.append(f"⚠ Showing the last good result. {said}")
        if sim.catalog_note:
            lines.append(f"⚠ {sim.catalog_note}")
        if self.notice:
            lines.append(self.notice)
        # Before the first layout the column's width is worked out, so the first frame is folded
        # as every later one (and a resize folds it again: `_resized`).
        width = max(20, status.content_size.width or self.size.width - INPUTS_WIDTH - MAIN_PADDING)
        set_text(status, "\n".join(wrap_lines(lines, width)))
        if status.has_class("-stale") != bool(sim.errors):
            status.set_class(bool(sim.errors), "-stale")

    def _show_panels(self) -> None:
        armed = self._armed()
        predict, tabs = self.query_one("#sim-predict"), self.query_one("#sim-tabs")
        if predict.display != armed:
            predict.display = armed
        if tabs.display != self.results_visible:
            tabs.display = self.results_visible
        grade = self.query_one("#sim-grade", Static)
        show_grade = self.predict_first and self.last_grade is not None and not armed
        if grade.display != show_grade:
            grade.display = show_grade
        if show_grade:
            width = max(20, (grade.content_size.width or self.size.width - 44))
            set_text(grade, "\n".join(wrap_lines(grade_lines(self.last_grade, labels.words), width)))
            grade.set_class(self.last_grade.outcome == Outcome.CLEARED, "-right")
            grade.set_class(self.last_grade.outcome != Outcome.CLEARED, "-wrong")

    def _plot_size(self) -> tuple[int, int]:
        tabs = self.query_one("#sim-tabs")
        # The tab's text: the tabs' width less the scrollbar (1) and the padding (2).
        width = (tabs.content_size.width or self.size.width - INPUTS_WIDTH - MAIN_PADDING) - 3
        height = max(6, min(16, self.size.height - 14))
        return max(30, width), height

    def _draw_visible(self) -> None:
        if not self.results_visible:
            return
        active = self.query_one("#sim-tabs", TabbedContent).active or TABS[0][0]
        self._draw(active)

    def _draw(self, tab_id: str) -> None:
        """Draw one tab if its text is out of date, mounting its contents the first time (they are
        made with their text, so nothing waits for the mount)."""
        if tab_id not in self._dirty and tab_id in self._outs:
            return
        width, height = self._plot_size()
        self._drawn_size = (width, height)
        text = "\n".join(wrap_lines(self.tab_lines(tab_id, width, height), width))
        if tab_id in self._outs:
            set_text(self._outs[tab_id], text)
        else:
            self.query_one(f"#{tab_id}", TabPane).mount(self._tab_body(tab_id, text))
        if tab_id == "tab-results" and self.sim.result is not None:
            steps = wrap_lines(sp.derivation(self.sim.result), width - 4)
            set_text(self._derivation, "\n".join(steps))
            self.measure_when_shown()
        self._dirty.discard(tab_id)

    def tab_lines(self, tab_id: str, width: int, height: int) -> list[str]:
        """The text of one tab for the current result (also used by the benchmark)."""
        sim = self.sim
        if sim.result is None:
            return ["No result yet."]
        if tab_id == "tab-results":
            return sp.results_lines(sim.result, width, with_derivation=False)
        if tab_id == "tab-roofline":
            return sp.roofline_lines(sim.roofline(), width, height)
        if tab_id == "tab-spec":
            return sp.spec_lines(sim.spec(), width, height)
        if tab_id == "tab-kv":
            return sp.concurrency_lines(sim.concurrency_curve(), width, height)
        if tab_id == "tab-cost":
            return sp.cost_tpot_lines(sim.cost_tpot(), width, height)
        if tab_id == "tab-load":
            return self.load_lines(width, height)
        changes = [(FIELD_BY_NAME[name].label if name in FIELD_BY_NAME else name, a, b)
                   for name, a, b in (changed_inputs(sim.pinned, sim.result) if sim.pinned else [])]
        return sp.compare_lines(sim.pinned, sim.result, sim.comparison(), changes, width)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane is not None and event.pane.id and self.results_visible:
            self._draw(event.pane.id)

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._resized)

    def _resized(self) -> None:
        inputs = self.query_one("#sim-inputs", VerticalScroll)
        inputs.set_class(bool(self._overflow_class(self.query_one("#sim-fields", Sheet))), "-overflows")
        self._show_status()  # its lines are folded to the column's width
        if self._plot_size() != self._drawn_size:
            self._dirty = {tab for tab, _ in TABS}
            self._draw_visible()

    # -- actions ---------------------------------------------------------------------------
    @on(Button.Pressed, "#sim-lock")
    def action_lock_in(self) -> None:
        if not self._armed():
            return
        choices = {}
        missing = []
        for part, wid in (("bottleneck", "sim-guess-bottleneck"), ("lever", "sim-guess-lever"),
                          ("band", "sim-guess-band")):
            value = self.query_one(f"#{wid}", Picker).value
            if value is Picker.NULL:
                missing.append(part)
            else:
                choices[part] = value
        err = self.query_one("#sim-predict-error", Static)
        if missing:
            err.update(f"✗ Still to choose: {', '.join(missing)}.")
            err.set_class(True, "-shown")
            self.query_one(f"#sim-guess-{missing[0]}").focus()
            return
        err.update("")
        err.set_class(False, "-shown")
        self.last_grade = grade_prediction(self.sim.result, choices["bottleneck"], choices["lever"], choices["band"])
        self.locked_version = self.sim.version
        self._show_figures(changed=False)

    def action_toggle_predict(self) -> None:
        switch = self.query_one("#sim-predict-first", Switch)
        switch.value = not switch.value

    def action_pin(self) -> None:
        if self.sim.pin() is None:
            self.notify("Nothing to pin yet.", severity="warning")
            return
        self._dirty.add("tab-compare")
        self._draw_visible()
        self.notify("Pinned as A. Change any input and open the A/B tab.", title="Compare")

    def action_save_puzzle(self) -> None:
        sim = self.sim
        if sim.result is None or sim.errors:
            self.notify("Fix the inputs marked ✗ first: the puzzle is saved from what you see.",
                        severity="warning")
            return
        path = self.pack_path or own_pack.pack_path(getattr(self.app, "save_dir", None))
        try:
            puzzle_id, written = own_pack.save_puzzle(sim.result, path)
        except RidgeError as exc:
            self.notice = f"✗ {exc}"
            self._show_status()
            self.notify(told(exc), title="Not saved", severity="warning", timeout=8)
            return
        reload_packs = getattr(self.app, "reload_packs", None)
        if reload_packs is not None:
            reload_packs()  # in the background: the map then shows it in the player's own chapter
        self.notice = f"✓ Saved as puzzle {puzzle_id} in {written}"
        self._show_status()
        self.notify(told(f"Saved as {puzzle_id} in {written}"), title="Saved")

    def action_next_tab(self, step: int) -> None:
        """] and [: the next or previous results tab, round the end."""
        if not self.results_visible:
            self.notify("Lock in a prediction first (or switch predicting off with f).", severity="warning")
            return
        tabs = self.query_one("#sim-tabs", TabbedContent)
        ids = [tab_id for tab_id, _ in TABS]
        here = ids.index(tabs.active) if tabs.active in ids else 0
        self.action_show_tab(ids[(here + step) % len(ids)])

    def action_show_tab(self, tab_id: str) -> None:
        if not self.results_visible:
            self.notify("Lock in a prediction first (or switch predicting off with f).", severity="warning")
            return
        self._draw(tab_id)  # its contents ready before it shows
        self.query_one("#sim-tabs", TabbedContent).active = tab_id

    def action_help(self) -> None:
        if hasattr(self.app, "action_help"):
            self.app.action_help()
            return
        from app.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self, self.focused))
