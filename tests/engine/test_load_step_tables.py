"""The load scheduler reads StepTimes' tables inline, by keys coarser than the methods' arguments.

Why it may: `StepTimes.mixed_by_cell` remembers a mixed step by (prompt tokens, batch, context
cell), not by the exact context, because `_mixed_cells` reads the context only through the cell
of `int(ctx)`. These tests pin that claim on the engine's own step model (every context in a cell
gives the same seconds, and the next cell differs), and that each table, where the scheduler finds
an entry, holds what its method answers from a fresh table. If `_mixed_cells` ever reads the context
more finely, the first test fails before any load figure silently changes.
"""
from __future__ import annotations

import pytest

from engine.catalog import builtin_catalog
from engine.deployment import build_deployment
from engine.load.run import step_times
from engine.load.steptimes import StepTimes, cell


@pytest.fixture(scope="module")
def model():
    dep = build_deployment(builtin_catalog(), "llama-3-8b", "h100-sxm", gpus=1, prompt=1024, output=256)
    return step_times(dep).model


@pytest.mark.parametrize("ctx", [5.0, 63.9, 64.0, 1000.0, 1023.5, 1500.25, 9000.0, 70000.0])
@pytest.mark.parametrize("tokens,batch", [(1, 1), (37, 3), (512, 40), (2000, 250)])
def test_a_mixed_step_reads_its_context_only_through_its_cell(model, tokens, batch, ctx):
    c = int(ctx)
    same_cell = [x for x in (ctx, float(c), c + 0.999, c + 1.0, c - 1.0, c * 1.01, c * 0.99) if cell(x) == cell(ctx)]
    answers = {StepTimes(model)._mixed_cells(tokens, batch, x) for x in same_cell}
    assert len(same_cell) >= 2 and len(answers) == 1
    # the table's key is coarse enough, not too coarse: the next cell up is priced apart
    above = next(x for x in range(c + 1, 4 * c + 200) if cell(x) != cell(c))
    assert StepTimes(model)._mixed_cells(tokens, batch, float(above)) not in answers


def test_each_table_holds_what_its_method_answers(model):
    used = StepTimes(model)
    asks = [(tokens, batch, ctx) for tokens in (1, 64, 300, 2048) for batch in (1, 7, 64)
            for ctx in (10.0, 130.5, 131.0, 4096.0, 4100.75)]
    for tokens, batch, ctx in asks:
        used.mixed(tokens, batch, ctx)
        used.prefill(tokens, batch)
        used.decode(batch, ctx)
    for tokens, batch, ctx in asks:
        fresh = StepTimes(model)
        assert used.mixed_by_cell[(tokens, batch, cell(ctx))] == fresh.mixed(tokens, batch, ctx)
        assert used.prefilled[(tokens, batch)] == fresh.prefill(tokens, batch)
        assert used.decoded[(batch, cell(ctx))] == fresh.decode(batch, ctx)
