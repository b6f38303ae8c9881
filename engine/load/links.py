"""The links a disaggregated fleet sends KV caches over, by name (engine/data/links.toml), or a
bandwidth given as a number of GB/s."""
from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from engine.errors import RidgeError

DATA = Path(__file__).resolve().parent.parent / "data" / "links.toml"


@lru_cache(maxsize=1)
def catalog() -> dict[str, dict]:
    """Link id -> {name, gbps, source}, in the file's order."""
    with open(DATA, "rb") as f:
        return dict(tomllib.load(f)["links"])


def resolve(text: str) -> tuple[str, float | None]:
    """(link id, None) for a named link, or ("custom", GB/s) for a number."""
    known = catalog()
    if text in known:
        return text, None
    try:
        value = float(text)
    except ValueError:
        raise RidgeError(f"link must be one of {', '.join(known)} or a bandwidth in GB/s, got {text!r}") from None
    if not 1e-6 <= value <= 1e6:
        raise RidgeError(f"link bandwidth must be between 1e-06 and 1e+06 GB/s, got {text!r}")
    return "custom", value


def gbps(spec) -> float:
    """The spec's link bandwidth in GB/s: its own figure, else its named link's."""
    if spec.link_gbps is not None:
        return spec.link_gbps
    known = catalog()
    if spec.link not in known:
        raise RidgeError(f"link must be one of {', '.join(known)}, got {spec.link!r}")
    return float(known[spec.link]["gbps"])


def bytes_per_s(spec) -> float:
    return gbps(spec) * 1e9


def label(spec) -> str:
    """'InfiniBand NDR, ... (50 GB/s)' or '37.5 GB/s' for a bandwidth given as a number."""
    if spec.link_gbps is not None and spec.link not in catalog():
        return f"{spec.link_gbps:g} GB/s"
    entry = catalog()[spec.link]
    return f"{entry['name']} ({gbps(spec):g} GB/s)"
