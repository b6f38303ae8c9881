"""F1 help: what the focused part is for, what the screen is for, and every key that works here."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Label, Markdown, Static

from app.screens.base import RidgeScreen
from app.widgets.hanging import hanging


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


# How the controls take keys, in words, for the control that has focus. Their bindings are not
# listed one by one: a player needs "Enter opens the list", not "super+c Copy".
CONTROL_KEYS = (
    ("Picker", "Enter or Space opens the list; ↑ ↓ choose; a letter jumps; Enter picks; Escape closes it"),
    ("ChoiceList", "↑ ↓ move between the choices; Enter or Space picks one"),
    ("Input", "type a value; ← → Home End move; Backspace deletes; Enter confirms"),
    ("RadioSet", "↑ ↓ move between the choices; Enter or Space picks one"),
    ("Button", "Enter or Space presses it"),
    ("Switch", "Enter or Space turns it on or off"),
    ("OptionList", "↑ ↓ choose; Enter opens the one highlighted"),
    ("Tabs", "← → switch between the tabs"),
    ("DataTable", "arrows move; Enter picks the row"),
    ("ScrollableContainer", "↑ ↓ Page Up/Down Home End scroll it"),
)


def control_keys(widget: Widget | None) -> str | None:
    """How the focused control takes keys, in words, from the nearest kind we describe."""
    if widget is None:
        return None
    names = {klass.__name__ for klass in type(widget).__mro__}
    return next((words for name, words in CONTROL_KEYS if name in names), None)


def key_lines(screen: Screen) -> list[str]:
    """`key  what it does`, one line per key_rows row."""
    return [f"{keys:>8}  {what}" for keys, what in key_rows(screen)]


def key_rows(screen: Screen) -> list[tuple[str, str]]:
    """(keys, what they do) for each of Ridge's own actions active on the screen, once each (all
    its keys on one line), the footer's first; then how the focused control and the palette
    work. Textual's built-in bindings (an Input's copy) are not listed."""
    rows: dict[tuple[str, str], dict] = {}
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.id or binding.system or not binding.description:
            continue  # Ridge's bindings carry ids; Textual's own do not
        row = rows.setdefault((binding.action, binding.description),
                              {"keys": [], "binding": binding, "show": binding.show})
        shown = screen.app.get_key_display(binding)
        if shown not in row["keys"]:
            row["keys"].append(shown)
        row["show"] = row["show"] or binding.show
    lines = []
    for row in sorted(rows.values(), key=lambda r: not r["show"]):
        binding = row["binding"]
        keys = "/".join(row["keys"])
        text = binding.tooltip or binding.description
        what = f"{binding.description}: {text}" if text != binding.description else binding.description
        lines.append((keys, what))
    focused = control_keys(screen.focused)
    if focused:
        lines.append(("here", focused))
    lines.append(("ctrl+p", "Command palette: every action above, by name"))
    lines.append(("tab", "Move to the next control (shift+tab: back)"))
    return lines


class HelpScreen(ModalScreen[None], RidgeScreen):
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
                yield Label("Keys on this screen", classes="section-title")
                yield Static(hanging([(keys.rjust(8), what) for keys, what in key_rows(self.for_screen)], gap=2),
                             id="help-keys")
                if screen_help:
                    yield Markdown(screen_help, id="help-screen")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
