"""The napkin: type plain arithmetic, press Enter, see the value. Parsed by `puzzles.napkin`, never
evaluated as Python, so nothing typed here can do more than arithmetic."""
from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Label, Static

from puzzles.napkin import NapkinError, evaluate, format_number

MAX_LINES = 6


class NapkinPad(Vertical):
    """An input line and the last few results."""

    HELP = """\
## The napkin

Type a sum and press **Enter**: `141e9 / 3.35e12`, `2 * 80 * 8 * 128 * 2`, `(80 - 16) GiB / 1.25 GiB`.

- Numbers: `42`, `3.35`, `1e9`, `1_000`
- Operators: `+ - * / **` (or `^`) and parentheses
- Suffixes after a number: `k M G T`, `GB TB GiB TiB`, `TB/s`, `TFLOPS`, `ms us`, `%`

Names, calls and anything else are refused, with the reason. Earlier results stay listed
under the line. There are no variables: copy a number by typing it, as on a real napkin.
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

    class Evaluated(Message):
        """A sum the napkin accepted: the text typed and its value."""

        def __init__(self, expression: str, value: float) -> None:
            super().__init__()
            self.expression = expression
            self.value = value

    def __init__(self, cursor_blink: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self._cursor_blink = cursor_blink
        self.history: list[str] = []

    def compose(self) -> ComposeResult:
        yield Input(placeholder="napkin: e.g. 141e9 / 3.35e12", id="napkin-input",
                    compact=True)
        yield Label("", id="napkin-result", markup=False)
        yield Static("", id="napkin-history", markup=False)

    def on_mount(self) -> None:
        self.input.cursor_blink = self._cursor_blink

    @property
    def input(self) -> Input:
        return self.query_one("#napkin-input", Input)

    def calculate(self, text: str) -> float | None:
        """Evaluate `text`, show the value or the refusal; return the value or None."""
        result = self.query_one("#napkin-result", Label)
        try:
            value = evaluate(text)
        except NapkinError as error:
            result.update(f"✗ {error}")
            result.add_class("-error")
            return None
        result.remove_class("-error")
        shown = format_number(value)
        result.update(f"= {shown}")
        self.history.append(f"{text.strip()} = {shown}")
        del self.history[:-MAX_LINES]
        self.query_one("#napkin-history", Static).update("\n".join(reversed(self.history[:-1])))
        self.post_message(self.Evaluated(text, value))
        return value

    @on(Input.Submitted, "#napkin-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.calculate(event.value)
