"""Answer keys of load puzzles: computed by the request-level simulation (`engine.load`), never typed.

A load puzzle's objective is a percentile or a budget (P99 TTFT, P99 TPOT, goodput per GPU, the
GPUs the SLOs need). Its key holds the same four parts as any key, so the one grader judges it:

- bottleneck: what the objective's tail is made of (`engine.load.verdicts`);
- best lever: the offered lever with the largest gain on the objective (`engine.load.levers`);
- gain band: the realistic fidelity's band (DESIGN.md, "Robust keys"; its gain is the key's
  `band_gain`), with the neighbouring band where that gain is within 10% of an edge (the floor's
  gain, the key's `gain`, is shown beside it as the optimistic ceiling it is);
- reason: the quantity that decides it (`puzzles.load_reasons`).

The floor and the realistic fidelity are both run at the puzzle's arrival seed; `puzzles.load_check`
also runs other seeds and the measured fidelity. A key's `solution` is a `LoadView`: the load
run and its levers, plus the steady-state report of the same deployment at the scheduler's cap,
so the parts of the game that read a steady-state figure (an estimate, a misconception) still can.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from engine.analysis import analyze
from engine.ids import Fidelity
from engine.bands import GAIN_BANDS, UNFIT_BAND, accepted_bands, band_range, gain_band

from puzzles.keys import BAND_REACH, Key, at_fidelity, compute_key
from puzzles.keys import true_estimates as steady_estimates
from puzzles.puzzle import ESTIMATE_NAMES, Puzzle


@dataclass
class LoadLever:
    """One lever's effect on a load objective (the shape `puzzles` reads: name, gain, note; no
    steady-state report)."""

    name: str
    gain: float | None
    note: str
    value: float | None = None
    report: object = None


@dataclass
class LoadView:
    """A load puzzle's solution at one fidelity: the engine's `LoadSolution`, the puzzle's load
    spec, and the steady-state report of the deployment at the scheduler's cap."""

    load: object
    spec: object
    report: object
    levers: tuple
    module: str = ""   # the puzzle's chapter: the concept a drill reviews with it

    @property
    def fidelity(self) -> str:
        return self.report.deployment.fidelity

    @property
    def best(self) -> LoadLever:
        return self.levers[0]

    @property
    def best_lever(self) -> str:
        return self.levers[0].name

    @property
    def run(self):
        """The load run the verdict was read from."""
        return self.load.result

    # what `puzzles.reasons` asks of a load solution (it imports nothing of the load modules)
    def key_reason(self) -> str:
        from puzzles.load_reasons import key_reason

        return key_reason(self)

    def mechanism_reason(self) -> str | None:
        from puzzles.load_reasons import mechanism_reason

        return mechanism_reason(self)

    def accepted_reasons(self, verdict: str | None = None) -> frozenset[str]:
        from puzzles.load_reasons import accepted_reasons

        return accepted_reasons(self, verdict)

    def reason_holds(self, reason: str) -> bool:
        from puzzles.load_reasons import reason_holds

        return reason_holds(reason, self)

    def reason_fact(self, reason: str) -> str:
        from puzzles.load_reasons import reason_fact

        return reason_fact(reason, self)

    distractor_order = ("near-capacity", "bursty-arrivals", "unbounded-queue", "prompts-ahead", "prefill-stall",
                        "kv-exhausted", "running-cap", "phase-interference", "slow-link", "small-chunks",
                        "recomputed-prefix", "prefill-flops", "weight-read", "kv-read", "at-ridge")

    @property
    def utilisation(self) -> float:
        """Offered rate over the steady-state capacity (a closed loop: the rate its users
        reached). Past 1 the queue grows without end."""
        f = self.run.figures
        rate = f["offered_rate_per_s"] if f["offered_rate_per_s"] is not None else f["arrival_rate_per_s"]
        return rate / f["saturation_qps"] if f["saturation_qps"] else math.inf


def solve_view(puzzle: Puzzle, fidelity: str, spec=None, times_for=None) -> LoadView:
    """The puzzle solved at one fidelity (and, with `spec`, another seed or setting)."""
    from engine.load.levers import solve_load

    dep = at_fidelity(puzzle.deployment, fidelity)
    spec = spec or puzzle.load
    solution = solve_load(dep, spec, puzzle.objective, tuple(puzzle.levers), times_for)
    report = analyze(dep.with_(concurrency=spec.max_running, scheduler="continuous", allocator="paged"))
    levers = tuple(LoadLever(lv.name, lv.gain, lv.note, lv.value) for lv in solution.levers)
    return LoadView(solution, spec, report, levers, puzzle.module)


@dataclass
class LoadKey(Key):
    """The engine's answer to a load puzzle: a `puzzles.keys.Key` whose solutions are LoadViews.
    `gain` is the floor's gain of the best lever (its optimistic ceiling), `band_gain` the
    realistic gain that keys `gain_band`."""

    # a load run under the measured kernels builds an engine and runs every lever (seconds):
    # `ridge puzzles check` judges it (puzzles.load_check); no screen waits for it
    measured = None
    measured_reason = "a load run's measured step times are judged by `ridge puzzles check`"

    @cached_property
    def derivation(self) -> tuple[str, ...]:
        from puzzles.load_reasons import derivation_lines

        return tuple(derivation_lines(self.solution, self.realistic))

    def band_lever_gain(self, name: str) -> float | None:
        view = self.realistic if self.realistic is not None else self.solution
        return next((lv.gain for lv in view.levers if lv.name == name), None)

    @property
    def realistic_gain(self) -> float | None:
        return self.realistic.best.gain if self.realistic is not None else None

    def judged(self, measured: bool = False) -> list[tuple[str, LoadView]]:
        out = [(str(Fidelity.FLOOR), self.solution)]
        if self.realistic is not None:
            out.append((str(Fidelity.REALISTIC), self.realistic))
        return out

    def flips(self, measured: bool = False) -> list[tuple[str, str, str, str]]:
        """(part, fidelity, floor's answer, that fidelity's) where the realistic run disagrees."""
        out = []
        for fidelity, view in self.judged()[1:]:
            if view.load.verdict != self.bottleneck:
                out.append(("bottleneck", fidelity, self.bottleneck, view.load.verdict))
            if view.best_lever != self.best_lever:
                out.append(("best_lever", fidelity, self.best_lever, view.best_lever))
        return out

    def band_problems(self, measured: bool = False) -> list[tuple[str, str]]:
        """(fidelity, message) where an accepted band starts more than 5% above the realistic
        gain (`puzzles.keys.BAND_REACH`: the 10% edge rule is for gains on an edge, not below
        it); puzzles.load_check judges the other fidelities and the seeds."""


        g = self.band_gain
        if g is None:
            return []
        return [(str(Fidelity.REALISTIC), f"{band} is accepted but the realistic gain is {g:.2f}x, more than 5% below it")
                for band in self.bands if g * BAND_REACH < band_range(band)[0]]

    def fidelity_json(self, measured: bool = False) -> dict:
        return {fidelity: _view_json(view) for fidelity, view in self.judged()}


def _finite(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _view_json(view: LoadView) -> dict:
    g = view.best.gain
    return {"bottleneck": view.load.verdict, "best_lever": view.best_lever, "gain": _finite(g),
            "gain_band": gain_band(g) if g is not None else UNFIT_BAND,
            "objective": _finite(view.load.value), "tail_shares": {k: round(v, 4) for k, v in view.load.shares.items()},
            "levers": [{"name": lv.name, "gain": _finite(lv.gain)} for lv in view.levers]}


def true_estimates(view: LoadView) -> dict[str, float | None]:
    """Every estimate's true value: the load run's (Little's law, utilisation, the knee's rate)
    and the steady-state figures of the deployment at the scheduler's cap."""

    class _Steady:
        report = view.report

    out = steady_estimates(_Steady)
    f = view.run.figures
    out.update(mean_in_system=f["mean_in_system"], utilisation=view.utilisation, saturation_qps=f["saturation_qps"],
               cost_per_million_input_tokens=f["cost_per_million_input_tokens"],
               cost_per_million_output_tokens=f["cost_per_million_output_tokens"])
    return {name: out.get(name) for name in ESTIMATE_NAMES}


def key_from_views(floor: LoadView, realistic: LoadView | None = None, measured: LoadView | None = None) -> LoadKey:
    """The key: the floor's verdict, best lever and reason; the realistic band (and the measured
    one, when given), the floor's only where it is the same."""
    from puzzles.load_reasons import deciding_text, key_reason

    best = floor.best
    real_gain = realistic.best.gain if realistic is not None and realistic.best_lever == best.name else None
    gains = [real_gain] if real_gain is not None else [best.gain]
    if measured is not None and measured.best_lever == best.name:
        gains.append(measured.best.gain)
    key_band = gain_band(gains[0]) if gains[0] is not None else UNFIT_BAND
    reason = key_reason(floor)
    return LoadKey(
        bottleneck=floor.load.verdict, best_lever=best.name, gain=best.gain, band_gain=gains[0],
        gain_band=key_band or GAIN_BANDS[0],
        reason=reason, deciding=deciding_text(reason, floor), levers=floor.levers, estimates=true_estimates(floor),
        solution=floor, realistic=realistic, bands=accepted_bands(gains),
        deployment_bottleneck=str(floor.report.bottleneck),
    )


def key_of(puzzle: Puzzle) -> Key:
    """The engine's key for any puzzle: a load puzzle's from its traffic, any other from the
    steady-state analysis (`puzzles.keys.compute_key`)."""
    if puzzle.load is not None:
        return compute_load_key(puzzle)
    return compute_key(puzzle)


def compute_load_key(puzzle: Puzzle) -> LoadKey:
    """The engine's key for a load puzzle: its objective under the floor and realistic step
    times, at the puzzle's arrival seed."""
    return key_from_views(solve_view(puzzle, Fidelity.FLOOR), solve_view(puzzle, Fidelity.REALISTIC))
