"""The footer every Ridge screen shows: the screen's keys, in its first frame, redrawn only when the
keys it shows change. Built on Textual's public API alone.

Textual's Footer composes nothing when it is mounted: it waits for the screen to report its
bindings (after the first refresh), then rebuilds itself, so every screen's first frame would have
an empty footer and a second layout would follow to fill it in. The bindings are already known
(`Screen.active_bindings`) when the footer is composed, so this one shows them at once. Textual's
Footer also rebuilds all its keys whenever the screen's bindings are refreshed (focus moves, a
screen opens), even when nothing it shows has changed; this one compares what it would show with
what it shows. The keys are `KeyCap`s, drawn as Textual's own footer keys are (same theme
variables, same spacing), so the footer looks the same; at 80 columns every screen's everyday
keys and the palette key fit on the one line.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer


class KeyCap(Widget):
    """One key in the footer: the key, then what it does; a click presses it."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"key-cap--key", "key-cap--description"}
    DEFAULT_CSS = """
    KeyCap {
        width: auto;
        height: 1;
        text-wrap: nowrap;
        background: $footer-item-background;
        .key-cap--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
            padding: 0 1;
        }
        .key-cap--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
            padding: 0 1 0 0;
        }
        &:hover {
            pointer: pointer;
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        &.-disabled {
            text-style: dim;
        }
        &.-palette {
            dock: right;
            padding-right: 1;
            border-left: vkey $foreground 20%;
            .key-cap--key {
                padding: 0;
            }
            .key-cap--description {
                padding: 0 0 0 1;
            }
        }
    }
    """

    def __init__(self, key: str, key_display: str, description: str, action: str, enabled: bool = True,
                 tooltip: str = "", classes: str = "") -> None:
        super().__init__(classes=f"{classes} {'' if enabled else '-disabled'}".strip())
        self.key = key
        self.key_display = key_display
        self.description = description
        self.action = action
        self.enabled = enabled
        self.set_reactive(Widget.shrink, False)
        if tooltip:
            self.tooltip = tooltip

    def render(self) -> Text:
        def padded(text: str, part: str) -> tuple[str, object]:
            pad = self.get_component_styles(part).padding
            return " " * pad.left + text + " " * pad.right, self.get_component_rich_style(part)

        parts = [padded(self.key_display, "key-cap--key")]
        if self.description:
            parts.append(padded(self.description, "key-cap--description"))
        else:
            parts = [(self.key_display, self.get_component_rich_style("key-cap--key"))]
        text = Text.assemble(*parts)
        text.stylize_before(self.rich_style)
        return text

    def on_mouse_down(self) -> None:
        if self.enabled:
            self.app.simulate_key(self.key)
        else:
            self.app.bell()


class RidgeFooter(Footer):
    """A Footer whose first compose already has the keys, and which skips rebuilding when its
    keys, labels and enabled states are unchanged."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.shown: tuple | None = None

    def signature(self, screen) -> tuple:
        """What the footer shows for `screen`: each key with its action, label, state and tip."""
        return tuple((key, binding.action, binding.description, enabled, tooltip)
                     for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
                     if binding.show or key == self.app.COMMAND_PALETTE_BINDING)

    def compose(self) -> ComposeResult:
        if not self.is_attached:
            return
        screen = self.screen
        # The keys the screen offers before anything has focus; if focusing a widget changes
        # them, `bindings_changed` sees a different signature and rebuilds as Textual would.
        self.shown = self.signature(screen)
        palette = self.app.COMMAND_PALETTE_BINDING
        seen: set[str] = set()
        for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items():
            if not binding.show or binding.action in seen:
                continue  # one key per action, as Textual's footer shows
            seen.add(binding.action)
            yield KeyCap(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                         enabled=enabled, tooltip=tooltip)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE and palette in screen.active_bindings:
            _node, binding, enabled, tooltip = screen.active_bindings[palette]
            yield KeyCap(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                         enabled=enabled, tooltip=binding.tooltip or binding.description, classes="-palette")

    def bindings_changed(self, screen) -> None:
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            signature = self.signature(screen)
            if signature == self.shown:
                return
            self.shown = signature
        super().bindings_changed(screen)
