"""The footer every Ridge screen shows: Textual's, redrawn only when the keys it shows change.

Textual's Footer rebuilds all its keys whenever the screen's bindings are refreshed (focus moves,
a screen opens), even when nothing it shows has changed; on the reveal that was most of the time
from lock-in to the first frame. This one compares what it would show with what it shows.
"""
from __future__ import annotations

from textual.widgets import Footer


class RidgeFooter(Footer):
    """A Footer that skips rebuilding when its keys, labels and enabled states are unchanged."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple | None = None

    def _signature(self, screen) -> tuple:
        return tuple((key, binding.action, binding.description, enabled, tooltip)
                     for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
                     if binding.show or key == self.app.COMMAND_PALETTE_BINDING)

    def bindings_changed(self, screen) -> None:
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            signature = self._signature(screen)
            if signature == self._shown and self._bindings_ready:
                return
            self._shown = signature
        super().bindings_changed(screen)
