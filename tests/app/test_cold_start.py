"""What keeps the home screen's cold start short (bench/bench_app.py times it): its first frame
already shows the player, opening the player's session loads neither the puzzle packs' code nor
the engine (the packs load afterwards, in a worker), and the pause in garbage collection that
`ridge play` starts with ends once the app is up."""
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
