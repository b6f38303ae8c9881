"""What a load run asks: the traffic, the server's scheduler settings, the fleet and the SLOs.

The deployment (model, GPU, precisions, average prompt and output, price, shared prefix) stays an
`engine.deployment.Deployment`; a `LoadSpec` adds what only a request-level run needs. Every
default is a named choice with its source:

- `max_running` 256: vLLM's default cap on sequences in flight (`max_num_seqs`).
- `block_tokens` 16: vLLM's default KV block size.
- no `chunk_tokens`: whole prompts are prefilled in steps of their own, ahead of decodes (vLLM's
  scheduler before chunked prefill), as many as the engine's batched-prefill budget holds
  (`prefill_batch_tokens` in engine/data/corrections.toml, the steady state's own figure). With `chunk_tokens` T, every step carries at
  most T tokens: the running decodes first, then prompt chunks (Sarathi-Serve's stall-free batch,
  vLLM's chunked-prefill scheduler).
- SLOs 2 s to the first token and 0.2 s per output token: MLPerf Inference's Llama 2 70B server
  scenario (v4.0).
- `bursty` arrivals: gaps drawn from a gamma distribution with the Poisson rate's mean and a
  coefficient of variation of 2, so requests bunch up; `closed` loops `users` users, each sending
  its next request an exponential think time after its last answer ends.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

from engine.errors import RidgeError

ARRIVALS = ("poisson", "bursty", "closed")
LENGTHS = ("fixed", "exponential", "trace")
DEFAULT_MAX_RUNNING = 256
DEFAULT_BLOCK_TOKENS = 16
DEFAULT_SLO_TTFT = 2.0
DEFAULT_SLO_TPOT = 0.2
MAX_REQUESTS = 200_000


@dataclass(frozen=True)
class LoadSpec:
    """The request-level inputs of one run (times in seconds, rates per second, sizes in tokens).

    Each instance is the deployment's `gpus` GPUs (its tensor-parallel group); the fleet is
    `replicas` instances fed round robin, or, with `disaggregate` (prefill GPUs, decode GPUs), a
    prefill pool and a decode pool of such instances joined by a link of `link_gbps` GB/s (`link`
    names it; None takes the named link's bandwidth)."""

    arrival: str = "poisson"
    qps: float | None = None
    users: int | None = None
    think_seconds: float = 0.0
    lengths: str = "fixed"
    requests: int = 1000
    seed: int = 0
    slo_ttft: float = DEFAULT_SLO_TTFT
    slo_tpot: float = DEFAULT_SLO_TPOT
    chunk_tokens: int | None = None
    max_running: int = DEFAULT_MAX_RUNNING
    queue_cap: int | None = None
    block_tokens: int = DEFAULT_BLOCK_TOKENS
    replicas: int = 1
    disaggregate: tuple[int, int] | None = None
    link: str = "infiniband-ndr"
    link_gbps: float | None = None
    # what the load levers change to (engine.load.levers), shown on a puzzle's card
    lever_chunk_tokens: int = 512
    lever_split: tuple[int, int] | None = None
    lever_queue_cap: int | None = None

    def with_(self, **changes) -> "LoadSpec":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """Plain values for JSON and TOML (the split as a "P:D" string)."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name in ("disaggregate", "lever_split"):
                value = f"{value[0]}:{value[1]}"
            out[f.name] = value
        return out


def _number(name: str, value, low: float, high: float, whole: bool = False):
    kind = int if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or value != value:
        raise RidgeError(f"{name} must be {'a whole number' if whole else 'a number'}, got {value!r}")
    if not low <= value <= high:
        raise RidgeError(f"{name} must be between {low:g} and {high:g}, got {value:g}")
    return value


def parse_split(text: str) -> tuple[int, int]:
    """'P:D' GPU counts of a prefill and a decode pool, e.g. '2:6'."""
    parts = str(text).split(":")
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() for p in parts):
        raise RidgeError(f"disaggregate must be P:D, two whole GPU counts such as 2:6, got {text!r}")
    p, d = int(parts[0]), int(parts[1])
    if p < 1 or d < 1 or p + d > 4096:
        raise RidgeError(f"disaggregate needs at least one GPU in each pool and at most 4096 in all, got {text!r}")
    return p, d


def validate(spec: LoadSpec, tp: int) -> LoadSpec:
    """Check every field against its range and the others; one RidgeError line naming the field."""
    if spec.arrival not in ARRIVALS:
        raise RidgeError(f"arrival must be one of {', '.join(ARRIVALS)}, got {spec.arrival!r}")
    if spec.lengths not in LENGTHS:
        raise RidgeError(f"lengths must be one of {', '.join(LENGTHS)}, got {spec.lengths!r}")
    if spec.arrival == "closed":
        if spec.users is None:
            raise RidgeError("a closed loop needs --users N (users who each wait for their answer)")
        _number("users", spec.users, 1, 100_000, whole=True)
        _number("think", spec.think_seconds, 0.0, 1e6)
    else:
        if spec.qps is None:
            raise RidgeError("give a request rate (--qps Q) or a closed loop of users (--users N)")
        _number("qps", spec.qps, 1e-6, 1e7)
    _number("requests", spec.requests, 1, MAX_REQUESTS, whole=True)
    _number("seed", spec.seed, 0, 2**63 - 1, whole=True)
    _number("slo-ttft", spec.slo_ttft, 1e-6, 1e6)
    _number("slo-tpot", spec.slo_tpot, 1e-6, 1e6)
    _number("max-running", spec.max_running, 1, 1_000_000, whole=True)
    _number("block tokens", spec.block_tokens, 1, 4096, whole=True)
    _number("replicas", spec.replicas, 1, 4096, whole=True)
    if spec.queue_cap is not None:
        _number("queue-cap", spec.queue_cap, 0, 10**9, whole=True)
    if spec.chunk_tokens is not None:
        _number("chunk-tokens", spec.chunk_tokens, 1, 10**8, whole=True)
        if spec.chunk_tokens < spec.max_running:
            raise RidgeError(f"chunk-tokens ({spec.chunk_tokens}) must be at least max-running ({spec.max_running}): "
                             "every running sequence's decode token shares the step's budget")
    _number("lever chunk tokens", spec.lever_chunk_tokens, 1, 10**8, whole=True)
    if spec.lever_queue_cap is not None:
        _number("lever queue cap", spec.lever_queue_cap, 0, 10**9, whole=True)
    if spec.link_gbps is not None:
        _number("link", spec.link_gbps, 1e-6, 1e6)
    if spec.disaggregate is not None:
        p, d = spec.disaggregate
        if p % tp or d % tp:
            raise RidgeError(f"disaggregate {p}:{d} must split into whole instances of {tp} GPUs (--tp)")
    return spec
