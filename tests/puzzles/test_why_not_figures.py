"""Every figure in a "why not" line can be worked out from the figures beside it: the prefill
share once stood beside a lone request's prefill time and the time per token ("13% of the GPU
time" next to 5.27 ms), from which no reader could get 13%. Checked over every built-in puzzle
and a spread of generated ones, by reading the numbers back out of the text."""
from __future__ import annotations

import re

import pytest

from engine.ids import Verdict
from puzzles import bank, generator
from puzzles.explain import verdict_fact

UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}
TIME = r"([\d,.]+) (s|ms|µs)"
LINE = re.compile(rf"prefill takes ([\d.]+)% of the GPU time: a batch spends "
                  rf"(?:its prompt, {TIME}|([\d,]+) prompts × {TIME} = {TIME}) computing, against "
                  rf"(?:([\d,]+) steps × {TIME} = {TIME}|{TIME} \(its steps shorten as sequences finish\)) decoding")


def seconds(number: str, unit: str) -> float:
    return float(number.replace(",", "")) * UNITS[unit]


def near(worked: float, shown: float, rel: float = 0.02) -> bool:
    """Equal within the rounding of the shown figures (three significant digits)."""
    return abs(worked - shown) <= rel * max(abs(shown), 1e-12)


def cases() -> list[tuple[str, object]]:
    """(id, how to make it) for each puzzle checked: the ids are cheap to list, while keying a
    puzzle solves it, so that happens in the test (on one worker), not while collecting (on all)."""
    found = [(pid, pid) for pid in bank.builtin()]
    found += [(f"generated-{difficulty}-{index}", (difficulty, index))
              for difficulty in (1, 3, 5) for index in range(12)]
    return found


def report_of(made: object):
    if isinstance(made, str):
        return bank.key(bank.builtin()[made]).solution.report
    difficulty, index = made
    return generator.make(7, difficulty, index).key.solution.report


@pytest.mark.parametrize("pid,made", cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_prefill_share_is_worked_out_from_the_figures_beside_it(pid, made):
    report = report_of(made)
    if not report.fits:
        return
    text = verdict_fact(Verdict.PREFILL_COMPUTE, report)
    if report.deployment.objective in ("ttft", "stall"):
        return  # judged per request there: its own line, compute against the weight read
    match = LINE.fullmatch(text)
    assert match, text
    g = match.groups()
    share = float(g[0]) / 100
    if g[1] is not None:
        prompts = seconds(g[1], g[2])
    else:
        batch, each, total = int(g[3].replace(",", "")), seconds(g[4], g[5]), seconds(g[6], g[7])
        assert near(batch * each, total), text
        prompts = total
    if g[8] is not None:
        steps, each, decoding = int(g[8].replace(",", "")), seconds(g[9], g[10]), seconds(g[11], g[12])
        assert near(steps * each, decoding), text
    else:
        decoding = seconds(g[13], g[14])
    worked = prompts / (prompts + decoding)
    shown_to = 0.005 if share >= 0.01 else 0.0005  # whole percents, or tenths below one percent
    assert abs(worked - share) <= shown_to + 0.02 * share, text
