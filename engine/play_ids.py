"""Ids the game's modes name but the engine's analysis never does: the course's chapters, a
player's certainty and a graded outcome. engine/ids.py hands them out on first use, so a
`ridge solve` does not build three enums it never reads."""
from __future__ import annotations

from engine.id_base import _Id


class Module(_Id):
    """The course's chapters, in course order: a puzzle's `module`, a drill concept, a campaign row."""

    TWO_PHASES = "two-phases"
    INTENSITY = "intensity"
    KV_CACHE = "kv-cache"
    BATCHING = "batching"
    PAGED_ATTENTION = "paged-attention"
    PREFIX_CACHING = "prefix-caching"
    SPECULATIVE_DECODING = "speculative-decoding"
    QUANTIZATION = "quantization"
    COST_MODEL = "cost-model"
    CLEARING_TEST = "clearing-test"
    LOAD_AND_TAILS = "load-and-tails"
    SPLITTING_THE_WORK = "splitting-the-work"


class Certainty(_Id):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Outcome(_Id):
    CLEARED = "cleared"
    LUCKY = "lucky"
    CLOSE = "close"
    MISSED = "missed"
