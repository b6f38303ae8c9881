"""A puzzle as JSON (the scriptable face) and as plain text lines (the command line's card).

The JSON keys are a contract other tools read: `id`, `module`, `title`, `difficulty`, `scenario`,
`deployment` (plain inputs, the same names `ridge solve` takes), `objective`, `levers` (offered),
`reasons` and `reason_texts`, `ask`, `hints`; with the key, also `answer`.
"""
from __future__ import annotations

import math
import textwrap

from engine.analysis import VERDICTS
from engine.levers import GAIN_BANDS, gain_band

from puzzles import fmt
from puzzles.keys import Key
from puzzles.puzzle import ESTIMATE_UNITS, MODULE_TITLES, OBJECTIVE_TEXT, Puzzle
from puzzles.reasons import REASONS


def _clean(x):
    if isinstance(x, float):
        if not math.isfinite(x):
            return None
        if x.is_integer() and abs(x) < 2**53:
            return int(x)
    return x


def answer_json(puzzle: Puzzle, key: Key) -> dict:
    return {
        "bottleneck": key.bottleneck, "best_lever": key.best_lever, "gain_band": key.gain_band,
        "reason": key.reason, "reason_text": REASONS[key.reason], "gain": _clean(key.gain),
        "deciding": key.deciding,
        "levers": [{"name": lv.name, "gain": _clean(lv.gain), "band": gain_band(lv.gain), "note": lv.note}
                   for lv in key.levers],
        "estimates": {name: _clean(value) for name, value in key.estimates.items() if value is not None},
        "derivation": list(key.derivation),
    }


def puzzle_json(puzzle: Puzzle, key: Key | None = None) -> dict:
    out = {
        "id": puzzle.id, "module": puzzle.module, "title": puzzle.title, "difficulty": puzzle.difficulty,
        "scenario": puzzle.scenario, "deployment": {k: _clean(v) for k, v in puzzle.deployment_dict().items()},
        "objective": puzzle.objective, "levers": list(puzzle.levers), "reasons": list(puzzle.reasons),
        "reason_texts": {r: REASONS[r] for r in puzzle.reasons},
        "ask": {"bottleneck": list(VERDICTS), "lever": list(puzzle.levers), "gain_band": list(GAIN_BANDS),
                "reason": list(puzzle.reasons), "estimates": list(puzzle.estimates)},
        "hints": list(puzzle.hints),
    }
    if key is not None:
        out["answer"] = answer_json(puzzle, key)
    return out


def deployment_lines(puzzle: Puzzle) -> list[str]:
    d = puzzle.deployment
    many = f"{d.gpus} x " if d.gpus > 1 else "1 x "
    lines = [f"Model        {d.model.name} ({d.model.id})",
             f"Hardware     {many}{d.gpu.name} ({d.gpu.id}), {d.gpu.memory_gib:g} GiB and "
             f"{d.gpu.bandwidth_tbps:g} TB/s each",
             f"Traffic      prompts {fmt.num(d.prompt)} tokens, answers {fmt.num(d.output)} tokens, "
             f"{fmt.num(d.concurrency)} sequences wanted in flight",
             f"Precision    weights {d.weights}, KV cache {d.kv}"]
    serving = {"none": "one request at a time", "static": "static batches run to completion",
               "continuous": "continuous batching"}[d.scheduler]
    alloc = "paged KV blocks" if d.allocator == "paged" else "contiguous KV regions per request"
    if d.allocator == "contiguous":
        alloc += f" (each reserves {fmt.num(d.reserve_length)} tokens)"
    lines.append(f"Serving      {serving}; {alloc}")
    extras = []
    if d.shared_prefix:
        extras.append(f"{fmt.num(d.shared_prefix)}-token shared prefix ({'cached' if d.prefix_caching else 'not cached'})")
    if d.spec_k:
        extras.append(f"speculating k={d.spec_k}")
    extras.append(f"draft acceptance {d.spec_alpha:g} if speculating")
    if d.route_model is not None:
        extras.append(f"{fmt.pct(d.route_fraction)} of requests could go to {d.route_model.id}")
    if d.chunked_prefill:
        extras.append(f"chunked prefill ({d.chunk_tokens} tokens)")
    if d.reserve_gib_per_gpu != 0.1 * d.gpu.memory_gib or d.mfu != 1.0 or d.price != 3.0:
        extras.append(f"reserve {d.reserve_gib_per_gpu:g} GiB/GPU, MFU {d.mfu:g}, ${d.price:g}/GPU-hour")
    lines.append("Also         " + "; ".join(extras))
    return lines


def card_lines(puzzle: Puzzle, hints: int = 0, width: int = 96) -> list[str]:
    module = MODULE_TITLES.get(puzzle.module, "generated")
    lines = [f"{puzzle.id} | {module} | difficulty {puzzle.difficulty}", puzzle.title, ""]
    lines += textwrap.wrap(puzzle.scenario, width) + [""]
    lines += deployment_lines(puzzle)
    lines.append(f"Objective    lower the {OBJECTIVE_TEXT[puzzle.objective]}")
    lines += ["", "Commit to:",
              f"  bottleneck   {' | '.join(VERDICTS)}",
              f"  best lever   {' | '.join(puzzle.levers)}",
              f"  gain band    {' | '.join(GAIN_BANDS)}",
              "  reason"]
    lines += [f"    {r:<18} {REASONS[r]}" for r in puzzle.reasons]
    if puzzle.estimates:
        lines.append("  estimates    " + ", ".join(f"{e} ({ESTIMATE_UNITS[e]})" for e in puzzle.estimates)
                     + "; right within a factor of 1.5")
    lines.append("  certainty    low | medium | high")
    shown = max(0, min(hints, len(puzzle.hints)))
    for i in range(shown):
        lines.append(f"Hint {i + 1}       {puzzle.hints[i]}")
    if shown < len(puzzle.hints):
        lines.append(f"Hints        {len(puzzle.hints) - shown} more available (each costs points)")
    return lines
