"""Fleet sizing stops a trial once it certainly misses an SLO, and must still give the same answer.

Why it may: a search reads a trial's run only when the trial meets both SLOs, so a trial that
misses needs no more replicas run once the misses so far already fix the fleet's P99 above the
SLO (`engine.load.run._certain_miss`). These tests pin the bound against numpy's own percentile
(never a P99 within the SLO when the bound says it is missed; and not a bound so loose that it
never fires), a stopped run against the full one, and the sizing answer against a search that
runs every trial to the end.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.load import run as load_run
from engine.load import sizing
from engine.load.run import _certain_miss, run_unless_missed, saturation_qps, simulate, step_times
from engine.load.spec import LoadSpec


@pytest.mark.parametrize("slo", [0.5, 0.011, 3.0])
def test_the_bound_never_calls_a_miss_that_numpys_p99_would_meet(slo):
    over = np.nextafter(slo, math.inf)   # the least a value can be over the SLO
    for n in list(range(1, 400)) + [599, 600, 601, 1000, 3000]:
        late = next(m for m in range(n + 2) if _certain_miss(n, m, 0))
        assert _certain_miss(n, 0, late) and not _certain_miss(n, late - 1, late - 1)
        for served in {n, max(late, n - 7), late}:   # fewer served than requests: a smaller sample
            if late > served:
                continue
            values = np.array([over] * late + [slo] * (served - late))
            assert np.percentile(values, 99) > slo, (n, served, late)
        # the bound is close: with three fewer misses P99 can be the SLO itself
        if 3 <= late <= n:
            values = np.array([over] * (late - 3) + [slo] * (n - late + 3))
            assert np.percentile(values, 99) <= slo, (n, late)


def _dep(model="llama-3-8b", gpus=1, prompt=1024, output=256):
    return build_deployment(builtin_catalog(), model, "h100-sxm", gpus=gpus, prompt=prompt, output=output)


def test_a_stopped_run_stops_early_and_a_full_one_is_the_plain_run(monkeypatch):
    dep = _dep()
    spec = LoadSpec(qps=180, requests=600, seed=3, slo_ttft=0.5, slo_tpot=0.012)
    few = spec.with_(replicas=4)   # each replica past its steady-state rate: streams step slowly
    assert simulate(dep, few).figures["tpot_p99_seconds"] > 1.3 * spec.slo_tpot
    ran = []
    real = load_run.run_instance
    monkeypatch.setattr(load_run, "run_instance", lambda *a: ran.append(1) or real(*a))
    assert run_unless_missed(dep, few) is None
    assert 0 < len(ran) < few.replicas, "a fleet this far past its SLO is known to miss from its first replicas"

    plenty = spec.with_(replicas=12)
    full = simulate(dep, plenty)
    assert full.figures["ttft_p99_seconds"] <= spec.slo_ttft and full.figures["tpot_p99_seconds"] <= spec.slo_tpot
    kept = run_unless_missed(dep, plenty)
    assert repr(kept.figures) == repr(full.figures) and np.array_equal(kept.ttft, full.ttft)


def _plain_aggregated(dep, spec, times, seeds):
    """The replicas search with every trial run to the end (the search before the shortcut)."""
    per = saturation_qps(dep, spec.with_(replicas=1, disaggregate=None))
    failed = replicas = max(1, math.ceil(spec.qps / per * (1 - 1e-9)))
    failed -= 1
    while True:
        ttft_ok, tpot_ok, result = sizing._worst(dep, spec.with_(replicas=replicas), times, seeds)
        if ttft_ok and tpot_ok:
            break
        if not tpot_ok and spec.qps / replicas < 0.05 * per:
            return None
        failed, replicas = replicas, replicas + max(1, replicas // 2)
    while replicas - failed > 1:
        mid = (failed + replicas) // 2
        ttft_ok, tpot_ok, r = sizing._worst(dep, spec.with_(replicas=mid), times, seeds)
        if ttft_ok and tpot_ok:
            replicas, result = mid, r
        else:
            failed = mid
    return replicas, result


@pytest.mark.parametrize("model,prompt,qps,lengths,slo_tpot,seeds", [
    ("llama-3.1-8b", 8192, 34, "fixed", 0.011, 1),   # long papers: TPOT decides
    ("llama-3-8b", 2048, 120, "trace", 0.013, 2),
    ("llama-3-8b", 1024, 90, "exponential", 0.016, 3),
])
def test_the_sizing_answer_is_the_one_every_trial_run_to_the_end_gives(model, prompt, qps, lengths, slo_tpot, seeds):
    dep = _dep(model, prompt=prompt)
    spec = LoadSpec(qps=qps, requests=600, seed=1, lengths=lengths, slo_ttft=2.0, slo_tpot=slo_tpot)
    times = step_times(dep)
    replicas, result = _plain_aggregated(dep, spec, times, seeds)
    assert replicas > math.ceil(qps / saturation_qps(dep, spec)), "the search must have trials that miss"
    found = sizing._aggregated(dep, spec, times, seeds)
    assert found.replicas == replicas and repr(found.result.figures) == repr(result.figures)


def test_a_split_run_with_too_few_prefill_gpus_stops_before_its_decode_pool(monkeypatch):
    """The prefill pool alone fixes TTFT (the decode pool here can drop no request), so a prefill
    pool far too small is known to miss before a decode instance runs; a fleet that meets both
    SLOs runs to the end and is the plain run."""
    dep = _dep("llama-3.1-8b", prompt=8192)
    spec = LoadSpec(qps=12, requests=600, seed=2, slo_ttft=2.0, slo_tpot=0.011, link="nvlink")
    short = spec.with_(disaggregate=(1, 6))
    assert simulate(dep, short).figures["ttft_p99_seconds"] > 2 * spec.slo_ttft
    ran = []
    real = load_run.run_instance
    monkeypatch.setattr(load_run, "run_instance", lambda *a: ran.append(a[1].emits_first) or real(*a))
    assert run_unless_missed(dep, short) is None
    assert ran == [True], "only the prefill instance runs"
    monkeypatch.undo()

    found = sizing._split(dep, spec, step_times(dep), 1)
    ample = spec.with_(disaggregate=(found.prefill_gpus, found.decode_gpus))
    kept = run_unless_missed(dep, ample)
    assert repr(kept.figures) == repr(simulate(dep, ample).figures)


def _plain_split(dep, spec, times, seeds):
    """The split search with every give-back trial run to the end (the search before the shortcut)."""
    report = load_run.steady_report(dep, spec)
    p = max(1, math.ceil(spec.qps * report.prefill_charge_seconds))
    d = max(1, math.ceil(spec.qps * dep.output * report.tpot_seconds / report.batch))
    while True:
        ttft_ok, tpot_ok, result = sizing._worst(dep, spec.with_(disaggregate=(p, d)), times, seeds)
        if ttft_ok and tpot_ok:
            break
        p, d = p + (0 if ttft_ok else 1), d + (0 if tpot_ok else 1)
    for pool in ("p", "d"):
        while (p if pool == "p" else d) > 1:
            trial = (p - 1, d) if pool == "p" else (p, d - 1)
            ttft_ok, tpot_ok, r = sizing._worst(dep, spec.with_(disaggregate=trial), times, seeds)
            if not (ttft_ok and tpot_ok):
                break
            (p, d), result = trial, r
    return p, d, result


@pytest.mark.parametrize("qps,link,seeds", [(12, "nvlink", 1), (20, "infiniband-ndr", 2)])
def test_the_split_sizing_answer_is_the_one_every_trial_run_to_the_end_gives(qps, link, seeds):
    dep = _dep("llama-3.1-8b", prompt=8192)
    spec = LoadSpec(qps=qps, requests=400, seed=4, slo_ttft=2.0, slo_tpot=0.011, link=link)
    times = step_times(dep)
    p, d, result = _plain_split(dep, spec, times, seeds)
    assert p > 1 and d > 1, "giving a GPU back from either pool must have been tried and missed"
    found = sizing._split(dep, spec, times, seeds)
    assert (found.prefill_gpus, found.decode_gpus) == (p, d)
    assert repr(found.result.figures) == repr(result.figures)
