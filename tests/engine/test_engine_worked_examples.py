"""The course's worked numbers, reproduced exactly by the engine."""
import math

import pytest

from engine.analysis import GIB, analyze
from engine.deployment import build_deployment
from engine.levers import solve


def seventy_b(catalog, **kw):
    values = dict(gpus=4, prompt=3072, output=2048, concurrency=125)
    values.update(kw)
    return build_deployment(catalog, "llama-3-70b", "h100-sxm", **values)


def test_h100_ridge_is_about_295(catalog):
    r = analyze(seventy_b(catalog))
    assert round(r.ridge) == 295
    assert r.ridge == pytest.approx(989.5e12 / 3.35e12)


def test_llama3_70b_weights_are_141_1_gb_and_131_4_gib(catalog):
    r = analyze(seventy_b(catalog))
    assert r.params == 70_553_706_496
    assert round(r.weight_bytes / 1e9, 1) == 141.1
    assert round(r.weight_bytes / GIB, 1) == 131.4


def test_decode_floors_42_ms_on_one_gpu_and_10_5_ms_on_four(catalog):
    one = analyze(build_deployment(catalog, "llama-3-70b", "h100-sxm", gpus=1, prompt=1, output=1,
                                   concurrency=1, reserve_gib=0))
    # One GPU cannot hold 131 GiB: the floor is the pure weight-read time, which analyze reports
    # only for deployments that fit, so compute it from the same quantities.
    assert not one.fits
    floor_one = one.weight_bytes / (3.35e12)
    assert round(floor_one * 1e3) == 42
    four = analyze(seventy_b(catalog, prompt=1, output=1, concurrency=1))
    assert four.batch == 1
    weights_only = four.decode_weight_bytes_per_step / (4 * 3.35e12)
    assert round(weights_only * 1e3, 1) == 10.5
    assert four.tpot_seconds == pytest.approx(weights_only, rel=1e-3)


def test_kv_per_token_is_327680_bytes(catalog):
    r = analyze(seventy_b(catalog))
    assert r.kv_bytes_per_token == 327_680 == 320 * 1024


@pytest.mark.parametrize("avg_len, expected", [(1024, 501), (4096, 125), (32768, 15)])
def test_max_concurrency_table_on_four_h100s(catalog, avg_len, expected):
    # S = P + O/2: pick P and O so the average is exactly avg_len.
    dep = build_deployment(catalog, "llama-3.1-70b", "h100-sxm", gpus=4, prompt=avg_len - 512,
                           output=1024, concurrency=10_000)
    r = analyze(dep)
    assert r.seq_len_avg == avg_len
    assert r.max_concurrency == expected
    assert round(r.usable_kv_bytes / GIB) == 157


def test_max_concurrency_at_128k_is_three(catalog):
    # An average of 131,072 tokens cannot fit the context with any output; the longest average
    # that does (prompt 131,071 + one output token) still holds exactly three sequences.
    dep = build_deployment(catalog, "llama-3.1-70b", "h100-sxm", gpus=4, prompt=131_071, output=1,
                           concurrency=10)
    r = analyze(dep)
    assert r.max_concurrency == 3
    assert math.floor(r.usable_kv_bytes / (327_680 * 131_072)) == 3


def test_intensity_57_at_batch_125_and_4096_tokens(catalog):
    r = analyze(seventy_b(catalog))
    assert r.batch == 125
    assert round(r.intensity) == 57
    assert r.decode_flops_per_step == pytest.approx(1.76e13, rel=3e-3)
    assert r.decode_bytes_per_step == pytest.approx(3.09e11, rel=3e-3)
    assert round(r.decode_kv_bytes_per_step / 1e9) == 168  # the KV read outweighs the weights
    assert r.bottleneck == "decode-kv"


def test_spec_decoding_expects_2_8_tokens_and_2_3x_at_batch_one(catalog):
    base = build_deployment(catalog, "llama-3-8b", "h100-sxm", prompt=1, output=1000, concurrency=1)
    spec = base.with_(spec_k=4, spec_alpha=0.7)
    r = analyze(spec)
    assert round(r.spec_expected_tokens, 1) == 2.8
    speedup = analyze(base).tpot_seconds / r.tpot_seconds
    assert round(speedup, 1) == 2.3


def test_issue_cli_example_gives_125(catalog):
    r = analyze(seventy_b(catalog, concurrency=200))
    assert r.max_concurrency == 125
    assert r.bottleneck == "kv-capacity"


def test_batch_one_uses_a_third_of_a_percent_of_the_chip(catalog):
    r = analyze(build_deployment(catalog, "llama-3-8b", "h100-sxm", prompt=10, output=10, concurrency=1))
    assert r.intensity == pytest.approx(1.0, rel=0.01)
    assert r.intensity / r.ridge == pytest.approx(0.0034, abs=0.0002)


def test_fp8_weights_and_kv_double_decode_throughput_only_when_decode_bound(catalog):
    """The course's corrected claim: weights-only FP8 at a KV-heavy batch is far from 2x."""
    base = seventy_b(catalog, prompt=4000, output=200, concurrency=100, objective="tpot")
    weights_only = analyze(base.with_(weights="fp8")).tpot_seconds
    both = analyze(base.with_(weights="fp8", kv="fp8")).tpot_seconds
    before = analyze(base).tpot_seconds
    assert before / weights_only < 1.5
    assert before / both == pytest.approx(2.0, rel=0.01)


def test_speculative_decoding_inverts_at_large_batch_short_context(catalog):
    dep = build_deployment(catalog, "llama-3-8b", "h100-sxm", prompt=96, output=64, concurrency=2000,
                           objective="tpot")
    s = solve(dep)
    assert s.report.batch > 295
    assert s.lever("speculative-decoding").gain < 1



def test_chunked_prefill_wins_on_the_worst_stall(catalog):
    dep = build_deployment(catalog, "llama-3.1-70b", "h100-sxm", gpus=4, prompt=12000, output=400,
                           concurrency=24, objective="stall")
    s = solve(dep)
    assert s.best_lever == "chunked-prefill"
    assert s.lever("chunked-prefill").gain == pytest.approx(24.0)  # 12,000 tokens in 512-token chunks
    chunked = s.lever("chunked-prefill").report
    assert chunked.ttft_seconds > s.report.ttft_seconds  # the price: the first token comes later
    assert solve(dep.with_(objective="cost")).lever("chunked-prefill").gain == pytest.approx(1.0)
