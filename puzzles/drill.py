"""Drill rounds: timed, generated puzzles at one difficulty, chosen by which concept is due.

Concepts are the course's module ids (without the clearing test) and the napkin question ids
(`puzzles.questions`); from difficulty 3 the two load chapters and the load napkin questions
(Little's law, utilisation, the knee) are drilled on generated load puzzles
(`puzzles.load_generator`). A puzzle reviews the concept that decides its key
(`deciding_concept`): a load puzzle its chapter; otherwise the best lever's concept whenever the
lever has one (every lever but more GPUs), else the concept of
the bottleneck that bounds the objective. So a batching answer reschedules batching, never the
arithmetic intensity its verdict mentions, and a quantization answer marks quantization seen (it
used to review its verdict's concept, so quantization was never seen nor drilled). A napkin
concept is drilled by adding its question to a puzzle that gives it a clear answer. A round takes
the concepts in the order spaced repetition gives (`puzzles.review.due_order`: due first) and
finds, for each, the next generated puzzle at the chosen difficulty that exercises it. Everything
is deterministic from the seed. Imports no Textual.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.errors import RidgeError
from engine.ids import Module, Outcome

from puzzles import generator, review
# the concept vocabulary lives in puzzles.concepts (puzzles.review reads it too); the maps stay
# readable as drill.LEVER_CONCEPT and drill.VERDICT_CONCEPT for the drill's callers
from puzzles.concepts import (LEVER_CONCEPT, VERDICT_CONCEPT, concepts_of_pair,  # noqa: F401
                              deciding_concept, deciding_concept_of_pair)
from puzzles.puzzle import MODULES
from puzzles.questions import LOAD_NAPKIN_IDS, NAPKIN_IDS, Item, make_item, suitable

MODULE_CONCEPTS = tuple(m for m in MODULES if m != Module.CLEARING_TEST)
CONCEPTS = MODULE_CONCEPTS + NAPKIN_IDS + LOAD_NAPKIN_IDS
LOAD_FROM = 3          # load napkin questions join the drill from this difficulty
LOAD_INDEX = 10**6     # a generated load puzzle's index in a round's `used` set: its own range
LOAD_SCAN = 8          # generated load puzzles tried per load napkin question
ROUND_LENGTHS = (3, 5, 10)
DEFAULT_ROUND = 5
SECONDS_PER_PUZZLE = 90
SCAN_LIMIT = 240  # generated indexes tried per concept before settling for any puzzle
TIME_UP = "The time ran out: what you had filled in was locked in."
UNCHANGED = "unchanged"  # the next review of a concept whose card did not move
REVIEW_SEED_STEP = 7919  # a review of the missed draws from another seed than the round it follows

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


# -- locking in an answer ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Answered:
    """One answer of a round, as the round's summary lists it."""

    concept: str
    puzzle_id: str
    outcome: str
    points: int
    next_review: str
    timed_out: bool


def seconds_counted(taken: float, limit: float, timed_out: bool) -> float:
    """The seconds an answer is recorded with: the whole limit when the clock ran out, else the
    time it took, never more than the limit."""
    return float(limit) if timed_out else min(limit, taken)


@dataclass(frozen=True)
class Reviewed:
    """What one drill answer does to its concept's card."""

    card: review.Card | None  # the card to store; None when today's reviews are used up
    next_review: str  # when the concept comes back, in a few words (`UNCHANGED` without a card)
    note: str  # the line the reveal shows about it


def review_answer(card: review.Card | None, concept: str, outcome: str, now, attempts, tz=None) -> Reviewed:
    """The concept's card after an answer graded `outcome` (`puzzles.review.schedule`: cleared is
    Good, anything else Again), unless today's cap, counted from the recorded `attempts` (this
    answer not yet among them), is used up: then the card keeps its due time."""
    done = review.cap_status(attempts, now, tz).done
    moved = review.schedule(card, concept, outcome, now, done)
    title = CONCEPT_TITLES.get(concept, concept)
    if moved is None:
        return Reviewed(None, UNCHANGED, f"Today's reviews are used up, so {title} keeps its place in the schedule.")
    when = review.describe_due(moved, now)
    why = (" (cleared: each clear spaces the reviews further apart)." if outcome == Outcome.CLEARED
           else " (not cleared, so it comes back soon).")
    return Reviewed(moved, when, f"{title[:1].upper()}{title[1:]}: next review {when}{why}")


def missed_concepts(answered: Sequence[Answered]) -> list[str]:
    """The concepts a round did not clear, once each, in the order they came."""
    return list(dict.fromkeys(a.concept for a in answered if a.outcome != Outcome.CLEARED))


def plan_review(answered: Sequence[Answered], difficulty: int, seed: int) -> list[Planned]:
    """A round on the concepts a round just missed: a new puzzle for each, never one that round
    asked (any puzzle of the concept when the generator gives too few new ones)."""
    missed = missed_concepts(answered)
    seen = {a.puzzle_id for a in answered}
    seed += REVIEW_SEED_STEP
    fresh = [p for p in plan_round(missed, difficulty, seed, len(missed) + len(seen))
             if p.item.puzzle.id not in seen][:len(missed)]
    return fresh or plan_round(missed, difficulty, seed, len(missed))


# -- what the set-up and the summary say ---------------------------------------------------------

def round_order(concepts: Sequence[str], cards, now, exam=None, tz=None) -> list[str]:
    """The concepts in the order a round takes them: due first; with an exam ahead, what the
    exam would find weakest first."""
    return review.exam_order(concepts, cards, now, exam, tz) if exam else review.due_order(concepts, cards, now)


def _streak(profile, now, tz):
    from puzzles.stats import derive

    return derive(profile, now=now, tz=tz).streak if profile else derive((), now=now).streak


def today_lines(profile, difficulty: int, now, exam=None, problem: str = "", tz=None) -> list[str]:
    """What the set-up tells a player before a round: the concepts due, new and learning at this
    difficulty, the streak, today's review cap, the exam plan (or why the date is refused) and
    the first three concepts up. `profile` is None for a player with no save yet."""
    attempts = profile.attempts if profile else ()
    cards = review.profile_cards(profile)
    concepts = reachable(difficulty)
    order = round_order(concepts, cards, now, exam, tz)
    due = review.due_count(concepts, cards, now)
    first = " · ".join(f"{CONCEPT_TITLES.get(c, c)} ({review.describe_due(cards.get(c), now)})" for c in order[:3])
    streak = _streak(profile, now, tz)
    lines = [f"{review.counts(concepts, cards, now).describe()}  (of {len(concepts)} concepts)",
             streak.describe(), streak.freeze_note(), review.cap_status(attempts, now, tz).describe(due)]
    if problem:
        lines.append(f"✗ {problem}")
    elif exam is not None:
        lines.append(review.exam_plan(concepts, cards, now, exam, tz).describe())
    lines.append(f"First up: {first}.")
    return lines


def summary_rows(answered: Sequence[Answered], outcome: Callable[[str], str]) -> list[str]:
    """The round's table: each answer's concept, outcome (in `outcome`'s words), points and when
    the concept comes back."""
    rows = [f"{'#':>2}  {'Concept':<32} {'Outcome':<10} {'Pts':>4}  Next review"]
    for n, a in enumerate(answered, 1):
        rows.append(f"{n:>2}  {CONCEPT_TITLES.get(a.concept, a.concept)[:32]:<32} "
                    f"{outcome(a.outcome):<10} {a.points:>+4}  {a.next_review}"
                    + ("  (timed out)" if a.timed_out else ""))
    return rows


def after_lines(profile, difficulty: int, cards, now, tz=None) -> list[str]:
    """Under the round's table: the streak, and today's reviews against the concepts still due."""
    attempts = profile.attempts if profile else ()
    waiting = review.due_count(reachable(difficulty), cards, now)
    return [_streak(profile, now, tz).describe(), review.cap_status(attempts, now, tz).describe(waiting)]
