"""One vocabulary: every id list follows its enum in `engine/ids.py`, and every word table has
words for every member, so adding a lever, a verdict or a chapter fails here until it has words."""
from __future__ import annotations

import json

import pytest

from app import labels
from engine import analysis, compare, deployment, derivation, ids, levers, physics
from puzzles import cards, drill, generator, grading, puzzle, reasons, scoring
from puzzles.reasons import Reason

# The steady-state analysis answers these; the enums may hold more (other engines' ids), which
# the screens' words cover but the analysis' own texts need not.
ANALYSIS_VERDICTS = tuple(v for v in ids.Verdict
                          if any(v in ids.OBJECTIVE_VERDICTS[o] for o in ids.DEPLOYMENT_OBJECTIVES))

# (table, the ids it must cover, ids it may leave out and why)
WORD_TABLES = {
    "labels.BOTTLENECKS": (labels.BOTTLENECKS, ids.Verdict, ()),
    "labels.LEVER_WORDS": (labels.LEVER_WORDS, ids.Lever, ()),
    "labels.BANDS": (labels.BANDS, ids.GainBand, ()),
    "labels.BOTTLENECK_QUESTIONS": (labels.BOTTLENECK_QUESTIONS, ids.Objective, ()),
    "labels.OBJECTIVES": (labels.OBJECTIVES, ids.Objective, ()),
    "labels.CERTAINTIES": (labels.CERTAINTIES, ids.Certainty, ()),
    "labels.OUTCOMES": (labels.OUTCOMES, ids.Outcome, ()),
    "labels.CERTAINTY_WORDS": (labels.CERTAINTY_WORDS, ids.Certainty, ()),
    "derivation.VERDICT_TEXT": (derivation.VERDICT_TEXT, ANALYSIS_VERDICTS, ()),
    "compare.OBJECTIVE_LABELS": (compare.OBJECTIVE_LABELS, ids.DEPLOYMENT_OBJECTIVES, ()),
    "puzzle.MODULE_TITLES": (puzzle.MODULE_TITLES, ids.Module, ()),
    "puzzle.OBJECTIVE_TEXT": (puzzle.OBJECTIVE_TEXT, ids.DEPLOYMENT_OBJECTIVES, ()),
    "cards.BOTTLENECK_QUESTION": (cards.BOTTLENECK_QUESTION, ids.DEPLOYMENT_OBJECTIVES, ()),
    "grading.OUTCOME_TEXT": (grading.OUTCOME_TEXT, ids.Outcome, ()),
    "scoring.POINTS": (scoring.POINTS, ids.Outcome, ()),
    "reasons.REASONS": (reasons.REASONS, Reason, ()),
    "generator first hints": (generator.FIRST_HINT, ANALYSIS_VERDICTS, ()),
    "drill.VERDICT_CONCEPT": (drill.VERDICT_CONCEPT, ANALYSIS_VERDICTS, ()),
    # More GPUs changes the hardware, not a mechanism a chapter teaches; the clearing test is the exam.
    "drill.LEVER_CONCEPT": (drill.LEVER_CONCEPT, ids.DEPLOYMENT_LEVERS, (ids.Lever.MORE_GPUS,)),
    "drill.CONCEPT_TITLES": ({k: v for k, v in drill.CONCEPT_TITLES.items() if k in drill.MODULE_CONCEPTS},
                             ids.Module, (ids.Module.CLEARING_TEST,)),
}


@pytest.mark.parametrize("name", WORD_TABLES)
def test_every_member_has_words(name):
    table, wanted, left_out = WORD_TABLES[name]
    missing = [str(m) for m in wanted if m not in table and m not in left_out]
    assert not missing, f"{name} has no words for {missing}"
    enum = type(next(iter(wanted)))
    unknown = [key for key in table if key not in set(enum)]
    assert not unknown, f"{name} has words for ids that are not in {enum.__name__}: {unknown}"
    assert all(value for value in table.values()), f"{name} has an empty entry"


def test_points_cover_every_certainty():
    for outcome, row in scoring.POINTS.items():
        assert set(row) == set(ids.Certainty), outcome


def test_id_lists_follow_their_enums():
    """The option lists the engine, the packs and the command line use are the enums, in their order."""
    assert levers.LEVERS == ids.DEPLOYMENT_LEVERS and set(ids.DEPLOYMENT_LEVERS) <= set(ids.Lever)
    assert physics.VERDICT_CODES == analysis.ALL_VERDICTS == tuple(ids.Verdict)
    assert analysis.VERDICTS == ids.DEPLOYMENT_VERDICTS
    assert generator.VERDICT_ORDER == tuple(ids.Verdict)
    assert puzzle.MODULES == tuple(ids.Module)
    assert deployment.SCHEDULERS == tuple(ids.Scheduler)
    assert deployment.ALLOCATORS == tuple(ids.Allocator)
    assert deployment.OBJECTIVES == ids.DEPLOYMENT_OBJECTIVES
    assert deployment.FIDELITIES == tuple(ids.Fidelity)
    assert scoring.OUTCOMES == tuple(ids.Outcome) and scoring.CERTAINTIES == tuple(ids.Certainty)
    # Every lever and verdict the generator aims at is a real pair of ids.
    for verdict, lever in generator.RECIPES:
        assert verdict in set(ids.Verdict) and lever in set(ids.Lever)


def test_an_id_reads_as_its_string_everywhere():
    """A member in a message, a list, JSON or a save reads exactly as the id a pack spells."""
    member = ids.Verdict.DECODE_KV
    assert str(member) == f"{member}" == "decode-kv"
    assert repr(member) == repr("decode-kv") and repr([member]) == "['decode-kv']"
    assert json.dumps({member: [ids.Lever.ROUTING]}) == '{"decode-kv": ["routing"]}'
    assert type(levers.LEVERS[0]) is str and type(puzzle.MODULES[0]) is str


def _quoted_ids(rooms=("engine", "puzzles", "saves", "app")) -> list[tuple[str, int, str]]:
    """(file, line, id) for every lever or verdict id spelled as a string literal in the rooms'
    code, outside the vocabulary's own homes (engine/ids.py and the words table, app/labels.py).
    The tokenizer sees literals only, so a comment or a longer text that mentions an id is not
    counted; a literal that is an id's spelling is, even where it means the English word."""
    import ast
    import io
    import tokenize
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spelled = {str(m) for m in ids.Lever} | {str(m) for m in ids.Verdict}
    homes = {"engine/ids.py", "app/labels.py"}
    out = []
    for room in rooms:
        for path in sorted((root / room).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if name in homes:
                continue
            for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
                if tok.type != tokenize.STRING:
                    continue
                try:
                    value = ast.literal_eval(tok.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str) and value in spelled:
                    out.append((name, tok.start[0], value))
    return out


def test_lever_and_verdict_ids_are_quoted_in_few_places():
    """Issue 26's scripted count: lever and verdict ids spelled as quoted strings outside
    engine/ids.py, the packs and the words table number at most 10, so a new lever or verdict is
    named through its enum member (it was 18, 10 of them in puzzles/load_reasons.py and
    puzzles/cards.py; the load engine's own six and two chapter titles that are English words
    remain)."""
    found = _quoted_ids()
    assert len(found) <= 10, found
