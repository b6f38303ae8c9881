"""This machine's own roofline: how fast memory streams, how fast matrices multiply, and where the
toy model's decode step sits between the two as the batch grows.

Below the ridge a decode step costs one read of the weights whatever the batch, so its time stays
flat; past the ridge the arithmetic takes longer than the read and time climbs with the batch.
The ridge of a float32 model falls at batch ≈ 2 × (FLOP/s ÷ bytes/s), since each weight (4 bytes)
does 2 FLOPs per sequence.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine.lab.kvcache import ContiguousCache
from engine.lab.model import ToyModel
from engine.lab.servers import Seq
from engine.lab.workload import Request


def _best_seconds(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def measure_bandwidth(n_bytes: int = 256 * 2**20, repeats: int = 5) -> float:
    """Best read rate in bytes/s over a few ways of streaming one large float32 array (a sum, the
    same sum split across threads, a matrix-vector product), each the best of `repeats` runs."""
    a = np.ones(n_bytes // 4, dtype=np.float32)
    threads = max(1, min(8, os.cpu_count() or 1))
    parts = np.array_split(a, threads)
    mat = a[: (a.size // 4096) * 4096].reshape(-1, 4096)
    vec = np.ones(4096, dtype=np.float32)
    with ThreadPoolExecutor(threads) as pool:
        probes = [
            (lambda: a.sum(), a.nbytes),
            (lambda: list(pool.map(np.sum, parts)), a.nbytes),
            (lambda: mat @ vec, mat.nbytes),
        ]
        return max(nbytes / _best_seconds(fn, repeats) for fn, nbytes in probes)


def measure_matmul_flops(sizes: tuple[int, ...] = (512, 1024, 2048), repeats: int = 3) -> float:
    """Best float32 matrix-multiply rate in FLOP/s over square products of the given sizes."""
    rng = np.random.default_rng(0)
    best = 0.0
    for n in sizes:
        x = rng.standard_normal((n, n), dtype=np.float32)
        y = rng.standard_normal((n, n), dtype=np.float32)
        best = max(best, 2.0 * n**3 / _best_seconds(lambda: x @ y, repeats))
    return best


@dataclass(frozen=True, slots=True)
class DecodePoint:
    batch: int
    seconds: float  # measured, best of the repeats
    bytes: float  # weights plus the keys and values attention reads
    flops: float  # 2 · matmul params · batch
    floor_seconds: float  # max(bytes / bandwidth, flops / matmul rate)

    def to_dict(self) -> dict:
        return {"batch": self.batch, "step_seconds": self.seconds, "roofline_seconds": self.floor_seconds,
                "bytes": self.bytes, "flops": self.flops,
                "achieved_bytes_per_s": self.bytes / self.seconds if self.seconds else 0.0}


def decode_bytes(model: ToyModel, batch: int, context: int) -> float:
    """Bytes one decode step reads: every weight once, plus each sequence's keys and values."""
    return model.config.weight_bytes + batch * (context + 1) * model.config.kv_bytes_per_token


def time_decode(model: ToyModel, batch: int, context: int, repeats: int) -> float:
    """Best time of one batched decode step with `context` tokens already cached per sequence."""
    cfg = model.config
    cache = ContiguousCache(cfg, batch * (context + 1))
    rng = np.random.default_rng(batch)
    seqs = []
    for i in range(batch):
        seq = Seq(Request(i, 0, tuple(range(context)), 0, 2, 2))
        cache.open(seq)
        for layer in range(cfg.n_layers):
            kv = rng.standard_normal((2, context, cfg.n_kv_heads, cfg.head_dim), dtype=np.float32)
            cache.write(seq, layer, 0, kv[0], kv[1])
        seqs.append(seq)
    tokens = rng.integers(0, cfg.vocab, size=batch)
    positions = np.full(batch, context)
    model.decode(tokens, positions, seqs, cache)  # warm up
    return _best_seconds(lambda: model.decode(tokens, positions, seqs, cache), repeats)


def decode_sweep(model: ToyModel, batches: tuple[int, ...], context: int, bandwidth: float,
                 flops_rate: float, repeats: int = 3,
                 progress: Callable[[float], None] | None = None) -> list[DecodePoint]:
    """Time the toy's decode step at each batch size and place it against the roofline."""
    points = []
    for i, b in enumerate(batches):
        seconds = time_decode(model, b, context, repeats * (3 if b <= 2 else 1))  # cheap steps: more tries
        nbytes = decode_bytes(model, b, context)
        flops = model.config.decode_flops(b)
        points.append(DecodePoint(b, seconds, nbytes, flops, max(nbytes / bandwidth, flops / flops_rate)))
        if progress is not None:
            progress((i + 1) / len(batches))
    return points
