"""The simulator screen driven by Pilot: edits flow into results and plots, bad input is shown
inline without losing the last good result, and predict-first hides the results until lock-in."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from textual.widgets import Input, Static, Switch

from app.widgets.picker import Picker
from helpers.pilot import until
from helpers.sim import SimApp, settled, type_into
from puzzles.sim import sim_key


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).content)


async def test_editing_an_input_changes_results_and_plot_data():
    app = SimApp(predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        assert screen.results_visible
        sim = screen.sim
        results_before = text_of(screen, "#out-results")
        spec_before = sim.spec().speedup.copy()
        cost_before = sim.cost_tpot().cost.copy()
        await type_into(pilot, "#in-gpus", "8")
        assert sim.result.deployment.gpus == 8
        assert text_of(screen, "#out-results") != results_before
        assert not np.allclose(sim.spec().speedup, spec_before, equal_nan=True)
        assert not np.allclose(sim.cost_tpot().cost, cost_before, equal_nan=True)
        # The other tabs are drawn when shown, from the new data.
        screen.query_one("#sim-tabs").active = "tab-kv"
        await until(pilot, lambda: "444.6 GiB left for the cache" in text_of(screen, "#out-kv"), "the KV tab")


async def test_the_inputs_scrollbar_is_there_from_the_first_frame_when_they_overflow():
    """The rows below the first screenful mount after the first frame; when the fields are taller
    than their column its scrollbar is shown from the start (the fields would shift left when it
    came), and when they fit there is none, also after a resize."""
    app = SimApp(predict_first=False)
    async with app.run_test(size=(80, 24)) as pilot:
        inputs = app.screen.query_one("#sim-inputs")
        assert inputs.has_class("-overflows") and inputs.show_vertical_scrollbar
        await pilot.resize_terminal(120, 50)
        await until(pilot, lambda: not inputs.has_class("-overflows"), "the class dropped")
        await settled(pilot)
        assert not inputs.show_vertical_scrollbar
    app = SimApp(predict_first=False)
    async with app.run_test(size=(120, 50)) as pilot:
        assert not app.screen.query_one("#sim-inputs").has_class("-overflows")


async def test_a_select_edit_updates_the_result():
    app = SimApp(predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        screen.query_one("#in-weights", Picker).value = "fp8"
        await until(pilot, lambda: screen.sim.result.deployment.weights == "fp8", "the weights edit")
        assert screen.sim.result.deployment.weights == "fp8"
        assert "70.55B params x 1 B" in text_of(screen, "#out-derivation")


async def test_invalid_input_shows_inline_and_keeps_the_last_good_result():
    app = SimApp(predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        # The measured column fills in from a worker; the last good result is the one it completes.
        await until(pilot, lambda: "measuring" not in text_of(screen, "#out-results"), "the measured column")
        good = text_of(screen, "#out-results")
        await type_into(pilot, "#in-prompt", "-5")
        err = screen.query_one("#err-prompt", Static)
        assert err.display and "Prompt must be at least 1, got -5" in " ".join(str(err.content).split())
        assert screen.sim.result.deployment.prompt == 1536
        assert text_of(screen, "#out-results") == good
        assert "Showing the last good result" in text_of(screen, "#sim-status")
        assert screen.query_one("#sim-status").has_class("-stale")
        await type_into(pilot, "#in-prompt", "2048")
        assert not err.display and screen.sim.result.deployment.prompt == 2048


async def test_a_model_that_does_not_fit_shows_inline():
    app = SimApp(predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        screen.query_one("#in-model", Picker).value = "llama-3.1-405b"
        await until(pilot, lambda: screen.sim.raw.get("model") == "llama-3.1-405b", "the model edit")
        # The message line is made with the field's first message.
        await until(pilot, lambda: screen.query("#err-model") and screen.query_one("#err-model").display,
                    "the inline does-not-fit error")
        err = screen.query_one("#err-model", Static)
        assert err.display and "does not fit" in str(err.content)
        assert screen.sim.result.deployment.model.id == "llama-3.1-70b"
        await type_into(pilot, "#in-gpus", "16")
        assert not err.display and screen.sim.result.deployment.model.id == "llama-3.1-405b"


async def test_predict_first_hides_the_results_until_lock_in():
    app = SimApp()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        tabs, form = screen.query_one("#sim-tabs"), screen.query_one("#sim-predict")
        assert form.display and not tabs.display and not screen.results_visible
        await pilot.press("l")  # nothing chosen yet: asks for the missing parts
        assert "Still to choose: bottleneck, lever, band" in text_of(screen, "#sim-predict-error")
        assert not tabs.display
        key = sim_key(screen.sim.result)
        screen.query_one("#sim-guess-bottleneck", Picker).value = key.bottleneck
        screen.query_one("#sim-guess-lever", Picker).value = key.best_lever
        screen.query_one("#sim-guess-band", Picker).value = "over-4x"
        await until(pilot, lambda: screen.check_action("lock_in", ()), "armed for lock-in")
        await pilot.press("l")
        await until(pilot, lambda: tabs.display and not form.display, "the results after lock-in")
        grade = text_of(screen, "#sim-grade")
        assert grade.startswith("✗ Missed. Decided by the gain band: wrong.")   # the one grader's words
        assert "✓ Bottleneck" in grade and "✓ Best lever" in grade and "✗ ◆ Its gain: over 4×" in grade
        # Any edit asks again.
        await type_into(pilot, "#in-concurrency", "64")
        await until(pilot, lambda: form.display and not tabs.display, "the form asking again")


async def test_switching_predict_first_off_shows_everything():
    app = SimApp()
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        screen.query_one("#in-gpus").focus()
        await pilot.press("f")  # a letter in a number field reaches the screen's binding
        await until(pilot, lambda: screen.results_visible and screen.query_one("#sim-tabs").display,
                    "the results with predict-first off")
        assert not screen.query_one("#sim-predict-first", Switch).value
        assert screen.query_one("#in-gpus", Input).value == "4"


async def test_pin_and_compare():
    app = SimApp(predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        await pilot.press("p")
        await type_into(pilot, "#in-gpus", "8")
        screen.query_one("#sim-tabs").active = "tab-compare"
        await until(pilot, lambda: "Changed:" in text_of(screen, "#out-compare"), "the compare tab")
        text = text_of(screen, "#out-compare")
        assert "Changed: GPUs 4 → 8" in text and "B/A" in text and "2.84×" in text


async def test_budget_moves_the_budget_line():
    app = SimApp(predict_first=False, tab="tab-cost")
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        await type_into(pilot, "#in-budget", "30")
        await until(pilot, lambda: "TPOT budget 30.0 ms" in text_of(screen, "#out-cost"), "the budget line")
        assert screen.sim.cost_tpot().budget_seconds == pytest.approx(0.030)
        assert "TPOT budget 30.0 ms" in text_of(screen, "#out-cost")
        await type_into(pilot, "#in-budget", "0")
        await until(pilot, lambda: "positive" in text_of(screen, "#err-budget"), "the budget error")


async def test_save_as_puzzle_writes_a_pack_that_passes_the_check(tmp_path):
    pack = tmp_path / "packs" / "my-puzzles.toml"
    app = SimApp(pack_path=pack, predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("s")
        await until(pilot, lambda: "✓ Saved as puzzle my-" in text_of(app.screen, "#sim-status"), "the saved notice")
    assert pack.exists()
    from puzzles.check import check_paths

    # the check's own rules, in process; that `ridge puzzles check` accepts a saved pack from the
    # command line is tests/app/test_simulator_model.py's (once, not once per test that saves)
    assert check_paths([pack])[0] == []


async def test_escape_leaves_the_simulator():
    """Escape asks the app to leave (`app.messages.Back`); the simulator on its own then quits."""
    app = SimApp()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("escape")
        await until(pilot, lambda: app.return_code is not None, "leaving the simulator")


async def test_a_config_file_loads_on_enter_and_joins_the_model_list(tmp_path):
    import json

    config = {"model_type": "llama", "_name_or_path": "acme/tiny-llama", "hidden_size": 2048,
              "num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 16,
              "intermediate_size": 5632, "vocab_size": 32000, "max_position_embeddings": 8192}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    app = SimApp(predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = app.screen
        field = screen.query_one("#in-config", Input)
        field.focus()
        field.value = str(path)
        await until(pilot, lambda: field.value == str(path), "the typed path")
        await pilot.pause()
        assert screen.sim.result.deployment.model.id == "llama-3.1-70b"  # not until Enter
        await pilot.press("enter")
        await until(pilot, lambda: screen.sim.result.deployment.model.id == "tiny-llama", "the loaded config")
        await until(pilot, lambda: screen.query_one("#in-model", Picker).value == "tiny-llama", "the model list")
        field.value = str(tmp_path / "missing.json")
        await pilot.press("enter")
        await until(pilot, lambda: "no such file" in " ".join(str(screen.query_one("#err-config", Static).content).split()),
                    "the missing-file error")
        assert screen.sim.result.deployment.model.id == "tiny-llama"


async def test_f1_explains_the_focused_field():
    from app.screens.help import HelpScreen

    app = SimApp(predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        app.screen.query_one("#in-prompt").focus()
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        assert "Average prompt length" in app.screen.query_one("#help-focused").source


def test_the_simulators_model_and_plots_load_without_textual():
    code = ("import sys, engine.sim.state, puzzles.sim, saves.own_pack, app.plots\n"
            "print('textual' in sys.modules or 'rich' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


async def test_the_simulator_on_its_own_has_its_stylesheet():
    """A solo app's screen loads its own CSS_PATH (simulator.tcss hides the inline errors until
    one is held); a default screen Textual made itself used to load none."""
    app = SimApp(predict_first=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await settled(pilot)
        assert not any(err.display for err in app.screen.query(".sim-error"))
