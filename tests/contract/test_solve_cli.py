"""`ridge solve` from outside: the JSON contract, the derivation, and one-line errors."""
import json
import subprocess
import sys

import pytest

CONTRACT = ["params", "active_params", "weight_bytes", "kv_bytes_per_token", "ridge", "seq_len_avg",
            "usable_kv_bytes", "max_concurrency", "batch", "decode_bytes_per_step", "decode_flops_per_step",
            "decode_memory_seconds", "decode_compute_seconds", "tpot_seconds", "intensity", "prefill_seconds",
            "ttft_seconds", "prefill_share", "throughput_tokens_per_s", "cost_per_million_output_tokens",
            "bottleneck", "levers", "best_lever", "fits"]


def ridge(*args):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=60)


def test_issue_example_prints_max_concurrency_125():
    out = ridge("solve", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--gpus", "4", "--prompt", "3072",
                "--output", "2048", "--concurrency", "200", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["max_concurrency"] == 125 and data["seq_len_avg"] == 4096
    for key in CONTRACT:
        assert key in data
    assert [lv["name"] for lv in data["levers"]][0] == data["best_lever"]
    gains = [lv["gain"] for lv in data["levers"]]
    assert gains == sorted(gains, reverse=True)
    assert "spec_expected_tokens" not in data


def test_speculative_settings_add_expected_tokens():
    data = json.loads(ridge("solve", "--model", "llama-3-8b", "--spec-k", "4", "--spec-alpha", "0.7", "--json").stdout)
    assert round(data["spec_expected_tokens"], 1) == 2.8


def test_a_deployment_that_does_not_fit_prints_nulls_and_the_numbers():
    out = ridge("solve", "--model", "llama-3.1-405b", "--gpu", "l4", "--json")
    assert out.returncode == 0
    assert "NaN" not in out.stdout and "Infinity" not in out.stdout
    data = json.loads(out.stdout)
    assert data["fits"] is False and data["bottleneck"] == "does-not-fit"
    assert data["tpot_seconds"] is None and data["max_concurrency"] is None
    text = ridge("solve", "--model", "llama-3.1-405b", "--gpu", "l4").stdout
    assert "does-not-fit" in text and "GiB" in text


def test_readable_derivation_walks_the_arithmetic():
    text = ridge("solve", "--model", "llama-3-70b", "--gpus", "4", "--prompt", "3072", "--output", "2048",
                 "--concurrency", "125").stdout
    for fragment in ("141.1 GB", "327,680 B", "125 sequences", "57.1 FLOP/B", "= 295", "23.1 ms", "Verdict"):
        assert fragment in text


def test_config_file_path(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
                               "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
                               "vocab_size": 32768, "max_position_embeddings": 32768}))
    data = json.loads(ridge("solve", "--config", str(cfg), "--json").stdout)
    assert data["params"] == 7_248_023_552


@pytest.mark.parametrize("args, fragment", [
    (["--model", "gpt-5"], "unknown model 'gpt-5'"),
    (["--model", "llama-3-8b", "--gpu", "h900"], "unknown accelerator 'h900'"),
    (["--model", "llama-3-8b", "--prompt", "0"], "prompt must be at least 1"),
    (["--model", "llama-3-8b", "--output", "-3"], "output must be at least 1"),
    (["--model", "llama-3-8b", "--concurrency", "0"], "concurrency must be at least 1"),
    (["--model", "llama-3-8b", "--prompt", "9000"], "longer than llama-3-8b's context"),
    (["--model", "llama-3-8b", "--prompt", "ten"], "expected a whole number"),
    (["--model", "llama-3-8b", "--mfu", "1.5"], "mfu must be between"),
])
def test_bad_input_is_one_clear_line_with_status_2(args, fragment):
    out = ridge("solve", *args)
    assert out.returncode == 2
    assert fragment in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_config_that_is_not_json_is_one_line(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text("model_type: llama")
    out = ridge("solve", "--config", str(cfg))
    assert out.returncode == 2 and "not valid JSON" in out.stderr and "Traceback" not in out.stderr


def test_list_shows_every_id():
    data = json.loads(ridge("solve", "--list", "--json").stdout)
    assert "deepseek-v3" in data["models"] and "tpu-v5e" in data["gpus"]
