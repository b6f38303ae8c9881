"""The serving simulator's inputs: each field the player types into (its label, kind, unit and
help), the defaults, and how raw text becomes a typed value. A bad value is one RidgeError naming
its field, so the screen can put the message beside it and keep showing the last good result."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from engine.bounds import ascii_number, shown
from engine.deployment import ALLOCATORS, OBJECTIVES, PRECISIONS, SCHEDULERS
from engine.errors import RidgeError

DEFAULT_TPOT_BUDGET_MS = 50.0
# The Load tab's traffic (engine.load): a rate (None: 90% of capacity) and the two SLOs, MLPerf's
# Llama 2 70B server targets unless the player sets others.
DEFAULT_LOAD_SLO_TTFT = 2.0
DEFAULT_LOAD_SLO_TPOT_MS = 200.0
LOAD_FIELDS = {"rate": "requests per second", "ttft": "seconds", "tpot": "milliseconds"}


@dataclass(frozen=True)
class Field:
    """One input of the simulator: its id (the engine's field name where there is one), a short
    label, its kind, the unit shown beside it, and the help text F1 shows."""

    name: str
    label: str
    kind: str          # choice | int | float | bool | path
    unit: str = ""
    help: str = ""
    section: str = ""
    blank: str = ""    # what an empty entry means (shown in it); only such fields may be empty


# The engine's default reserve (engine.deployment.Deployment.reserve_gib_per_gpu): None = 10% of
# each GPU's memory. The simulator leaves the field empty for it, so changing the GPU moves it.
RESERVE_DEFAULT_TEXT = "10% of mem"

FIELDS: tuple[Field, ...] = (
    Field("model", "Model", "choice", "", "The model served, from the catalog (or one loaded from a config file).",
          "Model and hardware"),
    Field("gpu", "GPU", "choice", "", "The accelerator kind; every GPU holds a slice of the weights.",
          "Model and hardware"),
    Field("gpus", "GPUs", "int", "", "How many GPUs share the model by tensor parallelism (scaling assumed perfect).",
          "Model and hardware"),
    Field("config", "File", "path", "",
          "Optional: a Hugging Face config.json (adds that model) or a catalog .toml with [models.<id>] "
          "and [gpus.<id>] tables. Press Enter to load it.", "Model and hardware"),
    Field("prompt", "Prompt", "int", "tok", "Average prompt length in tokens.", "Traffic"),
    Field("output", "Output", "int", "tok", "Average output length in tokens.", "Traffic"),
    Field("concurrency", "In flight", "int", "seq",
          "Sequences the traffic wants in flight at once. The batch is the smaller of this and what the "
          "KV cache holds.", "Traffic"),
    Field("shared_prefix", "Prefix len", "int", "tok",
          "Prompt tokens every request shares (a system prompt). Only matters with prefix caching on.", "Traffic"),
    Field("prefix_caching", "Prefix cache", "bool", "",
          "Keep the shared prefix's KV cache once and skip prefilling it again.", "Traffic"),
    Field("weights", "Weights", "choice", "", "Precision the weights are stored in.", "Precision and memory"),
    Field("kv", "KV cache", "choice", "", "Precision the KV cache is stored in.", "Precision and memory"),
    Field("reserve_gib", "Reserve", "float", "GiB/GPU",
          "Memory each GPU holds back for activations and workspace. Leave it empty for the default, "
          "10% of each GPU's memory (8 GiB on an 80 GiB H100, 2.4 GiB on a 24 GiB L4).",
          "Precision and memory", blank=RESERVE_DEFAULT_TEXT),
    Field("mfu", "MFU", "float", "0-1",
          "Fraction of peak FLOP/s the compute terms reach (1 = the datasheet's dense peak).",
          "Precision and memory"),
    Field("scheduler", "Scheduler", "choice", "",
          "none: one request at a time; static: a batch runs until its longest member ends; "
          "continuous: a finished slot is refilled on the next step.", "Serving"),
    Field("allocator", "Allocator", "choice", "",
          "contiguous: each request reserves room for its longest possible output; paged: blocks on demand.",
          "Serving"),
    Field("spec_k", "Spec k", "int", "tok",
          "Draft tokens per verification in speculative decoding (0 turns it off).", "Speculative decoding"),
    Field("spec_alpha", "Spec α", "float", "0-1", "Chance each drafted token is accepted.", "Speculative decoding"),
    Field("spec_draft_cost", "Draft cost", "float", "×step",
          "Cost of drafting one token, as a fraction of one target decode step.", "Speculative decoding"),
    Field("price", "Price", "float", "$/GPU·h", "Rental price of one GPU for an hour.", "Money"),
    Field("objective", "Objective", "choice", "",
          "What the levers are ranked on: cost per million output tokens, TPOT or TTFT.", "Money"),
)
FIELD_BY_NAME = {f.name: f for f in FIELDS}
DEPLOYMENT_FIELDS = tuple(f.name for f in FIELDS if f.name not in ("model", "gpu", "config"))
_FIELD_WORD = re.compile(r"\b(" + "|".join(sorted((f.name for f in FIELDS), key=len, reverse=True)) + r")\b")


def player_words(message: str) -> str:
    """An engine message in the words on the simulator's screen: `gpus must be >= 1` → `GPUs must
    be >= 1` (the field names the player sees, never the engine's identifiers)."""
    return _FIELD_WORD.sub(lambda m: FIELD_BY_NAME[m.group(1)].label, message) if message else message

DEFAULT_RAW: dict[str, object] = {
    "model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "4", "config": "",
    "prompt": "1536", "output": "512", "concurrency": "400", "shared_prefix": "0", "prefix_caching": False,
    "weights": "bf16", "kv": "bf16", "reserve_gib": "", "mfu": "1",
    "scheduler": "continuous", "allocator": "paged",
    "spec_k": "0", "spec_alpha": "0.7", "spec_draft_cost": "0.05",
    "price": "3", "objective": "cost",
}

STATIC_CHOICES: dict[str, tuple[str, ...]] = {
    "weights": PRECISIONS, "kv": PRECISIONS, "scheduler": SCHEDULERS, "allocator": ALLOCATORS,
    "objective": OBJECTIVES,
}

_WHOLE = re.compile(r"[+-]?[0-9]+")


def parse_value(f: Field, raw: object):
    """The typed value of one raw input; RidgeError names the field when it is not one."""
    if f.kind == "bool":
        if not isinstance(raw, bool):
            raise RidgeError(f"{f.name} must be on or off, got {raw!r}")
        return raw
    if f.kind == "choice" or f.kind == "path":
        return raw
    text = str(raw).strip().replace(",", "").replace("_", "")
    if not text and f.blank:
        return None  # the engine's default (f.blank says which)
    if not text:
        raise RidgeError(f"{f.name} is empty: type a number")
    if f.kind == "int":
        if _WHOLE.fullmatch(text):
            if len(text) > 18:  # beyond every bound, and int() refuses 4,300 digits with ValueError
                raise RidgeError(f"{f.name} is far too large ({len(text)} digits)")
            return int(text)
        try:
            value = ascii_number(text)  # ASCII digits only: float() would also read '١٢'
        except ValueError:
            raise RidgeError(f"{f.name} must be a whole number, got {shown(repr(str(raw).strip()), 60)}") from None
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e18:
            return int(value)
        raise RidgeError(f"{f.name} must be a whole number, got {shown(repr(str(raw).strip()), 60)}")
    try:
        value = ascii_number(text)
    except ValueError:
        raise RidgeError(f"{f.name} must be a number, got {shown(repr(str(raw).strip()), 60)}") from None
    if not math.isfinite(value):
        raise RidgeError(f"{f.name} must be a finite number, got {shown(repr(str(raw).strip()), 60)}")
    return value

