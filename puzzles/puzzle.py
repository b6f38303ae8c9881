"""The puzzle as the rest of Ridge sees it: an immutable card plus the ids every layer shares.

Built-in puzzles come from TOML packs (validated by `puzzles.schema`); generated ones are made by
`puzzles.generator`. Both end up as the same `Puzzle`, so keys, grading and the app never care
where a puzzle came from. No pydantic here: the generator builds thousands of these a second.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.deployment import Deployment, deployment_to_dict
from engine.ids import OBJECTIVE_VERDICTS, Module

MODULES = tuple(str(module) for module in Module)   # the course's chapters, in course order

MODULE_TITLES = {
    Module.TWO_PHASES: "Two phases, opposite bottlenecks",
    Module.INTENSITY: "Arithmetic intensity is the batch size",
    Module.KV_CACHE: "The KV cache is the constraint",
    Module.BATCHING: "Batching, the first lever",
    Module.PAGED_ATTENTION: "PagedAttention",
    Module.PREFIX_CACHING: "Prefix caching",
    Module.SPECULATIVE_DECODING: "Speculative decoding and its limits",
    Module.QUANTIZATION: "What quantization buys",
    Module.COST_MODEL: "The cost model",
    Module.CLEARING_TEST: "The clearing test",
    Module.LOAD_AND_TAILS: "Load and tails",
    Module.SPLITTING_THE_WORK: "Splitting the work",
}

# Numeric estimates a puzzle may ask for: each is a field of the engine's Report (see keys.py).
ESTIMATE_NAMES = ("intensity", "ridge", "max_concurrency", "kv_bytes_per_token", "weight_bytes",
                  "tpot_seconds", "ttft_seconds", "cost_per_million_output_tokens",
                  "spec_expected_tokens", "throughput_tokens_per_s",
                  # a load run's (engine.load): Little's law, utilisation, where the knee sits
                  "mean_in_system", "utilisation", "saturation_qps", "cost_per_million_input_tokens")

ESTIMATE_UNITS = {
    "intensity": "FLOP per byte", "ridge": "FLOP per byte", "max_concurrency": "sequences",
    "kv_bytes_per_token": "bytes", "weight_bytes": "bytes", "tpot_seconds": "seconds",
    "ttft_seconds": "seconds", "cost_per_million_output_tokens": "dollars",
    "spec_expected_tokens": "tokens per verification", "throughput_tokens_per_s": "tokens per second",
    "mean_in_system": "requests", "utilisation": "share of capacity", "saturation_qps": "requests per second",
    "cost_per_million_input_tokens": "dollars",
}

OBJECTIVE_TEXT = {
    "cost": "cost per million output tokens",
    "tpot": "time per output token for one user (TPOT)",
    "ttft": "time to first token (TTFT)",
    "stall": "the longest pause in a stream while another prompt is prefilled",
    "p99-ttft": "99th-percentile time to first token (P99 TTFT) under this traffic",
    "p99-tpot": "99th-percentile time per output token (P99 TPOT) under this traffic",
    "goodput": "goodput per GPU: requests per second that meet both SLOs, per GPU",
    "gpus-for-slo": "number of GPUs that serve this traffic within both SLOs",
}


def goal_text(objective: str) -> str:
    """The puzzle's goal in a phrase: goodput is raised, everything else lowered."""
    verb = "raise" if objective == "goodput" else "lower"
    return f"{verb} the {OBJECTIVE_TEXT.get(objective, objective)}"


def fixed_order(chosen, vocabulary) -> tuple[str, ...]:
    """`chosen` ids in the vocabulary's one fixed order (an ids.py enum, or REASONS for reasons),
    so an option's position never hints at the answer and never moves between puzzles."""
    wanted = {str(x) for x in chosen}
    return tuple(str(x) for x in vocabulary if str(x) in wanted)


@dataclass(frozen=True)
class Puzzle:
    """One puzzle card. `deployment` is the engine's validated Deployment (objective included)."""

    id: str
    module: str
    title: str
    difficulty: int
    scenario: str
    objective: str
    deployment: Deployment
    levers: tuple[str, ...]
    estimates: tuple[str, ...]
    reasons: tuple[str, ...]
    hints: tuple[str, ...]
    expect: dict | None = None
    ruled_out: dict = field(default_factory=dict, compare=False)  # lever id -> why the scenario excludes it
    load: object = None   # an engine.load.spec.LoadSpec for a load objective (a request-level run), else None
    source: str = ""
    line: int | None = None
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def verdicts(self) -> tuple[str, ...]:
        """The bottleneck verdicts offered: only those that can bound this puzzle's objective,
        in the one fixed order (DESIGN.md, "What the bottleneck question asks")."""
        return tuple(str(v) for v in OBJECTIVE_VERDICTS[self.objective])

    @property
    def generated(self) -> bool:
        return self.id.startswith("gen-")

    def deployment_dict(self) -> dict:
        return deployment_to_dict(self.deployment)
