"""A campaign clear is a recall of the concept that decided its key: home's readiness, the stats
screen and `ridge drill plan` read the same cards (`puzzles.review.profile_cards`), so clearing
campaign puzzles moves all three the same way, and a drill review after it never counts it twice."""
from __future__ import annotations

import datetime as dt
import json

from app.cli import main
from app.game import make_app
from app.screens.drill import EXAM_SETTING
from puzzles.readiness import readiness_lines
from puzzles.readiness import recall_by_concept as recall_bars
from engine.ids import Outcome
from pilot_wait import settled
from puzzles import bank, review
from puzzles.attempts import attempt_fields
from puzzles.drill import CONCEPT_TITLES, deciding_concept
from puzzles.grading import grade, objective_bottleneck
from saves.model import AttemptIn
from saves.store import SaveStore

UTC = dt.timezone.utc
PUZZLE = "kv-cache-01"


def _answer(store: SaveStore, when: dt.datetime, right: bool = True, mode: str = "campaign", name: str = "Ada"):
    """Record one answer to PUZZLE in `mode`: the engine's own (cleared), or a wrong bottleneck."""
    puzzle = bank.get(PUZZLE)
    key = bank.key(puzzle)
    verdict = objective_bottleneck(key)
    if not right:
        verdict = next(v for v in puzzle.verdicts if v != verdict)
    prediction = {"bottleneck": verdict, "lever": key.best_lever, "gain_band": key.gain_band, "reason": key.reason,
                  "certainty": "medium", "estimates": {n: key.estimates[n] for n in puzzle.estimates}}
    graded = grade(puzzle, key, prediction, strict=False)
    fields = attempt_fields(puzzle, graded, mode=mode, locked_at=when)
    store.record_attempt(name, AttemptIn.model_validate(fields))
    return deciding_concept(key), graded.outcome


def test_a_campaign_clear_reviews_the_concept_that_decided_its_key(tmp_path):
    store = SaveStore(tmp_path)
    now = dt.datetime.now(UTC)
    concept, outcome = _answer(store, now - dt.timedelta(hours=2))
    assert outcome == "cleared" and concept in CONCEPT_TITLES
    cards = review.profile_cards(store.load("Ada"))
    assert set(cards) == {concept} and cards[concept].last_review is not None
    assert review.retrievability(cards[concept], now) > 0.9
    assert review.counts([concept], cards, now).new == 0  # the drill meets it as seen, not new


def test_a_miss_outside_the_drill_is_a_failed_recall_and_the_simulator_is_not_a_recall(tmp_path):
    store = SaveStore(tmp_path)
    now = dt.datetime.now(UTC)
    concept, outcome = _answer(store, now - dt.timedelta(hours=3), right=False)
    assert outcome != "cleared"
    card = review.profile_cards(store.load("Ada"))[concept]
    assert review.learning(card)
    other = SaveStore(tmp_path / "b")
    _answer(other, now - dt.timedelta(hours=3), mode="simulator")
    assert review.profile_cards(other.load("Ada")) == {}


def test_a_drill_review_after_a_campaign_clear_does_not_count_it_twice(tmp_path):
    store = SaveStore(tmp_path)
    start = dt.datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    concept, _ = _answer(store, start)
    folded = review.profile_cards(store.load("Ada"))[concept]
    drilled = review.review(folded, "cleared", start + dt.timedelta(days=2))  # what the drill stores
    store.save_review_state("Ada", concept, review.card_dict(drilled))
    again = review.profile_cards(store.load("Ada"))[concept]
    assert again.last_review == drilled.last_review and again.stability == drilled.stability
    _answer(store, start + dt.timedelta(days=3))  # after the drill: folded in on top
    later = review.profile_cards(store.load("Ada"))[concept]
    assert later.last_review > drilled.last_review


def test_home_stats_and_drill_plan_agree_after_campaign_clears(tmp_path, capsys):
    store = SaveStore(tmp_path)
    now = dt.datetime.now(UTC)
    concept, _ = _answer(store, now - dt.timedelta(days=3))
    _answer(store, now - dt.timedelta(hours=1))
    exam = (review.local_date(now, None) + dt.timedelta(days=2)).isoformat()
    assert main(["drill", "plan", "--until", exam, "--profile", "Ada", "--save-dir", str(tmp_path), "--json",
                 "--save"]) == 0  # --save: the game plans toward the same date
    plan = json.loads(capsys.readouterr().out)
    ready = plan["readiness"][concept]
    assert ready > 0.5 and len(plan["to_review"]) < 18
    profile = store.load("Ada")
    title = CONCEPT_TITLES[concept]
    heading, bars = recall_bars(profile, now)
    bar = next(b for b in bars if b.label == title)
    assert "exam" in heading and abs(bar.value - ready) < 1e-9 and bar.shown == f"{ready:.0%}"
    assert main(["stats", "--profile", "Ada", "--save-dir", str(tmp_path), "--json"]) == 0
    recall = json.loads(capsys.readouterr().out)["recall"]
    assert recall[concept] > 0.9 and sum(v is not None for v in recall.values()) == 1
    home = " ".join(readiness_lines(profile, now))
    good = sum(r >= review.DESIRED_RETENTION for r in plan["readiness"].values())
    assert f"{good} of 18 concepts" in home
    assert f"{title} 0%" not in home


async def test_the_stats_screen_shows_campaign_clears_as_recall(tmp_path):
    from screen_text import screen_lines

    store = SaveStore(tmp_path)
    now = dt.datetime.now(UTC)
    concept, _ = _answer(store, now - dt.timedelta(hours=1))
    store.update_settings("Ada", **{EXAM_SETTING: None})
    app = make_app(save_dir=tmp_path, profile="Ada", strict=True, cursor_blink=False)
    async with app.run_test(size=(80, 60)) as pilot:
        await settled(pilot)
        await app.workers.wait_for_complete()
        await pilot.press("s")
        await settled(pilot)
        text = "\n".join(screen_lines(app))
        assert "Recall by concept" in text and "Chance of recall now" in text
        bars = text.split("Chance of recall now", 1)[1]  # the bars, below the chapters' table
        row = next(line for line in bars.splitlines() if CONCEPT_TITLES[concept] in line)
        assert "not seen" not in row and "%" in row


def test_a_chapter_lists_a_puzzle_by_its_mark_title_and_difficulty(tmp_path):
    from puzzles.chapters import Bank
    from saves.session import Session

    store = SaveStore(tmp_path)
    _answer(store, dt.datetime.now(UTC) - dt.timedelta(hours=1))
    session = Session(store, "Ada", Bank())
    puzzle = bank.get(PUZZLE)
    assert session.listed(PUZZLE) == (Outcome.CLEARED, puzzle.title, puzzle.difficulty)
    assert session.listed("kv-cache-02")[0] is None
    assert session.listed("gone-01") == (None, "gone-01", "")  # a puzzle that will not load keeps its row
    from app.labels import outcome_symbol  # the chapter shows the mark

    assert (outcome_symbol(Outcome.CLEARED), outcome_symbol(None)) == ("✓", "·")


def test_a_quantization_clear_marks_quantization_seen(tmp_path):
    """quantization-01's key turns on quantizing (decode waits on the weight read): the answer
    recalls quantization, where it used to recall its verdict's concept and leave quantization
    "not seen" on the stats screen and never drilled."""
    store = SaveStore(tmp_path)
    now = dt.datetime.now(UTC)
    puzzle = bank.get("quantization-01")
    key = bank.key(puzzle)
    prediction = {"bottleneck": objective_bottleneck(key), "lever": key.best_lever, "gain_band": key.gain_band,
                  "reason": key.reason, "certainty": "medium",
                  "estimates": {n: key.estimates[n] for n in puzzle.estimates}}
    graded = grade(puzzle, key, prediction, strict=False)
    store.record_attempt("Ada", AttemptIn.model_validate(
        attempt_fields(puzzle, graded, mode="campaign", locked_at=now - dt.timedelta(hours=1))))
    cards = review.profile_cards(store.load("Ada"))
    assert set(cards) == {"quantization"}
    _heading, bars = recall_bars(store.load("Ada"), now)
    shown = {bar.label: bar.shown for bar in bars}
    assert shown[CONCEPT_TITLES["quantization"]].endswith("%")


def test_recall_after_a_miss_says_what_the_drill_says(tmp_path):
    """A concept just missed is being relearnt: the drill brings it back in minutes, and the stats
    screen, home and `ridge stats` say it is not recalled yet (FSRS's curve alone says 100%)."""
    store = SaveStore(tmp_path)
    now = dt.datetime.now(UTC)
    concept, outcome = _answer(store, now - dt.timedelta(minutes=1), right=False)
    assert outcome != "cleared"
    profile = store.load("Ada")
    card = review.profile_cards(profile)[concept]
    assert review.describe_due(card, now) == "in 9 min"
    assert review.retrievability(card, now) == 0.0
    _heading, bars = recall_bars(profile, now)
    bar = next(b for b in bars if b.label == CONCEPT_TITLES[concept])
    assert (bar.value, bar.shown) == (0.0, "due again in 9 min")
    assert review.recall_words(card, now + dt.timedelta(minutes=20)) == "due now"
    later = review.review(card, "cleared", now + dt.timedelta(minutes=20))  # recalled on its return
    assert not review.learning(later) and review.retrievability(later, now + dt.timedelta(minutes=21)) > 0.9
