"""Snapshots of the game's screens at 80×24 (everything essential must fit or scroll) and at
120×40, over the fixture packs with a fixed clock and no blinking cursor.

Update the pictures with `pytest tests/test_snapshots.py --snapshot-update` after a deliberate
change, and look at the report before committing them.
"""
from __future__ import annotations

import pytest
from textual.widgets import Input

from app.widgets.picker import ChoiceList, Picker

from puzzles.grading import objective_bottleneck
from snapshot_app import build_app, fixture_bank
from pilot_wait import settled

pytestmark = pytest.mark.ui
SIZES = [(80, 24), (120, 40)]


async def _settle(pilot, *keys: str) -> None:
    if keys:
        await pilot.press(*keys)
    await settled(pilot)  # a condition, not one pause: see tests/pilot_wait.py


async def _to_puzzle(pilot) -> None:
    await _settle(pilot)
    await _settle(pilot, "c", "s")


async def _fill(pilot) -> None:
    """A prediction that is right but for the wrong reason, with one hint taken."""
    screen = pilot.app.screen
    key = fixture_bank().keys[screen.puzzle.id]
    screen.query_one("#bottleneck", Picker).value = objective_bottleneck(key)
    screen.query_one("#lever", Picker).value = key.best_lever
    screen.query_one("#band", Picker).value = key.gain_band
    screen.query_one("#reason", Picker).value = "kv-cap"  # does not hold at batch 1 (the weight read would: it decides)
    screen.query_one("#est-intensity", Input).value = "2 * 70e9 / 141e9"
    screen.query_one("#certainty", ChoiceList).value = "medium"
    await _settle(pilot, "h")
    screen.query_one("#bottleneck").focus()
    await _settle(pilot)


async def _to_reveal(pilot) -> None:
    await _to_puzzle(pilot)
    await _fill(pilot)
    await _settle(pilot, "l", "y")


def _app(tmp_path):
    return build_app(tmp_path, profile="Ada")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_home(snap_compare, tmp_path, size):
    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=_settle)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_puzzle(snap_compare, tmp_path, size):
    async def run_before(pilot):
        await _to_puzzle(pilot)
        await _fill(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_reveal(snap_compare, tmp_path, size):
    assert snap_compare(_app(tmp_path), terminal_size=size, run_before=_to_reveal)


@pytest.mark.parametrize("theme", ["textual-light", "solarized-light"])
def test_puzzle_in_a_light_theme_80x24(snap_compare, tmp_path, theme):
    """The light family (test_puzzle is the dark one): the card's labels and the section titles
    readable on a light background (they were drawn white on white and orange on grey)."""
    async def run_before(pilot):
        pilot.app.theme = theme
        await _to_puzzle(pilot)
        await _fill(pilot)

    assert snap_compare(_app(tmp_path), terminal_size=(80, 24), run_before=run_before)


def test_first_run_80x24(snap_compare, tmp_path):
    assert snap_compare(build_app(tmp_path), terminal_size=(80, 24), run_before=_settle)


def test_lock_in_confirmation_80x24(snap_compare, tmp_path):
    async def run_before(pilot):
        await _to_puzzle(pilot)
        await _fill(pilot)
        await _settle(pilot, "l")

    assert snap_compare(_app(tmp_path), terminal_size=(80, 24), run_before=run_before)


def test_campaign_map_80x24(snap_compare, tmp_path):
    async def run_before(pilot):
        await _settle(pilot)
        await _settle(pilot, "m", "down", "down")

    assert snap_compare(_app(tmp_path), terminal_size=(80, 24), run_before=run_before)


def test_stats_after_one_attempt_120x40(snap_compare, tmp_path):
    async def run_before(pilot):
        await _to_reveal(pilot)
        await _settle(pilot, "escape", "s")

    assert snap_compare(_app(tmp_path), terminal_size=(120, 40), run_before=run_before)
