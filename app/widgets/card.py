"""The deployment card: what is served, on what hardware, to what traffic, and the goal.

It shows only the inputs a player reasons from — never a figure the engine derives — so the card
cannot give the answer away.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Label

from app import labels


def _si_params(n: float) -> str:
    return f"{n / 1e9:,.1f} B" if n >= 1e9 else f"{n / 1e6:,.0f} M"


OBJECTIVE_SHORT = {
    "cost": "lower $ per million output tokens",
    "tpot": "lower time per output token (one user's speed)",
    "ttft": "lower time to first token",
    "stall": "shorten the longest pause while streaming",
}


def card_rows(dep, levers: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(field, value) rows describing an engine Deployment in words, tersely enough for 80 columns."""
    m, g = dep.model, dep.gpu
    params = f"{_si_params(m.params)} params"
    if getattr(m, "is_moe", False):
        params += f" ({_si_params(m.active_params)} active: {m.experts_per_token} of {m.experts} experts)"
    peak = g.peak_tflops.get("bf16") or max(g.peak_tflops.values())
    sequences = "sequence" if dep.concurrency == 1 else "sequences"
    rows = [
        ("Model", f"{m.name} · {params}"),
        ("GPUs", f"{dep.gpus} × {g.name}"),
        ("Each GPU", f"{g.memory_gib:g} GiB · {g.bandwidth_tbps:g} TB/s · {peak:,.0f} TFLOP/s bf16"),
        ("Prompt", f"{dep.prompt:,} tokens (average)"),
        ("Output", f"{dep.output:,} tokens (average)"),
        ("Traffic", f"{dep.concurrency:,} {sequences} wanted at once"),
        ("Precision", f"weights {dep.weights} · KV cache {dep.kv}"),
    ]
    serving = {"none": "no batching", "static": "static batches", "continuous": "continuous batching"}[dep.scheduler]
    alloc = {"paged": "paged KV", "contiguous": "contiguous KV per request"}[dep.allocator]
    extras = [serving, alloc]
    if dep.chunked_prefill:
        extras.append(f"chunked prefill ({dep.chunk_tokens:,})")
    if dep.spec_k:
        extras.append(f"speculating {dep.spec_k} tokens")
    rows.append(("Serving", " · ".join(extras)))
    if dep.spec_k or "speculative-decoding" in levers:
        rows.append(("Draft model", f"{dep.spec_alpha:.0%} of drafted tokens accepted; each costs "
                                    f"{dep.spec_draft_cost:g} of a full step"))
    if dep.shared_prefix:
        cached = "cached" if dep.prefix_caching else "not cached"
        rows.append(("Shared", f"first {dep.shared_prefix:,} prompt tokens identical ({cached})"))
    if dep.route_model is not None:
        rows.append(("Small model", f"{dep.route_model.name}: could answer {dep.route_fraction:.0%} of requests"))
    rows.append(("Reserve", f"{dep.reserve_gib_per_gpu:g} GiB per GPU for activations"
                 + (" (10% of its memory)" if dep.reserve_gib is None else "")))
    rows.append(("Price", f"${dep.price:g} per GPU-hour"))
    rows.append(("Goal", OBJECTIVE_SHORT.get(dep.objective, labels.objective(dep.objective))))
    return rows


class DeploymentCard(Widget, can_focus=True):
    """The deployment as a two-column card whose values wrap beside their names."""

    HELP = """\
## The deployment card

Everything the engine will use, and nothing it derives: the model and its parameter count,
the GPUs with their memory, bandwidth and peak, the average prompt and output lengths, how
many sequences the traffic wants at once, the precisions, how it is served today, and what
the puzzle asks you to improve.

Work from these to the bottleneck: weights and KV cache against memory, bytes read per step
against FLOPs, prompt work against output work.
"""

    DEFAULT_CSS = """
    DeploymentCard {
        layout: grid;
        grid-size: 2;
        grid-columns: auto 1fr;
        grid-rows: auto;
        grid-gutter: 0 1;
        height: auto;
        padding: 0 1;
        & > .card-key { color: $text-muted; }
        & > .card-value { width: 1fr; }
        &:focus { background: $boost; }
    }
    """

    def __init__(self, deployment, levers: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.deployment = deployment
        self.levers = tuple(levers)

    def compose(self) -> ComposeResult:
        for key, value in card_rows(self.deployment, self.levers):
            yield Label(key, classes="card-key", markup=False)
            yield Label(value, classes="card-value", markup=False)
