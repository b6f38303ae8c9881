"""Short number formats for cards, keys and feedback: 141.1 GB, 131.4 GiB, 23.1 ms, 1.7x.

Every unit has one formatter, in `engine.units` (dollars, seconds, bytes, counts); this module
re-exports them under the puzzles' short names and adds the estimate-by-name formatter."""
from __future__ import annotations

from engine.units import count as num  # noqa: F401 - re-exported for the puzzles' texts
from engine.units import dollars, gb, gib, small_bytes  # noqa: F401 - one formatter per unit, in engine.units
from engine.units import seconds as secs  # noqa: F401


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
    if name in ("cost_per_million_output_tokens", "cost_per_million_input_tokens"):
        return dollars(x)
    if name == "weight_bytes":
        return f"{num(x)} B ({gb(x)})"
    if name == "kv_bytes_per_token":
        return small_bytes(x)
    if name == "throughput_tokens_per_s":
        return f"{num(x)} tokens/s"
    if name == "utilisation":
        return f"{x:.0%} of capacity"
    if name == "saturation_qps":
        return f"{x:,.3g} requests/s"
    if name == "mean_in_system":
        return f"{x:,.3g} requests"
    return num(x)
