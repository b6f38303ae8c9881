"""The verdict rules: one ordered table (engine.physics.RULES) read by the scalar analysis, the
grid, the margins and the keys."""
from __future__ import annotations

from engine import physics
from engine.ids import LOAD_OBJECTIVES, OBJECTIVE_VERDICTS, Verdict


def test_rule_table_lists_each_objectives_verdicts_in_the_fixed_order():
    for objective, (rules, default) in physics.RULES.items():
        assert (Verdict.DOES_NOT_FIT, *(v for v, _ in rules), default) == OBJECTIVE_VERDICTS[objective]
    # the load objectives' verdicts are read from a simulated run's tail (engine.load.verdicts)
    assert set(physics.RULES) == set(OBJECTIVE_VERDICTS) - set(LOAD_OBJECTIVES)


# --- a static batch: the verdict that holds for most of its decode time -------------------------

import numpy as np
import pytest

from engine.analysis import analyze
from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.grid import analyze_grid, objective_verdict_names

STATIC = [
    # (model, gpu, gpus, prompt, output, concurrency): past the ridge at the first step only
    ("llama-3-70b", "h100-sxm", 8, 60, 300, 450),
    # a mixture of experts whose weight read grows as the batch does
    ("mixtral-8x7b", "h100-pcie", 2, 1000, 500, 64),
    # KV-heavy at the first step, weight-bound as it drains
    ("phi-3-mini", "l4", 1, 300, 300, 300),
]


def _static(model, gpu, gpus, prompt, output, concurrency, fidelity="floor"):
    return build_deployment(builtin_catalog(), model=model, gpu=gpu, gpus=gpus, prompt=prompt, output=output,
                            concurrency=concurrency, scheduler="static", fidelity=fidelity)


def _brute_shares(dep):
    """Sum tpot(j)/j over every count j the batch drains through, by the step's own verdict (a
    step with j in flight is the continuous batch of j whose sequences hold as many tokens: the
    static batch's P + O is a continuous batch's P + O'/2 with O' = 2 O)."""
    r = analyze(dep)
    times = {"decode-compute": 0.0, "decode-kv": 0.0, "decode-weights": 0.0}
    for j in range(1, r.batch + 1):
        step = analyze(dep.with_(scheduler="continuous", concurrency=j, objective="tpot", output=2 * dep.output))
        times[step.objective_bottleneck] += step.tpot_seconds / j
    total = sum(times.values())
    return tuple(times[v] / total for v in ("decode-compute", "decode-kv", "decode-weights"))


@pytest.mark.parametrize("fidelity", ["floor", "realistic"])
@pytest.mark.parametrize("case", STATIC)
def test_static_batch_shares_are_the_time_each_decode_verdict_holds(case, fidelity):
    dep = _static(*case, fidelity=fidelity)
    shares = analyze(dep).decode_time_shares
    assert shares == pytest.approx(_brute_shares(dep), abs=0.01)


def test_a_static_batch_past_the_ridge_only_at_first_is_weight_bound():
    """Its first step is compute-bound, but stragglers re-reading the weights fill ~95% of the
    decode time, so the verdict (and what bounds the cost) is the weight read."""
    r = analyze(_static(*STATIC[0]))
    assert r.decode_compute_seconds > r.decode_memory_seconds
    assert r.decode_time_shares[0] < 0.1
    assert r.bottleneck == "decode-weights" == r.objective_bottleneck


def test_continuous_batches_keep_the_one_step_rule():
    dep = _static(*STATIC[0]).with_(scheduler="continuous")
    r = analyze(dep)
    assert r.decode_time_shares is None
    assert r.bottleneck == "decode-compute"


def test_the_grid_gives_a_static_batch_the_same_verdict_as_the_scalar_analysis():
    dep = _static(*STATIC[0])
    conc = np.array([8.0, 100.0, 450.0, 3000.0, 20000.0])
    out = analyze_grid(dep, concurrency=conc)
    scalar = [analyze(dep.with_(concurrency=int(c))).objective_bottleneck for c in conc]
    assert list(objective_verdict_names(out["objective_verdict_index"])) == scalar


def test_a_static_batch_holds_a_whole_average_answer_in_flight():
    """Exponential answers (the drain model the card states): a sequence still in flight has on
    average one whole answer behind it, so the cache is sized for P + O, not P + O/2."""
    dep = _static(*STATIC[2])
    static, steady = analyze(dep), analyze(dep.with_(scheduler="continuous"))
    assert static.seq_len_avg == 300 + 300
    assert steady.seq_len_avg == 300 + 150
    assert static.max_concurrency < steady.max_concurrency
