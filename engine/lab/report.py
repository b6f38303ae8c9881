"""Plain-text views of a lab result, shared by `ridge lab run` and the Lab screen, plus the
comparison of a player's prediction with what was measured. Pure functions of the result dict."""
from __future__ import annotations

import math
from dataclasses import dataclass

from engine.errors import RidgeError

GAINS = ("continuous-batching", "paged-allocation")
GAIN_LABELS = {"continuous-batching": "continuous batching", "paged-allocation": "paged allocation"}
SERVER_LABELS = {
    "naive": "naive (static, contiguous)",
    "continuous-contiguous": "continuous, contiguous",
    "static-paged": "static, paged",
    "paged": "paged (continuous, paged)",
}
SHORT_LABELS = {"naive": "naive", "continuous-contiguous": "continuous only",
                "static-paged": "paged only", "paged": "paged+continuous"}
RATIO_TOLERANCE = 1.25  # a ratio guess counts as close within a factor of 1.25 either way
GAP_TOLERANCE_POINTS = 10.0


@dataclass(frozen=True, slots=True)
class Prediction:
    """What the player commits to before the run."""

    speedup: float  # paged+continuous tokens/s over naive
    gap_points: float  # paged utilisation minus naive, in percentage points
    most_gain_from: str  # one of GAINS

    def __post_init__(self) -> None:
        if not (math.isfinite(self.speedup) and self.speedup > 0):
            raise RidgeError(f"predicted throughput ratio must be a positive number, got {self.speedup}")
        if not (math.isfinite(self.gap_points) and -100 <= self.gap_points <= 100):
            raise RidgeError(f"predicted utilisation gap must be between -100 and 100 points, got {self.gap_points}")
        if self.most_gain_from not in GAINS:
            raise RidgeError(f"most gain must be one of {', '.join(GAINS)}, got {self.most_gain_from!r}")


def compare(prediction: Prediction, result: dict) -> list[tuple[str, str, str, str]]:
    """Rows of (what, predicted, measured, verdict); the verdict is a word, never only a colour."""
    ratio, gap, gain = result["speedup"], result["utilization_gap_points"], result["most_gain_from"]
    ratio_ok = ratio > 0 and abs(math.log(prediction.speedup / ratio)) <= math.log(RATIO_TOLERANCE)
    gap_ok = abs(prediction.gap_points - gap) <= GAP_TOLERANCE_POINTS
    return [
        ("throughput ratio", f"{prediction.speedup:.2f}×", f"{ratio:.2f}×", "close" if ratio_ok else "off"),
        ("utilisation gap", f"{prediction.gap_points:+.0f} pts", f"{gap:+.0f} pts", "close" if gap_ok else "off"),
        ("bigger change", GAIN_LABELS[prediction.most_gain_from], GAIN_LABELS[gain],
         "right" if prediction.most_gain_from == gain else "wrong"),
    ]


def decode_plot(result: dict, width: int = 32) -> list[str]:
    """Decode step time against batch as horizontal bars, with the roofline floor marked.

    '█' is time the roofline says the step must take, '▒' is time above that floor, and '┊' marks
    the floor when the bar stops short of it. A line marks where the ridge falls.
    """
    roof = result["roofline"]
    points = roof["points"]
    top = max(max(p["step_seconds"], p["roofline_seconds"]) for p in points) or 1.0
    lines = ["decode step time vs batch (ms); █ roofline floor, ▒ time above it, ┊ floor"]
    ridge_drawn = False
    for p in points:
        if not ridge_drawn and p["batch"] >= roof["ridge_batch"]:
            lines.append(f"{'':10}{'─' * 4} ridge ≈ batch {roof['ridge_batch']:.0f} {'─' * 4}")
            ridge_drawn = True
        cells_t = max(1, round(p["step_seconds"] / top * width))
        cells_f = max(1, round(p["roofline_seconds"] / top * width))
        bar = "".join("█" if i < min(cells_t, cells_f) else "▒" if i < cells_t else
                      "┊" if i == cells_f - 1 else " " for i in range(width))
        floor = _ms(p["roofline_seconds"]).strip()
        lines.append(f"batch {p['batch']:>3} {bar} {_ms(p['step_seconds'])} ms (floor {floor})")
    by_batch = {p["batch"]: p["step_seconds"] for p in points}
    if 1 in by_batch and 2 in by_batch and by_batch[2] > 1.5 * by_batch[1]:
        lines += ["batch 2 costs more than batch 1 here: BLAS serves one row with a",
                  "matrix-vector kernel and several rows with a general one, which streams",
                  "small batches more slowly."]
    return lines


def within_noise(spread) -> bool:
    """A measured ratio whose repeats span both sides of 1 is no evidence of a gain or a loss."""
    return bool(spread) and spread[0] <= 1.0 <= spread[1]


def ratio_words(ratio: float, spread) -> str:
    """A speedup as a player should read it: `1.84× (1.80-1.90× over 3 runs)`, or `0.96×, within
    noise (0.93-1.02×)` when the repeats disagree about which side of 1 it is on."""
    if not spread:
        return f"{ratio:.2f}×"
    span = f"{spread[0]:.2f}-{spread[1]:.2f}×"
    if within_noise(spread):
        return f"{ratio:.2f}×, within noise ({span})"
    return f"{ratio:.2f}× ({span})"


def _ms(seconds: float) -> str:
    """A duration in milliseconds in at most six characters, whatever the machine's speed, so a
    slow run never widens the plot: one decimal below 10 s, whole milliseconds up to 1000 s."""
    ms = seconds * 1e3
    if not math.isfinite(ms) or ms < 0:
        return "     ?"
    if ms < 9999.95:
        return f"{ms:6.1f}"
    return f"{ms:6.0f}" if ms < 999999.5 else f"{'>1e6':>6}"


def machine_lines(result: dict) -> list[str]:
    roof = result["roofline"]
    return [
        f"this CPU: {roof['bandwidth_bytes_per_s'] / 1e9:.1f} GB/s memory, "
        f"{roof['matmul_flops_per_s'] / 1e9:.0f} GFLOP/s matmul",
        f"ridge {roof['ridge_flops_per_byte']:.1f} FLOP/byte ≈ batch {roof['ridge_batch']:.0f} for float32 weights",
        f"batch-1 decode reads {roof['batch1_bytes'] / 1e6:.0f} MB at "
        f"{result['bandwidth_fraction'] * 100:.0f}% of measured bandwidth",
    ]


def server_table(result: dict, short: bool = False) -> list[tuple[str, ...]]:
    """Rows for the four servers: name, tokens/s, speedup, KV use, peak batch, then the waste split."""
    rows = []
    labels = SHORT_LABELS if short else SERVER_LABELS
    for name, s in result["servers"].items():
        share = s["pool_share"]
        rows.append((labels.get(name, name), f"{s['tokens_per_s']:.0f}", f"{s['speedup']:.2f}×",
                     f"{s['utilization'] * 100:.0f}%", str(s["peak_concurrency"]),
                     f"{share['reservation'] * 100:.0f}%", f"{share['internal_fragmentation'] * 100:.0f}%",
                     f"{share['external_fragmentation'] * 100:.0f}%"))
    return rows


SERVER_COLUMNS = ("server", "tok/s", "speedup", "KV used", "peak", "reserved", "internal", "external")
SHORT_COLUMNS = ("server", "tok/s", "×naive", "KV used", "peak", "resv", "int", "ext")


def text_report(result: dict) -> list[str]:
    """The readable form of `ridge lab run`."""
    m, w = result["model"], result["workload"]
    lines = [
        f"Ridge lab, seed {result['seed']}{' (quick)' if result['quick'] else ''}",
        f"model: {m['n_layers']} layers, width {m['d_model']}, {m['n_heads']} query / {m['n_kv_heads']} KV heads,"
        f" {m['weight_bytes'] / 1e6:.0f} MB of float32 weights",
        f"workload: {w['n_requests']} requests, prompts {w['system_prompt_len'] + w['prompt_min']}-"
        f"{w['system_prompt_len'] + w['prompt_max']} tokens ({w['system_prompt_len']} shared),",
        f"answers about {w['output_mean']:.0f} tokens (at most {w['output_max']}); "
        f"KV budget {result['kv_slots']} token slots, blocks of {result['block_size']}",
        "",
    ]
    widths = [26, 6, 8, 8, 5, 9, 9, 9]
    lines.append(" ".join(c.ljust(n) if i == 0 else c.rjust(n) for i, (c, n) in enumerate(zip(SERVER_COLUMNS, widths))))
    for row in server_table(result):
        lines.append(" ".join(c.ljust(n) if i == 0 else c.rjust(n) for i, (c, n) in enumerate(zip(row, widths))))
    lines += [
        "(reserved, internal, external: shares of the KV budget, averaged over busy steps)",
        "",
        f"same tokens from every server: {'yes' if result['identical_outputs'] else 'NO'}",
        f"paged over naive: {ratio_words(result['speedup'], result.get('speedup_spread'))} tokens/s; "
        f"KV use {result['naive_utilization'] * 100:.0f}% → {result['paged_utilization'] * 100:.0f}%",
        f"alone, continuous batching gives "
        f"{ratio_words(result['continuous_contiguous_speedup'], _spread(result, 'continuous-batching'))}",
        f"and paged allocation {ratio_words(result['static_paged_speedup'], _spread(result, 'paged-allocation'))},",
        f"so most of the gain came from {GAIN_LABELS[result['most_gain_from']]}",
        *repeat_note(result),
        "",
        *machine_lines(result),
        "",
        *decode_plot(result),
        "",
        f"run took {result['run_seconds']:.0f} s",
    ]
    if busy_machine(result):
        lines.append("other programs kept this machine busy during the run, so timings are noisier than usual")
    return lines


def _spread(result: dict, gain: str):
    return (result.get("ablation_spreads") or {}).get(gain)


def repeat_note(result: dict) -> list[str]:
    """How the spread was measured, in one line."""
    repeats = result.get("serve_repeats", 1)
    if repeats <= 1:
        return []
    threads = result.get("blas_threads", 1)
    return [f"(served {repeats} times over, BLAS held to {threads} thread{'s' if threads != 1 else ''}; a range is "
            "the lowest and highest run,", "and one that spans 1× is within noise, not a gain or a loss)"]


def busy_machine(result: dict) -> bool:
    """Whether other programs' load was high enough to distort the timings: a busy machine at the
    start, or more load at the end than this run's own threads account for."""
    before, after = result.get("load_average", [0.0, 0.0])
    cpus = result.get("cpus", 1)
    return before > 0.5 * cpus or after > 1.5 * cpus
