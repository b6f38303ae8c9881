"""The Lab's engine: block bookkeeping, identical tokens from every server, next-step admission,
hand-worked utilisation, and the `ridge lab run --quick --json` contract."""
import json
import random
import subprocess
import sys

import numpy as np
import pytest

from engine.errors import RidgeError
from engine.lab.blocks import BlockAllocator, RangeAllocator
from engine.lab.kvcache import PagedCache
from engine.lab.model import ModelConfig, ToyModel
from engine.lab.report import Prediction, compare, decode_plot, text_report
from engine.lab.servers import Seq, Server, serve
from engine.lab.workload import Request, WorkloadSpec, make_requests

TINY = ModelConfig(vocab=128, d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=128, max_positions=256)


@pytest.fixture(scope="module")
def model():
    return ToyModel(TINY)


def _req(i, prompt_len, output_len, max_output, arrival=0, prefix=0):
    return Request(i, arrival, tuple((7 * i + 3 * j) % TINY.vocab for j in range(prompt_len)), prefix,
                   output_len, max_output)


# -- blocks ------------------------------------------------------------------------------------
def test_block_allocator_random_walk_keeps_its_invariants():
    rng = random.Random(5)
    pool = BlockAllocator(12)
    tables: list[list[int]] = []
    for _ in range(400):
        op = rng.random()
        if op < 0.35 and pool.free_count:
            tables.append([pool.allocate()])
        elif op < 0.55 and tables:  # a new sequence shares another's blocks (a common prefix)
            tables.append([pool.share(b) for b in rng.choice(tables)])
        elif op < 0.75 and tables and pool.free_count:  # a write into the last block
            table = rng.choice(tables)
            table[-1], _ = pool.copy_on_write(table[-1])
        elif tables:
            for b in tables.pop(rng.randrange(len(tables))):
                pool.release(b)
        pool.check(tables)
        owned = [b for t in tables for b in t]
        assert not set(owned) & set(pool._free)  # no block both owned and free
    for table in tables:
        for b in table:
            pool.release(b)
    pool.check([])
    assert pool.free_count == 12


def test_copy_on_write_only_when_shared():
    pool = BlockAllocator(4)
    a = pool.allocate()
    assert pool.copy_on_write(a) == (a, False)  # sole owner writes in place
    pool.share(a)
    b, copied = pool.copy_on_write(a)
    assert copied and b != a and pool.refs[a] == 1 and pool.refs[b] == 1
    with pytest.raises(RidgeError):
        pool.share(3)  # free blocks cannot be shared
    pool.release(a)
    pool.release(b)
    with pytest.raises(RidgeError):
        pool.release(a)


def test_paged_cache_copies_a_shared_prefix_block_when_a_sequence_diverges():
    cache = PagedCache(TINY, slots=64, block_size=4)
    first, second = Seq(_req(0, 9, 2, 4, prefix=6)), Seq(_req(1, 9, 2, 4, prefix=6))
    second.request = Request(1, 0, first.request.prompt[:6] + (1, 2, 3), 6, 2, 4)
    rows = np.arange(6 * 2 * 16, dtype=np.float32).reshape(6, 2, 16)
    cache.open(first)
    assert cache.prepare(first, 6)
    for layer in range(TINY.n_layers):
        cache.write(first, layer, 0, rows, rows)
    first.kv_len = 6
    cache.publish_prefix(first)
    assert cache.open(second) == 6  # a hit: the system prompt's two blocks are shared
    second.kv_len = 6
    shared_full, shared_partial = cache.tables[1][:2]
    assert cache.blocks.refs[shared_full] == 3  # both sequences and the prefix table
    assert cache.prepare(second, 9)
    assert cache.tables[1][0] == shared_full and cache.tables[1][1] != shared_partial  # copied on write
    assert cache.cow_copies == 1
    keys, _ = cache.read(second, 0, 6)
    assert np.array_equal(keys, rows)  # the copy carries the shared positions
    cache.release(first)
    cache.release(second)
    cache.evict_prefixes()
    cache.check([])
    assert cache.blocks.free_count == cache.blocks.n_blocks


def test_range_allocator_leaves_holes():
    ranges = RangeAllocator(10)
    a, b, c = ranges.allocate(3), ranges.allocate(3), ranges.allocate(3)
    ranges.release(b)
    assert ranges.allocate(4) is None  # 4 slots are free in total, but no hole holds 4
    assert [h.size for h in ranges.holes()] == [3, 1]
    assert ranges.allocate(3) == b and (a, c) == (0, 6)


# -- servers -------------------------------------------------------------------------------------
def test_every_server_emits_the_same_tokens(model):
    spec = WorkloadSpec(n_requests=14, arrival_rate=2.0, prompt_min=2, prompt_max=20, output_mean=12,
                        output_max=30, system_prompt_len=6, vocab=TINY.vocab, seed=3)
    requests = make_requests(spec)
    runs = [serve(model, requests, scheduler=s, allocator=a, slots=150, block_size=4, check=True)
            for s in ("static", "continuous") for a in ("contiguous", "paged")]
    runs.append(serve(model, requests, scheduler="continuous", allocator="paged", slots=150, block_size=4,
                      max_batch=1, share_prefixes=False, check=True))  # one at a time: the batch-1 kernels
    outputs = runs[0].outputs
    assert len(outputs) == 14 and all(len(outputs[r.id]) == r.output_len for r in requests)
    assert all(run.outputs == outputs for run in runs)
    paged = runs[3]
    assert paged.cow_copies > 0 and paged.prefix_hits > 0 and paged.preemptions > 0  # all paths exercised
    server = Server(model, requests, scheduler="continuous", allocator="paged", slots=150, block_size=4, check=True)
    while server.step():
        pass
    assert server.result().outputs == outputs
    assert server.cache.blocks.free_count == server.cache.blocks.n_blocks and not server.cache.tables
    assert len({t for toks in outputs.values() for t in toks}) > 20  # the model is not a constant


def test_continuous_admits_on_the_step_after_a_slot_frees(model):
    requests = [_req(0, 4, 3, 5), _req(1, 4, 3, 5), _req(2, 4, 1, 5)]
    for allocator, slots in (("contiguous", 10), ("paged", 64)):
        run = serve(model, requests, scheduler="continuous", allocator=allocator, slots=slots, block_size=4,
                    max_batch=1)
        assert run.admitted_step == {0: 0, 1: 3, 2: 6}
        assert run.finished_step == {0: 2, 1: 5, 2: 6}


def test_static_waits_for_the_whole_batch(model):
    requests = [_req(0, 4, 2, 3), _req(1, 4, 5, 6), _req(2, 4, 2, 3, arrival=1)]
    run = serve(model, requests, scheduler="static", allocator="contiguous", slots=100, batch_wait=0)
    assert run.admitted_step[0] == run.admitted_step[1] == 0
    assert run.admitted_step[2] == run.finished_step[1] + 1  # not when request 0 finished


def test_utilisation_arithmetic_on_a_hand_worked_case(model):
    # Prompt 4, answer 3, allowed 5: holds 4, 5, 6 keys/values over three steps; 6 at the end.
    naive = serve(model, [_req(0, 4, 3, 5), _req(1, 4, 3, 5)], scheduler="static", allocator="contiguous",
                  slots=10)
    # Each reserves 4 + 5 - 1 = 8 slots; the second waits beside a 2-slot hole for three steps.
    assert naive.busy_steps == 6
    assert naive.used_sum == 2 * (4 + 5 + 6)
    assert naive.allocated_sum == 6 * 8
    assert naive.utilization == pytest.approx(30 / 48)
    assert naive.reservation_sum == 2 * (2 + 1 + 0)
    assert naive.internal_sum == 6 * 2
    assert naive.external_sum == 3 * 2
    assert naive.summary()["pool_share"]["external_fragmentation"] == pytest.approx(6 / 60)
    # Paged, blocks of 4: one block (4 of 4 used), then two (5 of 8), then two (6 of 8).
    paged = serve(model, [_req(0, 4, 3, 5)], scheduler="continuous", allocator="paged", slots=16, block_size=4)
    assert (paged.used_sum, paged.allocated_sum) == (15, 20)
    assert paged.utilization == pytest.approx(0.75)
    assert paged.reservation_sum == 1 and paged.internal_sum == 4 and paged.external_sum == 0


def test_bad_input_is_a_ridge_error(model):
    with pytest.raises(RidgeError):
        serve(model, [_req(0, 4, 3, 500)], scheduler="static", allocator="contiguous", slots=100)
    with pytest.raises(RidgeError):
        serve(model, [_req(0, 4, 3, 5)], scheduler="eager", allocator="paged", slots=100)
    with pytest.raises(RidgeError):
        ModelConfig(d_model=8192, n_heads=64, n_kv_heads=8)  # too wide for exact float32 sums
    with pytest.raises(RidgeError):
        WorkloadSpec(prompt_min=0)


# -- report and command line -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def quick_run() -> dict:
    """`ridge lab run --quick --json`, run once for the tests that read its result (each test gets
    its own copy, so none sees another's changes)."""
    out = subprocess.run([sys.executable, "-m", "app", "lab", "run", "--quick", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_quick_run_from_the_command_line(quick_run):
    result = json.loads(json.dumps(quick_run))
    for key in ("identical_outputs", "speedup", "naive_utilization", "paged_utilization", "bandwidth_fraction",
                "continuous_contiguous_speedup", "static_paged_speedup", "most_gain_from", "roofline", "servers"):
        assert key in result, key
    assert result["identical_outputs"] is True
    assert result["most_gain_from"] in ("continuous-batching", "paged-allocation")
    assert set(result["servers"]) == {"naive", "continuous-contiguous", "static-paged", "paged"}
    assert 0 < result["naive_utilization"] < result["paged_utilization"] <= 1
    shares = result["servers"]["naive"]["pool_share"]
    assert sum(shares.values()) == pytest.approx(1.0)
    # The text views of the same result stay within a terminal's width.
    assert all(len(line) <= 88 for line in text_report(result))
    assert all(len(line) <= 78 for line in decode_plot(result, width=24))
    rows = compare(Prediction(result["speedup"], 0.0, result["most_gain_from"]), result)
    assert [r[3] for r in rows] == ["close", "off" if abs(result["utilization_gap_points"]) > 10 else "close",
                                    "right"]


def test_bad_command_lines_exit_2():
    out = subprocess.run([sys.executable, "-m", "app", "lab", "run", "--seed", "-1", "--quick", "--quiet"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.count("\n") == 1


@pytest.mark.parametrize("batch2_ms", [0.5, 3.0, 80.0, 12_345.0, 9e9])
def test_the_decode_plot_width_never_depends_on_timing(batch2_ms):
    """A slow batch 2 (BLAS switching kernels on a busy machine) adds the note and big numbers;
    neither may push a line past 78 columns, at the Lab screen's width or the report's."""
    points = [{"batch": b, "step_seconds": s / 1e3, "roofline_seconds": f / 1e3}
              for b, s, f in [(1, 1.0, 0.9), (2, batch2_ms, 0.9), (4, 2.0, 1.0), (64, 99_999.0, 5e6)]]
    result = {"roofline": {"points": points, "ridge_batch": 3.0}}
    for width in (24, 32):
        lines = decode_plot(result, width=width)
        assert all(len(line) <= 78 for line in lines), [line for line in lines if len(line) > 78]
    assert any("BLAS" in line for line in decode_plot(result)) == (batch2_ms > 1.5)


def test_a_ratio_whose_spread_crosses_one_is_within_noise_not_a_slowdown():
    from engine.lab.report import ratio_words, within_noise

    assert within_noise([0.93, 1.02]) and not within_noise([1.1, 1.3])
    assert ratio_words(0.96, [0.93, 1.02]) == "0.96×, within noise (0.93-1.02×)"
    assert ratio_words(1.84, [1.80, 1.90]) == "1.84× (1.80-1.90×)"
    assert ratio_words(1.5, None) == "1.50×"


def test_the_lab_repeats_the_serving_with_blas_pinned(quick_run):
    result = json.loads(json.dumps(quick_run))
    assert result["serve_repeats"] == 3 and result["blas_threads"] == 1
    low, high = result["speedup_spread"]
    assert low <= high and set(result["ablation_spreads"]) == {"continuous-batching", "paged-allocation"}
    assert result["identical_outputs"]
