"""Readable labels for the ids a player chooses from; the ids stay in the data.

Ids that arrive from newer packs or engines without a label here fall back to a tidied-up form
of the id, so the screen never shows a raw `kv-capacity` where words belong.
"""
from __future__ import annotations

BOTTLENECKS: dict[str, str] = {
    "does-not-fit": "does not fit in memory",
    "kv-capacity": "KV cache caps the batch",
    "prefill-compute": "prefill: compute-bound",
    "decode-compute": "decode: compute-bound",
    "decode-kv": "decode: KV cache read",
    "decode-weights": "decode: weight read",
}

LEVERS: dict[str, str] = {
    "batching": "continuous batching",
    "paged-kv": "paged KV cache",
    "prefix-caching": "prefix caching",
    "quantization": "quantize weights + KV",
    "kv-quantization": "quantize the KV cache only",
    "speculative-decoding": "speculative decoding",
    "chunked-prefill": "chunked prefill",
    "more-gpus": "twice the GPUs",
    "routing": "route easy requests to a small model",
}

BANDS: dict[str, str] = {
    "under-1.25x": "under 1.25×",
    "1.25-2x": "1.25× to 2×",
    "2-4x": "2× to 4×",
    "over-4x": "over 4×",
}

CERTAINTIES: dict[str, str] = {"low": "low", "medium": "medium", "high": "high"}

OBJECTIVES: dict[str, str] = {
    "cost": "lower the cost per million output tokens",
    "tpot": "lower the time per output token for one user",
    "ttft": "lower the time to first token",
    "stall": "shorten the longest pause a streaming user sees",
}

ESTIMATES: dict[str, str] = {
    "intensity": "arithmetic intensity (FLOP/byte)",
    "max_concurrency": "max concurrent sequences",
    "ridge": "ridge point (FLOP/byte)",
    "batch": "batch size",
    "kv_bytes_per_token": "KV bytes per token",
    "weight_bytes": "weight bytes",
    "tpot_seconds": "time per output token (s)",
    "ttft_seconds": "time to first token (s)",
    "cost_per_million_output_tokens": "$ per million output tokens",
    "spec_expected_tokens": "tokens per verification",
    "prefill_share": "prefill share of GPU time",
    "throughput_tokens_per_s": "throughput (tokens/s)",
}

ESTIMATES_SHORT: dict[str, str] = {
    "intensity": "Intensity",
    "max_concurrency": "Max sequences",
    "ridge": "Ridge",
    "kv_bytes_per_token": "KV bytes/token",
    "weight_bytes": "Weight bytes",
    "tpot_seconds": "TPOT (s)",
    "ttft_seconds": "TTFT (s)",
    "cost_per_million_output_tokens": "$ per M tokens",
    "spec_expected_tokens": "Tokens/verify",
    "throughput_tokens_per_s": "Tokens/s",
}

OUTCOMES: dict[str, tuple[str, str]] = {
    # id -> (symbol, word): colour is never the only signal
    "cleared": ("✓", "cleared"),
    "lucky": ("~", "lucky"),
    "close": ("≈", "close"),
    "missed": ("✗", "missed"),
}


def tidy(identifier: str) -> str:
    return identifier.replace("_", " ").replace("-", " ")


def bottleneck(identifier: str) -> str:
    return BOTTLENECKS.get(identifier, tidy(identifier))


def lever(identifier: str) -> str:
    return LEVERS.get(identifier, tidy(identifier))


def band(identifier: str) -> str:
    return BANDS.get(identifier, tidy(identifier))


def estimate(identifier: str) -> str:
    return ESTIMATES.get(identifier, tidy(identifier))


def estimate_short(identifier: str) -> str:
    return ESTIMATES_SHORT.get(identifier, tidy(identifier))


def objective(identifier: str) -> str:
    return OBJECTIVES.get(identifier, tidy(identifier))


def outcome(identifier: str) -> str:
    symbol, word = OUTCOMES.get(identifier, ("?", identifier))
    return f"{symbol} {word}"


def outcome_symbol(identifier: str | None) -> str:
    if identifier is None:
        return "·"
    return OUTCOMES.get(identifier, ("?", ""))[0]


def humanize(text: str) -> str:
    """Swap the hyphenated ids of verdicts and levers in engine text for their labels; a plain
    id that opens the line (`batching: ...`) is swapped too."""
    import re

    names = {**BOTTLENECKS, **LEVERS}
    hyphenated = sorted((k for k in names if "-" in k), key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(k) for k in hyphenated) + r")(?![\w-])")

    def swap(m: re.Match) -> str:
        label = names[m.group(1)]
        after = m.string[m.end(): m.end() + 1]
        return f"‘{label}’" if after == ":" and ":" in label else label

    text = pattern.sub(swap, text)
    text = re.sub(r"\b(" + "|".join(k for k in ESTIMATES if "_" in k) + r")\b",
                  lambda m: ESTIMATES[m.group(1)].split(" (")[0], text)
    head = re.match(r"^(\s*)([a-z]+)(:)", text)
    if head and head.group(2) in names:
        text = head.group(1) + names[head.group(2)] + text[head.end(2):]
    return text
