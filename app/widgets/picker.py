"""Choosing one of a few options, each as one widget.

Textual's Select is five widgets (its current value, two labels, an overlay list) and its
RadioSet one per button; at about 10 ms each of styling when a screen opens, the four menus and
the certainty of a prediction form cost more than the rest of the puzzle screen together. These
draw the whole control as one piece of text and keep their own keys, so they open at the cost of
a label and take keys in the order they arrive.

- `Picker`: a menu. Enter, Space or an arrow opens the list below it (inline, inside the pane,
  so it never covers the footer or runs off the screen), arrows move, Enter or Space picks,
  Escape closes; a letter jumps to the next option starting with it.
- `ChoiceList`: every option on show with a dot on the chosen one; arrows move, Enter or Space
  picks.
"""
from __future__ import annotations

from typing import Any, Iterable

from textual import events
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.style import Style
from textual.widget import Widget

from app.widgets.inputs import follow_focus, move_focus


class NoChoice:
    """The value of a control where nothing is chosen yet."""

    def __repr__(self) -> str:
        return "Picker.NULL"

    def __bool__(self) -> bool:
        return False


NULL = NoChoice()


def _wrapped(text: str | Content, width: int) -> list[Content]:
    content = text if isinstance(text, Content) else Content(text)
    return content.wrap(max(1, width)) or [Content("")]


class _OneOf(Widget, can_focus=True):
    """What a Picker and a ChoiceList share: options, a value, a highlight and Changed."""

    value: reactive[Any] = reactive(NULL, init=False, layout=True)

    class Changed(Message):
        """The chosen value changed (by a key, a click or code); each control names its own."""

        def __init__(self, control: "_OneOf", value: Any) -> None:
            super().__init__()
            self.picker = control
            self.value = value

        @property
        def control(self) -> "_OneOf":
            return self.picker

    def __init__(self, options: Iterable[tuple[str, Any]], *, value: Any = NULL, id: str | None = None,
                 classes: str | None = None, name: str | None = None, tooltip: str | None = None,
                 disabled: bool = False) -> None:
        super().__init__(id=id, classes=classes, name=name, disabled=disabled)
        self.offered: tuple[tuple[str, Any], ...] = ()
        self.highlight = 0
        self.drawn: tuple[tuple, list[tuple[Content, int | None]]] | None = None
        self.set_options(options)
        if value is not NULL:
            self.set_reactive(type(self).value, self.validate_value(value))
        self.highlight = self.index_of(self.value)
        if tooltip is not None:
            self.tooltip = tooltip

    @property
    def options(self) -> tuple[tuple[str, Any], ...]:
        """The (label, value) pairs on offer, in order."""
        return self.offered

    def set_options(self, options: Iterable[tuple[str, Any]]) -> None:
        """Offer other options; a value no longer offered is cleared."""
        self.offered = tuple((str(label), value) for label, value in options)
        if self.value is not NULL and self.value not in self.values():
            self.value = NULL
        self.highlight = min(self.highlight, max(0, len(self.offered) - 1))
        self.refresh(layout=True)

    def values(self) -> list[Any]:
        return [value for _, value in self.offered]

    def index_of(self, value: Any) -> int:
        values = self.values()
        return values.index(value) if value in values else 0

    def is_blank(self) -> bool:
        return self.value is NULL

    def validate_value(self, value: Any) -> Any:
        if value is not NULL and value not in self.values():
            raise ValueError(f"{value!r} is not one of the options of #{self.id}")
        return value

    def watch_value(self, value: Any) -> None:
        self.highlight = self.index_of(value)
        self.post_message(self.Changed(self, value))

    def label_of(self, value: Any) -> str:
        return next((label for label, v in self.offered if v == value), "")

    def move(self, step: int) -> None:
        if self.offered:
            self.highlight = max(0, min(len(self.offered) - 1, self.highlight + step))
            self.refresh(layout=True)

    def pick(self, index: int) -> None:
        """Choose the option at `index` (a key or a click)."""
        self.highlight = index
        self.value = self.offered[index][1]

    # -- drawing -------------------------------------------------------------------------
    def lines(self, width: int) -> list[tuple[Content, int | None]]:
        """The control at `width` cells: one Content per screen line, with the option it shows."""
        state = (width, self.value, self.highlight, self.has_focus, *self.draw_state())
        if self.drawn is None or self.drawn[0] != state:
            self.drawn = (state, self._draw(width))
        return self.drawn[1]

    def draw_state(self) -> tuple:
        return ()

    def _draw(self, width: int) -> list[tuple[Content, int | None]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _option_lines(self, index: int, width: int, mark: str) -> list[tuple[Content, int | None]]:
        """An option's label wrapped after a two-cell `mark`, the highlighted one in the cursor's
        colours (with `›` when focused, so it is not colour alone)."""
        label, _ = self.offered[index]
        lit = index == self.highlight and self.has_focus
        out = []
        for n, line in enumerate(_wrapped(label, width - 2)):
            head = (mark if n == 0 else "  ")
            row = Content(head) + line + " " * max(0, width - 2 - line.cell_length)
            if lit:  # the style itself: a partial component style drops an opaque background
                row = row.stylize(Style.from_styles(self.get_component_styles("picker--highlight")))
            out.append((row, index))
        return out

    def render(self) -> Content:
        return Content("\n").join(line for line, _ in self.lines(self.size.width))

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self.lines(width))

    def get_content_width(self, container, viewport) -> int:
        return max((len(label) for label, _ in self.offered), default=0) + 2

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def _option_at(self, y: int) -> int | None:
        lines = self.lines(self.size.width)
        return lines[y][1] if 0 <= y < len(lines) else None


class Picker(_OneOf):
    """A menu in one widget: its value with ▼, and when open the options below it."""

    NULL = NULL
    VISIBLE = 8  # options shown at once when open; the rest scroll past

    COMPONENT_CLASSES = {"picker--prompt", "picker--arrow", "picker--highlight", "picker--more"}

    DEFAULT_CSS = """
    Picker {
        height: auto;
        width: 1fr;
        padding: 0 1 0 0;
        pointer: pointer;
        &:focus { background-tint: $foreground 10%; }
        & > .picker--prompt { color: $foreground 50%; }
        & > .picker--arrow { color: $foreground 50%; }
        &:focus > .picker--arrow { color: $text-accent; text-style: bold; }
        & > .picker--more { color: $foreground 75%; }
        & > .picker--highlight {
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }
        &:disabled { opacity: 60%; }
    }
    """

    expanded: reactive[bool] = reactive(False, init=False, layout=True)

    class Changed(_OneOf.Changed):
        """A Picker's value changed."""

    class Toggled(Message):
        """The list opened or closed (a screen that says where the keyboard is can say so)."""

        def __init__(self, picker: "Picker", expanded: bool) -> None:
            super().__init__()
            self.picker = picker
            self.expanded = expanded

        @property
        def control(self) -> "Picker":
            return self.picker

    def __init__(self, options: Iterable[tuple[str, Any]], *, prompt: str = "choose", value: Any = NULL,
                 allow_blank: bool = True, **kwargs) -> None:
        self.prompt = prompt
        options = tuple(options)
        if not allow_blank and value is NULL and options:
            value = options[0][1]
        super().__init__(options, value=value, **kwargs)
        self.top = 0

    def draw_state(self) -> tuple:
        return (self.expanded, self.top)

    def watch_expanded(self, expanded: bool) -> None:
        self.post_message(self.Toggled(self, expanded))
        if expanded:
            self.highlight = self.index_of(self.value)
            self._keep_in_view()
            self.call_after_refresh(self.scroll_visible, animate=False)

    def _keep_in_view(self) -> None:
        if self.highlight < self.top:
            self.top = self.highlight
        elif self.highlight >= self.top + self.VISIBLE:
            self.top = self.highlight - self.VISIBLE + 1

    def move(self, step: int) -> None:
        super().move(step)
        self._keep_in_view()

    def _draw(self, width: int) -> list[tuple[Content, int | None]]:
        blank = self.value is NULL
        text = Content.styled(self.prompt, ".picker--prompt") if blank else Content(self.label_of(self.value))
        arrow = Content.styled("▲" if self.expanded else "▼", ".picker--arrow")
        lines: list[tuple[Content, int | None]] = []
        for n, line in enumerate(_wrapped(text, width - 2)):
            pad = " " * max(0, width - 2 - line.cell_length)
            lines.append((line + pad + " " + (arrow if n == 0 else Content(" ")), None))
        if not self.expanded:
            return lines
        shown = range(self.top, min(len(self.offered), self.top + self.VISIBLE))
        if self.top > 0:
            lines.append((Content.styled(f"  ↑ {self.top} more", ".picker--more"), None))
        for index in shown:
            lines.extend(self._option_lines(index, width, "› " if index == self.highlight else "  "))
        below = len(self.offered) - shown.stop
        if below > 0:
            lines.append((Content.styled(f"  ↓ {below} more", ".picker--more"), None))
        return lines

    def pick(self, index: int) -> None:
        super().pick(index)
        self.expanded = False

    def on_blur(self) -> None:
        self.expanded = False
        super().on_blur()

    async def on_key(self, event: events.Key) -> None:
        # Keys act here, in the order they arrive, before any binding of the screen sees them
        # (an open menu keeps Escape and letters to itself).
        if follow_focus(self, event):
            return
        key = event.key
        handled = True
        if key in ("tab", "shift+tab"):
            self.expanded = False
            move_focus(self, key)
        elif not self.expanded:
            if key in ("enter", "space", "down", "up") and self.offered:
                self.expanded = True
            else:
                handled = False
        elif key in ("up", "down"):
            self.move(-1 if key == "up" else 1)
        elif key in ("pageup", "pagedown"):
            self.move(-self.VISIBLE if key == "pageup" else self.VISIBLE)
        elif key in ("home", "end"):
            self.move(-len(self.offered) if key == "home" else len(self.offered))
        elif key in ("enter", "space"):
            self.pick(self.highlight)
        elif key == "escape":
            self.expanded = False
        elif event.is_printable and event.character:
            self._jump(event.character)
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()

    def _jump(self, letter: str) -> None:
        """The next option whose label starts with `letter` (after the highlighted one)."""
        count = len(self.offered)
        for step in range(1, count + 1):
            index = (self.highlight + step) % count
            if self.offered[index][0][:1].lower() == letter.lower():
                self.move(index - self.highlight)
                return

    def on_click(self, event: events.Click) -> None:
        index = self._option_at(event.y) if self.expanded else None
        if index is not None:
            self.pick(index)
        else:
            self.expanded = not self.expanded and bool(self.offered)


class ChoiceList(_OneOf):
    """Every option on show, a dot on the chosen one: the control when the choices themselves
    teach something (the points each certainty stakes)."""

    NULL = NULL

    COMPONENT_CLASSES = {"picker--highlight"}

    class Changed(_OneOf.Changed):
        """A ChoiceList's value changed."""

    DEFAULT_CSS = """
    ChoiceList {
        height: auto;
        width: 1fr;
        pointer: pointer;
        &:focus { background-tint: $foreground 5%; }
        & > .picker--highlight {
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }
    }
    """

    def _draw(self, width: int) -> list[tuple[Content, int | None]]:
        lines: list[tuple[Content, int | None]] = []
        for index, (_, value) in enumerate(self.offered):
            lines.extend(self._option_lines(index, width, "● " if value == self.value else "○ "))
        return lines

    async def on_key(self, event: events.Key) -> None:
        if follow_focus(self, event):
            return
        key = event.key
        if key in ("up", "down"):
            self.move(-1 if key == "up" else 1)
        elif key in ("enter", "space") and self.offered:
            self.pick(self.highlight)
        elif not move_focus(self, key):
            return
        event.stop()
        event.prevent_default()

    def on_click(self, event: events.Click) -> None:
        index = self._option_at(event.y)
        if index is not None:
            self.pick(index)
