"""The home screen: who is playing, their progress at a glance, and the ways to play.

As it mounts it works out the player (first run, the only or last player, or a picker) and opens
their save, so its first frame already shows who is playing and takes every key; the puzzle packs
load after, in a worker. A save that cannot be read is named in one line, and set aside only if
the player agrees.
"""
from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from app import labels
from app.errors import keep_going, told
from app.messages import ContinueCampaign, OpenMode, PuzzlesLoaded
from app.screens.base import RidgeScreen, asking
from app.widgets.footer import RidgeFooter
from app.widgets.titlebar import TitleBar


def lab_available() -> bool:
    """True when the lab screen is part of this build (it is optional for the home screen)."""
    import importlib.util

    try:
        return importlib.util.find_spec("app.screens.lab") is not None
    except (ImportError, ValueError):
        return False


class HomeScreen(RidgeScreen):
    """Who is playing, how it is going, and where to go next."""

    HELP = """\
## Home

**Continue** (c) takes you straight to your next puzzle: the first one not yet cleared in the
earliest chapter you have not finished. **Campaign map** (m) shows every chapter; you may open
any of them. **Stats** (s) shows mastery, outcomes over time and how well your certainty
matches your results. **Switch player** (p) changes whose progress is saved.

**Simulator** (v) lets you edit any deployment and predict before the numbers show. **Drill** (d)
runs timed rounds of generated puzzles, bringing back the concepts you miss. **Exam** (e) is the
clearing test. **Hot-seat** (h) and **Match** (t) are for playing against others; **Lab** (l)
runs a real toy serving loop on this machine.
"""

    # The ways to play beyond the first three are listed with their keys in "Ways to play" and in
    # the command palette; at 80 columns the footer holds only the everyday keys.
    BINDINGS = [
        Binding("c", "continue", "Continue", id="home.continue", tooltip="Go straight to your next puzzle"),
        Binding("m", "map", "Map", id="home.map", tooltip="The campaign map: every chapter"),
        Binding("s", "stats", "Stats", id="home.stats", tooltip="Mastery, outcomes and calibration"),
        Binding("v", "simulator", "Simulator", id="home.simulator", show=False, tooltip="Predict, then watch a deployment's numbers move"),
        Binding("d", "drill", "Drill", id="home.drill", show=False, tooltip="Timed rounds of generated puzzles, spaced by what you miss"),
        Binding("e", "exam", "Exam", id="home.exam", show=False, tooltip="The clearing test: twelve deployments, no hints"),
        Binding("h", "hotseat", "Hot-seat", id="home.hotseat", show=False, tooltip="Two to eight players on one screen"),
        Binding("t", "match", "Match", id="home.match", show=False, tooltip="Play a match code; results merge with ridge match results"),
        Binding("l", "lab", "Lab", id="home.lab", show=False, tooltip="The serving lab"),
        Binding("p", "switch_player", "Player", id="home.player", tooltip="Switch to another player"),
        Binding("q", "quit", "Quit", id="home.quit", tooltip="Leave Ridge"),
    ]

    def __init__(self) -> None:
        super().__init__(id="home")
        self.has_lab = lab_available()
        self._started = False
        self.pending_action: str | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with VerticalScroll(id="home-body"):
            yield Static("Opening your save…", id="player", markup=False)
            yield Static("", id="glance", markup=False)
            readiness = Static("", id="readiness", markup=False)
            readiness.display = False  # shown only with an exam date set
            yield readiness
            yield Label("Ways to play", classes="section-title")
            yield OptionList(id="ways")
            yield Label("Chapters", classes="section-title")
            yield Static("", id="chapter-strip", markup=False)
        yield RidgeFooter()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "lab":
            return self.has_lab
        if action in ("continue", "map", "stats") and self.app.session is None:
            return None
        return True

    def on_mount(self) -> None:
        self._fill_ways()
        self.start()  # before the first frame: drawing "Opening your save…" first cost a whole frame

    def on_screen_resume(self) -> None:
        if not self.is_active:
            return  # passed through while a mode reopened above (`RidgeApp.replace_screen`)
        if self._started and self.app.session is not None and self.app.bank_ready:
            try:
                self.app.session.reload()
            except Exception as error:  # noqa: BLE001 - shown through the damaged-save flow
                self._save_problem(self.app.session.name, error)
                return
            self.refresh_view()
            self._build_kept_later()  # if the player left before it was built

    # -- who is playing --------------------------------------------------------------------
    def start(self) -> None:
        """Decide who is playing: the named player, the only or last one, a picker, or a first run."""
        from saves.errors import SaveError

        self._started = True
        app = self.app
        store = app.store
        requested = app.requested_profile
        if getattr(app, "ask_name", False) and not requested:
            self.ask_name()  # a shared server (`ridge serve`): every browser says who it is
            return
        try:
            if requested and not store.has_profile(requested):
                store.create_profile(requested)
            name = store.choose_profile(requested)
        except SaveError as error:
            names = self._profiles_or_none()
            if names:
                self.pick_player(can_cancel=False)
            else:
                self.notify(told(error), severity="error", timeout=10)
                self.first_run()
            return
        if name is None:
            self.first_run()
        else:
            self.open_player(name)

    def _profiles_or_none(self) -> list[str]:
        try:
            return self.app.store.profiles()
        except Exception:  # noqa: BLE001 - an unreadable folder shows as no players
            return []

    def _create_profile(self, name: str) -> str | None:
        from saves.errors import SaveError

        try:
            self.app.store.create_profile(name)
        except SaveError as error:
            return str(error)
        return None

    @asking
    async def first_run(self, first: bool = True) -> None:
        from app.screens.dialogs import NameDialog

        name = await self.answer_to(NameDialog(self._create_profile, first_run=first, cursor_blink=self.app.blink))
        if name:
            self.open_player(name)

    @asking
    async def ask_name(self) -> None:
        """Ask this browser's player for a name, until one is given: a new name makes a profile, a
        known one opens it."""
        from app.screens.dialogs import NameDialog

        def create_or_open(name: str) -> str | None:
            known = {n.casefold() for n in self._profiles_or_none()}
            return None if name.casefold() in known else self._create_profile(name)

        name = None
        while not name:
            name = await self.answer_to(NameDialog(create_or_open, first_run=True, cursor_blink=self.app.blink))
        self.open_player(name)

    @asking
    async def pick_player(self, can_cancel: bool = True) -> None:
        from app.screens.dialogs import NEW_PLAYER, NameDialog, ProfilePicker

        current = self.app.session.name if self.app.session else None
        name = await self.answer_to(ProfilePicker(self._profiles_or_none(), current, can_cancel=can_cancel))
        if name == NEW_PLAYER:
            name = await self.answer_to(NameDialog(self._create_profile, first_run=False,
                                                   cursor_blink=self.app.blink))
        if name:
            self.open_player(name)

    def open_player(self, name: str) -> None:
        try:
            self.app.open_session(name)
        except Exception as error:  # noqa: BLE001 - SaveError and any damage below it
            self._save_problem(name, error)
            return
        self.refresh_view()
        if self.app.bank_ready:
            self._bank_loaded()
        else:
            self.call_after_refresh(self._load_bank)  # a worker now would slow this first frame
        if self.app.ready_exit == "1":
            self.call_after_refresh(self.app.exit)

    # -- the puzzle packs load in the background, so the home screen shows at once ---------
    @work(thread=True, exclusive=True, group="bank", exit_on_error=False)
    def _load_bank(self) -> None:
        """Load the packs in a thread; what came of it arrives as a PuzzlesLoaded message."""
        try:
            self.app.bank.chapters()
            for chapter in self.app.bank.chapters()[:1]:
                for pid in chapter.puzzle_ids[:1]:
                    self.app.bank.puzzle(pid)
        except Exception as error:  # noqa: BLE001 - shown in one line, logged in full
            self.post_message(PuzzlesLoaded(error))
            return
        self.post_message(PuzzlesLoaded())
        try:  # the simulator's model and plots load here rather than on the player's first `v`
            import app.plots  # noqa: F401
            import engine.sim.state  # noqa: F401
            import puzzles.sim  # noqa: F401
        except Exception:  # noqa: BLE001 - then they load when the simulator opens, and say why there
            pass

    @on(PuzzlesLoaded)
    @keep_going
    def _puzzles_loaded(self, message: PuzzlesLoaded) -> None:
        message.stop()
        if message.error is not None:
            self._bank_failed(message.error)
        else:
            self._bank_loaded()

    def _bank_failed(self, error: Exception) -> None:
        from saves.crash_log import log_exception

        path = log_exception(error, self.app.log_file, "loading the puzzle packs")
        self.notify(told(f"The puzzles could not be loaded: {error or type(error).__name__} (details in {path})"),
                    severity="error", timeout=15)

    def _bank_loaded(self) -> None:
        self.refresh_view()
        self._build_kept_later()
        pending, self.pending_action = self.pending_action, None
        if pending:
            self.call_later(self.run_action, pending)
        if self.app.ready_exit == "loaded":
            self.call_after_refresh(self.app.exit)

    BUILD_DELAY = 1.0  # seconds on this screen before the simulator is built behind it

    def _build_kept_later(self) -> None:
        """Build the simulator behind this screen once the player has been here a moment (so it
        never delays the first keys), unless they have left by then (`RidgeApp.build_kept`)."""
        self.set_timer(self.BUILD_DELAY, self.app.build_kept, name="build kept modes")

    def _save_problem(self, name: str, error: Exception) -> None:
        """A save that cannot be opened: a damaged one (SaveError) is offered a fresh start
        (`_offer_fresh_start`); any other error is not ours to explain, and goes on up."""
        from saves.errors import SaveError

        if not isinstance(error, SaveError):
            raise error
        self._offer_fresh_start(name, error)

    @asking
    async def _offer_fresh_start(self, name: str, error: Exception) -> None:
        from saves.errors import SaveError

        from app.screens.dialogs import confirm

        line = str(error).splitlines()[0] if str(error) else type(error).__name__
        body = (f"{name}'s save cannot be read: {line}\n\nSet the damaged files aside (they are kept, "
                f"renamed, in the same folder) and start {name} afresh?")
        if not await confirm(self, "A damaged save", body, yes="Set aside, start afresh", no="Leave it",
                             yes_variant="warning", dialog_id="damaged-save", focus_no=True):
            self.app.session = None
            self.query_one("#player", Static).update(
                f"{name}'s save was left as it is. Choose another player with p, or quit with q.")
            self.refresh_bindings()
            return
        try:
            moved = self.app.store.quarantine(name)
            self.app.store.create_profile(name)
        except SaveError as problem:
            self.notify(told(problem), severity="error", timeout=10)
            return
        self.notify(told(f"Set aside {len(moved)} file(s); {name} starts afresh."))
        self.open_player(name)

    # -- drawing ---------------------------------------------------------------------------
    def _fill_ways(self) -> None:
        ways = self.query_one("#ways", OptionList)
        ways.clear_options()
        session = self.app.session
        nxt = ""
        if session is not None and not self.app.bank_ready:
            nxt = "loading the puzzles…"
        elif session is not None:
            nxt = session.next_text()
        options = [
            Option(f"Continue (c)   ▶ {nxt}" if nxt else "Continue (c)", id="continue"),
            Option("Map (m)        every chapter, in any order", id="map"),
            Option("Stats (s)      mastery, outcomes, calibration", id="stats"),
        ]
        options += [
            Option("Simulator (v)  predict, then watch the numbers move", id="simulator"),
            Option("Drill (d)      timed rounds, spaced by what you miss", id="drill"),
            Option("Exam (e)       the clearing test: no hints, a pass mark", id="exam"),
            Option("Hot-seat (h)   two to eight players, one screen", id="hotseat"),
            Option("Match (t)      the same puzzles on every machine", id="match"),
        ]
        if self.has_lab:
            options.append(Option("Lab (l)        a toy serving loop to experiment with", id="lab"))
        options.append(Option("Player (p)     switch to another player, or add one", id="switch_player"))
        options.append(Option("Quit (q)", id="quit"))
        ways.add_options(options)
        ways.highlighted = 0

    def refresh_view(self) -> None:
        session = self.app.session
        if session is None:
            return
        stats = session.stats
        self.query_one("#player", Static).update(
            f"Playing as {session.name} · {labels.plural(stats.score, 'point')} · "
            f"{labels.plural(stats.attempts, 'attempt')} · streak {labels.plural(stats.streak_days, 'day')}")
        counts = "   ".join(f"{labels.outcome(o)} {n}" for o, n in stats.by_outcome.items())
        queue = len(session.retry_queue)
        extra = f"   · {queue} to retry later" if queue else ""
        self.query_one("#glance", Static).update(counts + extra)
        ready: list[str] = []
        if session.settings.get("exam-date"):
            # Imported only here: readiness and what it pulls in cost the first frame of every
            # player without an exam date some 90M instructions for a line they never see.
            from puzzles.readiness import readiness_lines

            ready = readiness_lines(session.profile, self.app.now())
        readiness = self.query_one("#readiness", Static)
        readiness.update("\n".join(ready))
        readiness.display = bool(ready)
        self._fill_ways()
        if self.app.bank_ready:
            self.query_one("#chapter-strip", Static).update(
                "\n".join(session.chapter_lines(self.app.size.width - 4)))
        else:
            self.query_one("#chapter-strip", Static).update("Loading the chapters…")
        self.refresh_bindings()
        self.query_one("#ways", OptionList).focus()

    # -- the ways to play ------------------------------------------------------------------
    @on(OptionList.OptionSelected, "#ways")
    @keep_going
    async def _way_chosen(self, event: OptionList.OptionSelected) -> None:
        await self.run_action(event.option.id or "")

    def _need_player(self, action: str = "") -> bool:
        """True when the player and the puzzles are ready; otherwise say why (and, while the
        puzzles are loading, do `action` as soon as they are)."""
        if self.app.session is None:
            self.notify("Choose a player first (p).", severity="warning")
            return False
        if not self.app.bank_ready:
            self.pending_action = action or None
            self.notify("Loading the puzzles…", timeout=2)
            return False
        return True

    def action_continue(self) -> None:
        if self._need_player("continue"):
            self.post_message(ContinueCampaign())

    def action_map(self) -> None:
        if self._need_player("map"):
            self.post_message(OpenMode("map"))

    def action_stats(self) -> None:
        if self._need_player("stats"):
            self.post_message(OpenMode("stats"))

    def action_simulator(self) -> None:
        self.post_message(OpenMode("simulator"))

    def action_drill(self) -> None:
        if self._need_player("drill"):
            self.post_message(OpenMode("drill"))

    def action_exam(self) -> None:
        if self._need_player("exam"):
            self.post_message(OpenMode("exam"))

    def action_hotseat(self) -> None:
        self.post_message(OpenMode("hotseat"))

    def action_match(self) -> None:
        if self._need_player("match"):
            self.post_message(OpenMode("match"))

    def action_lab(self) -> None:
        if not self.has_lab:
            self.notify("The lab is not part of this build yet.", severity="warning")
            return
        self.post_message(OpenMode("lab"))

    def action_switch_player(self) -> None:
        self.pick_player()

    async def action_quit(self) -> None:
        self.app.exit()
