"""Modal dialogs, each returning its answer through `dismiss`: a yes/no question, the name of a
new player, and the choice of who is playing."""
from __future__ import annotations

from typing import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from app.screens.base import RidgeScreen, asking
from app.widgets.inputs import OrderedInput


class ConfirmDialog(ModalScreen[bool], RidgeScreen):
    """A question with two answers. Enter or y says yes; Escape or n says no."""

    HELP = """\
## A question

Answer with the buttons, or press **y** for the first answer and **n** or **Escape** for the
second. Tab moves between the buttons.
"""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="dialog.yes", show=False),
        Binding("n,escape", "answer(False)", "No", id="dialog.no", show=False),
    ]

    def __init__(self, title: str, body: str, yes: str = "Yes", no: str = "No",
                 yes_variant: str = "primary", dialog_id: str = "confirm", focus_no: bool = False) -> None:
        super().__init__(id=dialog_id)
        self.focus_no = focus_no
        self.title_text = title
        self.body = body
        self.yes = yes
        self.no = no
        self.yes_variant = yes_variant

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            with VerticalScroll(classes="dialog-body"):
                yield Static(self.body, markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, variant=self.yes_variant, id="yes")  # type: ignore[arg-type]
                yield Button(self.no, id="no")

    def on_mount(self) -> None:
        self.query_one("#no" if self.focus_no else "#yes", Button).focus()

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


async def confirm(screen: RidgeScreen, title: str, body: str, yes: str = "Yes", no: str = "No", **options) -> bool:
    """Ask a yes-or-no question over `screen` (a ConfirmDialog with its `options`); True for yes.
    Only inside a method under `@asking` (`RidgeScreen.answer_to`)."""
    return bool(await screen.answer_to(ConfirmDialog(title, body, yes=yes, no=no, **options)))


class NameDialog(ModalScreen[str | None], RidgeScreen):
    """Ask for a player's name, and nothing else. `create(name)` returns None when the profile
    was made, or one line saying what is wrong with the name."""

    HELP = """\
## Your name

Progress is saved under this name in the data folder. Use up to 32 letters, digits, spaces,
hyphens or underscores. Press **Enter** to start.
"""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel", show=False)]

    def __init__(self, create: Callable[[str], str | None], first_run: bool = True,
                 cursor_blink: bool = True) -> None:
        super().__init__(id="name-dialog")
        self.create = create
        self.first_run = first_run
        self.cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            if self.first_run:
                yield Label("Welcome to Ridge", classes="dialog-title")
                yield Static(
                    "Each puzzle is a real deployment. You say what limits it, which change helps "
                    "most and why, and lock that in; then the engine works it out and grades you.",
                    classes="dialog-text")
            else:
                yield Label("A new player", classes="dialog-title")
            yield Label("What name should your progress be saved under?", classes="dialog-text")
            yield OrderedInput(placeholder="your name", id="name", max_length=32)
            yield Label("", id="name-error", classes="dialog-error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Start", variant="primary", id="start")
                if not self.first_run:
                    yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        name = self.query_one("#name", Input)
        name.cursor_blink = self.cursor_blink
        name.focus()

    @on(Input.Submitted, "#name")
    @on(Button.Pressed, "#start")
    def _submit(self) -> None:
        name = self.query_one("#name", Input).value.strip()
        if not name:
            self.query_one("#name-error", Label).update("Type a name first.")
            return
        problem = self.create(name)
        if problem:
            self.query_one("#name-error", Label).update(problem)
            self.query_one("#name", Input).focus()
            return
        self.dismiss(name)

    @on(Button.Pressed, "#cancel")
    @asking
    async def action_cancel(self) -> None:
        if not self.first_run:
            self.dismiss(None)
        # One stray Escape must not drop a newcomer back at the shell: ask first.
        elif await confirm(self, "Leave Ridge?", "No player has been made yet, so nothing is saved.", yes="Leave",
                           no="Stay", dialog_id="leave-first-run", focus_no=True):
            self.app.exit()
        else:
            self.query_one("#name", Input).focus()


NEW_PLAYER = "\x00new"


class ProfilePicker(ModalScreen[str | None], RidgeScreen):
    """Choose who is playing, or start a new player. Dismisses with a name, NEW_PLAYER, or None."""

    HELP = """\
## Who is playing?

Each player has their own save. Pick one with the arrow keys and **Enter**, or choose
**New player** to start another.
"""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel", show=False)]

    def __init__(self, names: list[str], current: str | None = None, can_cancel: bool = True) -> None:
        super().__init__(id="profile-picker")
        self.names = names
        self.current = current
        self.can_cancel = can_cancel

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Who is playing?", classes="dialog-title")
            options = [Option(f"{name}{'  (playing now)' if name == self.current else ''}", id=f"p:{name}")
                       for name in self.names]
            options.append(Option("+ New player…", id="new"))
            yield OptionList(*options, id="profiles")

    def on_mount(self) -> None:
        picker = self.query_one("#profiles", OptionList)
        picker.focus()
        if self.current in self.names:
            picker.highlighted = self.names.index(self.current)

    @on(OptionList.OptionSelected, "#profiles")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        self.dismiss(NEW_PLAYER if option_id == "new" else option_id[2:])

    def action_cancel(self) -> None:
        if self.can_cancel:
            self.dismiss(None)
        else:
            self.app.exit()
