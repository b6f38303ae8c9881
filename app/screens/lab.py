"""The Lab: predict what paging and continuous batching buy, then measure it on this machine.

Three stages on one screen. The form takes the player's prediction (throughput ratio, utilisation
gap, which change matters more); locking in disables it for good and starts the lab in a worker
thread with a progress bar; the results then sit beside the prediction, with the server table and
the decode-step plot against this CPU's roofline. Errors in the run become one line, never a
traceback.
"""
from __future__ import annotations

import threading
import time

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import (Button, Checkbox, DataTable, Input, Label, ProgressBar, RadioButton,
                             RadioSet, Static)

from app.screens.base import RidgeScreen
from app.widgets.footer import RidgeFooter
from engine.errors import RidgeError
from engine.lab.report import (SHORT_COLUMNS, Prediction, busy_machine, compare, decode_plot,
                               machine_lines, ratio_words, repeat_note, server_table)


class _Cancelled(Exception):
    """Raised from the progress callback to stop a run the player walked away from."""


class _Choice(RadioButton):
    """A radio button whose dot is drawn only when chosen, so the choice shows without colour."""

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 - overrides Textual's class attribute
        return "●" if self.value else " "


class _Tick(Checkbox):
    """A checkbox that draws its tick only when ticked, so its state shows without colour."""

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 - overrides Textual's class attribute
        return "X" if self.value else " "


class LabScreen(RidgeScreen):
    """Predict, lock in, run the toy serving lab live, and compare."""

    HELP = """\
## The Lab

A small transformer runs for real on this computer, served two ways over the same KV memory:
a **naive** server that reserves room for each request's longest possible answer and runs
batches to completion, and a **paged** server that hands out small blocks as answers grow and
refills free batch slots every step. Two half-way servers show which change does more alone.

Predict first: how many times more tokens per second the paged server gets, how many points
more of its KV memory holds real tokens, and which change matters more. **Lock in** (ctrl+l)
is final. Then watch it run and compare. **New** (n) starts a fresh prediction.
"""

    BINDINGS = [
        Binding("ctrl+l", "lock_in", "Lock in", id="lab.lock_in", tooltip="Commit the prediction and run the lab"),
        Binding("n", "new_prediction", "New", id="lab.new", tooltip="Start a fresh prediction"),
        Binding("escape", "back", "Back", id="lab.back", tooltip="Leave the lab"),
    ]

    DEFAULT_CSS = """
    LabScreen #lab-body { padding: 0 1; }
    LabScreen .lab-title { text-style: bold; color: $text-accent; }
    LabScreen .lab-muted { color: $text-muted; }
    LabScreen .lab-row { height: 3; }
    LabScreen .lab-row Label { width: 40; padding: 1 1 0 0; }
    LabScreen .lab-row Input { width: 16; }
    LabScreen RadioSet#pred-gain { width: 40; height: auto; }
    LabScreen Checkbox#quick { width: 62; }
    LabScreen #lock { margin: 1 0 0 0; }
    LabScreen #form-error { color: $text-error; text-style: bold; }
    LabScreen #lab-run, LabScreen #lab-results { display: none; height: auto; }
    LabScreen.running #lab-run { display: block; }
    LabScreen.done #lab-results { display: block; }
    LabScreen.done #lab-run { display: block; }
    LabScreen.locked #lab-form { display: none; }
    LabScreen #run-progress { margin: 1 0; }
    LabScreen DataTable { height: auto; max-height: 8; margin: 1 0 0 0; }
    LabScreen #run-error { color: $text-error; text-style: bold; }
    LabScreen #plot { margin: 1 0 0 0; }
    """

    def __init__(self, quick: bool = False, seed: int = 0) -> None:
        super().__init__(id="lab")
        self._quick_default = quick
        self.seed = seed
        self.prediction: Prediction | None = None
        self.result: dict | None = None
        self.error: str | None = None
        self._cancel = threading.Event()
        self._last_progress = 0.0

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="lab-body"):
            yield Static("The Lab: a toy serving loop, run for real on this machine", classes="lab-title")
            yield Static("A paged server with continuous batching against a naive one, same model, same KV "
                         "memory. Predict first, then measure.", classes="lab-muted")
            with Vertical(id="lab-form"):
                with Horizontal(classes="lab-row"):
                    yield Label("Throughput ratio, paged ÷ naive (×)")
                    yield Input(placeholder="e.g. 2.5", type="number", id="pred-ratio")
                with Horizontal(classes="lab-row"):
                    yield Label("KV utilisation gap, paged − naive (pts)")
                    yield Input(placeholder="e.g. 40", type="number", id="pred-gap")
                yield Label("Which change does more on its own?")
                with RadioSet(id="pred-gain"):
                    yield _Choice("continuous batching", id="gain-continuous-batching")
                    yield _Choice("paged allocation", id="gain-paged-allocation")
                yield _Tick("quick run (tiny model, seconds; timings mean little)", self._quick_default,
                               id="quick")
                yield Button("Lock in and run (ctrl+l)", id="lock", variant="primary")
                yield Static("", id="form-error", markup=False)
            with Vertical(id="lab-run"):
                yield Static("", id="run-label", markup=False)
                yield ProgressBar(total=100, show_eta=False, id="run-progress")
                yield Static("", id="run-error", markup=False)
            with Vertical(id="lab-results"):
                yield Static("Your prediction beside the measurement", classes="lab-title")
                yield DataTable(id="compare", cursor_type="none", zebra_stripes=True)
                yield Static("", id="summary", markup=False)
                yield DataTable(id="servers", cursor_type="none", zebra_stripes=True)
                yield Static("", id="machine", classes="lab-muted", markup=False)
                yield Static("", id="plot", markup=False)
        yield RidgeFooter()

    def on_mount(self) -> None:
        compare_table = self.query_one("#compare", DataTable)
        compare_table.add_columns("", "you said", "measured", "verdict")
        self.query_one("#servers", DataTable).add_columns(*SHORT_COLUMNS)
        self.query_one("#pred-ratio", Input).focus()

    # -- actions ----------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "lock_in":
            return self.prediction is None
        if action == "new_prediction":
            return self.result is not None or self.error is not None
        return True

    @on(Button.Pressed, "#lock")
    def _pressed_lock(self) -> None:
        self.action_lock_in()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_lock_in()

    def action_lock_in(self) -> None:
        if self.prediction is not None:
            return
        try:
            prediction = self._read_form()
        except RidgeError as exc:
            self.query_one("#form-error", Static).update(str(exc))
            return
        self.prediction = prediction
        quick = self.query_one("#quick", Checkbox).value
        for widget in self.query("#lab-form Input, #lab-form RadioSet, #lab-form Checkbox, #lab-form Button"):
            widget.disabled = True
        self.add_class("locked", "running")
        self.query_one("#run-label", Static).update("Locked in. Starting the lab…")
        self.refresh_bindings()
        self._cancel.clear()
        self._start_run(quick)

    def action_new_prediction(self) -> None:
        if self.result is None and self.error is None:
            return
        self.prediction = self.result = self.error = None
        for widget in self.query("#lab-form Input, #lab-form RadioSet, #lab-form Checkbox, #lab-form Button"):
            widget.disabled = False
        for name in ("#pred-ratio", "#pred-gap"):
            self.query_one(name, Input).value = ""
        self.query_one("#form-error", Static).update("")
        self.query_one("#run-error", Static).update("")
        self.query_one("#run-progress", ProgressBar).update(progress=0)
        self.remove_class("locked", "running", "done")
        self.refresh_bindings()
        self.query_one("#pred-ratio", Input).focus()

    def action_back(self) -> None:
        self._cancel.set()
        self.leave()

    def _read_form(self) -> Prediction:
        def number(selector: str, what: str) -> float:
            text = self.query_one(selector, Input).value.strip()
            from engine.bounds import ascii_number

            try:
                return ascii_number(text)  # ASCII digits only: float() would also read '١٢'
            except ValueError:
                raise RidgeError(f"enter a number for the {what}") from None

        ratio = number("#pred-ratio", "throughput ratio")
        gap = number("#pred-gap", "utilisation gap")
        pressed = self.query_one("#pred-gain", RadioSet).pressed_button
        if pressed is None or pressed.id is None:
            raise RidgeError("pick which change does more on its own")
        return Prediction(ratio, gap, pressed.id.removeprefix("gain-"))

    # -- the run ----------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="lab", exit_on_error=False)
    def _start_run(self, quick: bool) -> None:
        from engine.lab.runner import lab_settings, run_lab

        try:
            result = run_lab(lab_settings(quick=quick, seed=self.seed), self._progress_from_worker)
        except _Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - shown as one line; the lab must never crash the game
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._to_ui(self._show_error, f"The lab could not finish: {message}")
            return
        self._to_ui(self._show_result, result)

    def _to_ui(self, callback, *args) -> None:
        if self._cancel.is_set():
            return
        try:
            self.app.call_from_thread(callback, *args)
        except RuntimeError:  # the app is closing
            self._cancel.set()

    def _progress_from_worker(self, fraction: float, label: str) -> None:
        if self._cancel.is_set():
            raise _Cancelled()
        now = time.monotonic()
        if now - self._last_progress >= 0.1 or fraction >= 1.0:
            self._last_progress = now
            self._to_ui(self._show_progress, fraction, label)

    def _show_progress(self, fraction: float, label: str) -> None:
        self.query_one("#run-progress", ProgressBar).update(progress=round(fraction * 100))
        self.query_one("#run-label", Static).update(f"Running: {label} ({fraction * 100:.0f}%)")

    def _show_error(self, message: str) -> None:
        self.error = message
        self.query_one("#run-error", Static).update(f"✗ {message}")
        self.query_one("#run-label", Static).update("The run stopped. Press n for a new prediction.")
        self.refresh_bindings()

    def _show_result(self, result: dict) -> None:
        self.result = result
        assert self.prediction is not None
        self.query_one("#run-progress", ProgressBar).update(progress=100)
        self.query_one("#run-label", Static).update(f"Done in {result['run_seconds']:.0f} s.")
        table = self.query_one("#compare", DataTable)
        table.clear()
        for what, said, measured, verdict in compare(self.prediction, result):
            mark = "✓" if verdict in ("close", "right") else "✗"
            table.add_row(what, said, measured, f"{mark} {verdict}")
        servers = self.query_one("#servers", DataTable)
        servers.clear()
        for row in server_table(result, short=True):
            servers.add_row(*row)
        same = "yes" if result["identical_outputs"] else "NO (a bug: please report it)"
        spreads = result.get("ablation_spreads") or {}
        notes = [
            f"Same tokens from all four servers: {same}.",
            f"Paged over naive: {ratio_words(result['speedup'], result.get('speedup_spread'))}.",
            f"Alone, continuous batching gave "
            f"{ratio_words(result['continuous_contiguous_speedup'], spreads.get('continuous-batching'))} and paged "
            f"allocation {ratio_words(result['static_paged_speedup'], spreads.get('paged-allocation'))}. "
            "Below, resv, int and ext are reserved slots, internal and external fragmentation, as shares of "
            "the KV budget.",
            *repeat_note(result),
        ]
        if busy_machine(result):
            notes.append("Other programs kept this machine busy, so the timings are noisier than usual.")
        if result["quick"]:
            notes.append("Quick run: the tiny model fits in the CPU caches, so bandwidth figures mean little.")
        self.query_one("#summary", Static).update("\n".join(notes))
        self.query_one("#machine", Static).update("\n".join(machine_lines(result)))
        self.query_one("#plot", Static).update("\n".join(decode_plot(result, width=24)))
        self.remove_class("running")
        self.add_class("done")
        self.refresh_bindings()
