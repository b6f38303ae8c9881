"""Answer keys: what the engine says about a puzzle, computed, never typed by an author.

A key holds what bounds the puzzle's objective (`Report.objective_bottleneck`: DESIGN.md, "What
the bottleneck question asks"), every offered lever's gain (ranked best first), the best lever
and its magnitude band, the deciding quantity (a reason id, see `puzzles.reasons`), the true
value of every estimate a puzzle may ask for, and the worked derivation with this deployment's
numbers.

A key is computed under both fidelities (DESIGN.md, "Robust keys"): the course's floor decides
every figure shown, and the realistic solution must agree on the verdict and the best lever
(`flips` lists where it does not; `puzzles.check` and the generator reject those). Where the two
gains fall in different bands, both bands are accepted, and so is a neighbouring band whenever a
gain lies within 10% of the edge between them: `bands` is every band a prediction may name.

`ambiguity` lists what would make a puzzle unfair: a verdict within 10% of a rule's threshold, a
best lever less than 15% ahead of the runner-up, or (for the generator) a gain within 5% of a band
edge. `unoffered_winners` lists the levers a puzzle does not offer that beat its best by more than
2%, which a scenario must rule out in words.

A deployment that does not fit has no gain to measure: the best lever is the one that makes it fit
with the best objective, and its band is `over-4x` by convention (from nothing served to
something served is more than any finite factor).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from engine import physics
from engine.deployment import Deployment
from engine.ids import Fidelity, Scheduler, Verdict
from engine.levers import DEFAULT_SPEC_K, GAIN_BANDS, LEVERS, Solution, evaluate_lever, gain_band, solve

from puzzles import fmt
from puzzles.puzzle import ESTIMATE_NAMES, Puzzle
from puzzles.reasons import deciding_text, key_reason

UNFIT_BAND = "over-4x"
BAND_EDGES = (1.25, 2.0, 4.0)
VERDICT_MARGIN = 1.10   # every rule's deciding ratio must be outside [1/1.1, 1.1]
LEVER_MARGIN = 1.15     # the best lever's gain must be at least 1.15x the runner-up's
BAND_MARGIN = 1.05      # the best gain must be more than 5% from a band edge
BAND_TOLERANCE = 1.10   # a gain within 10% of a band edge accepts both bands beside it
UNOFFERED_MARGIN = 1.02  # an unoffered lever may not beat the offered best by more than 2%


def objective_bottleneck(report) -> str:
    """What bounds the report's objective (DESIGN.md, "What the bottleneck question asks"): the
    engine's `Report.objective_bottleneck`."""
    return str(report.objective_bottleneck)


def at_fidelity(dep: Deployment, fidelity: str) -> Deployment:
    """The same deployment judged at `fidelity`."""
    return dep if dep.fidelity == fidelity else dep.with_(fidelity=fidelity)


def accepted_bands(gains, fits: bool = True) -> tuple[str, ...]:
    """Every band a prediction may name for these gains (one per fidelity): each gain's own band,
    and the band across an edge that a gain lies within 10% of. In the fixed band order."""
    if not fits:
        return (UNFIT_BAND,)
    found = set()
    for g in gains:
        if g is None or not math.isfinite(g) or g <= 0:
            continue
        found.add(gain_band(g))
        for i, edge in enumerate(BAND_EDGES):
            if abs(math.log(g / edge)) <= math.log(BAND_TOLERANCE) + 1e-12:
                found.update((GAIN_BANDS[i], GAIN_BANDS[i + 1]))
    return tuple(b for b in GAIN_BANDS if b in found) or (GAIN_BANDS[0],)


@dataclass
class Key:
    """The engine's answer to one puzzle. Treat as immutable; `derivation` is worked on demand.

    `bottleneck` bounds the objective (floor); `deployment_bottleneck` is the six-rule verdict of
    the whole deployment. `gain`/`gain_band` are the floor's; `realistic` is the same offered
    levers solved at the realistic fidelity (None where the engine has none), and `bands` every
    band accepted."""

    bottleneck: str
    best_lever: str
    gain: float | None
    gain_band: str
    reason: str
    deciding: str
    levers: tuple  # LeverResult, ranked best first (only the levers the puzzle offers)
    estimates: dict
    solution: Solution = field(repr=False)
    realistic: Solution | None = field(default=None, repr=False)
    bands: tuple = ()
    deployment_bottleneck: str = ""

    @cached_property
    def derivation(self) -> tuple[str, ...]:
        return tuple(derivation_lines(self.solution))

    def lever_gain(self, name: str) -> float | None:
        return next((lv.gain for lv in self.levers if lv.name == name), None)

    @property
    def gain_bands(self) -> tuple:
        """Every band accepted (the name `puzzles.grading` reads)."""
        return self.bands

    @property
    def realistic_bottleneck(self) -> str | None:
        return objective_bottleneck(self.realistic.report) if self.realistic is not None else None

    @property
    def realistic_best_lever(self) -> str | None:
        return self.realistic.best_lever if self.realistic is not None else None

    @property
    def realistic_gain(self) -> float | None:
        if self.realistic is None or not self.realistic.report.fits:
            return None
        return self.realistic.best.gain

    @property
    def flips(self) -> list[tuple[str, str, str]]:
        """(part, floor's answer, realistic answer) wherever the two fidelities disagree."""
        if self.realistic is None:
            return []
        out = []
        if self.realistic_bottleneck != self.bottleneck:
            out.append(("bottleneck", self.bottleneck, self.realistic_bottleneck))
        if self.realistic_best_lever != self.best_lever:
            out.append(("best_lever", self.best_lever, self.realistic_best_lever))
        return out

    def fidelity_json(self) -> dict:
        """Both fidelities side by side: the floor's and the realistic verdict, lever and gain."""
        out = {"floor": {"bottleneck": self.bottleneck, "best_lever": self.best_lever,
                         "gain": _finite(self.gain), "gain_band": self.gain_band}}
        if self.realistic is not None:
            g = self.realistic_gain
            out["realistic"] = {"bottleneck": self.realistic_bottleneck, "best_lever": self.realistic_best_lever,
                                "gain": _finite(g), "gain_band": gain_band(g) if g is not None else UNFIT_BAND,
                                "levers": [{"name": lv.name, "gain": _finite(lv.gain)} for lv in self.realistic.levers]}
        return out

    def to_json(self) -> dict:
        return {
            "bottleneck": self.bottleneck, "best_lever": self.best_lever, "gain_band": self.gain_band,
            "reason": self.reason, "gain": _finite(self.gain), "gain_bands": list(self.bands),
            "deployment_bottleneck": self.deployment_bottleneck, "deciding": self.deciding,
            "levers": [{"name": lv.name, "gain": _finite(lv.gain), "band": gain_band(lv.gain), "note": lv.note}
                       for lv in self.levers],
            "fidelities": self.fidelity_json(),
            "estimates": {k: _finite(v) for k, v in self.estimates.items()},
            "derivation": list(self.derivation),
        }


def _finite(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def spec_expected_tokens(k: int, alpha: float) -> float:
    """E[tokens per verification] = (1 - alpha^(k+1)) / (1 - alpha): the engine's geometric sum."""
    return float(physics.spec_expected_tokens(float(k), alpha))


def true_estimates(solution: Solution) -> dict[str, float | None]:
    """Every estimate's true value; None where the deployment does not fit."""
    r = solution.report
    dep = r.deployment
    out: dict[str, float | None] = {name: None for name in ESTIMATE_NAMES}
    out["ridge"] = r.ridge
    out["kv_bytes_per_token"] = r.kv_bytes_per_token
    out["weight_bytes"] = r.weight_bytes
    out["spec_expected_tokens"] = spec_expected_tokens(dep.spec_k or DEFAULT_SPEC_K, dep.spec_alpha)
    if r.fits:
        for name in ("intensity", "max_concurrency", "tpot_seconds", "ttft_seconds",
                     "cost_per_million_output_tokens", "throughput_tokens_per_s"):
            out[name] = float(getattr(r, name))
    return out


def key_from_solution(solution: Solution, realistic: Solution | None = None) -> Key:
    """Build a key from an already-solved deployment (the generator solves once and reuses it);
    `realistic` is the same levers solved at the realistic fidelity, when there is one."""
    r = solution.report
    best = solution.best
    band = gain_band(best.gain) if r.fits else UNFIT_BAND
    reason = key_reason(solution)
    gains = [best.gain if r.fits else None]
    if realistic is not None and realistic.report.fits and realistic.best_lever == best.name:
        gains.append(realistic.best.gain)
    return Key(
        bottleneck=objective_bottleneck(r), best_lever=best.name, gain=best.gain if r.fits else None,
        gain_band=band or GAIN_BANDS[0], reason=reason, deciding=deciding_text(reason, solution),
        levers=solution.levers, estimates=true_estimates(solution), solution=solution, realistic=realistic,
        bands=accepted_bands(gains, r.fits), deployment_bottleneck=str(r.bottleneck),
    )


def offered_order(levers) -> tuple[str, ...]:
    return tuple(name for name in LEVERS if name in levers)


def solve_offered(dep: Deployment, levers: tuple[str, ...]) -> Solution:
    return solve(dep, offered_order(levers))


def solve_both(dep: Deployment, levers: tuple[str, ...]) -> tuple[Solution, Solution]:
    """The floor's and the realistic solution over the offered levers."""
    floor = solve_offered(at_fidelity(dep, Fidelity.FLOOR), levers)
    # The realistic solve carries the floor's; handing it over saves solving the floor twice.
    return floor, solve(at_fidelity(dep, Fidelity.REALISTIC), offered_order(levers), floor=floor)


def compute_key(puzzle: Puzzle) -> Key:
    """The engine's key for a puzzle: solve its deployment over the levers it offers, under both
    fidelities (a load puzzle: run its traffic, `puzzles.load_keys`)."""
    if puzzle.load is not None:
        from puzzles.load_keys import compute_load_key

        return compute_load_key(puzzle)
    return key_from_solution(*solve_both(puzzle.deployment, puzzle.levers))


def _beats(result, best, margin: float) -> bool:
    """Whether lever result `result` beats `best` by more than `margin` on the same base."""
    if best.gain is not None:
        return result.gain is not None and result.gain > best.gain * margin
    if result.report is None or not result.report.fits:
        return False
    if best.report is None or not best.report.fits:
        return True
    return result.report.objective_value() * margin < best.report.objective_value()


def unoffered_winners(solution: Solution, offered, ruled_out=(), margin: float = UNOFFERED_MARGIN) -> list:
    """LeverResults of the levers neither offered nor ruled out that beat the offered best by
    more than `margin` (2%) on this solution's deployment."""
    dep = solution.report.deployment
    best = solution.best
    out = []
    for name in LEVERS:
        if name in offered or name in ruled_out:
            continue
        result = evaluate_lever(dep, solution.report, name)
        if _beats(result, best, margin):
            out.append(result)
    return out


def verdict_margins(solution: Solution) -> list[tuple[str, float]]:
    """Each rule's deciding ratio (threshold 1) for the rules, in order, that decide what bounds
    the objective, up to and including its verdict (`engine.physics.RULES`, the one table).

    The first rule (does the deployment fit?) is always included: weights plus reserve over memory
    when it fits, the engine's own ratio when it does not. The KV-capacity rule is skipped when
    nothing is batched (it cannot fire then)."""
    r = solution.report
    if not r.fits:
        return [(name, ratio) for name, ratio in r.margins if name == Verdict.DOES_NOT_FIT]
    out = [(str(Verdict.DOES_NOT_FIT), (r.weight_bytes + r.reserve_bytes) / r.memory_bytes)]
    verdict = objective_bottleneck(r)
    for rule, ratio in physics.rule_ratios(r.__dict__, r.deployment.objective):
        if not (rule == Verdict.KV_CAPACITY and r.deployment.scheduler == Scheduler.NONE):
            out.append((rule, float(ratio)))
        if rule == verdict:
            break
    return out


def lever_margin(solution: Solution) -> float:
    """How far the best offered lever is ahead of the runner-up (a ratio; inf when unrivalled)."""
    levers = solution.levers
    if len(levers) < 2:
        return math.inf
    best, second = levers[0], levers[1]
    if solution.report.fits:
        if best.gain is None:
            return 0.0
        if second.gain is None or second.gain <= 0:
            return math.inf
        return best.gain / second.gain
    if best.report is None or not best.report.fits:
        return 0.0
    if second.report is None or not second.report.fits:
        return math.inf
    return second.report.objective_value() / best.report.objective_value()


def ambiguity(solution: Solution, verdict_margin: float = VERDICT_MARGIN, lever_margin_min: float = LEVER_MARGIN,
              band_margin: float | None = BAND_MARGIN) -> list[tuple[str, str]]:
    """What makes this puzzle's answer borderline, as (field, message) pairs; empty when clear.

    `band_margin=None` skips the band-edge rule: hand-authored puzzles may sit on an edge (halving
    every byte gains exactly 2x, the point of several lessons), because grading accepts either
    neighbouring band when the gain is within 10% of their edge. The generator keeps the rule."""
    if hasattr(solution, "load"):   # a load puzzle: puzzles.load_check judges its margins
        return []
    problems: list[tuple[str, str]] = []
    low = math.log(verdict_margin)
    for rule, ratio in verdict_margins(solution):
        if ratio > 0 and abs(math.log(ratio)) <= low:
            problems.append(("bottleneck", f"rule {rule} is borderline: its ratio is {ratio:.3f}, "
                                           f"within {verdict_margin - 1:.0%} of the threshold 1"))
    r = solution.report
    if not r.fits and (solution.best.report is None or not solution.best.report.fits):
        problems.append(("levers", "the deployment does not fit and no offered lever makes it fit"))
        return problems
    margin = lever_margin(solution)
    if margin < lever_margin_min:
        second = solution.levers[1]
        problems.append(("levers", f"best lever {solution.best_lever} ({fmt.gain(solution.best.gain)}) is less than "
                                   f"{lever_margin_min - 1:.0%} ahead of {second.name} ({fmt.gain(second.gain)})"))
    if r.fits:
        g = solution.best.gain
        if g is None or g < lever_margin_min:
            problems.append(("levers", f"the best offered lever gains only {fmt.gain(g)}"))
        elif band_margin is not None:
            for edge in BAND_EDGES:
                if abs(math.log(g / edge)) <= math.log(band_margin):
                    problems.append(("gain_band", f"the best gain {g:.3f}x is within {band_margin - 1:.0%} "
                                                  f"of the band edge {edge:g}x"))
    return problems


def derivation_lines(solution: Solution) -> list[str]:
    """The engine's worked derivation when it is available, else a short one of our own."""
    try:
        from engine.derivation import derivation_lines as engine_lines
    except ImportError:  # pragma: no cover - only before engine.derivation exists
        return _fallback_derivation(solution)
    return list(engine_lines(solution))


def _fallback_derivation(solution: Solution) -> list[str]:
    r = solution.report
    dep = r.deployment
    lines = [f"{dep.model.id} on {dep.gpus} x {dep.gpu.id}, prompt {dep.prompt}, output {dep.output}, "
             f"concurrency {dep.concurrency}",
             f"weights {fmt.gb(r.weight_bytes)}; KV {fmt.num(r.kv_bytes_per_token)} B/token; ridge {r.ridge:.0f}"]
    if r.fits:
        lines += [f"max concurrency {r.max_concurrency}, batch {r.batch}, intensity {r.intensity:.1f}",
                  f"TPOT {fmt.secs(r.tpot_seconds)}, TTFT {fmt.secs(r.ttft_seconds)}, prefill share {fmt.pct(r.prefill_share)}",
                  f"cost {fmt.dollars(r.cost_per_million_output_tokens)} per million output tokens"]
    lines.append(f"verdict {r.bottleneck}")
    lines += [f"  {lv.name}: {fmt.gain(lv.gain)} ({lv.note})" for lv in solution.levers]
    return lines
