"""Where a recipe's draw lands before the engine has the last word: the memory a deployment
leaves for the cache, the GPU count that fits, and a concurrency whose figures fall in bounds."""
from __future__ import annotations

import math
import random

from engine import physics
from engine.catalog import PRECISION_BYTES
from engine.ids import Precision, Scheduler

from puzzles.generator.levels import Level, tp_limit
from puzzles.generator.picks import spread

GIB = 2**30

def weight_bytes(model, weights: str) -> float:
    return model.params * PRECISION_BYTES[weights]


def stored_per_token(model, kv: str, gpus: int) -> float:
    return model.kv_values_per_token * PRECISION_BYTES[kv] * physics.kv_replication(float(gpus), model.kv_heads, model.is_mla)


def usable(model, gpu, gpus: int, weights: str, reserve: float | None = None) -> float:
    return physics.usable_kv_bytes(gpus, gpu.memory_gib, weight_bytes(model, weights),
                                   physics.reserve_per_gpu_gib(gpu.memory_gib, reserve))


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


def capacity(model, gpu, gpus: int, weights: str, kv: str, seq: float) -> float:
    return usable(model, gpu, gpus, weights) / (stored_per_token(model, kv, gpus) * seq)


def eight_bit(gpu) -> str:
    return "fp8" if gpu.native("fp8") else "int8"



class Shape:
    """Closed-form estimates of the engine's figures for one model, GPU set and lengths, so a
    recipe can pick a concurrency that lands where it aims before building anything. They are
    the engine's own formulas without the corner cases; the engine still has the last word."""

    def __init__(self, model, gpu, gpus: int, weights: str, kv: str, prompt: int, output: int,
                 scheduler: str = Scheduler.CONTINUOUS) -> None:
        self.model, self.gpus, self.output = model, gpus, output
        compute = weights if weights != Precision.INT4 and gpu.native(weights) else "bf16"
        self.peak = gpus * gpu.peak_flops(compute)
        self.bandwidth = gpus * gpu.bandwidth_tbps * 1e12
        self.ridge = gpu.peak_flops(compute) / (gpu.bandwidth_tbps * 1e12)
        self.bpw = PRECISION_BYTES[weights]
        self.seq = physics.in_flight_length(prompt, output, scheduler)
        held = physics.tokens_held(self.seq, model.layers, model.sliding_layers, model.sliding_window)
        self.kv_seq = stored_per_token(model, kv, gpus) * held
        self.capacity = usable(model, gpu, gpus, weights) / self.kv_seq
        flops = 2.0 * model.active_params
        attention = physics.prefill_attention_flops(model, prompt, 0)
        self.prefill = (flops * prompt + attention) / self.peak
        self.flops_per_seq = flops
        self.dense_weights = 0.0 if model.experts else model.params * self.bpw
        self.static = scheduler == Scheduler.STATIC

    def weights_read(self, batch: float) -> float:
        return physics.weight_read_bytes(self.model, max(batch, 1.0), self.bpw)

    def figures(self, batch: float) -> dict:
        w = self.dense_weights if self.dense_weights else self.weights_read(batch)
        k = batch * self.kv_seq
        mem = (w + k) / self.bandwidth
        comp = self.flops_per_seq * batch / self.peak
        step = max(mem, comp)
        share = batch * self.prefill / (batch * self.prefill + self.output * step)
        out = {"kv_over_weights": k / w, "compute_over_memory": comp / mem, "share": share,
               "fill": batch / self.capacity if self.capacity > 0 else math.inf}
        if self.static and self.dense_weights:
            out["compute_over_memory"] = self._static_compute_over_memory(batch)
        return out

    def _static_compute_over_memory(self, batch: float) -> float:
        """A dense static batch drains (`engine.physics.static_dense_sum`): steps are compute-bound
        only while more than j* = W / (f - kv) sequences remain, so this is the compute-bound
        share of its decode time over the memory-bound share (the engine's verdict compares them)."""
        w = self.dense_weights / self.bandwidth
        kv = self.kv_seq / self.bandwidth
        f = self.flops_per_seq / self.peak
        if f <= kv:
            return 0.0
        n_mem = min(batch, max(0.0, math.ceil(w / (f - kv)) - 1.0))
        memory = w * physics.harmonic(n_mem) + n_mem * kv
        return (batch - n_mem) * f / memory if memory > 0 else math.inf


def choose_batch(rng, shape: Shape, low: float, high: float, **bounds) -> int:
    """A concurrency in [low, high] (log-uniform, a dozen tries) whose estimated figures fall
    inside every `name=(min, max)` bound; Skip when none does."""
    high = min(high, shape.capacity * bounds.pop("max_fill", 0.8))
    if high < low:
        raise Skip
    for _ in range(10):
        batch = spread(rng, low, high)
        figures = shape.figures(batch)
        if all(lo <= figures[name] <= hi for name, (lo, hi) in bounds.items()):
            return batch
    raise Skip



class Skip(Exception):
    """This draw cannot satisfy its recipe; draw again."""

