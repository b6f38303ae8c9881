"""Whether a draw is kept: unambiguous and robust by the rules `ridge puzzles check` holds every
pack to (`puzzles.keys`), and clear of the band edges where realistic and measured still part."""
from __future__ import annotations

import math

from engine.analysis import analyze
from engine.bands import band_range, bands_for, gain_band
from engine.catalog import PRECISION_BYTES
from engine.deployment import Deployment
from engine.ids import Lever, Precision, Verdict
from engine.levers import LEVERS, Solution, evaluate_lever, rank_levers

from puzzles.generator.levels import Level
from puzzles.keys import (Key, ambiguity, at_fidelity, key_from_solution, lever_margin, robustness_problems,
                          unoffered_winners)


# Regimes where the calibrated realistic gain and the measured kernels' still part by more than
# a fifth (issue 21; over 2,000 draws, measured / realistic for the key's lever, 5th-95th
# percentile and extremes): 8-bit weights and KV (quantization 0.86-1.12, down to 0.78; KV
# quantization down to 0.63, where 256-wide heads make vLLM's 8-bit KV attention slower than
# 16-bit), speculation (0.87-1.02, down to 0.67: the verify pass), chunked prefill (0.70-1.29,
# up to 1.52), routing on fused experts (up to 1.47) and prefix caching (up to 1.36). In these a
# drawn key's realistic gain must sit at least the first ratio above its band's lower edge (or
# above 1x, for the lowest band) and the second below its upper edge; elsewhere the level's band
# margin is the rule. It reads realistic figures only, so a seed draws the same puzzles with or
# without the measured extra.
DIVERGING = {Lever.QUANTIZATION: (1.0, 1.15), Lever.KV_QUANTIZATION: (1.15, 1.0),
             Lever.SPECULATIVE_DECODING: (1.3, 1.0), Lever.CHUNKED_PREFILL: (1.4, 1.25),
             Lever.ROUTING: (1.0, 1.35), Lever.PREFIX_CACHING: (1.0, 1.2)}
# Quantization that moves a 16-bit KV cache to 8 bits too pays the 8-bit cache's divergence on
# top of the weights': its lower-edge ratio (8-bit weights alone need none).
QUANTIZING_KV_LOW = 1.2
# Heads this wide have no fast 8-bit KV attention in the measured vLLM kernels (Gemma 2's 256:
# 0.72-0.79x the 16-bit kernel's speed at every batch and context on H200), so no key rests on
# an 8-bit cache there.
SLOW_KV8_HEAD_DIM = 256
# Beyond those ratios (seeds 0-19 x 400 draws, after realistic chunked prefill was
# recalibrated): chunked prefill on an MLA model whose cost is its prefill measures 3.8-11.9x
# where realistic gives 1.2-1.3x (DeepSeek-V3 on H200 and B200), so no such draw keys another
# lever while chunked prefill is offered; a mixture of experts' prefill measures 1.45-1.6x
# slower than realistic (Mixtral on B200: the prefill-compute rule's ratio 0.68-0.76 realistic,
# 1.10-1.14 measured) and chunked prefill then rivals the key (Mixtral on H100, prompts of 7,600
# tokens: 1.41-1.59x measured against 1.22x), so that rule's ratio must clear its threshold by
# MOE_PREFILL_CLEAR whether or not it decides the verdict; and quantization's measured gain
# fell to 0.67 of realistic on a step the realistic fidelity calls compute-bound, so there it
# must lead the runner-up by QUANTIZED_LEAD. On a mixture of experts, batching a static batch
# continuously measured 0.64 of realistic (DeepSeek-V3 on H200: 1.79x against 2.78x) and prefix
# caching on a prefill-bound TTFT 1.48x realistic (Mixtral on B200: 4.58x against 3.10x):
# MOE_DIVERGING, DIVERGING's ratios for such models.
MOE_DIVERGING = {Lever.BATCHING: (1.6, 1.0), Lever.PREFIX_CACHING: (1.0, 1.5)}
MOE_PREFILL_CLEAR = 1.7
QUANTIZED_LEAD = 1.3
# Speculation over 8-bit weights on a B200 measured 0.82-1.54x its realistic gain (median 1.15,
# 9 keyed draws of seeds 0-19; 0.84-1.06x on every other accelerator and precision), wider than
# any band leaves room for: no key rests on it (lever, accelerator, weights).
UNSETTLED = {(Lever.SPECULATIVE_DECODING, "b200", Precision.FP8)}


def keyed(dep: Deployment, report, offered: tuple, ruled_out: dict, target_lever: str | None,
          level: Level) -> tuple[Key | None, bool]:
    """(the key, whether a solve ran) when `dep`, offered `offered`, is unambiguous and robust;
    (None, ...) otherwise. `report` is `dep`'s floor analysis, already made.

    Unambiguous at the floor and at the realistic fidelity alike, with the level's margins (the
    band-edge rule on the realistic gain, which keys the band). Robust means what `puzzles.check`
    demands of any pack (`puzzles.keys.robustness_problems`, the same function): the verdict and
    the best lever the same at both, the band the realistic one, and no lever left unoffered (and
    not ruled out) within 2% of the offered best at either. The measured kernels are not
    consulted, so a seed draws the same puzzles on every machine, with or without the extra.

    The lever that must win is judged first, at the floor and then at the realistic fidelity, and
    a draw whose gain there already fails a rule above stops before the other levers are solved
    (most draws that fail, fail on the realistic gain's band): it costs two levers, not eighteen."""
    real_dep = at_fidelity(dep, "realistic")
    real_report = floor_first = real_first = None
    if target_lever is not None and report.fits:
        floor_first = evaluate_lever(dep, report, target_lever)
        if floor_first.gain is None or floor_first.gain < level.lever_margin:
            return None, True
        first = _realistic_first(real_dep, target_lever, level)
        if first is None:
            return None, True
        real_report, real_first = first
    solution = solve_offered(dep, report, offered, floor_first)
    if target_lever is not None and solution.best_lever != target_lever:
        return None, True
    if ambiguity(solution, level.verdict_margin, level.lever_margin, None) or \
            unoffered_winners(solution, offered, ruled_out):
        return None, True
    if real_report is None:
        first = _realistic_first(real_dep, solution.best_lever, level)
        if first is None:
            return None, True
        real_report, real_first = first
    realistic = solve_offered(real_dep, real_report, offered, real_first)
    key = key_from_solution(solution, realistic)
    if ambiguity(realistic, level.verdict_margin, math.sqrt(level.lever_margin), level.band_margin) or \
            robustness_problems(key, offered, ruled_out) or diverges(key) or parts(key, offered):
        return None, True
    return key, True


def _realistic_first(real_dep: Deployment, lever: str, level: Level):
    """The realistic report and `lever`'s realistic result (None where the deployment does not
    fit), or None when that gain cannot key the draw: under the realistic lever margin, within
    the band margin of an edge, or `diverging`. Any of these fails `ambiguity`, the robustness
    rule (the best lever must be the same) or `diverges` once every lever is solved."""
    real_report = analyze(real_dep)
    if not real_report.fits:
        return real_report, None
    result = evaluate_lever(real_dep, real_report, lever)
    gain = result.gain
    if gain is None or gain < math.sqrt(level.lever_margin) or len(bands_for(gain, level.band_margin)) > 1 \
            or diverging(lever, gain, real_dep):
        return None
    return real_report, result


def diverges(key: Key) -> bool:
    """True when the key's lever is in a regime of DIVERGING and its realistic gain lies nearer
    to its band's edges than that regime's ratios allow, or the key rests on an 8-bit cache at
    heads of SLOW_KV8_HEAD_DIM."""
    if key.band_gain is None or not key.solution.report.fits:
        return False
    return diverging(key.best_lever, key.band_gain, key.solution.report.deployment)


def parts(key: Key, offered: tuple) -> bool:
    """True in the regimes, beyond DIVERGING, where the measured kernels overturn a realistic key
    (see MOE_PREFILL_CLEAR, QUANTIZED_LEAD and UNSETTLED above)."""
    real = key.realistic
    if real is None or not real.report.fits:
        return False
    dep = real.report.deployment
    model = dep.model
    if (key.best_lever, dep.gpu.id, dep.weights) in UNSETTLED:
        return True
    if model.is_mla and key.bottleneck == Verdict.PREFILL_COMPUTE and Lever.CHUNKED_PREFILL in offered \
            and key.best_lever != Lever.CHUNKED_PREFILL:
        return True
    prefill = dict(real.report.margins)[Verdict.PREFILL_COMPUTE]
    if model.experts and prefill > 0 and abs(math.log(prefill)) < math.log(MOE_PREFILL_CLEAR):
        return True
    return key.best_lever == Lever.QUANTIZATION and lever_margin(real) < QUANTIZED_LEAD and \
        dict(real.report.margins)[Verdict.DECODE_COMPUTE] >= 1


def diverging(lever: str, gain: float, dep: Deployment) -> bool:
    """`diverges` for `lever` at realistic gain `gain` on the deployment `dep`."""
    rule = DIVERGING.get(lever)
    if dep.model.experts and lever in MOE_DIVERGING:
        rule = tuple(max(a, b) for a, b in zip(MOE_DIVERGING[lever], rule or (1.0, 1.0)))
    if rule is None:
        return False
    low, high = band_range(gain_band(gain))
    lift = rule[0]
    moves_kv = lever == Lever.KV_QUANTIZATION or (lever == Lever.QUANTIZATION and PRECISION_BYTES[dep.kv] > 1)
    if moves_kv and dep.model.head_dim >= SLOW_KV8_HEAD_DIM:
        return True
    if moves_kv and lever == Lever.QUANTIZATION:
        lift = QUANTIZING_KV_LOW
    return gain < max(low, 1.0) * lift or gain > high / rule[1]


def solve_offered(dep: Deployment, base, offered: tuple, first=None) -> Solution:
    """`engine.levers.solve` over the offered levers, reusing the base report and `first`, one
    lever's result, already made."""
    done = () if first is None else (first,)
    results = [*done, *(evaluate_lever(dep, base, name) for name in LEVERS
                        if name in offered and (first is None or name != first.name))]
    return Solution(report=base, levers=rank_levers(results))
