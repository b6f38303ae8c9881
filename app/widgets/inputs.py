"""Text boxes that take keys in the order they arrive.

Textual's Input inserts a printable key as soon as it reaches the box, but its editing keys
(Backspace, Delete, arrows, Enter) are bindings, run only after the key has bubbled up through
every container to the app and come back as an action. Typed fast (a paste, a quick typist, a
browser sending a burst), a digit that follows Backspace lands first and the Backspace then
deletes it: the edit is lost and the field seems to revert. Enter has the same race, so the next
sum typed after Enter is glued onto the one being submitted. These boxes run their own editing
keys at once, in order with the printable ones.

Tab is the same race between controls: it moves the focus only once it has bubbled up to the app,
so a key typed straight after it still lands in the control being left. `follow_focus` and
`move_focus` are how these boxes and the menus (app/widgets/picker.py) move on at once and hand
on any key that reached them after the focus left.
"""
from __future__ import annotations

from functools import cache

from textual import events
from textual.binding import Binding
from textual.widgets import Input


def follow_focus(widget, event: events.Key) -> bool:
    """True (and the key sent on to the control that has the focus now) when `event` reached
    `widget` after an earlier key of the same burst moved the focus on: it was typed for the
    next control, so it goes there, still in order."""
    focused = widget.screen.focused
    if focused is widget or focused is None:
        return False
    event.stop()
    event.prevent_default()
    focused.post_message(events.Key(event.key, event.character))
    return True


def move_focus(widget, key: str) -> bool:
    """Tab or Shift+Tab moves the focus at once, from `widget`, rather than after the key has
    bubbled up to the app; False for any other key."""
    if key == "tab":
        widget.screen.focus_next()
    elif key == "shift+tab":
        widget.screen.focus_previous()
    else:
        return False
    return True


@cache
def _own_keys(cls: type) -> dict[str, str]:
    """key → action for the bindings an Input class declares itself (Textual's and ours)."""
    keys: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, Input)):
            continue
        for binding in klass.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding):
                for key in binding.key.split(","):
                    keys[key.strip()] = binding.action
    return keys


class OrderedInput(Input):
    """An Input whose editing keys act in arrival order with the characters typed."""

    async def on_key(self, event: events.Key) -> None:
        # Textual calls each class's key handler in turn (this one before Input's own), unless one
        # prevents the default; so this handles only the editing keys and leaves the rest alone.
        if follow_focus(self, event):
            return
        if move_focus(self, event.key):
            event.stop()
            event.prevent_default()
            return
        if event.is_printable:
            return
        keys = _own_keys(type(self))
        action = next((keys[key] for key in event.aliases if key in keys), None)
        if action is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(action)


class SumInput(OrderedInput):
    """A line for one sum at a time: Enter hands the text on and empties the line at once, so
    keys typed straight after Enter start the next sum instead of joining this one. Up and Down
    bring back the sums remembered so far."""

    BINDINGS = [
        Binding("up", "recall(-1)", "Earlier sum", id="napkin.earlier", show=False,
                tooltip="Bring back the sum before"),
        Binding("down", "recall(1)", "Later sum", id="napkin.later", show=False,
                tooltip="Bring back the sum after"),
    ]

    last_submitted: Input.Submitted | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sums: list[str] = []  # oldest first
        self._recall_at = 0

    def remember(self, text: str) -> None:
        self.sums.append(text)
        del self.sums[:-50]
        self._recall_at = len(self.sums)

    def action_recall(self, step: int) -> None:
        """Walk back and forth through the sums remembered; past the newest, an empty line."""
        if not self.sums:
            return
        self._recall_at = max(0, min(len(self.sums), self._recall_at + step))
        text = self.sums[self._recall_at] if self._recall_at < len(self.sums) else ""
        self.value = text
        self.cursor_position = len(text)

    async def action_submit(self) -> None:
        self.last_submitted = message = self.Submitted(self, self.value, None)
        self.post_message(message)
        self.value = ""

    def give_back(self, message: Input.Submitted) -> None:
        """Put a refused sum back on the line to be fixed, unless the player has moved on since
        (typed or submitted something else)."""
        if message is self.last_submitted and not self.value:
            self.value = message.value
            self.cursor_position = len(message.value)
