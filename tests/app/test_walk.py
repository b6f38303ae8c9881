"""The keyboard walk (DESIGN.md "A session never breaks"): a seeded random walk that drives the
real app through Pilot from the home screen into every way to play, form and dialog, as a
player at the keyboard could, and after every step checks what a learner is promised:

- nothing reached the crash guard (no error logged and told, and Ridge still running);
- the screen stack is never empty;
- every lock-in is on disk: exactly one attempt in some player's save per answer made final;
- Escape on every screen but home, and every key the home screen offers, leads somewhere (the
  screen, the focus, the layout of the focused control or a notice changes) within a bounded
  wait: a condition, never a sleep.

The walk chooses only from what the screen offers at that moment: the keys of the screen's and
the app's active bindings (as Textual reports them; those not yet pressed on that kind of screen
first), the keys every control takes (Enter, arrows, Tab, Space, Escape, letters), text for a
focused text box
(valid and invalid), filling a form part by part, the command palette, a resize between 80x24
and 160x50, and switching players. It knows no widget class of its own making, so it survives
a change of widgets. Nothing depends on this machine's speed: the countdowns run on the walk's
own clock (a second per step), every step waits until the app is quiet, and the choices depend
only on the seed and what is on screen.

`RIDGE_WALK_STEPS=2000 pytest tests/app/test_walk.py` walks longer; `RIDGE_WALK_SEEDS=11,12,13`
walks other seeds, and a hunt (`RIDGE_HUNT=1 pytest -m hunt`) fresh ones. A failure names the
seed, the step and the last keys, so it replays exactly. Removing a screen's Escape binding makes
the walk fail on the seeds that reach that screen: tried with the briefing's, and with the map's
(seeds 2 and 3 fail at steps 49 and 46: "the key to lead somewhere ... on CampaignScreen").
"""
from __future__ import annotations

import asyncio
import os
import random
import unicodedata
from collections import deque

import pytest
from textual import events
from textual.keys import key_to_character
from textual.widgets import Input

from app.game import RidgeApp, make_app
from puzzles.chapters import Bank
from app.screens import rounds
from app.screens.base import wait_for_work
from app.screens.dialogs import ConfirmDialog
from app.screens.home import HomeScreen
from helpers.hunt import HUNT
from helpers.pilot import quiet, settled, until
from saves.store import SaveStore
from helpers.snapshots import FIXED_NOW, fixture_bank

pytestmark = [pytest.mark.ui, pytest.mark.slow]

# The suite walks fixed seeds; a hunt (RIDGE_HUNT, tests/helpers/hunt.py) walks three fresh ones, which a
# failure names so that RIDGE_WALK_SEEDS replays it.
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(random.SystemRandom().random())  # one per run,
_FRESH = ",".join(str(random.Random(f"{_RUN}:{i}").randrange(10**6)) for i in range(3))  # every worker alike
SEEDS = tuple(int(s) for s in os.environ.get("RIDGE_WALK_SEEDS", _FRESH if HUNT else "1,2,3").split(",")
              if s.strip())
STEPS = int(os.environ.get("RIDGE_WALK_STEPS", "0") or 0) or 70
PLAYERS = ("Ada", "Bo")
SIZES = ((80, 24), (120, 40), (160, 50), (100, 30), (80, 50), (160, 24))

# Keys every control takes, whether or not a binding lists them.
PLAIN_KEYS = ("enter", "enter", "space", "tab", "tab", "shift+tab", "up", "down", "down", "pageup",
              "pagedown", "home", "end", "escape", "left", "right", "a", "b", "x", "1")
# Text a player might type: valid and invalid, for names, numbers, sums, dates and match codes.
TEXTS = ("12", "0.5", "2*70e9/141e9", "12 ms", "3e-3", "1e400", "-3", "0", "abc", "", "1/0",
         "９", "Ada", "Grace, Linus", "Bo, Bo", "x" * 40, "../evil", "2026-03-09", "2026-13-45",
         "R-42-2-8", "R-1-1-1", "((", "💥")
VALID_BY_FIELD = {"players": ("Ada, Grace", "Bo, Cy, Di"), "code": ("R-42-2-8", "R-7-1-3"),
                  "player-name": ("Ada", "Bo"), "name": ("Cy", "Di", "Ada"), "exam-date": ("2026-04-01", "")}
NUMBERS = ("1", "0.02", "300", "2*70e9/141e9", "40", "2.5")
# Words typed into the command palette: each matches some of Ridge's commands (never Quit).
PALETTE_WORDS = ("map", "help", "lock", "hint", "next", "pin", "save", "start", "brief", "napkin", "tab")


def key_event(key: str) -> events.Key:
    """The Key event a terminal sends for `key` (a key name, or one character typed), named as
    Textual names keys."""
    if len(key) == 1 and not key.isalnum():
        key = unicodedata.name(key, key).lower().replace("-", "_").replace(" ", "_")
    return events.Key(key, key_to_character(key))


class WalkClock:
    """The countdowns' clock: it moves only when the walk says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Walk:
    """One seeded walk over a running app."""

    def __init__(self, app: RidgeApp, pilot, seed: int, save_dir, counters: dict) -> None:
        self.app, self.pilot, self.seed, self.save_dir = app, pilot, seed, save_dir
        self.counters = counters  # "locked": lock-ins made final (see `instrumented`)
        self.rng = random.Random(seed)
        self.trail: deque[str] = deque(maxlen=25)
        self.step_no = 0
        self.notices = 0
        self.quits = 0
        self.seen: set[str] = set()  # the kinds of screen the walk has been on
        self.pressed: set[tuple[str, str]] = set()  # (kind of screen, key) of the bindings pressed

    @property
    def locked(self) -> int:
        return self.counters["locked"]

    # -- what the player can see --------------------------------------------------------
    def screen_name(self) -> str:
        return type(self.app.screen).__name__

    def signature(self) -> tuple:
        """What a key that leads somewhere changes: the screen, the stack, the mode, the focus, the
        focused control's size (a list opening), or a notice."""
        app = self.app
        focused = app.focused
        size = tuple(focused.size) if focused is not None else ()
        classes = tuple(sorted(focused.classes)) if focused is not None else ()
        return (id(app.screen), len(app.screen_stack), app.current_mode, id(focused), size, classes,
                self.notices)

    def at_home(self) -> bool:
        return isinstance(self.app.screen, HomeScreen)

    # -- the choices ----------------------------------------------------------------------
    def bindings(self) -> list[tuple[str, bool]]:
        """(key, leads somewhere) for each enabled binding of the screen and the app, quitting
        aside (a focused control's own keys are among PLAIN_KEYS): the home screen's own keys
        each open something or say why not."""
        screen = self.app.screen
        home = self.at_home()
        return [(key, home and active.node is screen and bool(active.binding.id))  # Ridge's own carry ids
                for key, active in screen.active_bindings.items()
                if active.enabled and active.binding.action not in ("quit", "app.quit")
                and (active.node is screen or active.node is self.app)]

    def binding_keys(self) -> list[str]:
        return [key for key, _ in self.bindings()]

    def choose_binding(self) -> tuple[str, bool]:
        """A binding, those not yet pressed on this kind of screen first (so a short walk
        presses every one), and the rest seldom."""
        offered = self.bindings() or [("escape", False)]
        name = self.screen_name()
        weights = [1 if (name, key) in self.pressed else 8 for key, _ in offered]
        key, navigation = self.rng.choices(offered, weights)[0]
        self.pressed.add((name, key))
        return key, navigation

    async def quiet(self) -> None:
        """Until every message is handled, every worker done (but a question waiting on the player's
        answer: `app.screens.base.wait_for_work`) and every animation over."""
        app = self.app
        calm = 0
        for _ in range(20000):
            await wait_for_work(app)
            await asyncio.sleep(0)
            calm = calm + 1 if quiet(app) else 0
            if calm >= 4:
                break
        else:
            raise AssertionError(f"the app never went quiet: {self.where()}")
        await self.pilot.pause(0)  # and every widget on screen has handled what it was sent
        await self.pilot.wait_for_animation()

    async def keys(self, *keys: str) -> None:
        """Each key as the terminal sends it, handled before the next (Pilot's own `press` also
        waits for the process to look idle, twice per key: most of a walk's time)."""
        for key in keys:
            self.app.post_message(key_event(key))
            await self.quiet()

    async def press(self, *keys: str) -> None:
        self.trail.append(" ".join(keys))
        await self.keys(*keys)

    async def type_text(self, text: str) -> None:
        """Replace the focused text box's contents by typing."""
        self.trail.append(f"type {text!r}")
        await self.keys("end", "ctrl+u", *text)

    def focused_input(self) -> Input | None:
        focused = self.app.focused
        return focused if isinstance(focused, Input) else None

    async def step(self) -> None:
        self.step_no += 1
        self.seen.add(self.screen_name())
        choices = [("binding", 40), ("key", 20), ("escape", 10), ("fill", 10), ("palette", 3), ("resize", 3)]
        if self.focused_input() is not None:
            choices.append(("type", 20))
        if self.at_home():
            choices.append(("player", 4))
        kind = self.rng.choices([c for c, _ in choices], [w for _, w in choices])[0]
        before = self.signature()
        navigation = False
        if kind == "binding":
            key, navigation = self.choose_binding()
            navigation = navigation or (key == "escape" and not self.at_home())
            await self.press(key)
        elif kind == "key":
            key = self.rng.choice(PLAIN_KEYS)
            navigation = key == "escape" and not self.at_home()
            await self.press(key)
        elif kind == "escape":
            navigation = not self.at_home()
            await self.press("escape")
        elif kind == "type":
            field = self.focused_input()
            valid = VALID_BY_FIELD.get(field.id or "", NUMBERS)
            await self.type_text(self.rng.choice(valid if self.rng.random() < 0.6 else TEXTS))
            if self.rng.random() < 0.5:
                await self.press("enter")
        elif kind == "fill":
            await self.fill()
        elif kind == "palette":
            await self.press("ctrl+p")
            await self.quiet()
            await self.type_text(self.rng.choice(PALETTE_WORDS))
            await self.press(self.rng.choice(("enter", "escape", "down")))
        elif kind == "resize":
            width, height = self.rng.choice(SIZES)
            self.trail.append(f"resize {width}x{height}")
            await self.pilot.resize_terminal(width, height)
        elif kind == "player":
            await self.press("p")
            await self.quiet()
            await self.press(*["down"] * self.rng.randrange(4), "enter")
            await self.quiet()
            if self.focused_input() is not None:  # a new player: a name, valid or not
                await self.type_text(self.rng.choice(VALID_BY_FIELD["name"] + ("", "x" * 40, "a/b")))
                await self.press("enter")
        await self.quiet()
        self.tick()
        await self.quiet()
        await self.check(before, navigation)

    async def fill(self) -> None:
        """Answer the focused form part by part, as a player does: a choice from each list, a
        number in each box, Tab to the next; then, often, lock in."""
        for _ in range(self.rng.randrange(3, 12)):
            if self.focused_input() is not None:
                await self.type_text(self.rng.choice(NUMBERS))
            else:
                await self.press("enter", *["down"] * self.rng.randrange(3), "enter")
            await self.press("tab")
            await self.quiet()
            if self.app.screen is not self.app.screen_stack[-1] or self.app.return_code is not None:
                break
        if self.rng.random() < 0.6:
            keys = self.binding_keys()
            lock = next((k for k in ("l", "ctrl+l") if k in keys), None)
            if lock:
                await self.press(lock)
                await self.quiet()
                if isinstance(self.app.screen, ConfirmDialog) and self.rng.random() < 0.8:
                    await self.press(self.rng.choice(("y", "enter")))

    def tick(self) -> None:
        """A second passes on the countdowns' clock; each looks at it once (one that runs out
        locks in what is filled in, which the walk counts like any other lock-in)."""
        CLOCK.now += 1.0
        for countdown in self.app.screen.query(rounds.Countdown):
            countdown.tick()

    # -- the promises ---------------------------------------------------------------------
    def where(self) -> str:
        return (f"seed {self.seed}, step {self.step_no}, on {self.screen_name()} "
                f"(mode {self.app.current_mode}); last keys: {' | '.join(self.trail)}")

    def attempts_on_disk(self) -> int:
        store = SaveStore(self.save_dir)
        return sum(len(store.load(name).attempts) for name in store.profiles())

    async def check(self, before: tuple, navigation: bool) -> None:
        app = self.app
        assert not app.unexpected_errors, f"the crash guard caught {app.unexpected_errors[-1]!r}: {self.where()}"
        assert app.return_code is None, f"Ridge ended (code {app.return_code}): {self.where()}"
        assert len(app.screen_stack) >= 1, f"the screen stack is empty: {self.where()}"
        if navigation:
            await until(self.pilot, lambda: self.signature() != before,
                        f"the key to lead somewhere ({self.where()})", pauses=50)
        on_disk = self.attempts_on_disk()
        assert on_disk == self.locked, f"{self.locked} lock-ins, {on_disk} attempts on disk: {self.where()}"


CLOCK = WalkClock()


class WalkCountdown(rounds.Countdown):
    """A countdown on the walk's clock, looked at once per step (never on a timer)."""

    def __init__(self, seconds: float, clock=None, **kwargs) -> None:
        super().__init__(seconds, clock=CLOCK, **kwargs)

    def on_mount(self) -> None:
        self.started = self.clock()
        self.tick()


def walk_app(save_dir) -> RidgeApp:
    store = SaveStore(save_dir)
    for name in PLAYERS:
        store.create_profile(name)
    return make_app(save_dir=save_dir, profile=PLAYERS[0], clock=lambda: FIXED_NOW, strict=False,
                    cursor_blink=False, ready_exit=False, bank=Bank(fixture_bank()))


@pytest.fixture
def instrumented(monkeypatch):
    """Count lock-ins where every mode makes them final (a campaign puzzle's `lock_in`; the
    drill's, exam's, hot-seat's and match's `claim_lock`, which a countdown running out goes
    through too), keep the countdowns on the walk's clock, and run the lab's quick loop only (its
    full run takes minutes of CPU)."""
    from app.screens.puzzle import PuzzleScreen

    counters = {"locked": 0}
    lock_in, claim_lock = PuzzleScreen.lock_in, rounds.ModeScreen.claim_lock

    def puzzle_lock_in(self):
        if not self.locked:
            counters["locked"] += 1
        return lock_in(self)

    def mode_claim_lock(self):
        claimed = claim_lock(self)
        counters["locked"] += bool(claimed)
        return claimed

    monkeypatch.setattr(PuzzleScreen, "lock_in", puzzle_lock_in)
    monkeypatch.setattr(rounds.ModeScreen, "claim_lock", mode_claim_lock)
    monkeypatch.setattr(rounds, "Countdown", WalkCountdown)

    def quick_lab():
        from app.screens.lab import LabScreen

        return LabScreen(quick=True)

    monkeypatch.setitem(RidgeApp.MODES, "lab", quick_lab)
    return counters


async def run_walk(save_dir, seed: int, steps: int, counters: dict) -> Walk:
    app = walk_app(save_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.bank_ready and app.session is not None, "the player and the packs")
        await settled(pilot)
        walk = Walk(app, pilot, seed, save_dir, counters)
        notify = app.notify

        def counted_notify(*args, **kwargs):
            walk.notices += 1
            return notify(*args, **kwargs)

        def no_exit(*args, **kwargs):  # the walk never leaves Ridge: quitting is noted, not done
            walk.quits += 1

        app.notify = counted_notify
        app.exit = no_exit
        try:
            for _ in range(steps):
                await walk.step()
        finally:
            del app.notify
            del app.exit
    return walk


@pytest.mark.parametrize("seed", SEEDS)
async def test_the_keyboard_walk_never_breaks_a_session(tmp_path, seed, instrumented):
    walk = await run_walk(tmp_path, seed, STEPS, instrumented)
    assert walk.step_no == STEPS
    assert len(walk.seen) >= 3, f"the walk saw only {sorted(walk.seen)}"
