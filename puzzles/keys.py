"""Answer keys: what the engine says about a puzzle, computed, never typed by an author.

A key holds the bottleneck verdict, every offered lever's gain (ranked best first), the best
lever and its magnitude band, the deciding quantity (a reason id, see `puzzles.reasons`), the true
value of every estimate a puzzle may ask for, and the worked derivation with this deployment's
numbers. `ambiguity` lists what would make a puzzle unfair: a verdict within 10% of a rule's
threshold, a best lever less than 15% ahead of the runner-up, or a gain within 5% of a band edge.

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
from engine.levers import DEFAULT_SPEC_K, GAIN_BANDS, LEVERS, Solution, gain_band, solve

from puzzles import fmt
from puzzles.puzzle import ESTIMATE_NAMES, Puzzle
from puzzles.reasons import deciding_text, key_reason

UNFIT_BAND = "over-4x"
BAND_EDGES = (1.25, 2.0, 4.0)
VERDICT_MARGIN = 1.10   # every rule's deciding ratio must be outside [1/1.1, 1.1]
LEVER_MARGIN = 1.15     # the best lever's gain must be at least 1.15x the runner-up's
BAND_MARGIN = 1.05      # the best gain must be more than 5% from a band edge
RULES = ("does-not-fit", "kv-capacity", "prefill-compute", "decode-compute", "decode-kv")


@dataclass
class Key:
    """The engine's answer to one puzzle. Treat as immutable; `derivation` is worked on demand."""

    bottleneck: str
    best_lever: str
    gain: float | None
    gain_band: str
    reason: str
    deciding: str
    levers: tuple  # LeverResult, ranked best first (only the levers the puzzle offers)
    estimates: dict
    solution: Solution = field(repr=False)

    @cached_property
    def derivation(self) -> tuple[str, ...]:
        return tuple(derivation_lines(self.solution))

    def lever_gain(self, name: str) -> float | None:
        return next((lv.gain for lv in self.levers if lv.name == name), None)

    def to_json(self) -> dict:
        return {
            "bottleneck": self.bottleneck, "best_lever": self.best_lever, "gain_band": self.gain_band,
            "reason": self.reason, "gain": _finite(self.gain), "deciding": self.deciding,
            "levers": [{"name": lv.name, "gain": _finite(lv.gain), "band": gain_band(lv.gain), "note": lv.note}
                       for lv in self.levers],
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


def key_from_solution(solution: Solution) -> Key:
    """Build a key from an already-solved deployment (the generator solves once and reuses it)."""
    r = solution.report
    best = solution.best
    band = gain_band(best.gain) if r.fits else UNFIT_BAND
    reason = key_reason(solution)
    return Key(
        bottleneck=r.bottleneck, best_lever=best.name, gain=best.gain if r.fits else None,
        gain_band=band or GAIN_BANDS[0], reason=reason, deciding=deciding_text(reason, solution),
        levers=solution.levers, estimates=true_estimates(solution), solution=solution,
    )


def solve_offered(dep: Deployment, levers: tuple[str, ...]) -> Solution:
    return solve(dep, tuple(name for name in LEVERS if name in levers))


def compute_key(puzzle: Puzzle) -> Key:
    """The engine's key for a puzzle: solve its deployment over the levers it offers."""
    return key_from_solution(solve_offered(puzzle.deployment, puzzle.levers))


def verdict_margins(solution: Solution) -> list[tuple[str, float]]:
    """Each rule's deciding ratio (threshold 1) for the rules up to and including the verdict.

    The first rule (does the deployment fit?) is always included: weights plus reserve over memory
    when it fits, the engine's own ratio when it does not. The KV-capacity rule is skipped when
    nothing is batched (it cannot fire then)."""
    r = solution.report
    if not r.fits:
        return [(name, ratio) for name, ratio in r.margins if name == "does-not-fit"]
    out = [("does-not-fit", (r.weight_bytes + r.reserve_bytes) / r.memory_bytes)]
    engine = dict(r.margins)
    for rule in RULES[1:]:
        if rule == "kv-capacity" and r.deployment.scheduler == "none":
            pass
        else:
            out.append((rule, engine[rule]))
        if rule == r.bottleneck:
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
