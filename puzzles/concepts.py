"""Which concept a puzzle reviews: the course module each verdict and each lever belongs to, and
the one rule that picks the concept deciding a key (a load puzzle's is its chapter). Every mode
tags its answers with it: the drill's plan and schedule (`puzzles.drill`) and the recalls folded
in from other modes (`puzzles.review`). Imports no Textual.
"""
from __future__ import annotations

from engine.ids import Lever, Module, Verdict

VERDICT_CONCEPT = {
    Verdict.DOES_NOT_FIT: Module.KV_CACHE, Verdict.KV_CAPACITY: Module.KV_CACHE, Verdict.DECODE_KV: Module.KV_CACHE,
    Verdict.PREFILL_COMPUTE: Module.TWO_PHASES, Verdict.PREFILL_WEIGHTS: Module.TWO_PHASES,
    Verdict.DECODE_COMPUTE: Module.INTENSITY, Verdict.DECODE_WEIGHTS: Module.INTENSITY,
}
LEVER_CONCEPT = {
    Lever.BATCHING: Module.BATCHING, Lever.PAGED_KV: Module.PAGED_ATTENTION, Lever.PREFIX_CACHING: Module.PREFIX_CACHING,
    Lever.QUANTIZATION: Module.QUANTIZATION, Lever.KV_QUANTIZATION: Module.KV_CACHE,
    Lever.SPECULATIVE_DECODING: Module.SPECULATIVE_DECODING, Lever.ROUTING: Module.COST_MODEL,
    Lever.CHUNKED_PREFILL: Module.TWO_PHASES,
}


def concepts_of_pair(verdict: str, lever: str) -> tuple[str, ...]:
    """The module concepts a (verdict, best lever) pair exercises."""
    found = [VERDICT_CONCEPT.get(verdict), LEVER_CONCEPT.get(lever)]
    return tuple(dict.fromkeys(c for c in found if c))


def concepts_of(key) -> tuple[str, ...]:
    """The module concepts a puzzle exercises, from its engine key."""
    return concepts_of_pair(key.bottleneck, key.best_lever)


def deciding_concept_of_pair(verdict: str, lever: str) -> str | None:
    """The concept that decides a (verdict, best lever) pair: the lever's own when it has one
    (naming the lever is the answer the puzzle turns on), else the verdict's. Every mode tags
    its answers with this one rule, the drill's schedule and the recall on every screen alike."""
    return LEVER_CONCEPT.get(lever) or VERDICT_CONCEPT.get(verdict)


def deciding_concept(key) -> str | None:
    """The concept that decides a puzzle's key (the review it is tagged with); a load puzzle's
    is its chapter."""
    from puzzles.grading import objective_bottleneck
    from puzzles.reasons import is_load

    if is_load(key.solution):
        return getattr(key.solution, "module", None) or None
    return deciding_concept_of_pair(objective_bottleneck(key), key.best_lever)
