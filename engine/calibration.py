"""The grid the realistic fidelity is calibrated on: step times of every covered setup, side by side.

A setup is a catalog model on an accelerator with measured kernels, at a tensor-parallel width
and precisions, where the weights fit (Ridge's own memory accounting). Each setup is timed at
decode steps over batch 1-256 x context 128-32768 (where that much KV fits), at speculative
verification passes (k = 4 drafted tokens per sequence, batch 1-64 x context 512-32768), and at
prefills of 128-32768 tokens, one or four prompts at a time. `grid()` lists the setups (every one, or a seeded
share of them), `times(setups, fidelity)` times them through the same Passes the analysis uses
(floor and realistic, vectorised; measured through the kernels), and `summary(ratios)` gives the
figures the targets are stated in. bench/calibrate_realistic.py fits the realistic constants on
it; tests/engine/test_engine_calibration.py pins the targets on a sample.
"""
from __future__ import annotations

import random

from engine import physics
from engine.errors import RidgeError
from engine.ids import Fidelity

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
CONTEXTS = (128, 512, 2048, 8192, 32768)
PROMPTS = (128, 512, 2048, 8192, 32768)
PROMPT_BATCHES = (1, 4)
WIDTHS = (1, 2, 4, 8)
PRECISIONS = (("bf16", "bf16"), ("fp8", "fp8"), ("bf16", "fp8"))
VERIFY_K = 4                       # the speculation lever's draft length (engine.levers.DEFAULT_SPEC_K)
VERIFY_BATCHES = (1, 4, 16, 64)
VERIFY_CONTEXTS = (512, 8192, 32768)


class Setup:
    """One covered setup: its realistic deployment and the shapes it is timed at, as
    (batch, context) decode pairs, (batch, context) verification passes of VERIFY_K drafted
    tokens per sequence, and (prompts, tokens) prefill pairs."""

    __slots__ = ("deployment", "decode", "prefill", "verify")

    def __init__(self, deployment, decode, prefill, verify=()):
        self.deployment, self.decode, self.prefill, self.verify = deployment, decode, prefill, list(verify)

    @property
    def key(self) -> tuple:
        d = self.deployment
        return d.model.id, d.gpu.id, d.gpus, d.weights, d.kv

    def __len__(self) -> int:
        return len(self.decode) + len(self.verify) + len(self.prefill)

    def kinds(self) -> list[str]:
        """What each of its times is, in the order `times` gives them."""
        return ["decode"] * len(self.decode) + ["verify"] * len(self.verify) + ["prefill"] * len(self.prefill)


def grid(catalog, share: float = 1.0, seed: int = 0) -> list[Setup]:
    """Every covered setup whose weights fit (or a seeded `share` of them), with its shapes. A
    setup the database cannot time (a head size or an expert layout it has no kernels for) is
    left out, as the measured fidelity itself would refuse it."""
    from engine import measured
    from engine.analysis import analyze
    from engine.deployment import build_deployment

    rng = random.Random(seed)
    setups = []
    for gpu in catalog.gpus.values():
        if not measured.system_of(gpu):
            continue
        for model in catalog.models.values():
            for width in WIDTHS:
                for weights, kv in PRECISIONS:
                    if share < 1.0 and rng.random() >= share:
                        continue
                    dep = build_deployment(catalog, model, gpu, gpus=width, weights=weights, kv=kv, prompt=128,
                                           output=2, concurrency=1, fidelity=Fidelity.REALISTIC)
                    setup = _shapes(dep, analyze(dep))
                    if setup is None or measured.coverage_problem(model, gpu, weights, kv):
                        continue
                    try:
                        measured.kernels(model, gpu, int(min(width, gpu.tp_domain)), weights, kv)
                    except RidgeError:
                        continue
                    setups.append(setup)
    return setups


def _shapes(dep, report) -> Setup | None:
    if not report.fits:
        return None
    per_token = report.kv_bytes_per_token * report.kv_replication
    room = report.usable_kv_bytes
    context = dep.model.context
    decode = [(b, c) for b in BATCHES for c in CONTEXTS if c <= context and b * c * per_token <= room]
    prefill = [(b, p) for p in PROMPTS for b in PROMPT_BATCHES if p <= context and b * p * per_token <= room]
    verify = [(b, c) for b in VERIFY_BATCHES for c in VERIFY_CONTEXTS
              if c <= context and b * (c + VERIFY_K) * per_token <= room]
    return Setup(dep, decode, prefill, verify) if decode or prefill else None


def times(setups: list[Setup], fidelity: str, constants: dict | None = None) -> list[float]:
    """Seconds of every shape of every setup at `fidelity`, in order: decode steps per group,
    verification passes, then prefills. Floor and realistic take `constants` (the calibrated ones
    when None)."""
    if fidelity == Fidelity.MEASURED:
        from engine import measured
        from engine.steps import step_model

        out = []
        for s in setups:
            sm = step_model(s.deployment, Fidelity.MEASURED)
            out += [sm.decode_seconds(b, c) for b, c in s.decode]
            if s.verify:
                dep = s.deployment.with_(fidelity=Fidelity.MEASURED, spec_k=VERIFY_K)
                p = measured.passes_for(dep, physics.numeric_inputs(dep))
                out += [p.decode(b * p.groups, _held_bytes(p, dep.model, c))[6] for b, c in s.verify]
            out += [sm.prefill_seconds(p, b) for b, p in s.prefill]
        return out
    import numpy as np

    out = []
    for s in setups:
        dep = s.deployment.with_(fidelity=fidelity)
        p = physics.Passes(dep, physics.numeric_inputs(dep), constants)
        m = dep.model
        if s.decode:
            batch, ctx = np.array(s.decode, dtype=float).T
            held = physics.tokens_held(ctx, m.layers, m.sliding_layers, m.sliding_window)
            step = p.plain_step(batch * p.groups, p.token_kv_bytes * held)
            out += list(np.broadcast_to(step, batch.shape))
        if s.verify:
            spec = dep.with_(spec_k=VERIFY_K)
            q = physics.Passes(spec, physics.numeric_inputs(spec), constants)
            batch, ctx = np.array(s.verify, dtype=float).T
            step = q.decode(batch * q.groups, _held_bytes(q, m, ctx))[6]
            out += list(np.broadcast_to(step, batch.shape))
        if s.prefill:
            batch, tokens = np.array(s.prefill, dtype=float).T
            out += list(np.broadcast_to(p.prefill(tokens, tokens, 0.0 * tokens, batch)[4], batch.shape))
    return [float(x) for x in out]


def _held_bytes(p, model, context):
    """KV bytes one sequence of `context` tokens reads in a step (sliding layers capped)."""
    return p.token_kv_bytes * physics.tokens_held(context, model.layers, model.sliding_layers, model.sliding_window)


def summary(ratios) -> dict:
    """The figures the targets are stated in: count, median, share within +-25%, 5th and 95th
    percentiles, and the extremes."""
    xs = sorted(ratios)
    n = len(xs)
    if not n:
        return {"n": 0}

    def pct(q):
        return xs[min(n - 1, max(0, round(q * (n - 1))))]

    return {"n": n, "median": pct(0.5), "within_25": sum(0.75 <= x <= 1.25 for x in xs) / n,
            "p5": pct(0.05), "p95": pct(0.95), "min": xs[0], "max": xs[-1]}


# --- published end-to-end measurements (tests/fixtures/measurements.toml) ----------------------

POINT_SETUP = ("gpus", "weights", "kv", "prompt", "output", "concurrency")


def point_deployment(catalog, point: dict, fidelity: str):
    """The deployment a published measurement describes (concurrency 1 unless it says)."""
    from engine.deployment import build_deployment

    values = {k: point[k] for k in POINT_SETUP if k in point}
    values.setdefault("concurrency", 1)
    return build_deployment(catalog, point["model"], point["gpu"], fidelity=fidelity, **values)


def point_seconds(catalog, point: dict, fidelity: str) -> float:
    """The engine's figure for a published point's metric as a time (seconds; a throughput is
    taken as seconds per output token), so smaller is always faster."""
    from engine.analysis import analyze

    r = analyze(point_deployment(catalog, point, fidelity))
    if not r.fits:
        raise RidgeError(f"{point['what']}: does not fit at the {fidelity} fidelity")
    metric = point["metric"]
    if metric == "throughput_tokens_per_s":
        return 1.0 / r.throughput_tokens_per_s
    if metric == "batch_seconds":
        return r.batch * r.deployment.output / r.throughput_tokens_per_s
    return getattr(r, metric)


def measured_point_seconds(point: dict) -> float:
    """A published point's figure as a time, like point_seconds."""
    return 1.0 / point["measured"] if point["metric"] == "throughput_tokens_per_s" else point["measured"]
