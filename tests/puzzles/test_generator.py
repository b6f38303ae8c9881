"""The generator: deterministic per id, unambiguous by the stated margins, balanced coverage of
verdicts and levers, and its keys agree with a fresh solve of the puzzle it emitted."""
from __future__ import annotations

import collections

import pytest

from engine.analysis import VERDICTS
from engine.errors import RidgeError
from engine.levers import LEVERS
from puzzles import generator
from puzzles.keys import ambiguity, compute_key


def signature(made) -> tuple:
    p, k = made.puzzle, made.key
    return (p.id, p.deployment_dict(), p.levers, p.reasons, p.estimates, p.scenario, p.hints,
            k.bottleneck, k.best_lever, k.gain_band, k.reason, round(k.gain, 9) if k.gain else None)


def test_same_seed_same_puzzles():
    first = [signature(m) for m in generator.generate(11, 25)]
    second = [signature(m) for m in generator.generate(11, 25)]
    assert first == second
    assert [s[0] for s in first[:3]] == ["gen-s11-d1-0000", "gen-s11-d2-0001", "gen-s11-d3-0002"]
    assert first != [signature(m) for m in generator.generate(12, 25)]


def test_any_id_rebuilds_alone():
    batch = generator.generate(7, 12, difficulty=4)
    for made in batch[::4]:
        again = generator.from_id(made.puzzle.id)
        assert signature(again) == signature(made)


def test_a_fixed_seed_is_stable_across_machines():
    """Pinned first draws of seed 2024 (string-seeded Random, fixed catalog tuples): competitions
    rely on these never moving. If the engine's physics or the targets change, re-pin deliberately
    (last: recipes aimed with the engine's own analysis instead of closed-form estimates)."""
    got = [(m.puzzle.id, m.key.bottleneck, m.key.best_lever, m.key.reason) for m in generator.generate(2024, 6)]
    assert got == [
        ("gen-s2024-d1-0000", "decode-weights", "speculative-decoding", "idle-flops"),
        ("gen-s2024-d2-0001", "decode-weights", "batching", "serial-requests"),
        ("gen-s2024-d3-0002", "decode-compute", "routing", "easy-traffic"),
        ("gen-s2024-d4-0003", "decode-kv", "quantization", "kv-read"),
        ("gen-s2024-d5-0004", "decode-weights", "prefix-caching", "recomputed-prefix"),
        ("gen-s2024-d1-0005", "decode-compute", "routing", "easy-traffic"),
    ]


@pytest.fixture(scope="module")
def draws():
    """2,000 draws across all five levels (the default cycle). Their speed is bench/bench_puzzles.py's
    business: a test that asserts a time fails on a busy machine."""
    return generator.generate(99, 2000)


@pytest.mark.slow
def test_every_emitted_puzzle_is_unambiguous(draws):
    """Verdict 10% from its threshold at the floor and at the realistic fidelity, the lever 15% ahead
    at the floor and 7% (the square root) at the realistic fidelity; the realistic gain, which keys the band, 10% from a band edge (an accepted band never lies
    more than 5% beyond it)."""
    made = draws
    for m in made:
        assert ambiguity(m.key.solution, band_margin=None) == [], m.puzzle.id
        problems = ambiguity(m.key.realistic, lever_margin_min=1.15 ** 0.5, band_margin=1.10)
        assert problems == [], (m.puzzle.id, problems)
        assert m.key.band_problems() == [], m.puzzle.id
        key = m.key
        assert key.reason in m.puzzle.reasons and 3 <= len(m.puzzle.reasons) <= 5
        assert key.best_lever in m.puzzle.levers and len(m.puzzle.hints) in (2, 3)
        assert all(key.estimates[name] is not None for name in m.puzzle.estimates)


def test_coverage_of_every_verdict_and_lever_over_2000_draws(draws):
    made = draws
    verdicts = collections.Counter(m.key.bottleneck for m in made)
    levers = collections.Counter(m.key.best_lever for m in made)
    assert set(VERDICTS) <= set(verdicts) <= set(VERDICTS) | {"prefill-weights"}, verdicts
    assert set(levers) == set(LEVERS), levers
    for verdict in VERDICTS:
        assert verdicts[verdict] >= 0.10 * len(made), verdicts   # a sixth each when every target hits
    for lever in LEVERS:
        assert levers[lever] >= 0.02 * len(made), levers
    fallbacks = sum(1 for m in made if m.target is None)
    assert fallbacks <= 0.08 * len(made), fallbacks


def test_generated_keys_match_a_fresh_solve():
    for made in generator.generate(5, 30):
        fresh = compute_key(made.puzzle)
        assert (fresh.bottleneck, fresh.best_lever, fresh.gain_band, fresh.reason) == \
            (made.key.bottleneck, made.key.best_lever, made.key.gain_band, made.key.reason)
        assert [lv.name for lv in fresh.levers] == [lv.name for lv in made.key.levers]


def test_difficulty_shapes_the_draws():
    easy = generator.generate(3, 40, difficulty=1)
    hard = generator.generate(3, 40, difficulty=5)
    assert all(m.puzzle.objective == "cost" and not m.puzzle.deployment.model.is_moe for m in easy)
    assert all(not m.puzzle.estimates for m in easy)
    assert any(m.puzzle.deployment.model.is_moe for m in hard)
    assert len({m.puzzle.objective for m in hard}) >= 2
    assert all(m.puzzle.difficulty == 5 and m.puzzle.id.startswith("gen-s3-d5-") for m in hard)


@pytest.mark.parametrize("bad", ["gen-s1-d6-0001", "gen-s1-d1-1", "gen-sx-d1-0001", "gen-s1-d1-00001", "gen-"])
def test_malformed_generated_ids_are_refused(bad):
    with pytest.raises(RidgeError):
        generator.parse_id(bad)


def test_bad_generate_arguments():
    with pytest.raises(RidgeError):
        generator.generate(-1, 1)
    with pytest.raises(RidgeError):
        generator.make(1, 7, 0)


def test_a_generated_sample_keeps_the_grading_contract():
    """What `ridge puzzles check` demands of a pack holds for generated puzzles: robust under both
    fidelities, objective verdicts only, the fixed option order, no unoffered winner, only false
    distractors, a complete card; and no draw spans more GPUs than the accelerator's
    tensor-parallel domain."""
    from puzzles.check import contract_problems

    for made in generator.generate(31, 150):
        assert contract_problems(made.puzzle, made.key) == [], made.puzzle.id
        domain = getattr(made.puzzle.deployment.gpu, "tp_domain", None)
        if domain:
            assert made.puzzle.deployment.gpus <= domain, made.puzzle.id


@pytest.mark.parametrize("difficulty", [None, 1, 2, 3, 4, 5])
def test_generated_keys_vary_with_the_seed(difficulty):
    """Over 40 seeds, no position of an 8-puzzle draw asks for the same (verdict, lever) in more
    than half of them: a drill, an exam or a live room cannot be played by position."""
    by_position = [collections.Counter() for _ in range(8)]
    for seed in range(40):
        for i, made in enumerate(generator.generate(seed, 8, difficulty)):
            by_position[i][(made.key.bottleneck, made.key.best_lever)] += 1
    commonest = [counts.most_common(1)[0][1] for counts in by_position]
    assert max(commonest) <= 20, commonest


def test_a_long_draw_still_deals_every_target():
    """Shuffling the order per seed keeps each turn of the cycle whole: over one turn every target
    of the level is aimed at its share of times."""
    for difficulty in generator.LEVELS:
        cycle = generator.TARGETS[difficulty]
        dealt = [generator.target_for(77, difficulty, i) for i in range(len(cycle))]
        assert collections.Counter(dealt) == collections.Counter(cycle)
