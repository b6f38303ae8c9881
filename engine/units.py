"""Readable numbers with units, for derivations and cards: 141.1 GB, 131.4 GiB, 23.1 ms, 1.76e13."""
from __future__ import annotations

GIB = 2**30


def count(n: float) -> str:
    """Whole numbers with thousands separators; large ones in scientific notation."""
    if n is None:
        return "n/a"
    if abs(n) >= 1e7:
        return f"{n:.3g}".replace("e+", "e")
    if float(n).is_integer():
        return f"{int(n):,}"
    return f"{n:,.3g}" if abs(n) < 100 else f"{n:,.0f}"


def params(n: float) -> str:
    """Parameter counts as the model cards print them: 70.55B, 8.03B, 671.0B."""
    if n >= 1e9:
        return f"{n / 1e9:.2f}B"
    return f"{n / 1e6:.0f}M"


def gb(b: float) -> str:
    """Decimal gigabytes (1e9 B), the unit of weight files and datasheets; MB below one GB."""
    return f"{b / 1e9:,.1f} GB" if b >= 1e9 else f"{b / 1e6:,.1f} MB"


def gib(b: float) -> str:
    """Binary gibibytes (2**30 B), the unit GPU memory is counted in here."""
    return f"{b / GIB:,.1f} GiB" if b / GIB >= 10 else f"{b / GIB:,.2f} GiB"


def small_bytes(b: float) -> str:
    """Per-token sizes: bytes with the KiB equivalent."""
    if b >= 1024:
        return f"{count(b)} B ({b / 1024:,.0f} KiB)" if (b / 1024).is_integer() else f"{count(b)} B ({b / 1024:,.1f} KiB)"
    return f"{count(b)} B"


def seconds(s: float) -> str:
    if s is None:
        return "n/a"
    if s >= 10:
        return f"{s:,.1f} s"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms" if s >= 0.01 else f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.0f} µs"


def flops(f: float) -> str:
    return f"{f:.3g}".replace("e+", "e")


def rate(tflops: float) -> str:
    return f"{tflops:,.1f} TFLOP/s"


def dollars(x: float, axis: bool = False) -> str:
    """Dollars to the cent ($123.46; $0.043 below ten cents). `axis`: a chart's tick, in as few
    characters as its round value needs ($120, $4.5, $0.06)."""
    if x is None:
        return "n/a"
    if axis:
        return f"${x:,.0f}" if x >= 100 else f"${x:.3g}" if x >= 1 else f"${x:.2g}"
    return f"${x:,.2f}" if x >= 0.1 else f"${x:.3f}"


def ratio(x: float) -> str:
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


def countdown(seconds: float) -> str:
    """Seconds left as m:ss, a started second counted whole (0.2 s left shows 0:01): every clock
    a player watches (a timed round, the host's projector, the terminal player)."""
    whole = int(seconds + 0.999)
    return f"{whole // 60}:{whole % 60:02d}"
