"""Readable labels for the ids a player chooses from; the ids stay in the data.

Ids that arrive from newer packs or engines without a label here fall back to a tidied-up form
of the id, so the screen never shows a raw `kv-capacity` where words belong.
"""
from __future__ import annotations

from engine.ids import Certainty, GainBand, Lever, Objective, Outcome, Verdict

BOTTLENECKS: dict[str, str] = {
    Verdict.DOES_NOT_FIT: "does not fit in memory",
    Verdict.KV_CAPACITY: "KV cache caps the batch",
    Verdict.PREFILL_COMPUTE: "prefill: compute-bound",
    Verdict.PREFILL_WEIGHTS: "prefill: weight read",
    Verdict.DECODE_COMPUTE: "decode: compute-bound",
    Verdict.DECODE_KV: "decode: KV cache read",
    Verdict.DECODE_WEIGHTS: "decode: weight read",
    Verdict.QUEUEING: "queueing for a slot",
    Verdict.PREFILL_INTERFERENCE: "other prompts in the way",
    Verdict.PREEMPTION: "eviction and recompute",
    Verdict.KV_TRANSFER: "the KV cache transfer",
}

# Each lever's words: (in sentences and lists, on narrow chart bars).
LEVER_WORDS: dict[str, tuple[str, str]] = {
    Lever.BATCHING: ("continuous batching", "cont. batching"),
    Lever.PAGED_KV: ("paged KV cache", "paged KV"),
    Lever.PREFIX_CACHING: ("prefix caching", "prefix cache"),
    Lever.QUANTIZATION: ("quantize weights + KV", "quantize W+KV"),
    Lever.KV_QUANTIZATION: ("quantize the KV cache only", "quantize KV"),
    Lever.SPECULATIVE_DECODING: ("speculative decoding", "speculative"),
    Lever.CHUNKED_PREFILL: ("chunked prefill", "chunked prefill"),
    Lever.MORE_GPUS: ("twice the GPUs", "2× the GPUs"),
    Lever.ROUTING: ("route easy requests to a small model", "routing"),
    Lever.DISAGGREGATION: ("split prefill and decode pools", "P/D split"),
    Lever.ADMISSION_CONTROL: ("cap the queue and shed the rest", "queue cap"),
}
LEVERS: dict[str, str] = {k: v[0] for k, v in LEVER_WORDS.items()}
LEVERS_SHORT: dict[str, str] = {k: v[1] for k, v in LEVER_WORDS.items()}

BANDS: dict[str, str] = {
    GainBand.UNDER_1_25: "under 1.25×",
    GainBand.FROM_1_25_TO_2: "1.25× to 2×",
    GainBand.FROM_2_TO_4: "2× to 4×",
    GainBand.OVER_4: "over 4×",
}

# The bottleneck question as the form asks it, per objective (DESIGN.md, "What the bottleneck question asks").
BOTTLENECK_QUESTIONS: dict[str, str] = {
    Objective.COST: "What bounds the cost per million output tokens here?",
    Objective.TPOT: "What bounds the time per output token here?",
    Objective.TTFT: "What bounds the time to first token here?",
    Objective.STALL: "What bounds the longest pause a stream sees here?",
    Objective.P99_TTFT: "What makes up the slowest 1% of times to first token here?",
    Objective.P99_TPOT: "What makes up the slowest 1% of times per output token here?",
    Objective.GOODPUT: "What costs the most requests their SLO here?",
    Objective.GPUS_FOR_SLO: "What decides how many GPUs the SLOs need here?",
}

CERTAINTIES: dict[str, str] = {Certainty.LOW: "low", Certainty.MEDIUM: "medium", Certainty.HIGH: "high"}

OBJECTIVES: dict[str, str] = {
    Objective.COST: "lower the cost per million output tokens",
    Objective.TPOT: "lower the time per output token for one user",
    Objective.TTFT: "lower the time to first token",
    Objective.STALL: "shorten the longest pause a streaming user sees",
    Objective.P99_TTFT: "lower the 99th-percentile time to first token",
    Objective.P99_TPOT: "lower the 99th-percentile time per output token",
    Objective.GOODPUT: "serve more requests within both SLOs per GPU",
    Objective.GPUS_FOR_SLO: "meet the SLOs with fewer GPUs",
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
    "mean_in_system": "requests in the system (Little's law)",
    "utilisation": "utilisation (arrivals / capacity)",
    "saturation_qps": "capacity (requests/s)",
    "cost_per_million_input_tokens": "$ per million input tokens",
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
    "mean_in_system": "In system",
    "utilisation": "Utilisation",
    "saturation_qps": "Capacity (req/s)",
    "cost_per_million_input_tokens": "$ per M input",
}

OUTCOMES: dict[str, tuple[str, str]] = {
    # id -> (symbol, word): colour is never the only signal
    Outcome.CLEARED: ("✓", "cleared"),
    Outcome.LUCKY: ("~", "lucky"),
    Outcome.CLOSE: ("≈", "close"),
    Outcome.MISSED: ("✗", "missed"),
}


def plural(count: int, word: str) -> str:
    """"1 point", "3 points", "0 days": English for a count of a regular noun."""
    return f"{count} {word}{'' if abs(count) == 1 else 's'}"


def tidy(identifier: str) -> str:
    return identifier.replace("_", " ").replace("-", " ")


def _lookup(table: dict[str, str]):
    """A function giving an id's words from `table`, or the tidied id when it has none."""
    def word(identifier: str) -> str:
        return table.get(identifier, tidy(identifier))

    return word


bottleneck = _lookup(BOTTLENECKS)
lever = _lookup(LEVERS)
lever_short = _lookup(LEVERS_SHORT)
band = _lookup(BANDS)
estimate = _lookup(ESTIMATES)
estimate_short = _lookup(ESTIMATES_SHORT)
objective = _lookup(OBJECTIVES)


def estimate_with_unit(identifier: str) -> str:
    """An estimate's name with its unit, as a form asks for it ("weight bytes, in bytes")."""
    from puzzles.puzzle import ESTIMATE_UNITS

    unit, base = ESTIMATE_UNITS.get(identifier), estimate(identifier)
    return base if not unit or "(" in base or unit in base else f"{base}, in {unit}"


def bottleneck_question(objective: str) -> str:
    return BOTTLENECK_QUESTIONS.get(objective, "What bounds this deployment?")


def reason(identifier: str) -> str:
    from puzzles.reasons import REASONS

    return REASONS.get(identifier, tidy(identifier))


def words(kind: str, identifier: str) -> str:
    """Any id in the words the game shows, by kind (bottleneck, lever, band, reason, estimate,
    objective); the grader's feedback and the reports take this as their `words`."""
    if not identifier:
        return "(blank)"
    table = {"bottleneck": bottleneck, "lever": lever, "band": band, "reason": reason, "estimate": estimate,
             "objective": objective}.get(kind)
    return table(identifier) if table else str(identifier)


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


# --- live play: what the player page, the terminal player, the projector and the report share ---

CERTAINTY_WORDS = {Certainty.LOW: "low: a guess", Certainty.MEDIUM: "medium: fairly sure",
                   Certainty.HIGH: "high: I would bet on it"}


def card_words(card: dict) -> dict:
    """Each id the card's form offers, by kind, in the words the game shows."""
    ask = card.get("ask") or {}
    return {"bottleneck": {b: bottleneck(b) for b in ask.get("bottleneck") or ()},
            "lever": {v: lever(v) for v in ask.get("lever") or ()},
            "gain": {g: band(g) for g in ask.get("gain_band") or ()},
            "reason": {r: (card.get("reason_texts") or {}).get(r) or reason(r) for r in ask.get("reason") or ()},
            "estimate": {e: estimate_with_unit(e) for e in ask.get("estimates") or ()},
            "certainty": {str(c): w for c, w in CERTAINTY_WORDS.items()},
            "objective": objective(card.get("objective", ""))}


def verdict_line(outcome: str, points: int) -> str:
    """A player's result on one question in words and a symbol (never colour alone)."""
    from puzzles.live import LATE, NO_ANSWER

    if outcome == NO_ANSWER:
        return "· No answer locked in · 0 points"
    if outcome == LATE:
        return "⊘ LATE · 0 points: it reached the host after the close"
    return f"{outcome_symbol(outcome)} {outcome.upper()} · {points:+d} points"


def part_lines(me: dict, answer: dict) -> list[str]:
    """What decided this player's outcome and every part judged, yours beside the engine's."""
    from puzzles.grading import Part, decided_line, lines_for_parts
    from puzzles.keys import gain_words

    parts = [Part.from_json(row) for row in me.get("parts") or () if isinstance(row, dict)]
    if not parts:
        return []
    gain = gain_words(answer.get("gain"), answer.get("band_gain"))
    return [humanize(line) for line in
            [decided_line(me["outcome"], parts, words), *lines_for_parts(parts, gain, words)]]
