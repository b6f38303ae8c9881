"""Answer keys: what the engine says about a puzzle, computed, never typed by an author.

A key holds what bounds the puzzle's objective (`Report.objective_bottleneck`: DESIGN.md, "What
the bottleneck question asks"), every offered lever's gain (ranked best first), the best lever
and its magnitude band, the deciding quantity (a reason id, see `puzzles.reasons`), the true
value of every estimate a puzzle may ask for, and the worked derivation with this deployment's
numbers.

Robust keys (DESIGN.md, "Robust keys"). A key is judged under every fidelity: the course's floor,
the realistic estimate and, where the optional extra is installed and covers the accelerator and
precisions, the measured kernels (`judged`). The verdict and the best lever must be the same
under each (`flips` lists where they are not; `puzzles.check` and the generator reject those).
The floor decides every figure of the derivation, but its gain is a ceiling, not the answer:
the band is keyed on the realistic gain (`band_gain`), with the neighbouring band accepted where
that gain lies within 10% of an edge, and the floor's band counts only where it is one of those.
So a floor gain of exactly 2.00 beside a realistic 1.45 keys `1.25-2x` alone. The key itself uses
the floor and the realistic fidelity only, so it is the same on every machine (a player without
the extra grades alike, and a saved answer re-grades alike); `puzzles.check` holds the measured
fidelity to it where it runs: the same verdict and lever, and a band the key accepts.

`ambiguity` lists what would make a puzzle unfair: a verdict within 10% of a rule's threshold, a
best lever less than 15% ahead of the runner-up, or (for the generator, on the realistic gain) a
gain within 10% of a band edge. `unoffered_winners` lists the levers a puzzle does not offer that come within 2% of its
best or beat it, which a scenario must rule out in words (`ruled_out`).

A deployment that does not fit has no gain to measure: the best lever is the one that makes it fit
with the best objective, and its band is `over-4x` by convention (from nothing served to
something served is more than any finite factor); the card says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from engine import physics
from engine.bands import BAND_EDGES, UNFIT_BAND, accepted_bands, band_range, gain_band
from engine.deployment import Deployment
from engine.errors import RidgeError
from engine.ids import Fidelity, Scheduler, Verdict
from engine.levers import DEFAULT_SPEC_K, LEVERS, Solution, evaluate_lever, solve

from puzzles import fmt
from puzzles.puzzle import ESTIMATE_NAMES, Puzzle
from puzzles.reasons import deciding_text, is_load, key_reason

VERDICT_MARGIN = 1.10   # every rule's deciding ratio must be outside [1/1.1, 1.1]
LEVER_MARGIN = 1.15     # the best lever's gain must be at least 1.15x the runner-up's
BAND_MARGIN = 1.10      # the generator's realistic gain must be more than 10% from a band edge
BAND_REACH = 1.05       # an accepted band may start at most 5% above the realistic gain
UNOFFERED_MARGIN = 0.98  # an unoffered lever within 2% of the offered best (or above it) must be ruled out
KEY_FIDELITY = Fidelity.REALISTIC   # the fidelity whose gain keys the band


def objective_bottleneck(report) -> str:
    """What bounds the report's objective (DESIGN.md, "What the bottleneck question asks"): the
    engine's `Report.objective_bottleneck`."""
    return str(report.objective_bottleneck)


def at_fidelity(dep: Deployment, fidelity: str) -> Deployment:
    """The same deployment judged at `fidelity`."""
    return dep if dep.fidelity == fidelity else dep.with_(fidelity=fidelity)


def _finite_gain(solution: Solution | None, lever: str) -> float | None:
    """`lever`'s gain in `solution` (None where there is none, or the deployment does not fit)."""
    if solution is None or not solution.report.fits:
        return None
    return next((lv.gain for lv in solution.levers if lv.name == lever), None)


@dataclass
class Key:
    """The engine's answer to one puzzle. Treat as immutable; `derivation` is worked on demand.

    `bottleneck` bounds the objective (floor); `deployment_bottleneck` is the six-rule verdict of
    the whole deployment. `gain` is the floor's gain of the best lever (the ceiling it cannot
    beat); `band_gain` the realistic gain that keys `gain_band`; `bands` every band accepted.
    `realistic` is the offered levers solved at the realistic fidelity (None where the engine has
    none); `measured` is solved on first use, where that fidelity runs (see `judged`)."""

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
    band_gain: float | None = None

    @cached_property
    def derivation(self) -> tuple[str, ...]:
        return tuple(derivation_lines(self.solution))

    def lever_gain(self, name: str) -> float | None:
        """The floor's gain of lever `name` (its ceiling)."""
        return next((lv.gain for lv in self.levers if lv.name == name), None)

    def band_lever_gain(self, name: str) -> float | None:
        """Lever `name`'s gain at the fidelity that keys the band (the floor's where there is none)."""
        return _finite_gain(self.realistic, name) if self.realistic is not None else self.lever_gain(name)

    @property
    def band_levers(self) -> tuple:
        """The offered levers ranked at the fidelity that keys the band: the realistic one where
        there is one (the floor's gains are their ceilings), else the floor's."""
        return self.realistic.levers if self.realistic is not None else self.levers

    @property
    def gain_bands(self) -> tuple:
        """Every band accepted (the name `puzzles.grading` reads)."""
        return self.bands

    @property
    def realistic_gain(self) -> float | None:
        if self.realistic is None or not self.realistic.report.fits:
            return None
        return self.realistic.best.gain

    @cached_property
    def _measured(self) -> tuple[Solution | None, str | None]:
        from engine.compare import measured_of, measured_problem

        solution = self.realistic if self.realistic is not None else self.solution
        problem = measured_problem(solution.report.deployment)
        if problem is not None:
            return None, problem
        try:
            return measured_of(solution), None
        except RidgeError as exc:   # a kernel the database lacks for this model (one line says which)
            return None, str(exc)

    @property
    def measured(self) -> Solution | None:
        """The offered levers solved on the measured kernels (`engine.compare.measured_of`), or None
        where that fidelity does not run here (`measured_reason` says why: the extra is not
        installed, or the accelerator, precisions or model are not in the database)."""
        return self._measured[0]

    @property
    def measured_reason(self) -> str | None:
        return self._measured[1]

    def judged(self, measured: bool = False) -> list[tuple[str, Solution]]:
        """(fidelity, solution) for every fidelity this key is judged under, floor first; the
        measured one only when asked for and where it runs (it builds kernels: seconds at first)."""
        out = [(str(Fidelity.FLOOR), self.solution)]
        if self.realistic is not None:
            out.append((str(Fidelity.REALISTIC), self.realistic))
        if measured and self.measured is not None:
            out.append((str(Fidelity.MEASURED), self.measured))
        return out

    def flips(self, measured: bool = False) -> list[tuple[str, str, str, str]]:
        """(part, fidelity, floor's answer, that fidelity's answer) wherever a fidelity disagrees
        with the floor on the verdict or the best lever. A lever the measured kernels cannot time
        (a precision the database lacks) is not judged there."""
        out = []
        for fidelity, solution in self.judged(measured)[1:]:
            verdict = objective_bottleneck(solution.report)
            if verdict != self.bottleneck:
                out.append(("bottleneck", fidelity, self.bottleneck, verdict))
            if fidelity == Fidelity.MEASURED and unmeasured(solution, self.best_lever):
                continue
            if solution.best_lever != self.best_lever:
                out.append(("best_lever", fidelity, self.best_lever, solution.best_lever))
        return out

    def band_problems(self, measured: bool = False) -> list[tuple[str, str]]:
        """(fidelity, message) where a fidelity's own band of the best lever is not accepted, or
        an accepted band starts more than 5% above the realistic gain (a floor of exactly 2.00
        beside a realistic 1.85 must not let `2-4x` through: the 10% edge rule is for gains that
        sit on an edge, and the flattering side of it is held to 5%)."""
        if not self.solution.report.fits:
            return []
        out = []
        g = self.band_gain
        if g is not None:
            for band in self.bands:
                low, _ = band_range(band)
                if g * BAND_REACH < low:
                    out.append((str(KEY_FIDELITY), f"{band} is accepted but the realistic gain is {g:.2f}x, "
                                                   f"more than 5% below it"))
        for fidelity, solution in self.judged(measured)[1:]:
            other = _finite_gain(solution, self.best_lever)
            if other is None or unmeasured(solution, self.best_lever):
                continue
            if gain_band(other) not in self.bands:
                out.append((fidelity, f"{self.best_lever} gains {other:.2f}x ({gain_band(other)}) at the {fidelity} "
                                      f"fidelity, a band the key ({'|'.join(self.bands)}) does not accept"))
        return out

    def fidelity_json(self, measured: bool = False) -> dict:
        """Every fidelity side by side: its verdict, best lever and gain (and each lever's gain);
        `measured` only when asked for and where it runs."""
        out = {}
        for fidelity, solution in self.judged(measured):
            fits = solution.report.fits
            g = solution.best.gain if fits else None
            entry = {"bottleneck": objective_bottleneck(solution.report), "best_lever": solution.best_lever,
                     "gain": _finite(g), "gain_band": gain_band(g) if g is not None else UNFIT_BAND}
            if fidelity != Fidelity.FLOOR:
                entry["levers"] = [{"name": lv.name, "gain": _finite(lv.gain)} for lv in solution.levers]
            out[fidelity] = entry
        return out

    def to_json(self) -> dict:
        return {
            "bottleneck": self.bottleneck, "best_lever": self.best_lever, "gain_band": self.gain_band,
            "reason": self.reason, "gain": _finite(self.gain), "band_gain": _finite(self.band_gain),
            "gain_bands": list(self.bands),
            "deployment_bottleneck": self.deployment_bottleneck, "deciding": self.deciding,
            "levers": [{"name": lv.name, "gain": _finite(lv.gain), "band": gain_band(lv.gain), "note": lv.note}
                       for lv in self.levers],
            "fidelities": self.fidelity_json(),
            "estimates": {k: _finite(v) for k, v in self.estimates.items()},
            "derivation": list(self.derivation),
        }


def realistic_gain(key: Key, lever: str) -> float | None:
    """`lever`'s realistic gain for this key (None where the engine has no realistic solution)."""
    return _finite_gain(key.realistic, lever)


def shown_gain(key: Key) -> str:
    """The best lever's gain as a reveal states it: the realistic figure that keys the band, with
    the floor's beside it (its ceiling where it is the larger: the course's flattering figure)."""
    return gain_words(key.gain, key.band_gain)


def gain_words(gain: float | None, band_gain: float | None) -> str:
    """`shown_gain` from the two figures (as a key's JSON carries them: `gain`, `band_gain`)."""
    if gain is None:
        return "it makes the deployment fit"
    if band_gain is None or fmt.gain(band_gain) == fmt.gain(gain):
        return fmt.gain(gain)
    if gain > band_gain:
        return f"{fmt.gain(band_gain)} realistic; the floor's {fmt.gain(gain)} is its ceiling"
    return f"{fmt.gain(band_gain)} realistic; the course's floor gives {fmt.gain(gain)}"


def unmeasured(solution: Solution, lever: str) -> bool:
    """Whether the measured kernels could not time `lever` (`engine.levers.evaluate_lever` says
    so in its note and carries no report)."""
    result = next((lv for lv in solution.levers if lv.name == lever), None)
    return result is None or (result.report is None and "(not measured:" in result.note)


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
    `realistic` is the same levers solved at the realistic fidelity, when there is one. The band
    is the realistic gain's (the floor's where there is no realistic solution)."""
    r = solution.report
    best = solution.best
    floor_gain = best.gain if r.fits else None
    band_gain = _finite_gain(realistic, best.name) if realistic is not None else floor_gain
    band = gain_band(band_gain) if r.fits and band_gain is not None else UNFIT_BAND
    reason = key_reason(solution)
    return Key(
        bottleneck=objective_bottleneck(r), best_lever=best.name, gain=floor_gain,
        gain_band=band, reason=reason, deciding=deciding_text(reason, solution),
        levers=solution.levers, estimates=true_estimates(solution), solution=solution, realistic=realistic,
        bands=accepted_bands([band_gain], r.fits), deployment_bottleneck=str(r.bottleneck), band_gain=band_gain,
    )


def offered_order(levers) -> tuple[str, ...]:
    levers = tuple(levers)
    return tuple(name for name in LEVERS if name in levers)


def solve_offered(dep: Deployment, levers: tuple[str, ...]) -> Solution:
    return solve(dep, offered_order(levers))


def solve_both(dep: Deployment, levers: tuple[str, ...]) -> tuple[Solution, Solution]:
    """The floor's and the realistic solution over the offered levers."""
    floor = solve_offered(at_fidelity(dep, Fidelity.FLOOR), levers)
    # The realistic solve carries the floor's; handing it over saves solving the floor twice.
    return floor, solve(at_fidelity(dep, Fidelity.REALISTIC), offered_order(levers), floor=floor)


def compute_key(puzzle: Puzzle) -> Key:
    """The engine's key for a puzzle: solve its deployment over the levers it offers, at the floor
    and the realistic fidelity (the measured one is solved on demand: `Key.measured`). A load
    puzzle's key runs its traffic: `puzzles.load_keys.key_of` takes either kind."""
    return key_from_solution(*solve_both(puzzle.deployment, puzzle.levers))


def _beats(result, best, margin: float) -> bool:
    """Whether lever result `result` beats `best` times `margin` on the same base (a margin under 1
    counts a near tie)."""
    if best.gain is not None:   # a lever that changes nothing (gain 1) needs no ruling out
        return result.gain is not None and result.gain > max(best.gain * margin, 1.0)
    if result.report is None or not result.report.fits:
        return False
    if best.report is None or not best.report.fits:
        return True
    return result.report.objective_value() * margin < best.report.objective_value()


def unoffered_winners(solution: Solution, offered, ruled_out=(), margin: float = UNOFFERED_MARGIN) -> list:
    """LeverResults of the levers neither offered nor ruled out that come within `margin` of the
    offered best (2%) or beat it, on this solution's deployment: a player cannot name them, so
    the card must say why they are out of play. A lever the measured kernels cannot time is
    left to the other fidelities. A load puzzle's levers are judged by `puzzles.load_check`."""
    if is_load(solution):
        return []
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


def robustness_problems(key: Key, offered, ruled_out=(), measured: bool = False) -> list[tuple[str, str]]:
    """(field, message) for every breach of "Robust keys" (DESIGN.md), for a pack's puzzle and a
    generated draw alike: the verdict and the best lever are the same under every fidelity
    judged (the measured one where it runs and `measured` asks for it); the band is the realistic
    one (no accepted band starting more than 5% above the realistic gain, each fidelity's own
    band accepted); and no lever the puzzle does not offer comes within 2% of the offered best at any
    fidelity unless `ruled_out` names it. Each message names the fidelity and both answers."""
    out: list[tuple[str, str]] = []
    for part, fidelity, floor, other in key.flips(measured):
        out.append(("deployment", f"not robust: the {part.replace('_', ' ')} is {floor} at the floor but "
                                  f"{other} at the {fidelity} fidelity"))
    for fidelity, message in key.band_problems(measured):
        out.append(("deployment", f"not robust ({fidelity}): {message}"))
    for fidelity, solution in key.judged(measured):
        if fidelity == Fidelity.MEASURED and unmeasured(solution, key.best_lever):
            continue   # the key's lever has no measured figure to hold the others against
        for result in unoffered_winners(solution, offered, ruled_out):
            best = solution.best
            shown = f"{result.gain:.2f}x" if result.gain is not None else "makes it fit"
            above = result.gain > best.gain if result.gain is not None and best.gain is not None else best.gain is None
            verb = "beats" if above else "ties (within 2%)"
            ahead = f"{best.gain:.2f}x" if best.gain is not None else "n/a"
            out.append(("levers", f"{result.name} is not offered but {verb} the offered best {best.name} "
                                  f"({shown} against {ahead}, {fidelity}); offer it or rule it out "
                                  f"in words (ruled_out)"))
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

    `band_margin=None` skips the band-edge rule: at the floor (whose band is not graded), and for
    hand-authored puzzles, which may sit on an edge because grading accepts either neighbouring
    band within 10% of it (`Key.band_problems` holds the flattering side to 5%). The generator
    keeps the rule on the realistic gain."""
    if is_load(solution):   # a load puzzle: puzzles.load_check judges its margins
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
    """The engine's worked derivation of the floor's figures."""
    from engine.derivation import derivation_lines as engine_lines

    return list(engine_lines(solution))
