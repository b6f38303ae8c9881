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
    serve_repeats: int = 3  # the workload is served this many times over, to show the timing spread
    blas_threads: int = 1  # BLAS threads while serving: one, so the four servers never fight for cores


def lab_settings(quick: bool = False, seed: int = 0) -> LabSettings:
    """The default run (a ~185 MB model, well past the CPU caches) or a seconds-long quick one."""
    if seed < 0:
        raise RidgeError(f"seed must be zero or more, got {seed}")
    if not quick:
        # three servings of 40 requests take about as long as one of 80 did, and show the spread
        return LabSettings(model=ModelConfig(seed=seed), workload=WorkloadSpec(n_requests=40, seed=seed))
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
    repeats = max(1, settings.serve_repeats)
    servers = {(name, r): Server(model, requests, scheduler=scheduler, allocator=allocator,
                                 slots=settings.kv_slots, block_size=settings.block_size,
                                 max_batch=settings.max_batch)
               for r in range(repeats) for name, (scheduler, allocator) in SERVERS.items()}
    # Interleave every server of every repeat, always stepping the one that has used the least time
    # so far, so that load from other programs falls on all of them alike rather than on whichever
    # ran at that moment; BLAS is held to a fixed thread count so the servers never fight for cores.
    active = dict(servers)
    total = sum(s.total_tokens for s in servers.values())
    with _blas_threads(settings.blas_threads):
        while active:
            name = min(active, key=lambda n: active[n].wall)
            if not active[name].step():
                del active[name]
            phase(4, sum(s.produced for s in servers.values()) / total)
    report(1.0, "done")
    runs = [{name: servers[name, r].result() for name in SERVERS} for r in range(repeats)]
    results = runs[0]
    pooled = {name: sum(run[name].output_tokens for run in runs) / max(1e-12, sum(run[name].wall_seconds for run in runs))
              for name in SERVERS}
    naive = results["naive"]
    speedups = {name: pooled[name] / pooled["naive"] if pooled["naive"] else 0.0 for name in SERVERS}
    per_run = [{name: (run[name].tokens_per_s / run["naive"].tokens_per_s if run["naive"].tokens_per_s else 0.0)
                for name in SERVERS} for run in runs]
    spread = {name: [min(r[name] for r in per_run), max(r[name] for r in per_run)] for name in SERVERS}
    ablation = {GAIN_NAMES[n]: speedups[n] for n in GAIN_NAMES}
    one = next(p for p in points if p.batch == 1) if any(p.batch == 1 for p in points) else points[0]
    ridge = flops_rate / bandwidth
    return {
        "seed": settings.model.seed,
        "quick": settings.quick,
        "identical_outputs": all(r.outputs == naive.outputs for run in runs for r in run.values()),
        "speedup": speedups["paged"],
        "speedup_spread": spread["paged"],  # lowest and highest of the repeats' own ratios
        "serve_repeats": repeats,
        "blas_threads": settings.blas_threads,
        "naive_utilization": naive.utilization,
        "paged_utilization": results["paged"].utilization,
        "utilization_gap_points": 100.0 * (results["paged"].utilization - naive.utilization),
        "continuous_contiguous_speedup": speedups["continuous-contiguous"],
        "static_paged_speedup": speedups["static-paged"],
        "ablation_speedups": ablation,
        "ablation_spreads": {GAIN_NAMES[n]: spread[n] for n in GAIN_NAMES},
        "most_gain_from": max(ablation, key=ablation.get),
        "bandwidth_fraction": (one.bytes / one.seconds) / bandwidth,
        "servers": {name: {**r.summary(), "tokens_per_s": pooled[name], "speedup": speedups[name],
                           "speedup_spread": spread[name]} for name, r in results.items()},
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


def _blas_threads(limit: int):
    """Hold the BLAS libraries numpy uses to `limit` threads (threadpoolctl), so the timing does
    not swing with how the library happens to split work across busy cores."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=limit, user_api="blas")


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0
