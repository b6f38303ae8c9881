"""What a drawn card offers around its key: the levers on the table, the figures it asks the
player to estimate, and the candidate reasons (the key's and three that are false here)."""
from __future__ import annotations

from engine.ids import Lever
from engine.levers import LEVERS

from puzzles.generator.picks import pick
from puzzles.keys import Key
from puzzles.reasons import candidate_reasons

_CORE_LEVERS = (Lever.BATCHING, Lever.PREFIX_CACHING, Lever.QUANTIZATION, Lever.SPECULATIVE_DECODING)


def offered_levers(rng, difficulty: int, target_lever: str | None) -> tuple[str, ...]:
    """All nine from level 3; below that the clearing test's four plus the target and one more."""
    if difficulty >= 3:
        return LEVERS
    chosen = set(_CORE_LEVERS)
    if target_lever:
        chosen.add(target_lever)
    chosen.add(pick(rng, (Lever.PAGED_KV, Lever.KV_QUANTIZATION, Lever.MORE_GPUS)))
    return tuple(name for name in LEVERS if name in chosen)


_ASKABLE = {
    1: (),
    2: ("intensity", "max_concurrency", "kv_bytes_per_token"),
    3: ("intensity", "max_concurrency", "kv_bytes_per_token", "ridge", "weight_bytes"),
    4: ("intensity", "max_concurrency", "kv_bytes_per_token", "ridge", "tpot_seconds", "cost_per_million_output_tokens"),
    5: ("intensity", "max_concurrency", "kv_bytes_per_token", "ridge", "tpot_seconds", "ttft_seconds",
        "cost_per_million_output_tokens", "spec_expected_tokens"),
}
_ASK_COUNT = {1: 0, 2: 1, 3: 1, 4: 2, 5: 2}


def asks(rng, difficulty: int, key: Key) -> tuple[str, ...]:
    pool = [name for name in _ASKABLE[difficulty] if key.estimates.get(name) is not None]
    count = min(_ASK_COUNT[difficulty], len(pool))
    picked = []
    for _ in range(count):
        name = pick(rng, pool)
        pool.remove(name)
        picked.append(name)
    return tuple(sorted(picked, key=list(_ASKABLE[5] + ("weight_bytes",)).index))


def reasons(rng, key: Key) -> tuple[str, ...]:
    """The key's reason and three distractors false for this deployment, in the fixed order."""
    also = (key.realistic,) if key.realistic is not None else ()
    return candidate_reasons(key.reason, key.solution, pick=lambda pool: pick(rng, pool), also=also)


