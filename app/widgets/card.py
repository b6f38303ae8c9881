"""The deployment card: what is served, on what hardware, to what traffic, and the goal.

It shows only the inputs a player reasons from — never a figure the engine derives — so the card
cannot give the answer away.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Label


def card_rows(dep, levers: tuple[str, ...] = (), ruled_out=None) -> list[tuple[str, str]]:
    """(field, value) rows for an engine Deployment: the one card of `puzzles.cards.card_rows`
    (every input the answer key depends on, and any lever the scenario rules out)."""
    from puzzles.cards import card_rows as rows

    return rows(dep, levers, ruled_out)


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

    def __init__(self, deployment, levers: tuple[str, ...] = (), ruled_out=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.deployment = deployment
        self.levers = tuple(levers)
        self.ruled_out = dict(ruled_out or {})

    def compose(self) -> ComposeResult:
        for key, value in card_rows(self.deployment, self.levers, self.ruled_out):
            yield Label(key, classes="card-key", markup=False)
            yield Label(value, classes="card-value", markup=False)
