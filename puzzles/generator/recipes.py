"""The recipes: one per (verdict, lever) target, each drawing the fields of a deployment steered
towards it, and `r_any`, the fallback that draws anything the level allows."""
from __future__ import annotations

import math

from engine.analysis import analyze
from engine.catalog import builtin_catalog
from engine.ids import Lever, Precision, Verdict

from puzzles.generator.aim import GIB, Skip, aim, deployment, eight_bit, fit_gpus, held, stored_per_token, usable
from puzzles.generator.levels import LEVELS, SMALL_MODELS, Level, tp_limit
from puzzles.generator.picks import lengths, pick, round_count, rounded, spread


def _base(rng, level: Level, models=None, gpus=None, weights="bf16", kv="bf16", room=0.25):
    cat = builtin_catalog()
    model = cat.model(pick(rng, models or level.models))
    gpu = cat.gpu(pick(rng, gpus or level.gpus))
    n = fit_gpus(rng, model, gpu, weights, level, room)
    if n is None:
        raise Skip
    return model, gpu, n


def _objective(rng, level: Level, allowed=("cost", "tpot", "ttft")) -> str:
    choices = [o for o in level.objectives if o in allowed]
    if not choices:
        raise Skip
    return pick(rng, choices)


_COMBOS: dict = {}


def _combos(level: Level, kind: str) -> list:
    """(model id, gpu id, gpu count, kv precision) for the does-not-fit recipes, worked out once
    per level from the fixed tuples (so the order, and every draw, is the same on any machine)."""
    cache_key = (id(level), kind)
    if cache_key in _COMBOS:
        return _COMBOS[cache_key]
    cat = builtin_catalog()
    out = []
    for model_id in dict.fromkeys(level.big_models + level.models):
        model = cat.model(model_id)
        for gpu_id in level.gpus:
            gpu = cat.gpu(gpu_id)
            n = 1
            limit = tp_limit(level, gpu)
            while n <= limit:
                mem = n * gpu.memory_gib * GIB
                if kind == Lever.QUANTIZATION:
                    if (usable(model, gpu, n, "bf16") < -0.15 * mem
                            and usable(model, gpu, n, eight_bit(gpu)) > 0.06 * mem):
                        out.append((model_id, gpu_id, n, "bf16"))
                elif kind in ("more-gpus-int4", "more-gpus-fp8"):
                    w = kind.rsplit("-", 1)[1]
                    if (2 * n <= limit and usable(model, gpu, n, w) < -0.15 * mem
                            and usable(model, gpu, 2 * n, w) > 0.1 * 2 * mem and (w == Precision.INT4 or gpu.native("fp8"))):
                        out.append((model_id, gpu_id, n, eight_bit(gpu)))
                else:  # paged-kv: int4 weights fit, leaving cache for 3,000 tokens up to two thirds of the context
                    for kv in (eight_bit(gpu), "bf16"):
                        tokens = usable(model, gpu, n, "int4") / stored_per_token(model, kv, n)
                        if model.context >= 16384 and 3000 <= tokens <= model.context / 1.5:
                            out.append((model_id, gpu_id, n, kv))
                n *= 2
    _COMBOS[cache_key] = out
    return out


def _combo(rng, level: Level, kind: str):
    options = _combos(level, kind)
    if not options:
        raise Skip
    model_id, gpu_id, n, kv = pick(rng, options)
    cat = builtin_catalog()
    return cat.model(model_id), cat.gpu(gpu_id), n, kv


_NO_GPUS = {"_ruled_out": {Lever.MORE_GPUS: "there is no budget for more GPUs"}}


def r_dnf_quant(rng, level):
    model, gpu, n, _ = _combo(rng, level, Lever.QUANTIZATION)
    p, o = lengths(rng, model, (200, 3000), (100, 1500))
    return dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, concurrency=round_count(rng.uniform(4, 64)),
                objective="cost")


def r_dnf_more(rng, level):
    """Already 4-bit and still too big, or 8-bit and judged on TTFT (4-bit weights compute at
    BF16, so only more GPUs make prefill fast and the model fit)."""
    kinds = ["more-gpus-int4"] + (["more-gpus-fp8"] if "ttft" in level.objectives else [])
    kind = pick(rng, kinds)
    model, gpu, n, kv = _combo(rng, level, kind)
    weights = kind.rsplit("-", 1)[1]
    p, o = lengths(rng, model, (200, 4000), (100, 1500))
    objective = "ttft" if weights == Precision.FP8 else _objective(rng, level)
    return dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, concurrency=round_count(rng.uniform(4, 64)),
                weights=weights, kv=kv, objective=objective)


def r_dnf_paged(rng, level):
    """Contiguous regions sized for the longest answer: not even one fits, though paged blocks
    would hold many of the average length."""
    model, gpu, n, kv = _combo(rng, level, Lever.PAGED_KV)
    weights = "int4"
    tokens = usable(model, gpu, n, weights) / stored_per_token(model, kv, n)  # cache tokens that fit
    seq = tokens / rng.uniform(6, 16)          # paged: six to sixteen sequences fit
    reserve = tokens * rng.uniform(1.2, 1.8)   # contiguous: not even one
    if reserve > model.context:
        raise Skip
    prompt = rounded(seq * rng.uniform(0.1, 0.3))
    output = rounded(2 * (seq - prompt))
    max_output = rounded(reserve - prompt)
    if prompt < 16 or output < 16 or prompt + output > model.context or max_output <= output:
        raise Skip
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=prompt, output=output, max_output=max_output,
                  weights=weights, kv=kv, allocator="contiguous", spec_alpha=0.3, objective="cost", **_NO_GPUS)
    paged = held(fields, allocator="paged")
    return dict(fields, concurrency=round_count(paged * rng.uniform(1.3, 2.5)))


def r_kv_paged(rng, level):
    """Contiguous regions sized for the longest answer cap the batch; the weights are already
    4-bit and the KV cache 8-bit, and there is no budget for more GPUs."""
    room = 0.1 if level.verdict_margin < 1.2 else 0.25  # easy levels want the fit rule far from its edge
    model, gpu, n = _base(rng, level, models=level.big_models + level.models, weights="int4", room=room)
    kv = eight_bit(gpu)
    p, o = lengths(rng, model, (50, 400), (800, 4000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights="int4", kv=kv,
                  allocator="contiguous", spec_alpha=0.3, objective="cost", **_NO_GPUS)
    paged = held(fields, allocator="paged")
    return aim(rng, fields, Verdict.KV_CAPACITY, level, 1, 0.9 * paged, {Verdict.KV_CAPACITY: (3, math.inf)})


_KEEP_PRECISION = {Lever.QUANTIZATION: "the weights and the cache stay at their signed-off precision"}
_NO_FOUR_BIT = {Lever.QUANTIZATION: "a 4-bit build of the weights failed its quality check"}


def _eight_bit_long_prompts(rng, level, outputs: tuple[int, int]) -> dict:
    """What the two KV-quantization recipes start from: weights already 8-bit (computed natively)
    and prompts of 2,000 to 16,000 tokens, with 4-bit weights ruled out in words: from 8-bit
    weights the quantization lever also takes the cache to 8 bits, so it would tie the KV lever
    but for prefill at BF16, a margin the realistic kernels do not keep. The fields so far."""
    weights = pick(rng, ("fp8", "int8"))
    model, gpu, n = _base(rng, level, weights=weights, room=0.5)
    if not gpu.native(weights):
        raise Skip
    p, o = lengths(rng, model, (2000, 16000), outputs)
    return dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights=weights, kv="bf16", spec_alpha=0.2,
                objective="cost", _ruled_out=dict(_NO_FOUR_BIT))


def r_kv_kvquant(rng, level):
    """Weights already 8-bit (4-bit ruled out) and the cache caps the batch: halving each cache
    entry doubles the sequences."""
    fields = _eight_bit_long_prompts(rng, level, (100, 1000))
    return aim(rng, fields, Verdict.KV_CAPACITY, level, 1, math.inf, {
        Verdict.KV_CAPACITY: (2.5, 5), Verdict.PREFILL_COMPUTE: (0, 0.6), Verdict.DECODE_KV: (1.5, math.inf)},
        cache=(2, math.inf))


def r_kv_quant(rng, level):
    model, gpu, n = _base(rng, level, room=0.3)
    p, o = lengths(rng, model, (1000, 16000), (200, 3000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, spec_alpha=pick(rng, (0.4, 0.5)), objective="cost")
    return aim(rng, fields, Verdict.KV_CAPACITY, level, 1, math.inf, {Verdict.KV_CAPACITY: (1.5, 4)},
               cache=(2, math.inf))


def r_kv_spec(rng, level):
    model, gpu, n = _base(rng, level, weights="int4", room=0.2)
    kv = eight_bit(gpu)
    p, o = lengths(rng, model, (1000, 16000), (300, 3000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights="int4", kv=kv,
                  spec_alpha=pick(rng, (0.75, 0.8, 0.85)), objective=_objective(rng, level, ("cost", "tpot")))
    return aim(rng, fields, Verdict.KV_CAPACITY, level, 1, math.inf, {Verdict.KV_CAPACITY: (1.5, 4)}, cache=(2, 64))


def r_kv_route(rng, level):
    model, gpu, n = _base(rng, level, models=level.big_models, weights="int4")
    kv = eight_bit(gpu)
    p, o = lengths(rng, model, (2000, 16000), (200, 2000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights="int4", kv=kv, objective="cost",
                  spec_alpha=0.3, **_route(rng, model, p + o))
    return aim(rng, fields, Verdict.KV_CAPACITY, level, 1, math.inf, {Verdict.KV_CAPACITY: (1.5, 3)},
               cache=(2, math.inf))


def r_prefill_prefix(rng, level):
    model, gpu, n = _base(rng, level)
    p, o = lengths(rng, model, (2000, 12000), (20, 200))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, shared_prefix=rounded(p * rng.uniform(0.8, 0.95)),
                  objective=_objective(rng, level, ("cost", "ttft")))
    return aim(rng, fields, Verdict.PREFILL_COMPUTE, level, 1, math.inf, {Verdict.KV_CAPACITY: (0.2, 0.7)},
               cache=(4, math.inf))


def r_prefill_chunked(rng, level):
    """Long prompts among live streams, judged on the worst pause: chunking the prefill cuts the
    stall by the number of chunks, far more than any lever that only speeds prefill up."""
    model, gpu, n = _base(rng, level)
    p, o = lengths(rng, model, (6000, 16000), (30, 300))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, objective="stall", spec_alpha=0.3)
    return aim(rng, fields, Verdict.PREFILL_COMPUTE, level, 1, math.inf, {Verdict.KV_CAPACITY: (0.2, 0.7)},
               cache=(4, math.inf))


def r_prefillw_quant(rng, level):
    """A lone short prompt judged on its first token: too little arithmetic to keep the chip
    busy, so the wait is one read of the weights, and 8-bit weights halve it. More GPUs would
    halve it too, so the scenario rules them out. The prompt is drawn below 0.6 of the ridge
    (the tokens one weight read can feed), where the engine finds prefill waiting on weights."""
    model, gpu, n = _base(rng, level, models=level.big_models + level.models)
    if model.experts:
        raise Skip
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=16, output=spread(rng, 100, 800), concurrency=1,
                  objective="ttft", _ruled_out={Lever.MORE_GPUS: "the node has no free slots for more GPUs"})
    ridge = analyze(deployment(fields)).ridge
    return aim(rng, fields, Verdict.PREFILL_WEIGHTS, level, 16, max(17.0, 0.6 * ridge), field="prompt")


def r_prefill_route(rng, level):
    model, gpu, n = _base(rng, level, models=level.big_models, weights="fp8")
    if not gpu.native("fp8"):
        raise Skip
    p, o = lengths(rng, model, (2000, 12000), (20, 300))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights="fp8", kv="fp8", spec_alpha=0.3,
                  objective="cost", **_route(rng, model, p + o))
    return aim(rng, fields, Verdict.PREFILL_COMPUTE, level, 1, math.inf, {Verdict.KV_CAPACITY: (0.2, 0.7)},
               cache=(4, math.inf))


def r_compute_route(rng, level):
    model, gpu, n = _base(rng, level, models=level.big_models, weights="fp8", room=0.4)
    if not gpu.native("fp8"):
        raise Skip
    p, o = lengths(rng, model, (30, 150), (300, 800))
    # Shares whose gain stays inside 2-4x: a smaller pool's cost differs most between fidelities,
    # and the band must hold at each.
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights="fp8", kv="fp8", spec_alpha=0.3,
                  objective="cost", **_route(rng, model, p + o, (0.6, 0.65, 0.7)))
    return aim(rng, fields, Verdict.DECODE_COMPUTE, level, 64, 20000, {
        Verdict.KV_CAPACITY: (0, 0.5), Verdict.DECODE_COMPUTE: (1.35, 3.0), Verdict.PREFILL_COMPUTE: (0, 0.8)})


def r_kvread_kvquant(rng, level):
    """Weights already 8-bit (4-bit ruled out) and long contexts: the cache read dominates."""
    fields = _eight_bit_long_prompts(rng, level, (200, 1500))
    return aim(rng, fields, Verdict.DECODE_KV, level, 2, 512, {
        Verdict.KV_CAPACITY: (0, 0.75), Verdict.DECODE_KV: (2.5, 50), Verdict.PREFILL_COMPUTE: (0, 0.6),
        Verdict.DECODE_COMPUTE: (0, 0.8)})


def r_kvread_quant(rng, level):
    """Long contexts in BF16, the cache read a little larger than the weight read: 8-bit weights
    and cache halve both. (Speculation on a KV-bound step is left out of the targets: the
    measured kernels time a verification pass as k+1 decode positions each reading the cache.)"""
    model, gpu, n = _base(rng, level, room=0.4)
    if not gpu.native(eight_bit(gpu)):
        raise Skip
    p, o = lengths(rng, model, (1000, 8000), (300, 2000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, spec_alpha=0.3, objective="cost")
    return aim(rng, fields, Verdict.DECODE_KV, level, 2, 256, {
        Verdict.KV_CAPACITY: (0, 0.7), Verdict.DECODE_KV: (1.35, 1.8), Verdict.PREFILL_COMPUTE: (0, 0.6),
        Verdict.DECODE_COMPUTE: (0, 0.4)})


def r_weights_batching(rng, level):
    """One request at a time: each weight read serves a single sequence."""
    model, gpu, n = _base(rng, level)
    p, o = lengths(rng, model, (100, 2000), (100, 1000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, scheduler="none", objective="cost")
    return aim(rng, fields, Verdict.DECODE_WEIGHTS, level, 8, 128, cache=(8, math.inf))


def r_weights_spec(rng, level):
    weights = pick(rng, ("bf16", "fp8", "int4"))
    model, gpu, n = _base(rng, level, weights=weights)
    kv = "bf16" if weights == Precision.BF16 else eight_bit(gpu)
    p, o = lengths(rng, model, (100, 2000), (200, 2000))
    return dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights=weights, kv=kv,
                concurrency=pick(rng, (1, 1, 2, 4)), spec_alpha=pick(rng, (0.8, 0.85, 0.9)),
                objective=_objective(rng, level, ("cost", "tpot")))


def r_weights_prefix(rng, level):
    """A long shared prefix in front of answers long enough that decode, waiting on the weights,
    still takes most of the time: caching the prefix cuts the prefill share, judged on cost."""
    model, gpu, n = _base(rng, level)
    p, o = lengths(rng, model, (1500, 8000), (300, 1500))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, shared_prefix=rounded(p * rng.uniform(0.85, 0.97)),
                  spec_alpha=0.3, objective="cost", _ruled_out=dict(_KEEP_PRECISION))
    return aim(rng, fields, Verdict.DECODE_WEIGHTS, level, 1, 32, {
        Verdict.KV_CAPACITY: (0, 0.6), Verdict.PREFILL_COMPUTE: (0.5, 0.8), Verdict.DECODE_KV: (0, 0.6),
        Verdict.DECODE_COMPUTE: (0, 0.5)})


def r_weights_route(rng, level):
    """Routing pays when both pools still batch well: plenty of short requests. Weights in a
    precision the chip computes natively, so the step stays a weight read at every fidelity."""
    weights = _native_eight_or_bf16(rng, level)
    model, gpu, n = _base(rng, level, models=level.big_models, weights=weights, room=0.4)
    if weights != Precision.BF16 and not gpu.native(weights):
        raise Skip
    kv = "bf16" if weights == Precision.BF16 else weights
    p, o = lengths(rng, model, (50, 400), (300, 1000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights=weights, kv=kv, spec_alpha=0.3,
                  objective="cost", **_route(rng, model, p + o, (0.8, 0.9)))
    return aim(rng, fields, Verdict.DECODE_WEIGHTS, level, 32, 4000, {
        Verdict.KV_CAPACITY: (0, 0.6), Verdict.DECODE_KV: (0, 0.7), Verdict.PREFILL_COMPUTE: (0, 0.8),
        Verdict.DECODE_COMPUTE: (0, 0.5)})


def r_weights_more(rng, level):
    """Twice the GPUs gains less than 2x once they outnumber the KV heads: the cache is copied."""
    cat = builtin_catalog()
    model = cat.model(pick(rng, [m for m in level.models if cat.model(m).kv_heads <= 8 or cat.model(m).is_mla]))
    gpu = cat.gpu(pick(rng, level.gpus))
    weights = _native_eight_or_bf16(rng, level)
    if weights != Precision.BF16 and not gpu.native(weights):
        raise Skip
    n = fit_gpus(rng, model, gpu, weights, level, 0.3)
    if n is None:
        raise Skip
    limit = tp_limit(level, gpu)
    while not model.is_mla and 2 * n <= model.kv_heads and 4 * n <= limit:
        n *= 2
    if 2 * n > limit or (not model.is_mla and 2 * n <= model.kv_heads):
        raise Skip
    kv = "bf16" if weights == Precision.BF16 else weights
    p, o = lengths(rng, model, (500, 8000), (300, 2000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights=weights, kv=kv, spec_alpha=0.3,
                  objective="tpot", _ruled_out=dict(_KEEP_PRECISION))
    return aim(rng, fields, Verdict.DECODE_WEIGHTS, level, 1, 256, {
        Verdict.DECODE_KV: (0.3, 0.75), Verdict.PREFILL_COMPUTE: (0, 0.8), Verdict.DECODE_COMPUTE: (0, 0.4)})


def _native_eight_or_bf16(rng, level) -> str:
    """BF16 or an 8-bit format (the chip must compute it natively: the caller checks): 4-bit
    weights compute at BF16 below its peak, which tips a busy step towards compute-bound at
    the realistic fidelity while the floor still calls it a weight read."""
    return pick(rng, ("bf16", "fp8", "int8"))


def _route(rng, model, length: int, fractions=(0.6, 0.7, 0.8, 0.9)) -> dict:
    cat = builtin_catalog()
    small = [m for m in SMALL_MODELS if cat.model(m).context >= length and m != model.id]
    if not small:
        raise Skip
    return dict(route_model=cat.model(pick(rng, small)), route_fraction=pick(rng, fractions))


RECIPES = {
    (Verdict.DOES_NOT_FIT, Lever.QUANTIZATION): r_dnf_quant,
    (Verdict.DOES_NOT_FIT, Lever.MORE_GPUS): r_dnf_more,
    (Verdict.DOES_NOT_FIT, Lever.PAGED_KV): r_dnf_paged,
    (Verdict.KV_CAPACITY, Lever.PAGED_KV): r_kv_paged,
    (Verdict.KV_CAPACITY, Lever.KV_QUANTIZATION): r_kv_kvquant,
    (Verdict.KV_CAPACITY, Lever.QUANTIZATION): r_kv_quant,
    (Verdict.KV_CAPACITY, Lever.SPECULATIVE_DECODING): r_kv_spec,
    (Verdict.KV_CAPACITY, Lever.ROUTING): r_kv_route,
    (Verdict.PREFILL_COMPUTE, Lever.PREFIX_CACHING): r_prefill_prefix,
    (Verdict.PREFILL_COMPUTE, Lever.ROUTING): r_prefill_route,
    (Verdict.PREFILL_COMPUTE, Lever.CHUNKED_PREFILL): r_prefill_chunked,
    (Verdict.PREFILL_WEIGHTS, Lever.QUANTIZATION): r_prefillw_quant,
    (Verdict.DECODE_COMPUTE, Lever.ROUTING): r_compute_route,
    (Verdict.DECODE_KV, Lever.KV_QUANTIZATION): r_kvread_kvquant,
    (Verdict.DECODE_KV, Lever.QUANTIZATION): r_kvread_quant,
    (Verdict.DECODE_WEIGHTS, Lever.BATCHING): r_weights_batching,
    (Verdict.DECODE_WEIGHTS, Lever.SPECULATIVE_DECODING): r_weights_spec,
    (Verdict.DECODE_WEIGHTS, Lever.PREFIX_CACHING): r_weights_prefix,
    (Verdict.DECODE_WEIGHTS, Lever.ROUTING): r_weights_route,
    (Verdict.DECODE_WEIGHTS, Lever.MORE_GPUS): r_weights_more,
}


def r_any(rng, level):
    """The fallback: anything at this level, lightly steered so that most draws fit."""
    cat = builtin_catalog()
    weights = pick(rng, ("bf16", "bf16", "fp8", "int4")) if level.max_gpus > 8 else "bf16"
    model, gpu, n = _base(rng, level, weights=weights, room=0.1)
    kv = "bf16" if weights == Precision.BF16 or rng.random() < 0.5 else eight_bit(gpu)
    p, o = lengths(rng, model, (50, 16000), (20, 4000))
    fields = dict(model=model, gpu=gpu, gpus=n, prompt=p, output=o, weights=weights, kv=kv,
                  concurrency=spread(rng, 1, 1024),
                  scheduler=pick(rng, ("continuous", "continuous", "continuous", "static", "none")),
                  allocator=pick(rng, ("paged", "paged", "contiguous")), objective=pick(rng, level.objectives),
                  spec_alpha=pick(rng, (0.5, 0.6, 0.7, 0.8)))
    if rng.random() < 0.3:
        fields["shared_prefix"] = rounded(p * rng.uniform(0.5, 0.95))
    if level is LEVELS[4] or level is LEVELS[5]:
        if rng.random() < 0.3:
            fields.update(_route(rng, cat.model(model.id), p + o))
    return fields


