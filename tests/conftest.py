"""Shared test set-up: no test ever reads or writes the player's real data folder; hypothesis
searches the same way on every machine (tests/helpers/hunt.py); and every test is marked by what it
drives, so `pytest -m "not ui"` is the headless suite and `pytest -m hunt` the searching one."""
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from helpers.hunt import HUNT
from helpers.scratch import scratch_dir, use_scratch_root

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

# A bytecode cache even where the shell sets PYTHONDONTWRITEBYTECODE (as bench/harness.py keeps one):
# without it each worker recompiled and re-rewrote every test module (collection 7.3 -> 2.4 CPU-s a
# worker) and every `ridge` subprocess compiled the project again. __pycache__ is ignored by git.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Scratch files (tmp_path, tempfile, the CLI subprocesses' TMPDIR) in memory where the machine has it.
use_scratch_root()
_ISOLATED = scratch_dir("ridge-tests-")
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


# Tests that load the measured fidelity's kernel database in the test process: module -> the
# test functions that do (None: all of its tests). Found by counting calls of
# engine.measured.kernels per test; one left out costs time, never a result.
_SHOWN = {"test_puzzles_check_passes", "test_keys_survive_both_fidelities", "test_no_unoffered_lever_beats_the_key",
          "test_verdicts_bound_the_objective_and_options_in_fixed_order", "test_band_edge_keys_clear_with_either_band",
          "test_a_floor_gain_is_a_ceiling_not_the_band", "test_wrong_estimate_is_named_in_parts",
          "test_two_phases_02_keys_what_bounds_the_prefill", "test_prefix_caching_05_keys_restoring_the_prefix",
          "test_generated_tensor_parallelism_stays_in_the_domain",
          "test_the_realistic_and_measured_bands_clear_and_the_floors_only_beside_them"}
KERNEL_TESTS: dict[str, frozenset[str] | None] = {
    "test_outside_contract": frozenset(_SHOWN),   # `ridge puzzles show --answer` and `check`
    "test_puzzles": None, "test_comfort_packs": None, "test_engine_measured": None, "test_engine_calibration": None,
    "test_engine_steps": frozenset({"test_measured_steps_are_the_database_own_answers",
                                    "test_measured_steps_are_fast_after_the_first"}),
    "test_simulator_model": frozenset({"test_ridge_puzzles_check_accepts_the_saved_pack",
                                       "test_saved_puzzle_passes_the_pack_check",
                                       "test_saving_twice_or_an_ambiguous_deployment_is_refused"}),
    "test_robust_keys": frozenset({"test_generated_draws_hold_on_the_measured_kernels"}),
    "test_load_cli": frozenset({"test_every_fidelity_runs_and_stays_under_its_own_steady_state"}),
}


def _turn(item, slow_modules: set) -> int:
    """When a test runs: those that load the kernel database first, then the modules with a slow
    test (whole, so a module-scoped fixture is built once), then the rest. The database takes
    about a second per accelerator to load and each engine built is kept for the process, so its
    tests go together at the head of the first worker's queue, which worksteal takes from last
    (it steals the back half of a queue): one process loads what they need, not both (it halved
    the CPU spent building engines). No long test starts last."""
    names = KERNEL_TESTS.get(item.module.__name__, ())
    if names is None or getattr(item, "originalname", item.name) in names:
        return 0
    return 1 if item.module.__name__ in slow_modules else 2


def pytest_collection_modifyitems(items):
    """`hunt` on every test that searches (hypothesis's, and the keyboard walk), so a hunt runs
    only those; `ui` on every test that drives the app (see `drives_the_app`), so `-m "not ui"`
    is the headless suite; and the order they run in (`_turn`)."""
    for item in items:
        function = getattr(item, "function", None)
        if function is None:
            continue
        if hasattr(function, "hypothesis") or item.module.__name__ == "test_walk":
            item.add_marker(pytest.mark.hunt)
        if drives_the_app(item) and not item.get_closest_marker("ui"):
            item.add_marker(pytest.mark.ui)
    slow = {item.module.__name__ for item in items
            if getattr(item, "module", None) is not None and item.get_closest_marker("slow")}
    items.sort(key=lambda item: _turn(item, slow) if getattr(item, "module", None) is not None else 2)


@pytest.fixture
def catalog():
    from engine.catalog import builtin_catalog

    return builtin_catalog()
