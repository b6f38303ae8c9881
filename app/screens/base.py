"""The one base of Ridge's screens: Textual's Screen with the crash guard (app.errors.Guarded),
so an error while a screen handles a key, a click or a mount is logged and told, never fatal, and
restyled on a resume only when the styles changed (app.styling.KeepsStyles: bench/bench_feel.py
measured a return to the kept simulator at 846 ms without it, 65 ms with it).
A modal dialog is `class Dialog(ModalScreen[T], RidgeScreen)`: ModalScreen first, as Textual takes a
screen's styles (and its type names for selectors) along its first base only.

Asking the player. A screen that needs an answer before it acts (leave? lock in?) writes the whole
exchange as one coroutine under `@asking`, which awaits `self.answer_to(dialog)` (or
`app.screens.dialogs.confirm` for a yes or a no) and then acts: Textual's `push_screen_wait`, run in
a worker of the group ASKING. Such a worker spends most of its life waiting on the player, so
whatever waits for the app to settle (the tests' helpers, the keyboard walk, the benchmarks) waits
only for the workers still at work (`at_work`): one waiting on an answer is as settled as it gets.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Coroutine, TypeVar

from textual import work
from textual.screen import Screen
from textual.worker import get_current_worker

from app.errors import Guarded, keep_going
from app.messages import Back
from app.styling import KeepsStyles

T = TypeVar("T")

ASKING = "asking"  # the worker group of every question put to the player (`asking`)
_WAITING: weakref.WeakSet = weakref.WeakSet()  # the workers now waiting on a dialog's answer (`answer_to`)


def asking(method: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., Any]:
    """Run `method`, a coroutine that asks the player something and acts on the answer, as a worker
    of the group ASKING (`push_screen_wait` works only in a worker). An error in it, before or after
    the answer, is logged and told like a key's (`keep_going`), not the end of Ridge. A key that
    would ask again while the first question is on its way (keys typed ahead: the worker starts a
    moment after the key) starts nothing; with the callback dialogs before, that key went to the
    dialog, which was on screen at once."""

    @functools.wraps(method)
    async def exchange(self, *args: Any, **kwargs: Any) -> None:
        try:
            await method(self, *args, **kwargs)
        finally:
            self.question_coming = False

    guarded = work(group=ASKING, name=method.__name__)(keep_going(exchange))

    @functools.wraps(method)
    def start(self, *args: Any, **kwargs: Any) -> Any:
        if self.question_coming:
            return None
        self.question_coming = True
        return guarded(self, *args, **kwargs)

    return start


def waits_on_player(worker) -> bool:
    """Whether `worker` waits on the answer to a dialog (`RidgeScreen.answer_to`): on screen, or
    left open below another mode, or closed unanswered (then it waits for ever, costing nothing)."""
    return worker in _WAITING and not worker.is_finished


def at_work(app) -> list:
    """The app's workers still at work: not finished, and not waiting on the player. What a wait
    for the app to settle waits for: waiting on a question as well would wait for ever."""
    return [worker for worker in app.workers if not worker.is_finished and not waits_on_player(worker)]


async def wait_for_work(app) -> None:
    """Wait until the workers at work that end on their own have ended. Not a question: it may
    reach its dialog at any moment and then wait for ever, so a caller that waits for the app to
    settle checks `at_work` again after a pause instead."""
    ending = [worker for worker in at_work(app) if worker.group != ASKING]
    if ending:
        await app.workers.wait_for_complete(ending)


class RidgeScreen(Guarded, KeepsStyles, Screen):
    """A Ridge screen: Textual's own, guarded, and restyled only when the styles changed."""

    # True from a key that starts a question (`asking`) until its dialog is pushed or it asks nothing.
    question_coming = False

    def leave(self) -> None:
        """Back to where this screen was opened from (or quit, when it runs on its own): the app
        decides where that is (app.messages.Back)."""
        self.post_message(Back(self))

    def action_back(self) -> None:
        self.leave()

    async def answer_to(self, dialog: Screen[T]) -> T:
        """Show `dialog` over this screen and return its answer. Only inside a method under `@asking`."""
        worker = get_current_worker()
        self.question_coming = False  # from here the dialog is on screen, and takes the keys
        _WAITING.add(worker)
        try:
            return await self.app.push_screen_wait(dialog)
        finally:
            _WAITING.discard(worker)
