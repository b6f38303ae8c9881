"""Where a recipe's draw lands, asked of the engine: the memory a deployment leaves for its cache
(the engine's memory rules, `engine.physics`) and a concurrency, or a prompt, at which the
engine's own analysis names the target verdict with the level's margin and the deciding ratios
of its verdict rules (`Report.margins`, the one table `engine.physics.RULES`) fall in the
recipe's bounds. No figure is estimated here: the report that aimed a draw is the one it keeps."""
from __future__ import annotations

import bisect
import math
import random

from engine import physics
from engine.analysis import Report, analyze
from engine.catalog import PRECISION_BYTES
from engine.deployment import Deployment, validate
from engine.ids import Verdict
from engine.levers import Solution

from puzzles.generator.levels import Level, tp_limit
from puzzles.generator.picks import NICE
from puzzles.keys import objective_bottleneck, verdict_margins

GIB = 2**30
AIM_TRIES = 6          # values tried per aim, each one floor `analyze`
FILL = (0.0, 0.8)      # the share of the cache a draw fills unless its recipe says otherwise
REPORT = "_report"     # the field that carries an aimed draw's report to `drawing`


class Skip(Exception):
    """This draw cannot satisfy its recipe; draw again."""


# --- memory, by the engine's rules, before a deployment is built -------------------------------

def weight_bytes(model, weights: str) -> float:
    """The weights' bytes at the floor (`engine.physics.checkpoint_weight_bytes`)."""
    return physics.checkpoint_weight_bytes(model, PRECISION_BYTES[weights], False)


def stored_per_token(model, kv: str, gpus: int) -> float:
    """Cache bytes one token stores across the GPUs (its KV values, copied where GPUs outnumber
    the KV heads: `engine.physics.kv_replication`)."""
    return model.kv_values_per_token * PRECISION_BYTES[kv] * physics.kv_replication(float(gpus), model.kv_heads,
                                                                                     model.is_mla)


def usable(model, gpu, gpus: int, weights: str) -> float:
    """Bytes left for the cache at the default reserve (`engine.physics.usable_kv_bytes`)."""
    return physics.usable_kv_bytes(gpus, gpu.memory_gib, weight_bytes(model, weights),
                                   physics.reserve_per_gpu_gib(gpu.memory_gib, None))


def fit_gpus(rng: random.Random, model, gpu, weights: str, level: Level, room: float = 0.25) -> int | None:
    """A power-of-two GPU count leaving at least `room` of memory for the cache (sometimes one
    doubling more), or None when even the level's largest count will not do."""
    gpus = 1
    limit = tp_limit(level, gpu)
    while gpus <= limit:
        if usable(model, gpu, gpus, weights) >= room * gpus * gpu.memory_gib * GIB:
            if gpus * 2 <= limit and rng.random() < 0.25:
                gpus *= 2
            return gpus
        gpus *= 2
    return None


def eight_bit(gpu) -> str:
    return "fp8" if gpu.native("fp8") else "int8"


# --- aiming with the engine's analysis ----------------------------------------------------------

def deployment(fields: dict, **changes) -> Deployment:
    """The deployment a recipe's fields describe (fields starting with `_` are the recipe's notes)."""
    values = {name: value for name, value in fields.items() if not name.startswith("_")}
    values.update(changes)
    return validate(Deployment(**values))


def held(fields: dict, **changes) -> float:
    """Sequences the cache holds for these fields (the engine's `max_concurrency`); Skip when the
    deployment does not fit."""
    report = analyze(deployment(fields, concurrency=1, **changes))
    if not report.fits:
        raise Skip
    return report.max_concurrency


def _bounds(report: Report, verdict: str, margin: float, rules: dict) -> list[tuple[float, float, float]]:
    """(ratio, min, max) for each rule ratio the draw must bring into range: the rules that decide
    the objective up to `verdict` (`puzzles.keys.verdict_margins`, from the one table), each
    before it at most 1/margin and the verdict's own at least margin, as `puzzles.keys.ambiguity`
    demands; then the recipe's `rules` ({verdict: (min, max)} on `Report.margins`)."""
    out = []
    for rule, ratio in verdict_margins(Solution(report=report, levers=())):
        if rule == verdict:
            out.append((ratio, margin, math.inf))
            break
        out.append((ratio, 0.0, 1 / margin))
    ratios = dict(report.margins)
    out.extend((ratios[name], lo, hi) for name, (lo, hi) in rules.items())
    return out


def aim(rng, fields: dict, verdict: str, level: Level, low: float, high: float, rules: dict | None = None,
        field: str = "concurrency", cache: tuple[float, float] = (0, math.inf)) -> dict:
    """`fields` with `field` (the concurrency, or the prompt) set to a round number in [low, high]
    at which the engine's floor analysis names `verdict` for the objective with the level's
    margin and the recipe's `rules` hold, and that report under REPORT; Skip when there is none.

    Every rule ratio grows with the concurrency (more tokens per step, more cache read, more
    prefill per step), and the one rule a prompt is aimed by (a lone prompt's arithmetic over its
    weight read) grows with the prompt, so the values that do form one run of the ladder of round
    numbers, found by bisection with a random pivot (at most AIM_TRIES analyses). For the
    concurrency, the kv-capacity rule's bounds (FILL unless `rules` names them) and `cache`, the
    sequences the cache must hold, are read off the first report."""
    rules = dict(rules or {})
    if field == "concurrency":
        rules.setdefault(Verdict.KV_CAPACITY, FILL)
    i, j = bisect.bisect_left(NICE, low), bisect.bisect_right(NICE, high) - 1
    base = deployment(fields, **{field: NICE[max(0, min(i, len(NICE) - 1))]})
    for attempt in range(AIM_TRIES):
        if i > j:
            break
        pivot = i + rng.randrange(j - i + 1)
        value = {field: NICE[pivot]}
        dep = base.with_(**value) if field == "concurrency" else deployment(fields, **value)
        report = analyze(dep)
        if not report.fits:
            break
        if attempt == 0 and field == "concurrency":
            seqs = report.max_concurrency
            if not cache[0] <= seqs <= cache[1]:
                break
            fill = rules[Verdict.KV_CAPACITY]
            i = max(i, bisect.bisect_left(NICE, fill[0] * seqs))
            j = min(j, bisect.bisect_right(NICE, fill[1] * seqs) - 1)
            if not i <= pivot <= j:
                continue
        bounds = _bounds(report, verdict, level.verdict_margin, rules)
        if bounds[0][0] > bounds[0][2]:    # the fit rule: the same at every concurrency and prompt
            break
        up = any(ratio < lo for ratio, lo, _ in bounds)
        down = any(ratio > hi for ratio, _, hi in bounds)
        if not up and not down and objective_bottleneck(report) == verdict:
            return dict(fields, **{field: NICE[pivot], REPORT: report})
        if up == down:     # both ways at once, or on target by the ratios but not by the verdict
            break
        i, j = (pivot + 1, j) if up else (i, pivot - 1)
    raise Skip
