"""Seeded request streams for the lab: when each request arrives, its prompt, how long its answer
runs, and the longest answer it was allowed (what a server without paging must reserve for).

Arrivals are counted in scheduler steps rather than seconds, so every server sees the same
requests in the same order and a run is repeatable; the default rate keeps a queue waiting, which
is the regime where throughput is decided. The toy model's weights are random, so an answer's end
is drawn here, as if the model emitted an end token at that length; no server knows it in advance.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from engine.errors import RidgeError


@dataclass(frozen=True, slots=True)
class Request:
    id: int
    arrival_step: int
    prompt: tuple[int, ...]
    prefix_len: int  # leading tokens shared with other requests (the system prompt), 0 for none
    output_len: int  # tokens this answer will have
    max_output: int  # tokens it was allowed to have

    @property
    def prompt_len(self) -> int:
        return len(self.prompt)


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    """Distributions of a request stream; lengths in tokens, arrival rate in requests per step."""

    n_requests: int = 80
    arrival_rate: float = 4.0
    prompt_min: int = 4  # user part of the prompt, uniform between min and max
    prompt_max: int = 24
    output_mean: float = 40.0  # answer lengths are log-normal with this mean, cut at output_max
    output_sigma: float = 0.5
    output_max: int = 256
    system_prompt_len: int = 20  # shared by every request; 0 turns it off
    vocab: int = 2048
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_requests < 1:
            raise RidgeError(f"workload needs at least one request, got {self.n_requests}")
        if self.arrival_rate <= 0:
            raise RidgeError(f"workload arrival rate must be positive, got {self.arrival_rate}")
        if not 1 <= self.prompt_min <= self.prompt_max:
            raise RidgeError(f"workload prompt lengths need 1 <= min <= max, got {self.prompt_min}..{self.prompt_max}")
        if self.output_max < 1 or self.output_mean <= 0 or self.output_sigma < 0:
            raise RidgeError("workload output lengths need a positive mean and a maximum of at least 1")
        if self.system_prompt_len < 0 or self.vocab < 2:
            raise RidgeError("workload system prompt length must be >= 0 and vocab >= 2")

    def to_dict(self) -> dict:
        return asdict(self)


def make_requests(spec: WorkloadSpec) -> list[Request]:
    """Draw the request stream; the same spec always gives the same requests."""
    rng = np.random.default_rng(spec.seed)
    system = rng.integers(0, spec.vocab, size=spec.system_prompt_len).tolist()
    gaps = rng.exponential(1.0 / spec.arrival_rate, size=spec.n_requests)
    arrivals = np.floor(np.cumsum(gaps) - gaps[0]).astype(int)  # the first request comes at step 0
    users = rng.integers(spec.prompt_min, spec.prompt_max + 1, size=spec.n_requests)
    mu = math.log(spec.output_mean) - spec.output_sigma**2 / 2  # so the uncut mean is output_mean
    outputs = np.clip(np.rint(rng.lognormal(mu, spec.output_sigma, size=spec.n_requests)), 1, spec.output_max)
    out = []
    for i in range(spec.n_requests):
        user = rng.integers(0, spec.vocab, size=int(users[i])).tolist()
        out.append(Request(i, int(arrivals[i]), tuple(system + user), spec.system_prompt_len,
                           int(outputs[i]), spec.output_max))
    return out
