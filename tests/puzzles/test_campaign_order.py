"""The campaign's order without Textual: untried first in the earliest open chapter, then tried
but not cleared, and a puzzle put off comes back after two other answers (within three puzzles),
from whichever chapter; before that, only when nothing else is open."""
from __future__ import annotations

from puzzles.campaign import RETRY_GAP, next_puzzle, parse_queue, queue_text, returns_after

CHAPTERS = [("a1", "a2"), ("b1", "b2")]


def test_untried_first_then_not_cleared_then_the_next_chapter():
    assert next_puzzle(CHAPTERS, {}, []) == "a1"
    assert next_puzzle(CHAPTERS, {"a1": ["missed"]}, []) == "a2"
    assert next_puzzle(CHAPTERS, {"a1": ["missed"], "a2": ["cleared"]}, []) == "a1"
    assert next_puzzle(CHAPTERS, {"a1": ["missed", "cleared"], "a2": ["lucky", "cleared"]}, []) == "b1"
    done = {p: ["cleared"] for ids in CHAPTERS for p in ids}
    assert next_puzzle(CHAPTERS, done, []) is None


def test_a_puzzle_put_off_comes_back_within_three_puzzles():
    many = [tuple(f"c{c}-{i}" for i in range(8)) for c in range(9)]  # 72 open puzzles
    queue = [("c0-0", 1)]  # put off after the first answer
    outcomes = {"c0-0": ["missed"]}
    assert RETRY_GAP == 2
    assert next_puzzle(many, outcomes, queue, answered=1) == "c0-1"
    assert next_puzzle(many, outcomes, queue, answered=2) == "c0-1"
    assert next_puzzle(many, outcomes, queue, answered=3) == "c0-0"   # the third puzzle after it
    assert returns_after(many, outcomes, queue, "c0-0", answered=1) == 2
    assert returns_after(many, outcomes, queue, "c0-0", answered=1, within=many[0]) == 2
    assert returns_after(CHAPTERS, {}, [("a1", 0)], "a1", within=CHAPTERS[0]) == 1  # a2, then it
    assert returns_after(many, outcomes, queue, "c0-0", answered=3) == 0
    # from another chapter too, and never within a chapter it is not part of
    assert next_puzzle(many, outcomes, queue, within=many[4], answered=3) == "c4-0"


def test_a_puzzle_put_off_waits_only_while_others_are_open():
    assert next_puzzle(CHAPTERS, {}, [("a1", 0)]) == "a2"
    assert next_puzzle(CHAPTERS, {}, [("a1", 0)], exclude=("a2", "b1", "b2")) == "a1"
    assert next_puzzle(CHAPTERS, {}, [("a1", 0)], within=("b1", "b2"), exclude=("b1", "b2")) is None
    assert returns_after(CHAPTERS, {}, [("b2", 0), ("a1", 0)], "a1") == 2
    assert returns_after([("a1", "a2")], {}, [("a1", 0)], "a1") == 1  # only one other puzzle is open


def test_the_queue_is_stored_with_its_marks_and_reads_an_older_save():
    assert parse_queue(queue_text([("a1", 4), ("b2", 7)])) == [("a1", 4), ("b2", 7)]
    assert parse_queue("a1,b2") == [("a1", -RETRY_GAP), ("b2", -RETRY_GAP)]  # no count: due at once
    assert next_puzzle(CHAPTERS, {}, parse_queue("b2")) == "b2"


def test_a_newcomer_who_puts_off_the_first_puzzle_meets_it_again_third(tmp_path):
    """Over the built-in packs (69 open puzzles once the first is put off): answer one, put it
    off, answer two more, and it is the next puzzle."""
    import datetime as dt

    from puzzles.chapters import Bank
    from saves.session import Session
    from puzzles import bank
    from puzzles.grading import grade
    from saves.store import SaveStore

    store = SaveStore(tmp_path)
    store.create_profile("Ada")
    session = Session(store, "Ada", Bank())
    when = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone.utc)

    def answer(pid: str) -> None:
        puzzle = bank.get(pid)
        graded = grade(puzzle, bank.key(puzzle), {"certainty": "low"}, strict=False)
        session.record(puzzle, graded, 0, 30.0, when)

    first = session.next_puzzle()
    answer(first)
    session.queue_retry(first)
    assert session.returns_after(first) == 2
    last = first
    for _ in range(2):
        nxt = session.continue_after(last)  # what Continue opens after each answer
        assert nxt != first
        assert session.chapter_of(nxt) == session.chapter_of(first)  # the same chapter first
        answer(nxt)
        last = nxt
    assert session.due_retry() == first == session.next_puzzle() == session.continue_after(last)
    assert session.continue_after(first) != first  # never the puzzle just answered


def _chapter(number: int, ids: tuple[str, ...], own: bool = False):
    from puzzles.chapters import Chapter

    return Chapter(id=f"mine-{number}" if own else ("kv-cache", "batching", "quantization")[number - 1],
                   number=number, title="", briefing="", expects=(), puzzle_ids=ids)


def test_where_a_player_stands_in_a_chapter():
    from puzzles.campaign import chapter_progress, standing, started

    outcomes = {"a1": ["missed", "cleared", "missed"], "a2": ["close"]}
    assert standing(outcomes, "a1") == "cleared"  # a clear stands, whatever came after
    assert standing(outcomes, "a2") == "close" and standing(outcomes, "b1") is None
    progress = chapter_progress(("a1", "a2", "a3"), outcomes, mastery=0.5)
    assert (progress.total, progress.tried, progress.cleared, progress.mastery) == (3, 2, 1, 0.5)
    assert not progress.done and chapter_progress(("a1",), outcomes).done
    assert not chapter_progress((), outcomes).done  # an empty chapter is never done
    assert started(("a3", "a2"), outcomes) and not started(("b1", "b2"), outcomes)


def test_the_chapters_before_one_not_yet_cleared():
    from puzzles.campaign import earlier_unfinished

    first, second, third = _chapter(1, ("a1",)), _chapter(2, ("b1",)), _chapter(3, ("c1",))
    chapters = [first, second, third]
    assert earlier_unfinished(third, chapters, {"b1": ["cleared"]}) == [first]
    assert earlier_unfinished(third, chapters, {"a1": ["cleared"], "b1": ["cleared"]}) == []
    assert earlier_unfinished(first, chapters, {}) == []
    assert earlier_unfinished(_chapter(4, ("m1",), own=True), chapters, {}) == []  # a player's own follows no order


def test_putting_off_and_taking_off_the_queue_and_counting_campaign_answers():
    from types import SimpleNamespace

    from puzzles.campaign import campaign_answers, outcomes_by_puzzle, put_off, taken_off

    queue = [("a1", 0), ("b1", 2)]
    assert put_off(queue, "a1", 5) == [("b1", 2), ("a1", 5)]  # put off again: to the end, marked anew
    assert taken_off(queue, "b1") == [("a1", 0)] and taken_off(queue, "zz") == queue
    tried = [SimpleNamespace(puzzle_id=p, outcome=o, mode=m)
             for p, o, m in (("a1", "missed", "campaign"), ("a1", "cleared", "drill"), ("b1", "close", "campaign"))]
    assert outcomes_by_puzzle(tried) == {"a1": ["missed", "cleared"], "b1": ["close"]}
    assert campaign_answers(tried) == 2  # the drill's answer does not bring a put-off puzzle back


def test_continue_stays_in_the_chapter_just_played_where_the_campaign_would_start_elsewhere(tmp_path):
    """A player who opened a later chapter from the map goes on in it, not back to the first."""
    import datetime as dt

    from puzzles import bank
    from puzzles.chapters import Bank
    from puzzles.grading import grade
    from saves.session import Session
    from saves.store import SaveStore

    store = SaveStore(tmp_path)
    store.create_profile("Ada")
    session = Session(store, "Ada", Bank())
    later = session.chapters[2]
    played = later.puzzle_ids[0]
    puzzle = bank.get(played)
    session.record(puzzle, grade(puzzle, bank.key(puzzle), {"certainty": "low"}, strict=False), 0, 30.0,
                   dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone.utc))
    assert session.chapter_of(session.next_puzzle()) == session.chapters[0]
    assert session.continue_after(played) == later.puzzle_ids[1]
    assert session.continue_after() == session.next_puzzle()
