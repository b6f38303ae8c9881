"""A one-line title bar: "Ridge — where you are". Lighter than Textual's Header (one widget
instead of four), which matters on the reveal, drawn in the moment after a lock-in."""
from __future__ import annotations

from textual.widgets import Static


class TitleBar(Static):
    """The app's title and the screen's sub-title, kept up to date."""

    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        width: 1fr;
        height: 1;
        background: $panel;
        color: $foreground;
        text-align: center;
        text-style: bold;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)

    def on_mount(self) -> None:
        self.watch(self.screen, "sub_title", self._retitle)

    def _retitle(self, sub_title: str = "") -> None:
        title = self.app.title or "Ridge"
        sub_title = sub_title or self.app.sub_title
        self.update(f"{title} — {sub_title}" if sub_title else title)
