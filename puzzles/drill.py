"""Drill rounds: timed, generated puzzles at one difficulty, chosen by which concept is due.

Concepts are the course's module ids (without the clearing test) and the napkin question ids
(`puzzles.questions`); from difficulty 3 the two load chapters and the load napkin questions
(Little's law, utilisation, the knee) are drilled on generated load puzzles
(`puzzles.load_generator`). A generated puzzle reviews the concept that decides its key
(`deciding_concept`): the best lever's concept when the lever works through its own mechanism
(batching, paged KV, prefix caching, speculation, routing, chunked prefill), else the concept of
the bottleneck that bounds the objective. So a batching answer reschedules batching, never the
arithmetic intensity its verdict mentions. A napkin concept is drilled by adding its question to
a puzzle that gives it a clear answer. A round takes the concepts in the order spaced repetition gives
(`puzzles.review.due_order`: due first) and finds, for each, the next generated puzzle at the chosen
difficulty that exercises it. Everything is deterministic from the seed. Imports no Textual.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.ids import Lever, Module, Verdict

from puzzles import generator
from puzzles.puzzle import MODULES
from puzzles.questions import LOAD_NAPKIN_IDS, NAPKIN_IDS, Item, make_item, suitable
from puzzles.reasons import mechanism_reason

MODULE_CONCEPTS = tuple(m for m in MODULES if m != Module.CLEARING_TEST)
CONCEPTS = MODULE_CONCEPTS + NAPKIN_IDS + LOAD_NAPKIN_IDS
LOAD_FROM = 3          # load napkin questions join the drill from this difficulty
LOAD_INDEX = 10**6     # a generated load puzzle's index in a round's `used` set: its own range
LOAD_SCAN = 8          # generated load puzzles tried per load napkin question
ROUND_LENGTHS = (3, 5, 10)
DEFAULT_ROUND = 5
SECONDS_PER_PUZZLE = 90
SCAN_LIMIT = 240  # generated indexes tried per concept before settling for any puzzle

VERDICT_CONCEPT = {
    Verdict.DOES_NOT_FIT: Module.KV_CACHE, Verdict.KV_CAPACITY: Module.KV_CACHE, Verdict.DECODE_KV: Module.KV_CACHE,
    Verdict.PREFILL_COMPUTE: Module.TWO_PHASES, Verdict.PREFILL_WEIGHTS: Module.TWO_PHASES,
    Verdict.DECODE_COMPUTE: Module.INTENSITY, Verdict.DECODE_WEIGHTS: Module.INTENSITY,
}
MECHANISM_LEVERS = (Lever.BATCHING, Lever.PAGED_KV, Lever.PREFIX_CACHING, Lever.SPECULATIVE_DECODING,
                    Lever.ROUTING, Lever.CHUNKED_PREFILL)
LEVER_CONCEPT = {
    Lever.BATCHING: Module.BATCHING, Lever.PAGED_KV: Module.PAGED_ATTENTION, Lever.PREFIX_CACHING: Module.PREFIX_CACHING,
    Lever.QUANTIZATION: Module.QUANTIZATION, Lever.KV_QUANTIZATION: Module.KV_CACHE,
    Lever.SPECULATIVE_DECODING: Module.SPECULATIVE_DECODING, Lever.ROUTING: Module.COST_MODEL,
    Lever.CHUNKED_PREFILL: Module.TWO_PHASES,
}
CONCEPT_TITLES = {
    Module.TWO_PHASES: "prefill against decode", Module.INTENSITY: "arithmetic intensity",
    Module.KV_CACHE: "the KV cache budget", Module.BATCHING: "batching", Module.PAGED_ATTENTION: "paged KV blocks",
    Module.PREFIX_CACHING: "prefix caching", Module.SPECULATIVE_DECODING: "speculative decoding",
    Module.QUANTIZATION: "quantization", Module.COST_MODEL: "the cost model (routing)",
    "napkin-intensity": "napkin: intensity and the ridge", "napkin-concurrency": "napkin: max concurrency",
    "napkin-spec": "napkin: does speculation help?", "napkin-cost": "napkin: cost per million tokens",
    "napkin-littles-law": "napkin: Little's law", "napkin-utilisation": "napkin: utilisation",
    "napkin-knee": "napkin: where the knee is", Module.LOAD_AND_TAILS: "load and tails",
    Module.SPLITTING_THE_WORK: "splitting prefill and decode",
}
LOAD_CHAPTERS = {Module.LOAD_AND_TAILS: "tails", Module.SPLITTING_THE_WORK: "split"}   # concept -> load_generator's chapter


def concepts_of_pair(verdict: str, lever: str) -> tuple[str, ...]:
    """The module concepts a (verdict, best lever) pair exercises."""
    found = [VERDICT_CONCEPT.get(verdict), LEVER_CONCEPT.get(lever)]
    return tuple(dict.fromkeys(c for c in found if c))


def concepts_of(key) -> tuple[str, ...]:
    """The module concepts a puzzle exercises, from its engine key."""
    return concepts_of_pair(key.bottleneck, key.best_lever)


def deciding_concept_of_pair(verdict: str, lever: str) -> str | None:
    """The concept that decides a (verdict, best lever) pair: the lever's own when it works
    through its mechanism, else the verdict's."""
    if lever in MECHANISM_LEVERS and lever in LEVER_CONCEPT:
        return LEVER_CONCEPT[lever]
    return VERDICT_CONCEPT.get(verdict)


def deciding_concept(key) -> str | None:
    """The concept that decides a puzzle's key (the review it is tagged with); a load puzzle's
    is its chapter."""
    from puzzles.grading import objective_bottleneck

    if hasattr(key.solution, "load"):
        return getattr(key.solution, "module", None) or None
    if mechanism_reason(key.solution) is not None and key.best_lever in LEVER_CONCEPT:
        return LEVER_CONCEPT[key.best_lever]
    return VERDICT_CONCEPT.get(objective_bottleneck(key))


def reachable(difficulty: int) -> tuple[str, ...]:
    """The concepts a drill at `difficulty` can review, in course order."""
    level = generator.LEVELS[difficulty]
    found = {deciding_concept_of_pair(verdict, lever) for verdict, lever in level.targets}
    load = difficulty >= LOAD_FROM   # the load chapters and their napkin questions, from generated load puzzles
    found |= set(LOAD_CHAPTERS) if load else set()
    return tuple(c for c in MODULE_CONCEPTS if c in found) + NAPKIN_IDS + (LOAD_NAPKIN_IDS if load else ())


@dataclass(frozen=True)
class Planned:
    """One drill question: the concept it reviews and the item to ask."""

    concept: str
    item: Item
    index: int  # the generated puzzle's index (its id says seed and difficulty)


def _fits_concept(concept: str, gen) -> bool:
    if concept in NAPKIN_IDS or concept in LOAD_NAPKIN_IDS:
        return suitable(concept, gen.puzzle, gen.key)
    return concept == deciding_concept(gen.key)


def _target_may_fit(concept: str, difficulty: int, seed: int, index: int) -> bool:
    """A cheap filter: could the generator's target for this index exercise `concept`?"""
    if concept in NAPKIN_IDS:
        return True
    if concept in LOAD_NAPKIN_IDS or concept in LOAD_CHAPTERS:
        return False   # asked on generated load puzzles (`_find_load`), never on these
    verdict, lever = generator.target_for(seed, difficulty, index)
    return concept in concepts_of_pair(verdict, lever)


def _find_load(concept: str, seed: int, used: frozenset[int]) -> Planned | None:
    """A generated load puzzle for `concept`: one of its chapter's (a load chapter), or one of
    either chapter's, in turn, that asks the napkin question."""
    from puzzles import load_generator

    for n in range(LOAD_SCAN * 2):
        if LOAD_INDEX + n in used:
            continue
        chapter = LOAD_CHAPTERS.get(concept) or ("tails" if n % 2 == 0 else "split")
        gen = load_generator.make(chapter, seed, n)
        if concept in LOAD_CHAPTERS:
            return Planned(concept, make_item(gen.puzzle, gen.key), LOAD_INDEX + n)
        if suitable(concept, gen.puzzle, gen.key):
            return Planned(concept, make_item(gen.puzzle, gen.key, concept), LOAD_INDEX + n)
    return None


def find(concept: str, difficulty: int, seed: int, start: int = 0, used: frozenset[int] = frozenset()) -> Planned:
    """The first generated puzzle from index `start` that exercises `concept` (a puzzle's
    index is never used twice in a round); any unused puzzle when none does within SCAN_LIMIT.
    A load napkin question is asked on a generated load puzzle (`puzzles.load_generator`)."""
    if concept in LOAD_NAPKIN_IDS or concept in LOAD_CHAPTERS:
        found = _find_load(concept, seed, used)
        if found is not None:
            return found
    fallback = None
    for index in range(start, start + SCAN_LIMIT):
        if index in used:
            continue
        if fallback is None:
            fallback = index
        if not _target_may_fit(concept, difficulty, seed, index):
            continue
        gen = generator.make(seed, difficulty, index)
        if _fits_concept(concept, gen):
            napkin = concept if concept in NAPKIN_IDS else None
            return Planned(concept, make_item(gen.puzzle, gen.key, napkin), index)
    gen = generator.make(seed, difficulty, fallback if fallback is not None else start)
    module = deciding_concept(gen.key) or concept
    return Planned(module, make_item(gen.puzzle, gen.key), gen_index(gen.puzzle.id))


def gen_index(puzzle_id: str) -> int:
    from puzzles import load_generator

    if load_generator.is_load_id(puzzle_id):
        return LOAD_INDEX + int(puzzle_id.rsplit("-", 1)[1])
    return generator.parse_id(puzzle_id)[2]


def plan_round(order: list[str], difficulty: int, seed: int, length: int = DEFAULT_ROUND) -> list[Planned]:
    """`length` drill questions for the concepts in `order` (due first), cycling when the round
    is longer than the list; puzzles come from `seed` at `difficulty`."""
    if difficulty not in generator.LEVELS:
        from engine.errors import RidgeError

        raise RidgeError(f"difficulty must be 1 to 5, got {difficulty}")
    allowed = set(reachable(difficulty))
    concepts = [c for c in order if c in allowed] or list(reachable(difficulty))
    planned: list[Planned] = []
    used: set[int] = set()
    for n in range(length):
        concept = concepts[n % len(concepts)]
        found = find(concept, difficulty, seed, start=0, used=frozenset(used))
        used.add(found.index)
        planned.append(found)
    return planned
