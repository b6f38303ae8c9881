"""The whole lab in one call: measure this machine's roofline, then serve one seeded workload four
ways (naive, paged with continuous batching, and the two half-way ablations), interleaved step by
step, and compare.

"Which change produced most of the gain" is read off the ablations: continuous batching alone
(contiguous reservations kept) against paged allocation alone (static batches kept), each as a
speedup over naive; the larger one is the answer.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from engine.errors import RidgeError
from engine.lab.model import ModelConfig, ToyModel
from engine.lab.roofline import decode_bytes, decode_sweep, measure_bandwidth, measure_matmul_flops
from engine.lab.servers import Server
from engine.lab.workload import WorkloadSpec, make_requests

# name -> (scheduler, allocator); naive first, since every speedup is measured against it.
SERVERS = {
    "naive": ("static", "contiguous"),
    "continuous-contiguous": ("continuous", "contiguous"),
    "static-paged": ("static", "paged"),
    "paged": ("continuous", "paged"),
}
GAIN_NAMES = {"continuous-contiguous": "continuous-batching", "static-paged": "paged-allocation"}

Progress = Callable[[float, str], None]


@dataclass(frozen=True, slots=True)
class LabSettings:
    """Everything a lab run depends on besides the machine."""

    model: ModelConfig = field(default_factory=ModelConfig)
    workload: WorkloadSpec = field(default_factory=WorkloadSpec)
    kv_slots: int = 2048
    block_size: int = 8
    max_batch: int = 64
    sweep_batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    sweep_context: int = 64
    probe_bytes: int = 256 * 2**20
    matmul_sizes: tuple[int, ...] = (512, 1024, 2048)
    repeats: int = 5
    quick: bool = False


def lab_settings(quick: bool = False, seed: int = 0) -> LabSettings:
    """The default run (a ~185 MB model, well past the CPU caches) or a seconds-long quick one."""
    if seed < 0:
        raise RidgeError(f"seed must be zero or more, got {seed}")
    if not quick:
        return LabSettings(model=ModelConfig(seed=seed), workload=WorkloadSpec(seed=seed))
    model = ModelConfig(vocab=512, d_model=256, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=1024,
                        max_positions=256, seed=seed)
    workload = WorkloadSpec(n_requests=16, arrival_rate=4.0, prompt_min=4, prompt_max=16,
                            output_mean=12.0, output_max=48, system_prompt_len=10, vocab=512, seed=seed)
    return LabSettings(model=model, workload=workload, kv_slots=256, block_size=8, max_batch=32,
                       sweep_batches=(1, 2, 4, 8), sweep_context=16, probe_bytes=64 * 2**20,
                       matmul_sizes=(256, 512), repeats=2, quick=True)


def run_lab(settings: LabSettings, progress: Progress | None = None) -> dict:
    """Run the lab and return a JSON-ready dict. `progress(fraction, label)` is called as it goes;
    raising from it aborts the run."""
    began = time.perf_counter()
    load_before = _load()
    report = progress or (lambda fraction, label: None)
    # Rough share of the run each phase takes, so the bar moves at a steady pace.
    phases = [("building the model", 0.02), ("measuring memory bandwidth", 0.04),
              ("measuring matrix-multiply speed", 0.02), ("timing decode steps", 0.07),
              ("serving the workload four ways", 0.85)]
    done = 0.0

    def phase(i: int, within: float = 0.0) -> None:
        label, weight = phases[i]
        report(min(1.0, done + weight * within), label)

    def finish(i: int) -> None:
        nonlocal done
        done += phases[i][1]

    phase(0)
    model = ToyModel(settings.model)
    finish(0)
    phase(1)
    bandwidth = measure_bandwidth(settings.probe_bytes, settings.repeats)
    finish(1)
    phase(2)
    flops_rate = measure_matmul_flops(settings.matmul_sizes, max(2, settings.repeats - 2))
    finish(2)
    phase(3)
    points = decode_sweep(model, settings.sweep_batches, settings.sweep_context, bandwidth, flops_rate,
                          settings.repeats, progress=lambda f: phase(3, f))
    finish(3)

    phase(4)
    requests = make_requests(settings.workload)
    servers = {name: Server(model, requests, scheduler=scheduler, allocator=allocator,
                            slots=settings.kv_slots, block_size=settings.block_size,
                            max_batch=settings.max_batch)
               for name, (scheduler, allocator) in SERVERS.items()}
    # Interleave the servers, always stepping the one that has used the least time so far, so that
    # load from other programs falls on all four alike rather than on whichever ran at that moment.
    active = dict(servers)
    total = sum(s.total_tokens for s in servers.values())
    while active:
        name = min(active, key=lambda n: active[n].wall)
        if not active[name].step():
            del active[name]
        phase(4, sum(s.produced for s in servers.values()) / total)
    results = {name: s.result() for name, s in servers.items()}
    report(1.0, "done")

    naive = results["naive"]
    speedups = {name: r.tokens_per_s / naive.tokens_per_s if naive.tokens_per_s else 0.0
                for name, r in results.items()}
    ablation = {GAIN_NAMES[n]: speedups[n] for n in GAIN_NAMES}
    one = next(p for p in points if p.batch == 1) if any(p.batch == 1 for p in points) else points[0]
    ridge = flops_rate / bandwidth
    return {
        "seed": settings.model.seed,
        "quick": settings.quick,
        "identical_outputs": all(r.outputs == naive.outputs for r in results.values()),
        "speedup": speedups["paged"],
        "naive_utilization": naive.utilization,
        "paged_utilization": results["paged"].utilization,
        "utilization_gap_points": 100.0 * (results["paged"].utilization - naive.utilization),
        "continuous_contiguous_speedup": speedups["continuous-contiguous"],
        "static_paged_speedup": speedups["static-paged"],
        "ablation_speedups": ablation,
        "most_gain_from": max(ablation, key=ablation.get),
        "bandwidth_fraction": (one.bytes / one.seconds) / bandwidth,
        "servers": {name: {**r.summary(), "speedup": speedups[name]} for name, r in results.items()},
        "roofline": {
            "bandwidth_bytes_per_s": bandwidth,
            "matmul_flops_per_s": flops_rate,
            "ridge_flops_per_byte": ridge,
            "ridge_batch": 2.0 * ridge,  # float32: a decode step does 2 FLOPs per 4-byte weight per sequence
            "context_tokens": settings.sweep_context,
            "batch1_bytes": decode_bytes(model, 1, settings.sweep_context),
            "points": [p.to_dict() for p in points],
        },
        "model": {**asdict(settings.model), "weight_bytes": settings.model.weight_bytes,
                  "matmul_params": settings.model.matmul_params,
                  "kv_bytes_per_token": settings.model.kv_bytes_per_token},
        "workload": settings.workload.to_dict(),
        "kv_slots": settings.kv_slots,
        "block_size": settings.block_size,
        "run_seconds": time.perf_counter() - began,
        "cpus": os.cpu_count() or 1,
        "load_average": [load_before, _load()],  # other programs' load makes every timing noisier
    }


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0
