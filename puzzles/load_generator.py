"""Generated load puzzles: recipes for the two load chapters, drawn from a seed.

Ids are `gen-tails-s{seed}-{index:04d}` ("Load and tails") and `gen-split-s{seed}-{index:04d}`
("Splitting the work"); the same id gives the same puzzle on every machine (a string-seeded
`random.Random`, no measured kernels). Each recipe sets up one regime of its chapter, scaled to
the drawn deployment's own steady-state capacity (`engine.load.run.saturation_qps`), so the
lesson holds whatever model and accelerator are drawn: traffic past the knee, a load three times
capacity with a queue cap to shed it, a long shared prompt at night, a low cap on running
sequences, bursts at a third of capacity; prompts that freeze short answers, a budget too tight,
a split over a slow link, a small fleet where splitting loses, a shared manual under load.

A draw is kept only when its key is clear at the floor and the realistic fidelity alike (the
load check's margins, no true distractor, no unoffered lever within 2% of the best) and holds at
`SEEDS` further arrival seeds (`puzzles.load_check.seed_agreement`); otherwise the recipe draws
again. Its reasons are the key's and false distractors (`puzzles.reasons.candidate_reasons`).
"""
from __future__ import annotations

import random
import re
from dataclasses import replace

from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.errors import RidgeError
from engine.ids import Lever
from engine.load.spec import LoadSpec

from puzzles.puzzle import Puzzle

CHAPTERS = {"tails": "load-and-tails", "split": "splitting-the-work"}
ID_RE = re.compile(r"^gen-(tails|split)-s(\d{1,18})-(\d{4,9})$")
TRIES = 8
SEEDS = 3
SMALL = ("llama-3.1-8b", "llama-3-8b", "qwen2.5-7b", "mistral-7b")
GPUS = ("h100-sxm", "h200", "a100-80gb")
_BF16 = "the weights must stay BF16 (their accuracy review covers nothing else)"


def puzzle_id(chapter: str, seed: int, index: int) -> str:
    return f"gen-{chapter}-s{seed}-{index:04d}"


def is_load_id(text: str) -> bool:
    return bool(ID_RE.match(text))


def _capacity(dep, spec: LoadSpec) -> float:
    from engine.load.run import saturation_qps

    return saturation_qps(dep, spec)


def _dep(model: str, gpu: str, gpus: int = 1, **values):
    return build_deployment(builtin_catalog(), model, gpu, gpus=gpus, **values)


# --- recipes: (rng) -> (deployment, spec, objective, levers, ruled_out, words) ------------------------

def t_knee(rng):
    dep = _dep(rng.choice(SMALL), rng.choice(GPUS), prompt=rng.choice((512, 1024, 2048)), output=rng.choice((128, 256)))
    cap = _capacity(dep, LoadSpec(qps=1.0))
    qps = round(cap * rng.uniform(1.1, 1.3), 1)
    return (dep, LoadSpec(qps=qps, requests=600), "p99-ttft",
            (Lever.CHUNKED_PREFILL, Lever.MORE_GPUS, Lever.KV_QUANTIZATION, Lever.ADMISSION_CONTROL), {Lever.QUANTIZATION: _BF16},
            f"Traffic has grown to {qps:g} requests a second and the slowest first tokens now take seconds.")


def t_shed(rng):
    dep = _dep(rng.choice(SMALL), rng.choice(GPUS), prompt=1024, output=rng.choice((128, 256)))
    cap = _capacity(dep, LoadSpec(qps=1.0))
    qps = round(cap * rng.uniform(3.0, 4.0))
    return (dep, LoadSpec(qps=float(qps), requests=800, slo_ttft=1.0, slo_tpot=0.1, lever_queue_cap=16), "goodput",
            (Lever.BATCHING, Lever.CHUNKED_PREFILL, Lever.MORE_GPUS, Lever.ADMISSION_CONTROL),
            {Lever.QUANTIZATION: _BF16},
            f"A public endpoint receives {qps} requests a second, several times what it can finish; only answers "
            "within a second to the first token and 0.1 s per token count. A queue cap would turn away arrivals "
            "that find 16 already waiting.")


def t_prefix(rng):
    prompt = rng.choice((8192, 12288, 16384))
    shared = int(prompt * rng.choice((0.75, 0.8, 0.85))) // 256 * 256
    dep = _dep("llama-3.1-70b", "h100-sxm", gpus=4, prompt=prompt, output=256, shared_prefix=shared)
    return (dep, LoadSpec(qps=0.02, requests=150), "p99-ttft",
            (Lever.PREFIX_CACHING, Lever.KV_QUANTIZATION, Lever.CHUNKED_PREFILL, Lever.ADMISSION_CONTROL), {},
            f"Every request starts with the same {shared:,}-token instructions; at night one arrives every fifty "
            "seconds and the first token still takes most of a second.")


def t_cap(rng):
    dep = _dep(rng.choice(SMALL), rng.choice(GPUS), prompt=1024, output=256)
    cap = _capacity(dep, LoadSpec(qps=1.0))
    running = rng.choice((16, 24, 32))
    qps = round(cap * rng.uniform(0.55, 0.7), 1)
    return (dep, LoadSpec(qps=qps, requests=600, max_running=running), "p99-ttft",
            (Lever.BATCHING, Lever.CHUNKED_PREFILL, Lever.KV_QUANTIZATION, Lever.ADMISSION_CONTROL),
            {Lever.QUANTIZATION: _BF16, Lever.MORE_GPUS: "there is exactly one GPU"},
            f"The server was set up to run at most {running} sequences at once; {qps:g} requests a second now arrive "
            "and the KV cache sits mostly empty.")


def t_bursts(rng):
    dep = _dep(rng.choice(SMALL), rng.choice(GPUS), prompt=4096, output=256)
    cap = _capacity(dep, LoadSpec(qps=1.0))
    qps = round(cap * rng.uniform(0.3, 0.35), 1)
    return (dep, LoadSpec(qps=qps, requests=800, arrival="bursty"), "p99-ttft",
            (Lever.CHUNKED_PREFILL, Lever.MORE_GPUS, Lever.KV_QUANTIZATION, Lever.ADMISSION_CONTROL), {Lever.QUANTIZATION: _BF16},
            f"About {qps:g} requests a second on average, a third of capacity, but they come in bunches.")


def s_stall(rng):
    dep = _dep(rng.choice(("llama-3.1-8b", "qwen2.5-7b")), "h100-sxm", prompt=16384, output=64)
    cap = _capacity(dep, LoadSpec(qps=1.0))
    qps = round(cap * rng.uniform(0.25, 0.3), 2)
    return (dep, LoadSpec(qps=qps, requests=600, lever_chunk_tokens=512), "p99-tpot",
            (Lever.CHUNKED_PREFILL, Lever.KV_QUANTIZATION, Lever.ADMISSION_CONTROL, Lever.PREFIX_CACHING),
            {Lever.QUANTIZATION: _BF16, Lever.MORE_GPUS: "there is one GPU for this tool"},
            f"{qps:g} long documents a second, each with a short answer; prompts are prefilled whole, and streams stop "
            "whenever another document arrives. Prefill could run in 512-token pieces.")


def s_tight(rng):
    dep = _dep(rng.choice(("llama-3.1-8b", "qwen2.5-7b")), "h100-sxm", prompt=8192, output=256)
    cap = _capacity(dep, LoadSpec(qps=1.0))
    qps = round(cap * rng.uniform(0.28, 0.34), 2)
    return (dep, LoadSpec(qps=qps, requests=600, chunk_tokens=256, lever_chunk_tokens=4096), "p99-ttft",
            (Lever.BATCHING, Lever.CHUNKED_PREFILL, Lever.KV_QUANTIZATION, Lever.ADMISSION_CONTROL),
            {Lever.QUANTIZATION: _BF16, Lever.MORE_GPUS: "there is one GPU for this tool"},
            f"Prefill is chunked at 256 tokens per step to keep streams smooth; {qps:g} requests a second arrive and "
            "first tokens take seconds. The budget could be 4,096 tokens per step instead.")


def s_link(rng):
    model = rng.choice(("llama-2-7b", "llama-2-13b"))
    dep = _dep(model, "h100-sxm", prompt=rng.choice((2048, 3072)), output=256)
    return (dep, LoadSpec(qps=0.5, requests=400, disaggregate=(1, 1), link="ethernet-100g"), "p99-ttft",
            (Lever.BATCHING, Lever.KV_QUANTIZATION, Lever.CHUNKED_PREFILL, Lever.ADMISSION_CONTROL),
            {Lever.MORE_GPUS: "the racks have no room for more GPUs", Lever.QUANTIZATION: _BF16},
            "One prefill GPU and one decode GPU sit in different racks, joined by 100 Gb/s Ethernet.")


def s_small(rng):
    dep = _dep(rng.choice(SMALL), "h100-sxm", prompt=256, output=512)
    cap = _capacity(dep, LoadSpec(qps=1.0, replicas=2))
    qps = round(cap * rng.uniform(0.2, 0.3))
    return (dep, LoadSpec(qps=float(qps), requests=800, replicas=2, link="nvlink"), "p99-tpot",
            (Lever.QUANTIZATION, Lever.CHUNKED_PREFILL, Lever.DISAGGREGATION, Lever.ADMISSION_CONTROL),
            {Lever.MORE_GPUS: "the budget is these two GPUs"},
            f"Two replicas serve {qps} short chats a second; someone proposes one GPU for prefill and one for decode.")


def s_manual(rng):
    prompt = 8192
    dep = _dep("llama-3.1-8b", "h100-sxm", prompt=prompt, output=256, shared_prefix=rng.choice((5120, 6144)))
    cap = _capacity(dep, LoadSpec(qps=1.0))
    qps = round(cap * rng.uniform(1.0, 1.2), 1)
    return (dep, LoadSpec(qps=qps, requests=600), "p99-ttft",
            (Lever.PREFIX_CACHING, Lever.CHUNKED_PREFILL, Lever.KV_QUANTIZATION, Lever.ADMISSION_CONTROL),
            {Lever.QUANTIZATION: _BF16, Lever.MORE_GPUS: "there is one GPU for this bot"},
            f"Every prompt starts with the same {dep.shared_prefix:,} tokens of manual; {qps:g} requests a second arrive.")


RECIPES = {"tails": (t_knee, t_shed, t_prefix, t_cap, t_bursts),
           "split": (s_stall, s_tight, s_link, s_small, s_manual)}


def _clear(puzzle, key) -> bool:
    from puzzles.load_check import load_problems

    return not [p for p in load_problems(puzzle, key, seeds=1, measured=False) if p[0] != "reasons"]


def make(chapter: str, seed: int, index: int):
    """The generated load puzzle at (chapter, seed, index), with its key."""
    from puzzles.generator import Generated
    from puzzles.load_check import seed_agreement
    from puzzles.load_keys import compute_load_key
    from puzzles.reasons import candidate_reasons

    if chapter not in RECIPES:
        raise RidgeError(f"chapter must be one of {', '.join(RECIPES)}, got {chapter!r}")
    pid = puzzle_id(chapter, seed, index)
    rng = random.Random(pid)
    recipes = RECIPES[chapter]
    for draw in range(1, TRIES + 1):
        recipe = recipes[(index + seed + draw - 1) % len(recipes)]
        dep, spec, objective, levers, ruled_out, words = recipe(rng)
        spec = spec.with_(seed=rng.randrange(1000))
        puzzle = Puzzle(id=pid, module=CHAPTERS[chapter], title=f"{dep.model.name} under load", difficulty=3,
                        scenario=f"{dep.model.name} runs on {dep.gpus} x {dep.gpu.name}. {words}", objective=objective,
                        deployment=dep.with_(objective="cost"), levers=levers, estimates=(), reasons=(),
                        hints=("Which part of the slowest requests' time is largest?",
                               "Compare the arrival rate with what the fleet can finish."),
                        source="generator", ruled_out=dict(ruled_out), load=spec)
        key = compute_load_key(puzzle)
        if not _clear(puzzle, key):
            continue
        if any(seed_agreement(puzzle, key, fidelity, seeds=SEEDS)[0] < SEEDS for fidelity in ("floor", "realistic")):
            continue
        reasons = candidate_reasons(key.reason, key.solution, pick=lambda pool: pool[rng.randrange(len(pool))],
                                    also=(key.realistic,) if key.realistic is not None else ())

        puzzle = replace(puzzle, reasons=reasons)
        return Generated(puzzle, key, (key.bottleneck, key.best_lever), draw)
    raise RidgeError(f"could not draw a clear load puzzle for {pid}")


def from_id(text: str):
    match = ID_RE.match(text)
    if not match:
        raise RidgeError(f"'{text}' is not a generated load puzzle id (e.g. gen-tails-s7-0001)")
    return make(match.group(1), int(match.group(2)), int(match.group(3)))


def generate(chapter: str, seed: int, count: int, start: int = 0) -> list:
    return [make(chapter, seed, i) for i in range(start, start + count)]
