"""F1 help: what the focused part is for, what the screen is for, and every key that works here."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Label, Markdown, Static

from app.errors import Guarded


def help_for(widget: Widget | None, screen: Screen) -> str | None:
    """The help text of the focused widget or its nearest ancestor that has one of Ridge's own."""
    node = widget
    while node is not None and node is not screen:
        text = getattr(node, "ridge_help", None)
        if text:
            return text
        if type(node).__module__.startswith("app.") and getattr(type(node), "HELP", None):
            return type(node).HELP
        node = node.parent
    return None


def key_lines(screen: Screen) -> list[str]:
    """`key  what it does` for every binding active on the screen, shown ones first."""
    rows = []
    seen = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.description or (binding.action, key) in seen or binding.system:
            continue
        seen.add((binding.action, key))
        shown = screen.app.get_key_display(binding)
        text = binding.tooltip or binding.description
        rows.append((not binding.show, f"{shown:>8}  {binding.description}: {text}"
                     if text != binding.description else f"{shown:>8}  {binding.description}"))
    rows.sort(key=lambda row: row[0])
    lines = [text for _, text in rows]
    lines.append(f"{'ctrl+p':>8}  Command palette: every action above, by name")
    lines.append(f"{'tab':>8}  Move to the next control (shift+tab: back); Enter or Space to use it")
    return lines


class HelpScreen(Guarded, ModalScreen[None]):
    """Help for the focused part, the screen, and its keys. F1 or Escape closes it."""

    BINDINGS = [Binding("escape,f1,q", "close", "Close", id="help.close")]

    def __init__(self, screen: Screen, focused: Widget | None) -> None:
        super().__init__(id="help")
        self.for_screen = screen
        self.focused_widget = focused

    def compose(self) -> ComposeResult:
        focused_help = help_for(self.focused_widget, self.for_screen)
        screen_help = getattr(type(self.for_screen), "HELP", None)
        with Vertical(classes="dialog help-dialog"):
            yield Label("Help  (F1 or Escape to close)", classes="dialog-title")
            with VerticalScroll(id="help-body"):
                if focused_help and focused_help != screen_help:
                    yield Markdown(focused_help, id="help-focused")
                if screen_help:
                    yield Markdown(screen_help, id="help-screen")
                yield Label("Keys on this screen", classes="section-title")
                yield Static("\n".join(key_lines(self.for_screen)), id="help-keys", markup=False)

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
