"""What keeps the home screen's cold start short (bench/bench_app.py times it): its first frame
already shows the player, opening the player's session loads neither the puzzle packs' code nor
the engine (the packs load afterwards, in a worker), a player without an exam date does not load
the readiness model, and the pause in garbage collection that `ridge play` starts with ends once
the app is up (an app started with collection running leaves it alone)."""
import gc
import subprocess
import sys
from pathlib import Path

from app.game import make_app
from helpers.pilot import until

ROOT = Path(__file__).resolve().parents[2]


def test_opening_a_session_leaves_the_packs_to_the_worker(tmp_path):
    probe = (
        "import sys\n"
        "from app.game import make_app\n"
        f"app = make_app(save_dir={str(tmp_path)!r}, profile='Pat')\n"
        "app.store.create_profile('Pat')\n"
        "app.open_session('Pat')\n"
        "early = [m for m in ('puzzles.bank', 'puzzles.keys', 'engine.physics') if m in sys.modules]\n"
        "assert not app.bank_ready\n"
        "assert app.bank.chapters()\n"
        "print(','.join(early) or 'none', 'puzzles.bank' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["none", "True"], out.stdout


def test_a_player_without_an_exam_date_does_not_load_readiness_before_the_first_frame(tmp_path):
    """The exam readiness lines (and the review model behind them) are only shown with an exam
    date set: loading them anyway cost every other player's first frame some 90M instructions."""
    probe = (
        "import sys\n"
        "from app.game import make_app\n"
        "from app.screens.home import HomeScreen\n"
        "mounted = []\n"
        "mount = HomeScreen.on_mount\n"
        "def noting(screen):\n"
        "    mount(screen)\n"
        "    mounted.append('puzzles.readiness' in sys.modules)\n"
        "HomeScreen.on_mount = noting\n"
        f"app = make_app(save_dir={str(tmp_path)!r}, profile='Pat', ready_exit=True)\n"
        "app.run(headless=True, size=(80, 24))\n"
        "print(mounted)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[False]"], out.stdout


async def test_the_first_frame_already_shows_the_player(tmp_path, monkeypatch):
    """The home screen opens the save as it mounts, so the player's line is written before the
    first frame is drawn (not 'Opening your save…', then a second frame)."""
    from app.screens.home import HomeScreen

    at_mount: list[str] = []
    mount = HomeScreen.on_mount

    def noting(screen) -> None:
        mount(screen)
        at_mount.append(str(screen.query_one("#player").render()))

    monkeypatch.setattr(HomeScreen, "on_mount", noting)
    app = make_app(save_dir=tmp_path, profile="Pat", cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: at_mount, "the home screen mounted")
        assert at_mount[0].startswith("Playing as Pat"), at_mount


async def test_garbage_collection_resumes_once_the_app_is_up(tmp_path):
    app = make_app(save_dir=tmp_path, profile="Pat", cursor_blink=False)
    gc.disable()  # as `ridge play` does before it imports the game
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, gc.isenabled, "garbage collection resumed")
            assert gc.get_freeze_count() > 0  # what start-up built is left out of later collections
    finally:
        gc.enable()
        gc.unfreeze()  # what the app kept out of collections (this test process's objects) goes back


async def test_opening_a_way_to_play_pauses_collection_only_until_it_is_drawn(tmp_path):
    """Opening the simulator (or any mode, briefing or puzzle) holds garbage collection off while
    its screen is built, and collection runs again afterwards: never left off for good."""
    assert gc.isenabled()
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False)
    collecting_while_built: list[bool] = []
    switch = app.switch_mode

    def switch_mode(mode):  # the new mode's screen is built from here on
        collecting_while_built.append(gc.isenabled())
        return switch(mode)

    app.switch_mode = switch_mode
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.session is not None and app.bank_ready, "the packs loaded")
        await pilot.press("v")
        await until(pilot, lambda: type(app.screen).__name__ == "SimulatorScreen", "the simulator")
        assert collecting_while_built == [False]
        await until(pilot, gc.isenabled, "garbage collection resumed", pauses=4000)
    assert gc.isenabled()


async def test_opening_the_palette_pauses_collection_only_while_it_is_built(tmp_path):
    """The command palette is a screen like the others: collection waits while it is built (a
    full collection there made one opening in three half as fast again), then runs again."""
    from textual.command import CommandPalette

    assert gc.isenabled()
    app = make_app(save_dir=tmp_path, profile="Ada", cursor_blink=False)
    collecting_while_built: list[bool] = []
    push = app.push_screen

    def push_screen(screen, *args, **kwargs):
        if isinstance(screen, CommandPalette):
            collecting_while_built.append(gc.isenabled())
        return push(screen, *args, **kwargs)

    app.push_screen = push_screen
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.session is not None and app.bank_ready, "the packs loaded")
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        assert collecting_while_built == [False]
        await until(pilot, gc.isenabled, "garbage collection resumed", pauses=4000)
    assert gc.isenabled()


def test_a_refused_play_leaves_collection_running(tmp_path, capsys):
    """`ridge play` pauses collection before it checks its arguments (their imports allocate as
    much as the game's), and a refusal, with no app to resume it, turns it back on."""
    from app.cli import main

    folder = tmp_path / "a-file"
    folder.write_text("")
    assert gc.isenabled()
    assert main(["play", "--save-dir", str(folder)]) == 2
    assert gc.isenabled()
    assert "not a folder" in capsys.readouterr().err
