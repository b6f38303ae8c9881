"""The one base of Ridge's screens: Textual's Screen with the crash guard (app.errors.Guarded),
so an error while a screen handles a key, a click or a mount is logged and told, never fatal, and
restyled on a resume only when the styles changed (app.styling.KeepsStyles: bench/bench_feel.py
measured a return to the kept simulator at 846 ms without it, 65 ms with it).
A modal dialog is `class Dialog(ModalScreen[T], RidgeScreen)`: ModalScreen first, as Textual takes a
screen's styles (and its type names for selectors) along its first base only."""
from __future__ import annotations

from textual.screen import Screen

from app.errors import Guarded
from app.messages import Back
from app.styling import KeepsStyles


class RidgeScreen(Guarded, KeepsStyles, Screen):
    """A Ridge screen: Textual's own, guarded, and restyled only when the styles changed."""

    def leave(self) -> None:
        """Back to where this screen was opened from (or quit, when it runs on its own): the app
        decides where that is (app.messages.Back)."""
        self.post_message(Back(self))

    def action_back(self) -> None:
        self.leave()
