"""Short number formats for cards, keys and feedback: 141.1 GB, 131.4 GiB, 23.1 ms, 1.7x."""
from __future__ import annotations

from engine.units import count as num  # noqa: F401 - re-exported for the puzzles' texts
from engine.units import gb, gib  # noqa: F401


def secs(s: float) -> str:
    if s is None:
        return "n/a"
    if s >= 1:
        return f"{s:,.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms" if s >= 0.01 else f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.0f} µs"


def dollars(x: float) -> str:
    return f"${x:,.2f}" if x >= 1 else f"${x:.3f}"


def gain(g: float | None) -> str:
    return "n/a" if g is None else f"{g:.2f}x"


def pct(x: float) -> str:
    return f"{x:.0%}" if x >= 0.01 else f"{x:.1%}"


def value(name: str, x: float | None) -> str:
    """An estimate's value in the unit its name states."""
    if x is None:
        return "n/a"
    if name.endswith("_seconds"):
        return secs(x)
    if name == "cost_per_million_output_tokens":
        return dollars(x)
    if name == "weight_bytes":
        return f"{num(x)} B ({gb(x)})"
    if name == "kv_bytes_per_token":
        return f"{num(x)} B ({x / 1024:,.0f} KiB)" if x >= 1024 else f"{num(x)} B"
    if name == "throughput_tokens_per_s":
        return f"{num(x)} tokens/s"
    return num(x)
