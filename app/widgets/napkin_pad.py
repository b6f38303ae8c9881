"""The napkin: type plain arithmetic, press Enter, see the value. Parsed by `puzzles.napkin`, never
evaluated as Python, so nothing typed here can do more than arithmetic."""
from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Label, Static

from app.widgets.inputs import SumInput
from puzzles.napkin import NapkinError, format_number, measure

MAX_LINES = 6


class NapkinPad(Vertical):
    """An input line and the last few results."""

    HELP = """\
## The napkin

Type a sum and press **Enter**: `141e9 / 3.35e12`, `2 * 80 * 8 * 128 * 2`, `(80 - 16) GiB / 1.25 GiB`.

- Numbers: `42`, `3.35`, `1e9`, `1_000`
- Operators: `+ - * / **` (or `^`) and parentheses
- Suffixes after a number: `k M G T`, `GB TB GiB TiB`, `TB/s`, `TFLOPS`, `ms us`, `%`

Units carry through: `140 GB / 3.35 TB/s` reads `0.04179 s ≈ 41.79 ms`. The line clears after
each result, ready for the next sum; **Up** and **Down** bring back earlier sums to edit.
Names, calls and anything else are refused, with the reason. There are no variables: copy a
number by typing it, as on a real napkin.
"""


    DEFAULT_CSS = """
    NapkinPad {
        height: auto;
        padding: 0 1;
        & > Input { width: 1fr; }
        & > #napkin-result { height: auto; width: 1fr; }
        & > #napkin-history { height: auto; color: $text-muted; }
        & > #napkin-result.-error { color: $text-error; }
    }
    """

    @dataclass
    class Evaluated(Message):
        """A sum the napkin accepted: the text typed and its value."""

        expression: str
        value: float

    def __init__(self, cursor_blink: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self._cursor_blink = cursor_blink
        self.history: list[str] = []

    def compose(self) -> ComposeResult:
        yield SumInput(placeholder="napkin: e.g. 141e9 / 3.35e12", id="napkin-input", compact=True)
        yield Label("", id="napkin-result", markup=False)
        yield Static("", id="napkin-history", markup=False)

    def on_mount(self) -> None:
        self.input.cursor_blink = self._cursor_blink

    @property
    def input(self) -> SumInput:
        return self.query_one("#napkin-input", SumInput)

    def calculate(self, text: str, submitted: Input.Submitted | None = None) -> float | None:
        """Evaluate `text`, show the value or the refusal; return the value or None. An accepted
        sum clears the line, so the next one starts fresh; a refused one stays to be fixed."""
        result = self.query_one("#napkin-result", Label)
        try:
            value, unit = measure(text)
        except NapkinError as error:
            result.update(f"✗ {error}")
            result.add_class("-error")
            self._show_history(everything=True)
            if submitted is not None:
                self.input.give_back(submitted)
            return None
        result.remove_class("-error")
        shown = format_number(value, unit)
        result.update(f"{text.strip()} = {shown}")
        self.history.append(f"{text.strip()} = {shown}")
        del self.history[:-MAX_LINES]
        self.input.remember(text.strip())
        self._show_history()
        self.post_message(self.Evaluated(text, value))
        return value

    def _show_history(self, everything: bool = False) -> None:
        """Earlier results under the line, newest first (all of them while an error is shown)."""
        earlier = self.history if everything else self.history[:-1]
        self.query_one("#napkin-history", Static).update("\n".join(reversed(earlier)))

    @on(Input.Submitted, "#napkin-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.calculate(event.value, event)

    @on(Input.Changed, "#napkin-input")
    def _changed(self, event: Input.Changed) -> None:
        """An emptied line takes its stale error with it."""
        event.stop()
        result = self.query_one("#napkin-result", Label)
        if not self.input.value.strip() and result.has_class("-error"):  # the box now, not then
            result.update("")
            result.remove_class("-error")
            self._show_history(everything=True)
