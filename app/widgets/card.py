"""The deployment card: what is served, on what hardware, to what traffic, and the goal.

It shows only the inputs a player reasons from — never a figure the engine derives — so the card
cannot give the answer away.
"""
from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.visual import RenderOptions, Visual
from textual.widget import Widget


def card_rows(dep, levers: tuple[str, ...] = (), ruled_out=None, objective=None, load=None) -> list[tuple[str, str]]:
    """(field, value) rows for an engine Deployment: the one card of `puzzles.cards.card_rows`
    (every input the answer key depends on, and any lever the scenario rules out)."""
    from puzzles.cards import card_rows as rows

    return rows(dep, levers, ruled_out, objective, load)


class CardVisual(Visual):
    """The card's rows drawn as one piece of text: names in a column as wide as the longest, one
    space, then each value wrapped to what is left of the width. One widget instead of a Label per
    cell (the puzzle screen opens faster), and its height always comes from the width it is given."""

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        self.rows = rows
        self.key_width = max((cell_len(key) for key, _ in rows), default=0)
        self.cached: tuple[int, Content] | None = None

    def content(self, width: int) -> Content:
        """The whole card at `width` cells, one line of Content per line on screen."""
        if self.cached is not None and self.cached[0] == width:
            return self.cached[1]
        value_width = max(1, width - self.key_width - 1)
        lines: list[Content] = []
        for key, value in self.rows:
            head = Content.styled(key, ".card--key") + " " * (self.key_width - cell_len(key) + 1)
            for n, line in enumerate(Content(value).wrap(value_width) or [Content("")]):
                lines.append((head if n == 0 else Content(" " * (self.key_width + 1))) + line)
        content = Content("\n").join(lines)
        self.cached = (width, content)
        return content

    def render_strips(self, width: int, height: int | None, style, options: RenderOptions):
        return self.content(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules, container_width: int) -> int:
        return container_width

    def get_height(self, rules, width: int) -> int:
        return len(self.content(width).plain.split("\n")) if self.rows else 0


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

    COMPONENT_CLASSES = {"card--key"}

    DEFAULT_CSS = """
    DeploymentCard {
        height: auto;
        padding: 0 1;
        &:focus { background: $boost; }
        & > .card--key { color: $foreground 75%; }
    }
    """

    def __init__(self, deployment, levers: tuple[str, ...] = (), ruled_out=None, load=None, objective=None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.deployment = deployment
        self.levers = tuple(levers)
        self.ruled_out = dict(ruled_out or {})
        # a load puzzle's card shows its traffic, fleet, scheduler and SLOs (puzzles.cards)
        self.card_visual = CardVisual(card_rows(self.deployment, self.levers, self.ruled_out, objective, load))

    def render(self) -> Visual:
        return self.card_visual
