"""Shared test set-up: no test ever reads or writes the player's real data folder; hypothesis
searches the same way on every machine (tests/helpers/hunt.py); and every test is marked by what it
drives, so `pytest -m "not ui"` is the headless suite and `pytest -m hunt` the searching one."""
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

# A test that drives the Textual app is `ui`: it runs one through Pilot (its body calls run_test or
# names a pilot), compares a snapshot, or plays the game served to a terminal or a browser (these
# modules). The body is read from its compiled code, not its source: reading every test's source
# cost 1.8 s of collection per worker.
UI_MODULES = frozenset({"test_live_browser", "test_live_serve", "test_serve"})
UI_WORDS = frozenset({"run_test", "pilot", "snap_compare"})


def _names(code) -> set[str]:
    """Every name a function's body uses (attributes, locals, globals), nested functions' too."""
    names = set(code.co_names) | set(code.co_varnames) | set(code.co_freevars)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names(const)
    return names


def drives_the_app(item) -> bool:
    if item.module.__name__ in UI_MODULES or "snap_compare" in getattr(item, "fixturenames", ()):
        return True
    code = getattr(item.function, "__code__", None)
    return code is not None and not UI_WORDS.isdisjoint(_names(code))


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
