"""The game's vocabulary as enums: every id a pack, a save, the JSON contract or a screen names.

They are `StrEnum`s, so a member equals its id string (`Verdict.DECODE_KV == "decode-kv"`) and
TOML, JSON and saves keep plain strings; a member's repr is its string's too, so a message or a
list that shows an id reads the same whether the id came from a pack or from the engine. The
order of each enum is the one fixed order in which options are listed everywhere (DESIGN.md,
"Grading"). The words a screen shows for each id live in one table, `app/labels.py`; the
engine's own text uses `puzzles`/`engine` wording helpers.
"""
from __future__ import annotations

from engine.id_base import _Id

_PLAY_IDS = ("Module", "Certainty", "Outcome")   # in engine/play_ids.py, loaded on first use


def __getattr__(name: str):
    """`from engine.ids import Module` (and Certainty, Outcome) keeps working: the enum is built on
    first use, from engine/play_ids.py."""
    if name in _PLAY_IDS:
        from engine import play_ids

        return getattr(play_ids, name)
    raise AttributeError(f"module 'engine.ids' has no attribute {name!r}")


class Verdict(_Id):
    """What bounds a deployment (six rules, first that holds) or one objective's figure."""

    DOES_NOT_FIT = "does-not-fit"
    KV_CAPACITY = "kv-capacity"
    PREFILL_COMPUTE = "prefill-compute"
    PREFILL_WEIGHTS = "prefill-weights"
    DECODE_COMPUTE = "decode-compute"
    DECODE_KV = "decode-kv"
    DECODE_WEIGHTS = "decode-weights"
    # What a load run's tail is made of (engine.load.verdicts): waiting for a first step, other
    # requests' prompts sharing or holding the steps, eviction and recompute, the KV transfer.
    QUEUEING = "queueing"
    PREFILL_INTERFERENCE = "prefill-interference"
    PREEMPTION = "preemption"
    KV_TRANSFER = "kv-transfer"


class Lever(_Id):
    BATCHING = "batching"
    PAGED_KV = "paged-kv"
    PREFIX_CACHING = "prefix-caching"
    QUANTIZATION = "quantization"
    KV_QUANTIZATION = "kv-quantization"
    SPECULATIVE_DECODING = "speculative-decoding"
    CHUNKED_PREFILL = "chunked-prefill"
    MORE_GPUS = "more-gpus"
    ROUTING = "routing"
    # Levers of a load run only (engine.load.levers): split prefill and decode into pools; shed
    # arrivals that find the queue full.
    DISAGGREGATION = "disaggregation"
    ADMISSION_CONTROL = "admission-control"


class Objective(_Id):
    COST = "cost"
    TPOT = "tpot"
    TTFT = "ttft"
    STALL = "stall"
    # Load objectives (engine.load): percentiles and budgets of a request-level run.
    P99_TTFT = "p99-ttft"
    P99_TPOT = "p99-tpot"
    GOODPUT = "goodput"
    GPUS_FOR_SLO = "gpus-for-slo"


class GainBand(_Id):
    UNDER_1_25 = "under-1.25x"
    FROM_1_25_TO_2 = "1.25-2x"
    FROM_2_TO_4 = "2-4x"
    OVER_4 = "over-4x"


class Fidelity(_Id):
    """`floor`: the course's optimistic model, the contract for every seed number. `realistic`:
    the floor plus named, sourced corrections, aimed at measurements. `measured`: step times from
    a silicon-measured kernel database (DESIGN.md, "Three fidelities")."""

    FLOOR = "floor"
    REALISTIC = "realistic"
    MEASURED = "measured"


class Precision(_Id):
    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


class Scheduler(_Id):
    NONE = "none"
    STATIC = "static"
    CONTINUOUS = "continuous"


class Allocator(_Id):
    CONTIGUOUS = "contiguous"
    PAGED = "paged"


# The six-rule whole-deployment verdicts, in rule order (DESIGN.md, "Engine semantics").
DEPLOYMENT_VERDICTS = (Verdict.DOES_NOT_FIT, Verdict.KV_CAPACITY, Verdict.PREFILL_COMPUTE,
                       Verdict.DECODE_COMPUTE, Verdict.DECODE_KV, Verdict.DECODE_WEIGHTS)

# The levers and objectives of the steady-state analysis of one deployment (`engine.levers`,
# `ridge solve`, the packs), in the fixed order; an enum may grow members other engines answer.
DEPLOYMENT_LEVERS = (Lever.BATCHING, Lever.PAGED_KV, Lever.PREFIX_CACHING, Lever.QUANTIZATION,
                     Lever.KV_QUANTIZATION, Lever.SPECULATIVE_DECODING, Lever.CHUNKED_PREFILL,
                     Lever.MORE_GPUS, Lever.ROUTING)
DEPLOYMENT_OBJECTIVES = (Objective.COST, Objective.TPOT, Objective.TTFT, Objective.STALL)

# What can bound each objective (DESIGN.md, "What the bottleneck question asks"), in the fixed order.
OBJECTIVE_VERDICTS = {
    Objective.COST: DEPLOYMENT_VERDICTS,
    Objective.TPOT: (Verdict.DOES_NOT_FIT, Verdict.KV_CAPACITY, Verdict.DECODE_COMPUTE,
                     Verdict.DECODE_KV, Verdict.DECODE_WEIGHTS),
    Objective.TTFT: (Verdict.DOES_NOT_FIT, Verdict.PREFILL_COMPUTE, Verdict.PREFILL_WEIGHTS),
    Objective.STALL: (Verdict.DOES_NOT_FIT, Verdict.PREFILL_COMPUTE, Verdict.PREFILL_WEIGHTS),
    Objective.P99_TTFT: (Verdict.DOES_NOT_FIT, Verdict.PREFILL_COMPUTE, Verdict.QUEUEING,
                         Verdict.PREFILL_INTERFERENCE, Verdict.KV_TRANSFER),
    Objective.P99_TPOT: (Verdict.DOES_NOT_FIT, Verdict.DECODE_COMPUTE, Verdict.DECODE_KV, Verdict.DECODE_WEIGHTS,
                         Verdict.QUEUEING, Verdict.PREFILL_INTERFERENCE, Verdict.PREEMPTION),
}
# Goodput and the fleet a target needs are lost to whichever tail misses its SLO: any of both.
OBJECTIVE_VERDICTS[Objective.GOODPUT] = tuple(
    v for v in Verdict if v in OBJECTIVE_VERDICTS[Objective.P99_TTFT] + OBJECTIVE_VERDICTS[Objective.P99_TPOT])
OBJECTIVE_VERDICTS[Objective.GPUS_FOR_SLO] = OBJECTIVE_VERDICTS[Objective.GOODPUT]

# The objectives a request-level load run answers (engine.load), and the levers it can apply.
LOAD_OBJECTIVES = (Objective.P99_TTFT, Objective.P99_TPOT, Objective.GOODPUT, Objective.GPUS_FOR_SLO)
LOAD_LEVERS = (Lever.BATCHING, Lever.PREFIX_CACHING, Lever.QUANTIZATION, Lever.KV_QUANTIZATION,
               Lever.CHUNKED_PREFILL, Lever.MORE_GPUS, Lever.DISAGGREGATION, Lever.ADMISSION_CONTROL)
