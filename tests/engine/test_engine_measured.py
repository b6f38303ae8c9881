"""The measured fidelity from outside: the database's own step times, one-line refusals, nothing
online, nothing loaded on the other paths, and all three fidelities side by side."""
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.errors import RidgeError
from engine.levers import solve
from helpers.measured import needs_measured

ROOT = Path(__file__).resolve().parents[2]
CAT = builtin_catalog()


def ridge(*args, env=None):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=300)


def shown(puzzle_id: str) -> dict:
    """`ridge puzzles show ID --answer --json`, run in this process through the same entry point
    (the engines it needs are then built once a process, not once a call)."""
    from app.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["puzzles", "show", puzzle_id, "--answer", "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize("gpu", ["l4", "h100-pcie", "mi300x", "tpu-v5e", "rtx-4090", "a100-40gb"])
def test_an_uncovered_accelerator_refuses_in_one_line(gpu):
    out = ridge("solve", "--model", "llama-3-8b", "--gpu", gpu, "--fidelity", "measured", "--json")
    assert out.returncode == 2 and out.stdout == ""
    line = out.stderr.strip()
    assert "\n" not in line and len(line) <= 300 and "Traceback" not in line
    assert "no measured kernels for this accelerator" in line


@needs_measured
def test_measured_step_times_are_the_database_own():
    """`ridge solve --json --fidelity measured` against aiconfigurator-core called directly."""
    from aiconfigurator_core.sdk.engine import EngineHandle

    from engine import measured

    out = ridge("solve", "--model", "llama-3.1-70b", "--gpu", "h200", "--gpus", "4", "--prompt", "2000",
                "--output", "400", "--concurrency", "24", "--fidelity", "measured", "--json")
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    handle = EngineHandle.compile(measured.config_folder(CAT.model("llama-3.1-70b")), "h200_sxm", "vllm", tp_size=4,
                                  gemm_quant_mode="bfloat16", kvcache_quant_mode="bfloat16",
                                  fmha_quant_mode="bfloat16")
    assert j["batch"] == 24
    assert j["tpot_seconds"] == pytest.approx(handle.decode_step_latency(24, 2200, 2) / 1e3, rel=0.05)
    assert j["ttft_seconds"] == pytest.approx(handle.predict_prefill_latency(1, 2000) / 1e3, rel=0.05)
    assert j["fidelity"] == "measured" and j["measured_reason"] is None
    assert j["measured"]["backend"].startswith("aiconfigurator-core 0.12.0, vllm")
    for fidelity in ("floor", "realistic", "measured"):
        assert j[fidelity]["fidelity"] == fidelity
        assert {lv["name"] for lv in j[fidelity]["levers"]} == {lv["name"] for lv in j["levers"]}
    assert j["floor"]["objective_value"] < j["measured"]["objective_value"]
    assert out.stderr == ""   # the package's logging stays silent


def test_the_other_fidelities_say_why_measured_is_missing():
    out = ridge("solve", "--model", "llama-3-8b", "--json", "--fidelity", "realistic")
    j = json.loads(out.stdout)
    assert j["measured"] is None and "--fidelity measured" in j["measured_reason"]
    assert j["realistic"]["fidelity"] == "realistic" and j["floor"]["fidelity"] == "floor"
    floor = json.loads(ridge("solve", "--model", "llama-3-8b", "--json").stdout)
    assert floor["realistic"] is None and floor["measured"] is None


@needs_measured
def test_a_lever_the_database_cannot_time_has_no_gain_and_says_why():
    """On an A100 the quantization lever goes to INT8, which the vLLM tables do not hold."""
    dep = build_deployment(CAT, "llama-3-70b", "a100-80gb", gpus=4, concurrency=8, fidelity="measured")
    sol = solve(dep)
    quant = sol.lever("quantization")
    assert quant.gain is None and "not measured" in quant.note and "int8" in quant.note
    assert sol.realistic.lever("quantization").gain > 1.2 and sol.floor.lever("quantization").gain > 1.9
    assert sol.lever("speculative-decoding").gain > 1.2


@needs_measured
def test_an_engine_is_built_once_per_model_system_width_and_precision():
    from engine import measured

    model, gpu = CAT.model("llama-3-8b"), CAT.gpu("h100-sxm")
    first = measured.kernels(model, gpu, 2, "bf16", "bf16")
    assert measured.kernels(model, gpu, 2, "bf16", "bf16") is first
    assert measured.kernels(model, gpu, 2, "fp8", "fp8") is not first


def test_a_model_the_database_lacks_kernels_for_refuses_in_one_line():
    """phi-3-mini's 96-wide heads have no measured attention kernels."""
    dep = build_deployment(CAT, "phi-3-mini", "h100-sxm", fidelity="measured")
    from engine import measured

    if measured.unavailable():
        with pytest.raises(RidgeError, match="measured"):
            solve(dep)
        return
    with pytest.raises(RidgeError) as err:
        solve(dep)
    assert "no measured kernels for phi-3-mini" in str(err.value) and "\n" not in str(err.value)


@needs_measured
def test_nothing_goes_online(tmp_path):
    """A fresh cache folder, Hugging Face offline and every socket refused: the model is handed
    over as a config.json written from the catalog, so the estimate still comes."""
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(
        "import socket\n"
        "def _refuse(*a, **k):\n"
        "    raise OSError('network use refused by the test')\n"
        "socket.socket.connect = _refuse\n"
        "socket.create_connection = _refuse\n"
        "socket.getaddrinfo = _refuse\n", encoding="utf-8")
    env = {"PYTHONPATH": str(guard), "HF_HUB_OFFLINE": "1", "RIDGE_CACHE_DIR": str(tmp_path / "cache")}
    out = ridge("solve", "--model", "mixtral-8x7b", "--gpus", "2", "--fidelity", "measured", "--json", env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["tpot_seconds"] > 0
    written = list((tmp_path / "cache").rglob("config.json"))
    assert written and json.loads(written[0].read_text())["architectures"] == ["MixtralForCausalLM"]


@needs_measured
def test_puzzles_show_gains_the_measured_answer():
    j = shown("two-phases-08")
    fid = j["answer"]["fidelities"]
    assert {"floor", "realistic", "measured"} <= set(fid) and fid["measured_reason"] is None
    assert fid["measured"]["best_lever"] in j["levers"]
    assert fid["measured"]["backend"].startswith("aiconfigurator-core")


def test_puzzles_show_says_why_an_uncovered_accelerator_has_no_measured_answer():
    from puzzles import bank

    uncovered = next(p for p in bank.builtin().values() if not p.deployment.gpu.measured_system)
    j = shown(uncovered.id)
    fid = j["answer"]["fidelities"]
    assert fid["measured"] is None and fid["measured_reason"]


def _per_op(handle, tokens, context):
    """(attention, experts, rest) of one decode step in ms, from the package's own breakdown."""
    attn = experts = rest = 0.0
    for name, ms, *_ in handle.decode_step_per_op(tokens, context, 2):
        if "attention" in name or "mla" in name:
            attn += ms
        elif name in ("generation_moe", "generation_moe_overlap"):
            experts += ms
        else:
            rest += ms
    return attn, experts, rest


@needs_measured
@pytest.mark.parametrize("model,gpu,tp", [("llama-3.1-70b", "h100-sxm", 4), ("mixtral-8x7b", "h100-sxm", 2)])
def test_a_verification_pass_reads_each_cache_once(model, gpu, tp):
    """A verification pass of B sequences checking k drafts: the package's per-op breakdown at
    B x (k+1) tokens for everything but the cache read, which is B sequences' (not B x (k+1)),
    and the experts at the routed token count. Without drafts it is the plain decode step; at
    long context it costs far less than a decode step over B x (k+1) sequences."""
    from engine import measured

    kern = measured.kernels(CAT.model(model), CAT.gpu(gpu), tp, "bf16", "bf16")
    h = kern._h
    for batch, k, context, route in [(1, 4, 1024, 5), (16, 4, 8192, 48), (64, 3, 2048, 160)]:
        tokens = batch * (k + 1)
        attn, experts, rest = _per_op(h, tokens, 1)
        if CAT.model(model).experts:
            experts = _per_op(h, route, 1)[1]
        cache = _per_op(h, batch, context)[0] - _per_op(h, batch, 1)[0]
        want = (attn + experts + rest + cache) / 1e3
        assert kern.verify(batch, k, context, route) == pytest.approx(want, rel=1e-9)
        assert kern.verify(batch, 0, context, batch) == pytest.approx(h.decode_step_latency(batch, context, 2) / 1e3)
        assert kern.decode(batch, context) < kern.verify(batch, k, context, route) < kern.decode(tokens, context)
    long_ctx = kern.verify(16, 4, 32000, 80)
    assert long_ctx < 0.75 * kern.decode(80, 32000)


@needs_measured
def test_a_mixed_step_without_drafts_is_the_package_own_and_with_them_is_a_verification_pass():
    from engine import measured

    kern = measured.kernels(CAT.model("llama-3.1-70b"), CAT.gpu("h100-sxm"), 4, "bf16", "bf16")
    total = kern._h.mixed_step_breakdown(512, 16, 4096, 2)[0] / 1e3
    assert kern.mixed(512, 16, 4096, 4096) == pytest.approx(total, rel=1e-9)
    over = kern.decode(80, 4096) - kern.verify(16, 4, 4096, 80)
    wide = kern._h.mixed_step_breakdown(512, 80, 4096, 2)[0] / 1e3
    assert kern.mixed(512, 16, 4096, 4096, k=4) == pytest.approx(wide - over, rel=1e-9)
    assert kern.mixed(512, 16, 4096, 4096) < kern.mixed(512, 16, 4096, 4096, k=4) < wide


@needs_measured
def test_the_measured_answer_names_no_best_lever_when_the_keys_lever_was_not_timed():
    """clearing-test-12 is keyed on quantization to int8, which the A100's vLLM tables cannot time;
    the best of the levers they did time (chunked prefill, 1.04x) is not the measured best, and
    naming it read, from outside, as a flip of the key. The lever is null and the reason says why."""
    j = shown("clearing-test-12")
    answer = j["answer"]
    measured = answer["fidelities"]["measured"]
    assert answer["best_lever"] == "quantization"
    assert measured["best_lever"] is None and measured["gain"] is None
    assert measured["best_lever_reason"].startswith("quantization") and "int8" in measured["best_lever_reason"]
