"""Named misconceptions, detected from a prediction's numbers and choices.

Each detector compares an estimate with the truth: when the ratio estimate/truth sits within 4%
of the factor a known slip produces (and not within 3% of the truth itself), the slip is named,
with this deployment's numbers. Choices are checked too: swapping weight and KV quantization, or
expecting speculative decoding to speed up a step that has no idle FLOPs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from engine.catalog import PRECISION_BYTES

from engine.ids import Allocator, GainBand, Lever
from puzzles import fmt

GIB_OVER_GB = 2**30 / 1e9  # 1.0737...
NEAR = math.log(1.04)
EXACT = math.log(1.03)

MISCONCEPTIONS: dict[str, str] = {
    "gb-vs-gib": "GB vs GiB: a GiB (2^30 bytes) is 7.4% larger than a GB (10^9 bytes)",
    "kv-factor-two": "the factor 2 for K and V: every layer caches a key AND a value per KV head",
    "head-dim": "head_dim is a config field of its own; it is not always hidden / heads",
    "sparse-tflops": "sparse TFLOPS: datasheets print 2:4-sparsity peaks twice the dense figure the ridge uses",
    "kv-replication": "KV heads replicated: when GPUs outnumber KV heads, each head's cache is copied to several GPUs",
    "weights-vs-kv-quant": "weights-only vs weights+KV quantization: shrinking the weights leaves the KV read as it was",
    "ignored-kv-read": "intensity is 2B/bp only while the KV read is negligible; the cache read adds bytes per step",
    "full-sequence-length": "a decoding sequence holds the prompt plus half its output on average, not the whole of both",
    "spec-general-speedup": "speculative decoding spends idle FLOPs; a step near the ridge has none to spend",
}


@dataclass(frozen=True)
class Misconception:
    id: str
    text: str

    def to_json(self) -> dict:
        return {"id": self.id, "text": self.text}


def _near(ratio: float, target: float) -> bool:
    return target > 0 and abs(math.log(ratio / target)) <= NEAR and abs(math.log(ratio)) > EXACT


def detect(puzzle, key, prediction) -> list[Misconception]:
    """Every misconception the prediction shows, at most once each, in a stable order."""
    found: dict[str, str] = {}
    r = key.solution.report
    dep = r.deployment
    m = dep.model
    for name, value in prediction.estimates.items():
        truth = key.estimates.get(name)
        if truth is None or truth <= 0 or value is None or value <= 0:
            continue
        ratio = value / truth
        if name == "weight_bytes":
            if _near(ratio, GIB_OVER_GB) or _near(ratio, 1 / GIB_OVER_GB):
                found.setdefault("gb-vs-gib", f"{name}: {fmt.num(value)} is off by the GB/GiB factor 1.074 "
                                              f"from {fmt.num(truth)}")
        if name in ("kv_bytes_per_token", "max_concurrency"):
            if _near(ratio, 2.0) or _near(ratio, 0.5):
                found.setdefault("kv-factor-two", f"{name}: {fmt.num(value)} is twice or half {fmt.num(truth)}: "
                                                  f"count K and V once each")
            if not m.is_mla:
                implied = (m.hidden / m.heads) / m.head_dim
                if abs(math.log(implied)) > math.log(1.05):
                    target = implied if name == "kv_bytes_per_token" else 1 / implied
                    if _near(ratio, target):
                        found.setdefault("head-dim", f"{m.id} has head_dim {m.head_dim}, not hidden/heads = "
                                                     f"{m.hidden}/{m.heads} = {m.hidden / m.heads:g}")
        if name == "max_concurrency" and r.kv_replication > 1 and _near(ratio, r.kv_replication):
            why = ("a latent (MLA) cache is not split across GPUs" if m.is_mla
                   else f"{dep.gpus} GPUs share {m.kv_heads} KV heads")
            found.setdefault("kv-replication", f"max_concurrency: {fmt.num(value)} is {r.kv_replication:g}x the "
                                               f"{fmt.num(truth)} that fit: {why}, so each token's KV is stored "
                                               f"{r.kv_replication:g} times")
        if name == "max_concurrency" and r.fits and dep.allocator == Allocator.PAGED:
            full = (dep.prompt + dep.output) / r.seq_len_avg
            if abs(math.log(full)) > math.log(1.1) and _near(ratio, 1 / full):
                found.setdefault("full-sequence-length", f"max_concurrency: sized for {fmt.num(dep.prompt + dep.output)} "
                                                         f"tokens per sequence; on average one holds "
                                                         f"{fmt.num(r.seq_len_avg)}")
        if name == "ridge" and _near(ratio, 2.0):
            found.setdefault("sparse-tflops", f"ridge: {fmt.num(value)} is twice {fmt.num(truth)}: "
                                              f"{dep.gpu.id}'s dense {r.compute_precision} peak is "
                                              f"{fmt.num(r.peak_flops / 1e12)} TFLOP/s")
        if name == "intensity" and r.fits:
            weights_only = 2.0 * r.batch * (dep.spec_k + 1) / PRECISION_BYTES[dep.weights]
            target = weights_only / truth
            if target > 1.15 and _near(ratio, target):
                found.setdefault("ignored-kv-read", f"intensity: {fmt.num(value)} is 2B/bp, which leaves out the "
                                                    f"{fmt.gb(r.decode_kv_bytes_per_step)} of KV read each step")
    _choices(key, prediction, found)
    return [Misconception(mid, f"{MISCONCEPTIONS[mid]} ({detail})") for mid, detail in
            sorted(found.items(), key=lambda kv: list(MISCONCEPTIONS).index(kv[0]))]


def _choices(key, prediction, found: dict[str, str]) -> None:
    dep = key.solution.report.deployment
    pair = {prediction.lever, key.best_lever}
    if pair == {Lever.QUANTIZATION, Lever.KV_QUANTIZATION}:
        found.setdefault("weights-vs-kv-quant", f"here {key.best_lever} gains {fmt.gain(key.band_gain)} and "
                                                f"{prediction.lever} {fmt.gain(key.band_lever_gain(prediction.lever))}")
    elif prediction.lever == Lever.QUANTIZATION and prediction.gain_band in (GainBand.FROM_2_TO_4, GainBand.OVER_4):
        g = key.band_lever_gain(Lever.QUANTIZATION)
        if g is not None and g < 1.9:
            what = ("the KV cache is already 8-bit, so only the weights shrink" if PRECISION_BYTES[dep.kv] <= 1
                    else "the bytes that shrink are not the ones that bind")
            found.setdefault("weights-vs-kv-quant", f"quantization gains {fmt.gain(g)} here: {what}")
    if prediction.lever == Lever.SPECULATIVE_DECODING and key.best_lever != Lever.SPECULATIVE_DECODING:
        g = key.lever_gain(Lever.SPECULATIVE_DECODING)
        r = key.solution.report
        if g is not None and g < 1.1 and r.fits:
            found.setdefault("spec-general-speedup", f"at batch {fmt.num(r.batch)} the step runs at "
                                                     f"{fmt.pct(r.intensity / r.ridge)} of the ridge; speculation gains "
                                                     f"{fmt.gain(g)}")
