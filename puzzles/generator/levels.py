"""The five difficulty levels (models, GPUs, objectives, margins, reachable targets) and the
seeded order in which a level's targets are dealt."""
from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass

from engine.ids import Lever, Verdict


@dataclass(frozen=True)
class Level:
    models: tuple
    big_models: tuple
    gpus: tuple
    objectives: tuple
    max_gpus: int
    verdict_margin: float
    lever_margin: float
    band_margin: float
    targets: tuple


_DENSE_1 = ("llama-3-8b", "llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "llama-3-70b", "llama-3.1-70b")
_DENSE_2 = _DENSE_1 + ("llama-2-7b", "llama-2-13b", "gemma-2-9b", "phi-3-mini", "qwen2.5-72b")
_DENSE_3 = _DENSE_2 + ("gemma-2-27b", "mixtral-8x7b")
_ALL_4 = _DENSE_3 + ("llama-3.1-405b", "gpt-oss-120b")
_ALL_5 = _ALL_4 + ("deepseek-v3",)
_GPU_1 = ("h100-sxm", "a100-80gb", "h200", "l40s")
_GPU_2 = _GPU_1 + ("rtx-4090", "l4", "a100-40gb")
_GPU_3 = _GPU_2 + ("h100-pcie", "mi300x", "b200")
_GPU_4 = _GPU_3 + ("tpu-v5e",)
SMALL_MODELS = ("llama-3-8b", "llama-3.1-8b", "qwen2.5-7b", "mistral-7b", "phi-3-mini", "gemma-2-9b")

# (verdict, lever) targets by the level that first reaches them; each level also plays every
# target of the levels below it. The floor's gain may sit exactly on an edge (halving every byte
# gains 2x there); the band is keyed on the realistic gain, which the band rule keeps clear of
# the edges. Left out: what the measured kernels overturn (8-bit weights on a compute-bound step,
# speculation on a KV-bound one).
_T1 = ((Verdict.DOES_NOT_FIT, Lever.QUANTIZATION), (Verdict.KV_CAPACITY, Lever.PAGED_KV),
       (Verdict.KV_CAPACITY, Lever.QUANTIZATION), (Verdict.PREFILL_COMPUTE, Lever.PREFIX_CACHING),
       (Verdict.DECODE_COMPUTE, Lever.ROUTING), (Verdict.DECODE_KV, Lever.QUANTIZATION),
       (Verdict.DECODE_WEIGHTS, Lever.BATCHING), (Verdict.DECODE_WEIGHTS, Lever.SPECULATIVE_DECODING))
_T2 = ((Verdict.KV_CAPACITY, Lever.KV_QUANTIZATION), (Verdict.DECODE_KV, Lever.KV_QUANTIZATION))
_T3 = ((Verdict.DOES_NOT_FIT, Lever.MORE_GPUS), (Verdict.DOES_NOT_FIT, Lever.PAGED_KV),
       (Verdict.KV_CAPACITY, Lever.SPECULATIVE_DECODING), (Verdict.DECODE_WEIGHTS, Lever.PREFIX_CACHING),
       (Verdict.PREFILL_COMPUTE, Lever.CHUNKED_PREFILL), (Verdict.PREFILL_WEIGHTS, Lever.QUANTIZATION))
_T4 = ((Verdict.PREFILL_COMPUTE, Lever.ROUTING), (Verdict.DECODE_WEIGHTS, Lever.ROUTING),
       (Verdict.KV_CAPACITY, Lever.ROUTING), (Verdict.DECODE_WEIGHTS, Lever.MORE_GPUS))

LEVELS = {
    1: Level(_DENSE_1, ("llama-3-70b", "llama-3.1-70b"), _GPU_1, ("cost",), 8, 1.25, 1.40, 1.12, _T1),
    2: Level(_DENSE_2, ("llama-3-70b", "llama-3.1-70b", "qwen2.5-72b"), _GPU_2, ("cost", "tpot"), 8, 1.18, 1.30, 1.10,
             _T1 + _T2),
    3: Level(_DENSE_3, ("llama-3-70b", "llama-3.1-70b", "qwen2.5-72b", "gemma-2-27b", "mixtral-8x7b"), _GPU_3,
             ("cost", "tpot", "ttft", "stall"), 8, 1.12, 1.20, 1.10, _T1 + _T2 + _T3),
    4: Level(_ALL_4, ("llama-3.1-70b", "qwen2.5-72b", "mixtral-8x7b", "llama-3.1-405b", "gpt-oss-120b"), _GPU_4,
             ("cost", "tpot", "ttft", "stall"), 16, 1.10, 1.15, 1.10, _T1 + _T2 + _T3 + _T4),
    5: Level(_ALL_5, ("llama-3.1-70b", "qwen2.5-72b", "mixtral-8x7b", "llama-3.1-405b", "gpt-oss-120b", "deepseek-v3"),
             _GPU_4, ("cost", "tpot", "ttft", "stall"), 32, 1.10, 1.15, 1.10, _T1 + _T2 + _T3 + _T4),
}

VERDICT_ORDER = tuple(Verdict)   # the fixed option order


def _schedule(targets: tuple) -> tuple:
    """The target for each index: verdicts strictly round-robin (each gets an equal share of the
    draws), and within a verdict its levers in turn. Returned as one cycle of indexes."""
    by_verdict = {v: [t for t in targets if t[0] == v] for v in VERDICT_ORDER}
    verdicts = [v for v in VERDICT_ORDER if by_verdict[v]]
    cycle_len = len(verdicts) * math.lcm(*(len(by_verdict[v]) for v in verdicts))
    out = []
    for i in range(cycle_len):
        v = verdicts[i % len(verdicts)]
        levers = by_verdict[v]
        out.append(levers[(i // len(verdicts)) % len(levers)])
    return tuple(out)


TARGETS = {d: _schedule(level.targets) for d, level in LEVELS.items()}


@functools.lru_cache(maxsize=64)
def _turn_order(seed: int, difficulty: int, turn: int) -> tuple[int, ...]:
    """The order in which one turn of the cycle (TARGETS[difficulty], every target its share of
    times) is dealt for this seed: a shuffle seeded by the seed, the level and the turn, so the
    target at a position changes with the seed and no draw can be played by position."""
    order = list(range(len(TARGETS[difficulty])))
    random.Random(f"{seed}:{difficulty}:order:{turn}").shuffle(order)
    return tuple(order)


def target_for(seed: int, difficulty: int, index: int) -> tuple[str, str]:
    """The (verdict, lever) aimed at by the puzzle at (seed, difficulty, index)."""
    cycle = TARGETS[difficulty]
    turn, position = divmod(index, len(cycle))
    return cycle[_turn_order(seed, difficulty, turn)[position]]
# Regimes where the calibrated realistic gain and the measured kernels' still part by more than
# a fifth (issue 21; over 2,000 draws, measured / realistic for the key's lever, 5th-95th
# percentile and extremes): 8-bit weights and KV (quantization 0.86-1.12, down to 0.78; KV
# quantization down to 0.63, where 256-wide heads make vLLM's 8-bit KV attention slower than
# 16-bit), speculation (0.87-1.02, down to 0.67: the verify pass), chunked prefill (0.70-1.29,
# up to 1.52), routing on fused experts (up to 1.47) and prefix caching (up to 1.36). In these a


def tp_limit(level: Level, gpu) -> int:
    """The most GPUs one drawn deployment may span: the level's cap, and never wider than the
    accelerator's tensor-parallel domain (beyond it more GPUs are replicas, not a wider group)."""
    domain = getattr(gpu, "tp_domain", None) or level.max_gpus
    return min(level.max_gpus, domain)

