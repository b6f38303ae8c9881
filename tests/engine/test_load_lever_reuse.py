"""The admission-control lever reuses the base run when no arrival found the cap's worth waiting.

Why it may: a capped run differs from the uncapped one only from its first shed arrival on, and an
arrival is shed only when it finds `queue_cap` requests waiting; if the base run's peak (the most
any arrival found) is below the cap, the two runs are the same step for step. These tests pin that
boundary: at a cap of peak + 1 the capped run equals the base in every figure and array, at a cap
of the peak itself it sheds (so the peak is not an overestimate that would hide a change).
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.ids import Lever, Objective
from engine.load.levers import evaluate_lever, objective_value, remember_outcome, run_outcome
from engine.load.run import simulate, times_cache
from engine.load.spec import LoadSpec

SETUPS = [
    ("llama-3-8b", 1, LoadSpec(qps=30, lengths="exponential", arrival="bursty", requests=600, seed=2)),
    ("llama-3-8b", 2, LoadSpec(qps=40, lengths="trace", requests=600, seed=5, replicas=2, chunk_tokens=512)),
    ("llama-3-8b", 1, LoadSpec(qps=40, lengths="exponential", requests=600, seed=1, disaggregate=(1, 1))),
]


def _same(a, b) -> bool:
    arrays = [(a.ttft, b.ttft), (a.tpot, b.tpot), (a.e2e, b.e2e)]
    arrays += [(a.ttft_parts[k], b.ttft_parts[k]) for k in a.ttft_parts]
    arrays += [(a.tpot_parts[k], b.tpot_parts[k]) for k in a.tpot_parts]
    return repr(a.figures) == repr(b.figures) and all(np.array_equal(x, y) for x, y in arrays)


@pytest.mark.parametrize("model,tp,spec", SETUPS)
def test_a_cap_above_the_peak_changes_nothing_and_one_at_it_sheds(model, tp, spec):
    dep = build_deployment(builtin_catalog(), model, "h100-sxm", gpus=tp, prompt=1024, output=256)
    base = simulate(dep, spec)
    assert base.peak_queue >= 1, "the setup must build a queue for the boundary to mean anything"
    assert _same(simulate(dep, spec.with_(queue_cap=base.peak_queue + 1)), base)
    assert simulate(dep, spec.with_(queue_cap=base.peak_queue)).figures["shed"] > 0


def test_the_lever_returns_the_base_run_only_when_it_cannot_differ():
    dep = build_deployment(builtin_catalog(), "llama-3-8b", "h100-sxm", gpus=1, prompt=1024, output=256)
    spec = LoadSpec(qps=30, lengths="exponential", arrival="bursty", requests=600, seed=2)
    base = simulate(dep, spec)
    value = objective_value(base, Objective.P99_TTFT)
    above = spec.with_(lever_queue_cap=base.peak_queue + 1)
    reused = evaluate_lever(dep, above, Objective.P99_TTFT, Lever.ADMISSION_CONTROL, value, times_cache(), base)
    assert reused.outcome is base and reused.gain == 1.0
    at = spec.with_(lever_queue_cap=base.peak_queue)
    fresh = evaluate_lever(dep, at, Objective.P99_TTFT, Lever.ADMISSION_CONTROL, value, times_cache(), base)
    assert fresh.outcome is not base and fresh.outcome.figures["shed"] > 0


@pytest.mark.parametrize("objective", [Objective.P99_TTFT, Objective.GPUS_FOR_SLO])
def test_an_outcome_told_to_a_times_cache_is_the_one_run_outcome_gives_for_that_setup_only(objective):
    """`ridge puzzles check` tells its probes the key's own base run (or sizing): they must get
    it back for that deployment and spec, and a fresh outcome for any other."""
    dep = build_deployment(builtin_catalog(), "llama-3-8b", "h100-sxm", gpus=1, prompt=1024, output=256)
    spec = LoadSpec(qps=30, requests=300, seed=2, slo_ttft=0.5, slo_tpot=0.05)
    made = run_outcome(dep, spec, objective)
    times = times_cache()
    remember_outcome(times, dep, spec, objective, made)
    assert run_outcome(dep, spec, objective, times_for=times) is made
    other = run_outcome(dep, spec.with_(seed=3), objective, times_for=times)
    assert other is not made and objective_value(other, objective) is not None
