"""The one base of Ridge's screens: Textual's Screen with the crash guard (app.errors.Guarded),
so an error while a screen handles a key, a click or a mount is logged and told, never fatal.
A modal dialog is `class Dialog(ModalScreen[T], RidgeScreen)`: ModalScreen first, as Textual takes a
screen's styles (and its type names for selectors) along its first base only."""
from __future__ import annotations

from textual.screen import Screen

from app.errors import Guarded


class RidgeScreen(Guarded, Screen):
    """A Ridge screen: Textual's own, guarded."""
