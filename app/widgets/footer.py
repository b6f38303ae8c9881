"""The footer every Ridge screen shows: Textual's, with its keys in the screen's first frame and
redrawn only when the keys it shows change.

Textual's Footer composes nothing when it is mounted: it waits for the screen to report its
bindings (after the first refresh), then rebuilds itself, so every screen's first frame has an
empty footer and a second layout follows to fill it in. The bindings are already known when the
footer is composed, so this one shows them at once. And Textual's Footer rebuilds all its keys
whenever the screen's bindings are refreshed (focus moves, a screen opens), even when nothing it
shows has changed; this one compares what it would show with what it shows.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # not re-exported by textual.widgets (Textual is pinned)


class RidgeFooter(Footer):
    """A Footer whose first compose already has the keys, and which skips rebuilding when its
    keys, labels and enabled states are unchanged."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple | None = None

    def _signature(self, screen) -> tuple:
        return tuple((key, binding.action, binding.description, enabled, tooltip)
                     for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
                     if binding.show or key == self.app.COMMAND_PALETTE_BINDING)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready and self.is_attached:
            # The keys the screen offers before anything has focus; if focusing a widget changes
            # them, `bindings_changed` sees a different signature and rebuilds as Textual would.
            self._shown = self._signature(self.screen)
            self.set_reactive(Footer._bindings_ready, True)
        for widget in super().compose():
            if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or {}):
                # A key bound to the footer's `compact` starts compact and then takes the
                # footer's value, restyling itself twice as it mounts (~0.5 ms each time);
                # start it as it would end. (The palette key is not bound and stays compact.)
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen) -> None:
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            signature = self._signature(screen)
            if signature == self._shown and self._bindings_ready:
                return
            self._shown = signature
        super().bindings_changed(screen)
