"""Shared test set-up: no test ever reads or writes the player's real data folder; hypothesis
searches the same way on every machine (tests/helpers/hunt.py); and every test is marked by what it
drives, so `pytest -m "not ui"` is the headless suite and `pytest -m hunt` the searching one."""
import inspect
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from helpers.hunt import HUNT

# No property test may fail because the machine is busy: no per-example deadline and no "too slow"
# health check anywhere (a test's own @settings still chooses its max_examples). The suite's
# profile is derandomized with no database: the same examples on every run and every machine, and
# nothing found by chance replayed from a file another run left behind. A hunt (RIDGE_HUNT=N)
# draws at random and keeps what fails, so it replays until fixed.
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("ridge", derandomize=True, database=None, **_COMMON)
settings.register_profile("hunt", derandomize=False,
                          database=DirectoryBasedExampleDatabase(str(Path(__file__).resolve().parent.parent
                                                                     / ".hypothesis" / "examples")),
                          **_COMMON)
settings.load_profile("hunt" if HUNT else "ridge")

_ISOLATED = tempfile.mkdtemp(prefix="ridge-tests-")
os.environ["RIDGE_SAVE_DIR"] = os.path.join(_ISOLATED, "saves")
os.environ["RIDGE_CACHE_DIR"] = os.path.join(_ISOLATED, "cache")   # the measured fidelity's model configs
os.environ.pop("RIDGE_CATALOG", None)

# A test that drives the Textual app is `ui`: it runs one through Pilot (its body says run_test or
# pilot), compares a snapshot, or plays the game served to a terminal or a browser (these modules).
UI_MODULES = frozenset({"test_live_browser", "test_live_serve", "test_serve"})
UI_WORDS = ("run_test", "pilot", "snap_compare")


def drives_the_app(item) -> bool:
    if item.module.__name__ in UI_MODULES or "snap_compare" in getattr(item, "fixturenames", ()):
        return True
    try:
        source = inspect.getsource(item.function)
    except (OSError, TypeError):
        return False
    return any(word in source for word in UI_WORDS)


def pytest_collection_modifyitems(items):
    """`hunt` on every test that searches (hypothesis's, and the keyboard walk), so a hunt runs
    only those; `ui` on every test that drives the app (see `drives_the_app`), so `-m "not ui"`
    is the headless suite."""
    for item in items:
        function = getattr(item, "function", None)
        if function is None:
            continue
        if hasattr(function, "hypothesis") or item.module.__name__ == "test_walk":
            item.add_marker(pytest.mark.hunt)
        if drives_the_app(item) and not item.get_closest_marker("ui"):
            item.add_marker(pytest.mark.ui)


@pytest.fixture
def catalog():
    from engine.catalog import builtin_catalog

    return builtin_catalog()
