"""The levers of a load run: each re-runs the simulation with one change and reports its gain.

A gain is "how many times better": the P99 (or the GPUs a target needs) before over after, or
goodput per GPU after over before. A lever that cannot apply reports exactly 1 with a note. What
each lever changes, stated on a load puzzle's card:

- batching: let up to 256 sequences run at once (vLLM's default), where the cap is lower;
- prefix-caching, quantization, kv-quantization: as in the steady state (`engine.levers`);
- chunked-prefill: a token budget per step (`lever_chunk_tokens`, 512 unless the card says),
  decodes first; where prefill is already chunked, that budget instead of the current one;
- more-gpus: twice the fleet (twice the replicas, or both pools twice as large);
- disaggregation: the same GPUs split into a prefill and a decode pool (`lever_split`, else half
  and half), each prompt's KV cache sent over the link;
- admission-control: shed arrivals that find `lever_queue_cap` requests waiting (else one
  batch's worth, `max_running`).
Goodput counts requests with half a request added before and after (so a run where none met the
SLOs still has a finite gain), per second, per GPU.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine import levers as steady_levers
from engine.ids import LOAD_LEVERS, Lever, Objective
from engine.load import links
from engine.load.spec import DEFAULT_MAX_RUNNING, LoadSpec

LOWER_IS_BETTER = frozenset({Objective.P99_TTFT, Objective.P99_TPOT, Objective.GPUS_FOR_SLO})


def _split_note(dep, spec: LoadSpec, split: tuple[int, int]) -> str:
    from engine.load.run import transfer_seconds

    ms = float(transfer_seconds(dep, spec, [dep.prompt])[0]) * 1e3
    return (f"{split[0]} prefill + {split[1]} decode GPUs; each {dep.prompt}-token prompt's KV cache "
            f"crosses {links.label(spec)} in {ms:.3g} ms")


def default_split(dep, spec: LoadSpec) -> tuple[int, int] | None:
    """The lever's split of the fleet: the card's, else half the instances each (prefill first)."""
    if spec.lever_split is not None:
        return spec.lever_split
    instances = spec.replicas
    if instances < 2:
        return None
    p = instances // 2
    return p * dep.gpus, (instances - p) * dep.gpus


def lever_change(dep, spec: LoadSpec, name: str) -> tuple:
    """(deployment, spec, note) with lever `name` applied, or (None, None, why it cannot)."""
    if name == Lever.BATCHING:
        if spec.max_running >= DEFAULT_MAX_RUNNING:
            return None, None, f"already lets {spec.max_running} sequences run"
        return dep, spec.with_(max_running=DEFAULT_MAX_RUNNING), \
            f"let up to {DEFAULT_MAX_RUNNING} sequences run (was {spec.max_running})"
    if name in (Lever.PREFIX_CACHING, Lever.QUANTIZATION, Lever.KV_QUANTIZATION):
        changed, note = steady_levers.lever_change(dep, name)
        return (changed, spec, note) if changed is not None else (None, None, note)
    if name == Lever.CHUNKED_PREFILL:
        budget = max(spec.lever_chunk_tokens, spec.max_running)
        if spec.chunk_tokens == budget:
            return None, None, f"prefill already chunked at {spec.chunk_tokens} tokens per step"
        was = "whole prompts" if spec.chunk_tokens is None else f"{spec.chunk_tokens} tokens"
        return dep, spec.with_(chunk_tokens=budget), f"at most {budget} tokens per step, decodes first (was {was})"
    if name == Lever.MORE_GPUS:
        if spec.disaggregate is not None:
            p, d = spec.disaggregate
            return dep, spec.with_(disaggregate=(2 * p, 2 * d)), f"both pools doubled: {2 * p} + {2 * d} GPUs"
        return dep, spec.with_(replicas=2 * spec.replicas), \
            f"{spec.replicas} -> {2 * spec.replicas} replicas of {dep.gpus} x {dep.gpu.id}"
    if name == Lever.DISAGGREGATION:
        if spec.disaggregate is not None:
            return None, None, "prefill and decode already run in separate pools"
        split = default_split(dep, spec)
        if split is None:
            return None, None, "one instance cannot be split into two pools"
        if spec.arrival == "closed":
            return None, None, "a closed loop of users is not simulated across split pools"
        return dep, spec.with_(disaggregate=split, replicas=1), _split_note(dep, spec, split)
    if name == Lever.ADMISSION_CONTROL:
        if spec.queue_cap is not None:
            return None, None, f"the queue is already capped at {spec.queue_cap}"
        cap = spec.lever_queue_cap if spec.lever_queue_cap is not None else spec.max_running
        return dep, spec.with_(queue_cap=cap), f"shed arrivals that find {cap} requests already waiting"
    return None, None, "not a lever of a load run"


def objective_value(outcome, objective: str) -> float | None:
    """The figure `objective` judges: a run's P99 TTFT or TPOT, its goodput per GPU, or a
    sizing's GPU count."""
    if objective == Objective.GPUS_FOR_SLO:
        return float(outcome.best.gpus)
    f = outcome.figures
    if objective == Objective.P99_TTFT:
        return f["ttft_p99_seconds"]
    if objective == Objective.P99_TPOT:
        return f["tpot_p99_seconds"]
    good = f["goodput_requests_per_s"] * f["duration_seconds"]
    return (good + 0.5) / f["duration_seconds"] / f["gpus"]


def gain(before: float | None, after: float | None, objective: str) -> float | None:
    if before is None or after is None or before <= 0 or after <= 0:
        return None
    return before / after if objective in LOWER_IS_BETTER else after / before


@dataclass
class LoadLeverResult:
    name: str
    gain: float | None
    note: str
    outcome: object = field(default=None, repr=False)   # LoadResult, or Sizing for gpus-for-slo
    value: float | None = None


@dataclass
class LoadSolution:
    """A load run's objective, its tail verdict and every offered lever, ranked best first."""

    objective: str
    outcome: object = field(repr=False)
    value: float | None
    verdict: str
    verdict_margin: float
    shares: dict
    levers: tuple

    @property
    def result(self):
        """The run the verdict was read from (a sizing's answer fleet for gpus-for-slo)."""
        return self.outcome.best.result if self.objective == Objective.GPUS_FOR_SLO else self.outcome

    @property
    def best(self) -> LoadLeverResult:
        return self.levers[0]

    @property
    def best_lever(self) -> str:
        return self.levers[0].name

    def lever(self, name: str) -> LoadLeverResult:
        return next(lv for lv in self.levers if lv.name == name)


def _rank(results) -> tuple:
    order = {str(x): i for i, x in enumerate(Lever)}
    return tuple(sorted(results, key=lambda r: (r.gain is None, -(r.gain or 0.0), order[r.name])))


def run_outcome(dep, spec: LoadSpec, objective: str, times=None, times_for=None):
    """One simulation, or for gpus-for-slo the sizing at the deployment's own GPUs per instance
    (with `times_for`, one asked for before, or told by `remember_outcome`, is not run again)."""
    from engine.load.run import remembered, remembered_run, simulate

    if objective == Objective.GPUS_FOR_SLO:
        from engine.load.sizing import size_fleet

        def sizing():
            return size_fleet(dep, spec, tp=dep.gpus, seeds=1, split="also" if spec.disaggregate else False)

        return remembered(times_for, _outcome_key(dep, spec, objective), sizing) if times_for is not None else sizing()
    return remembered_run(dep, spec, times_for) if times_for is not None else simulate(dep, spec, times)


def _outcome_key(dep, spec: LoadSpec, objective: str) -> tuple:
    """What `run_outcome` remembers an outcome by: a run by (deployment, spec), as a lever's run
    is (`run.remembered_run`); a sizing by those and its objective."""
    return (dep, spec, objective) if objective == Objective.GPUS_FOR_SLO else (dep, spec)


def remember_outcome(times_for, dep, spec: LoadSpec, objective: str, outcome) -> None:
    """Tell `times_for` the outcome `run_outcome(dep, spec, objective)` gave elsewhere (a key's
    own run, made with other step times: a run is a pure function of the deployment and the
    spec), so a later ask for it reuses it."""
    from engine.load.run import remembered

    remembered(times_for, _outcome_key(dep, spec, objective), lambda: outcome)


def evaluate_lever(dep, spec: LoadSpec, objective: str, name: str, before: float | None,
                   times_for, base=None) -> LoadLeverResult:
    if objective == Objective.GPUS_FOR_SLO and name == Lever.DISAGGREGATION and spec.disaggregate is None:
        changed, new_spec, note = dep, spec, "size a prefill pool and a decode pool instead of replicas"
    else:
        changed, new_spec, note = lever_change(dep, spec, name)
    if changed is None:
        return LoadLeverResult(name, 1.0 if before is not None else None, note)
    if objective == Objective.GPUS_FOR_SLO:
        from engine.load.sizing import size_fleet
        from engine.errors import RidgeError

        if name == Lever.MORE_GPUS:
            return LoadLeverResult(name, 1.0, "the GPUs are what this question counts")
        if name == Lever.ADMISSION_CONTROL:
            return LoadLeverResult(name, 1.0, "a shed request never meets its SLO")
        try:
            outcome = size_fleet(changed, new_spec, tp=changed.gpus, seeds=1,
                                 split="only" if name == Lever.DISAGGREGATION else
                                 ("also" if new_spec.disaggregate else False))
        except RidgeError as exc:
            return LoadLeverResult(name, None, f"{note} ({exc})")
    elif name == Lever.ADMISSION_CONTROL and base is not None and base.peak_queue < new_spec.queue_cap:
        # no arrival of the base run found the cap's worth waiting, so the capped run sheds none
        # and is step for step the base run: reuse it (tests/engine/test_load_lever_reuse.py)
        outcome = base
    else:
        from engine.load.run import remembered_run

        outcome = remembered_run(changed, new_spec, times_for)
    after = objective_value(outcome, objective)
    return LoadLeverResult(name, gain(before, after, objective), note, outcome, after)


def solve_load(dep, spec: LoadSpec, objective: str, offered=LOAD_LEVERS, times_for=None) -> LoadSolution:
    """Simulate the base and each offered lever; the base's tail verdict; levers ranked."""
    from engine.load.run import times_cache
    from engine.load.verdicts import verdict

    times_for = times_for or times_cache()
    outcome = run_outcome(dep, spec, objective, times_for=times_for)
    value = objective_value(outcome, objective)
    solution_run = outcome.best.result if objective == Objective.GPUS_FOR_SLO else outcome
    v, margin, shares = verdict(dep, solution_run, objective)
    base = None if objective == Objective.GPUS_FOR_SLO else outcome
    results = [evaluate_lever(dep, spec, objective, str(name), value, times_for, base)
               for name in Lever if name in offered and name in LOAD_LEVERS]
    return LoadSolution(objective, outcome, value, str(v), margin, shares, _rank(results))
