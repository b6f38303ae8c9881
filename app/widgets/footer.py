"""The footer every Ridge screen shows: the screen's keys, in its first frame, redrawn only when the
keys it shows change. Built on Textual's public API alone.

Textual's Footer composes nothing when it is mounted: it waits for the screen to report its
bindings (after the first refresh), then rebuilds itself, so every screen's first frame would have
an empty footer and a second layout would follow to fill it in. It also makes a widget of each
key, some eight per screen, each styled and laid out on every screen change (about 10 ms of
Ridge's start). This footer is one widget that draws the keys as one line of text, from the
bindings the screen already has (`Screen.active_bindings`) when it is first drawn, and draws again
only when what it would show differs from what it shows. It looks as Textual's footer does (the
same theme variables and spacing): each key and what it does, the palette key on the right
behind a thin rule; at 80 columns every screen's everyday keys and the palette key fit. A click
on a key presses it, hovering one lights it and shows its tooltip.
Kept by issue 26's rule, measured (bench_feel A/B): briefing->puzzle took 326 ms of CPU with
Textual's Footer, 125 ms with this one.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import events
from textual.widget import Widget

RULE = "▏"  # before the palette key, as Textual's footer draws its left border (vkey)


@dataclass(frozen=True)
class Cap:
    """One key as the footer shows it."""

    key: str
    display: str
    description: str
    enabled: bool
    tooltip: str


class RidgeFooter(Widget, can_focus=False):
    """The screen's keys on one line, and the command palette's key on the right."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"ridge-footer--key", "ridge-footer--description", "ridge-footer--hover",
                         "ridge-footer--rule"}
    DEFAULT_CSS = """
    RidgeFooter {
        dock: bottom;
        height: 1;
        width: 1fr;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        .ridge-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .ridge-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .ridge-footer--hover {
            background: $block-hover-background;
        }
        .ridge-footer--rule {
            color: $foreground 20%;
        }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.shown: tuple | None = None  # the signature of what is drawn
        self.caps: list[Cap] = []
        self.palette: Cap | None = None
        self.hover: Cap | None = None
        self.key_spans: list[tuple[int, int, Cap]] = []  # where each key was drawn: start, end (cells)

    # -- what it shows --------------------------------------------------------------------
    def signature(self, screen) -> tuple:
        """What the footer shows for `screen`: each key with its action, label, state and tip."""
        return tuple((key, binding.action, binding.description, enabled, tooltip)
                     for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
                     if binding.show or key == self.app.COMMAND_PALETTE_BINDING)

    def _read(self, screen, signature: tuple) -> None:
        """The keys from the screen's bindings: one per action, as Textual's footer shows them."""
        palette_key = self.app.COMMAND_PALETTE_BINDING
        caps: list[Cap] = []
        seen: set[str] = set()
        bindings = screen.active_bindings
        for _key, (_node, binding, enabled, tooltip) in bindings.items():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            caps.append(Cap(binding.key, self.app.get_key_display(binding), binding.description, enabled, tooltip))
        self.palette = None
        if self.app.ENABLE_COMMAND_PALETTE and palette_key in bindings:
            _node, binding, enabled, tooltip = bindings[palette_key]
            self.palette = Cap(binding.key, self.app.get_key_display(binding), binding.description, enabled,
                               binding.tooltip or binding.description)
        self.caps = caps
        self.shown = signature

    def on_mount(self) -> None:
        self._read(self.screen, self.signature(self.screen))
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen) -> None:
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            signature = self.signature(screen)
            if signature != self.shown:
                self._read(screen, signature)
                self.refresh()

    # -- drawing ----------------------------------------------------------------------------
    def _cap_text(self, cap: Cap, key: Style, description: Style, lit: Style, palette: bool = False) -> Text:
        """One key and what it does, dim when disabled and lit when hovered."""
        if cap is self.hover:
            key, description = key + lit, description + lit
        if not cap.enabled:
            key, description = key + Style(dim=True), description + Style(dim=True)
        if palette:  # no padding around the key; one space before the description, one after
            return Text.assemble((cap.display, key), (f" {cap.description}" if cap.description else "", description),
                                 " ")
        if cap.description:
            return Text.assemble((f" {cap.display} ", key), (f"{cap.description} ", description))
        return Text.assemble((cap.display, key))

    def render(self) -> Text:
        if self.shown is None:  # drawn before its on_mount ran
            self._read(self.screen, self.signature(self.screen))
        width = self.size.width
        key = self.get_component_rich_style("ridge-footer--key")
        description = self.get_component_rich_style("ridge-footer--description")
        lit = Style(bgcolor=self.get_component_rich_style("ridge-footer--hover").bgcolor)
        spans: list[tuple[int, int, Cap]] = []
        right = Text()
        if self.palette is not None:
            right = Text.assemble((RULE, self.get_component_rich_style("ridge-footer--rule")),
                                  self._cap_text(self.palette, key, description, lit, palette=True))
            spans.append((width - right.cell_len + len(RULE), width, self.palette))
        room = max(0, width - right.cell_len)
        left = Text()
        for cap in self.caps:
            start = left.cell_len
            left.append_text(self._cap_text(cap, key, description, lit))
            spans.append((start, min(left.cell_len, room), cap))
        left.truncate(room)  # keys past the palette's are hidden, as behind Textual's docked palette key
        line = Text.assemble(left, " " * (room - left.cell_len), right, no_wrap=True)
        line.stylize_before(self.rich_style)
        self.key_spans = [span for span in spans if span[0] < span[1]]
        return line

    # -- the mouse ----------------------------------------------------------------------------
    def _cap_at(self, x: int) -> Cap | None:
        return next((cap for start, end, cap in self.key_spans if start <= x < end), None)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        cap = self._cap_at(event.x)
        if cap is not self.hover:
            self.hover = cap
            self.tooltip = (cap.tooltip or None) if cap is not None else None
            self.refresh()

    def on_leave(self) -> None:
        if self.hover is not None:
            self.hover = None
            self.tooltip = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        cap = self._cap_at(event.x)
        if cap is None:
            return
        if cap.enabled:
            self.app.simulate_key(cap.key)
        else:
            self.app.bell()
