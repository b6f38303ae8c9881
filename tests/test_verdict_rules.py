"""The verdict rules: one ordered table (engine.physics.RULES) read by the scalar analysis, the
grid, the margins and the keys."""
from __future__ import annotations

from engine import physics
from engine.ids import OBJECTIVE_VERDICTS, Verdict


def test_rule_table_lists_each_objectives_verdicts_in_the_fixed_order():
    for objective, (rules, default) in physics.RULES.items():
        assert (Verdict.DOES_NOT_FIT, *(v for v, _ in rules), default) == OBJECTIVE_VERDICTS[objective]
    assert set(physics.RULES) == set(OBJECTIVE_VERDICTS)
