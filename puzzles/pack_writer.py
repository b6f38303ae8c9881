"""Writing a puzzle into a player's own pack: the `[[puzzles]]` table for a deployment and its
engine key, and the pack's text with that table appended, written by `tomli-w` (never by hand), so
what is written is TOML whatever a title or scenario holds.

Only the text is made here. The caller checks it with `puzzles.check` (the code `ridge puzzles
check` runs) and writes it with `saves.atomic.write_atomic`, the one atomic write: a pack in the
player's data folder is the player's file, and every such write goes through `saves`, the room
that owns files on disk. Imports no Textual.
"""
from __future__ import annotations

import hashlib
import json
import tomllib

import tomli_w

from engine.deployment import Deployment, deployment_to_dict

CHAPTER = {
    "id": "my-puzzles",  # the player's own chapter, beside the course's (never one of its ids)
    "title": "My puzzles",
    "briefing": ("Deployments you set up in the simulator and kept. Each one asks the same three things: what\n"
                 "limits it, which lever helps most, and by roughly how much.\n"),
    "expects": "Diagnose a deployment before the engine shows its numbers.",
}
# Before the player had a chapter of their own, the simulator saved under the course's last chapter
# id with this title; such packs still load, into CHAPTER (`puzzles.bank`), their file untouched.
OLD_CHAPTER = {"id": "clearing-test", "title": "My puzzles"}
ENTRY_FIELDS = ("id", "title", "difficulty", "scenario", "objective", "reasons", "hints", "deployment", "expect")

HINTS: dict[str, tuple[str, str]] = {
    "weights-overflow": ("Add up the weight bytes and the reserve, and compare with the GPUs' memory.",
                         "Which change makes the weights smaller or the memory larger?"),
    "kv-overflow": ("How much KV cache does one average sequence hold?",
                    "Compare that with what is left once the weights and the reserve are in."),
    "kv-cap": ("Work out how many sequences the KV cache holds at this length.",
               "Compare that with how many the traffic wants in flight."),
    "prefill-flops": ("Compare one request's prefill time with the time its output takes to decode.",
                      "What would shrink the prompt work rather than the decode work?"),
    "at-ridge": ("Put the batch's arithmetic intensity next to the hardware's ridge.",
                 "Once the FLOPs bind, which lever adds no FLOPs?"),
    "kv-read": ("Compare the KV bytes a decode step reads with the weight bytes.",
                "Which change makes the bigger of the two smaller?"),
    "weight-read": ("Compare the weight bytes a decode step reads with the KV bytes.",
                    "Which change makes each weight read produce more, or cost less?"),
    "idle-flops": ("How far below the ridge does this batch sit?",
                   "What could put the idle arithmetic to work for one user?"),
    "serial-requests": ("How many tokens does one read of the weights produce here?",
                        "What lets one weight read serve many sequences?"),
    "straggler-slots": ("How long does a static batch run compared with its average member?",
                        "What would refill a finished slot straight away?"),
    "reserved-slots": ("How much cache does each request reserve compared with what it uses?",
                       "What would hand out cache only as sequences grow?"),
    "recomputed-prefix": ("How many prompt tokens are the same on every request?",
                          "What would let requests skip prefilling those tokens?"),
    "easy-traffic": ("What share of the traffic could a smaller model answer?",
                     "Compare the cost of the two models per token."),
}


def _deployment_table(dep: Deployment) -> dict:
    """The deployment's inputs that differ from the engine's defaults (model and GPU always)."""
    values = deployment_to_dict(dep)
    values.pop("objective", None)
    values.pop("fidelity", None)  # a puzzle is judged at both fidelities
    out = {"model": values.pop("model"), "gpu": values.pop("gpu")}
    for name, value in values.items():
        if name in Deployment.FIELDS and Deployment.FIELDS[name] == value and type(Deployment.FIELDS[name]) is type(value):
            continue
        out[name] = value
    return out


def puzzle_entry(dep: Deployment, key) -> dict:
    """A `[[puzzles]]` table for this deployment, in the shape the built-in packs use."""
    from puzzles.reasons import candidate_reasons

    table = _deployment_table(dep)
    digest = hashlib.sha1(json.dumps(deployment_to_dict(dep), sort_keys=True).encode()).hexdigest()[:10]
    # distractors false at every fidelity the check judges the key under, as the generator's
    reasons = list(candidate_reasons(key.reason, key.solution, also=[s for _, s in key.judged()][1:]))
    first, second = HINTS.get(key.reason, ("Find what limits a decode step here.", "Which lever acts on it?"))
    scenario = (f"{dep.model.name} served on {dep.gpus} x {dep.gpu.name}. Prompts average about "
                f"{dep.prompt:,} tokens and answers about {dep.output:,}; the traffic would keep {dep.concurrency:,} "
                f"sequences in flight. Saved from the simulator.")
    title = f"{dep.model.name} on {dep.gpus} x {dep.gpu.name}, {dep.prompt:,}+{dep.output:,} tokens, {dep.concurrency:,} in flight"
    return {
        "id": f"my-{digest}",
        "title": title,
        "difficulty": 3,
        "scenario": scenario,
        "objective": dep.objective,
        "reasons": reasons,
        "hints": [first, second],
        "deployment": table,
        "expect": {"bottleneck": key.bottleneck, "best_lever": key.best_lever, "gain_band": key.gain_band,
                   "reason": key.reason},
    }


def pack_ids(text: str) -> set[str]:
    """The puzzle ids a pack's text already holds (none when it is empty or not TOML)."""
    try:
        data = tomllib.loads(text) if text.strip() else {}
    except tomllib.TOMLDecodeError:
        return set()
    return {str(p.get("id")) for p in data.get("puzzles", []) if isinstance(p, dict)}


def pack_text(old: str, entry: dict) -> str:
    """`old` (a pack's text, or "" for a new pack with its chapter) with `entry` appended."""
    table = {name: entry[name] for name in ENTRY_FIELDS}
    if not old.strip():
        return tomli_w.dumps({"chapter": CHAPTER, "puzzles": [table]}, multiline_strings=True)
    return old.rstrip("\n") + "\n\n" + tomli_w.dumps({"puzzles": [table]}, multiline_strings=True)


def saved_by_old_simulator(chapter) -> bool:
    """Whether a pack's [chapter] is the one the simulator wrote before CHAPTER existed (its id
    borrowed from the course, its title the simulator's): its puzzles are the player's own."""
    return chapter.id == OLD_CHAPTER["id"] and chapter.title == OLD_CHAPTER["title"]
