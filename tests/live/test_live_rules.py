"""The live-match rules (puzzles/live.py) and the room on a fake clock: joining, answering once,
late locks at zero, keys hidden until the close, pause, resume after a restart, the board, the
spread, the exports; and a replayed match code being practice."""
from __future__ import annotations

import pytest

from app import labels
from saves.room import Room, Settings
from puzzles import generator, live
from puzzles.live import LiveRefusal
from saves.lobby import LobbyStore
from helpers.live import Clock, right_prediction, wrong_prediction


def body(index, p):
    return {"index": index, "bottleneck": p["bottleneck"], "lever": p["lever"], "gain": p["gain_band"],
            "reason": p["reason"], "certainty": p["certainty"], "estimates": p["estimates"]}


@pytest.fixture
def made():
    return generator.generate(5, 3, None)


def room_for(tmp_path, made, clock, **kw):
    settings = Settings(seed=5, count=3, pin="4321", seconds=30, **kw)
    return Room(settings, tmp_path, labels, clock=clock, made=made)


def refusal(call) -> LiveRefusal:
    with pytest.raises(LiveRefusal) as caught:
        call()
    return caught.value


def test_joining_is_refused_one_clear_reason_at_a_time():
    assert refusal(lambda: live.check_join("1", "4321", "ana", [], 0, 5)).status == 403
    assert refusal(lambda: live.check_join("4321", "4321", "", [], 0, 5)).status == 400
    assert refusal(lambda: live.check_join("4321", "4321", "<script>", [], 0, 5)).status == 400
    assert refusal(lambda: live.check_join("4321", "4321", "ANA", ["ana"], 1, 5)).status == 409
    full = refusal(lambda: live.check_join("4321", "4321", "bo", ["ana"], 1, 1))
    assert full.status == 503 and "full" in full.message
    assert live.check_join(" 4321 ", "4321", "  Ana   Lee ", [], 0, 5) == "Ana Lee"


def test_one_answer_per_question_late_locks_at_zero_and_keys_wait_for_the_close(tmp_path, made):
    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock)
    ana, bo, cy = (room.join("4321", n) for n in ("ana", "bo", "cy"))
    assert refusal(lambda: room.answer(ana, body(0, right_prediction(made[0])))).status == 409  # lobby
    room.start()
    state = room.state(ana)
    assert state["phase"] == "question" and "answer" not in state["puzzle"] and state["puzzle"]["id"] == "q1"
    assert refusal(lambda: room.reveal(0)).status == 409
    assert room.answer(ana, body(0, right_prediction(made[0])))["accepted"]
    assert refusal(lambda: room.answer(ana, body(0, wrong_prediction(made[0])))).status == 409
    assert refusal(lambda: room.answer(bo, {"index": 0, "bottleneck": "x"})).status == 400
    room.answer(bo, body(0, wrong_prediction(made[0])))
    clock.now += 31
    partial = {"index": 0, "bottleneck": right_prediction(made[0])["bottleneck"]}
    late = refusal(lambda: room.answer(cy, partial))
    assert late.status == 409 and "zero" in late.message
    reveal = {p["name"]: p for p in room.reveal(0)["players"]}
    assert reveal["ana"]["outcome"] == "cleared" and reveal["ana"]["points"] > 0
    assert reveal["bo"]["points"] < 0
    assert reveal["cy"]["late"] and reveal["cy"]["points"] == 0 and reveal["cy"]["outcome"] == "late"
    assert refusal(lambda: room.answer(cy, body(0, right_prediction(made[0])))).status == 409
    rows = room.rows()
    assert [r.name for r in rows] == ["ana", "cy", "bo"] and rows[1].answered == 0


def test_the_same_seat_rejoins_as_the_same_player(tmp_path, made):
    room = room_for(tmp_path, made, Clock(5_000.0))
    seat = "0123456789abcdef" * 2
    token = room.join("4321", "Ana", seat=seat)
    assert room.join("4321", " ana ", seat=seat) == token
    assert refusal(lambda: room.join("0000", "Ana", seat=seat)).status == 403
    assert refusal(lambda: room.join("4321", "Ana", seat="f" * 32)).status == 409
    assert refusal(lambda: room.join("4321", "Ana")).status == 409
    room.remove("Ana")
    assert refusal(lambda: room.join("4321", "Ana", seat=seat)).status == 403


def test_everyone_locked_in_closes_and_auto_moves_on(tmp_path, made):
    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock, auto=True, lobby_seconds=5, reveal_seconds=8)
    ana = room.join("4321", "ana")
    assert room.tick() == "lobby"
    clock.now += 5
    assert room.tick() == "question"
    room.answer(ana, body(0, right_prediction(made[0])))
    assert room.phase == "closed"
    clock.now += 8
    assert room.tick() == "question" and room.index == 1


def test_pause_freezes_the_clock(tmp_path, made):
    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock)
    room.join("4321", "ana")
    room.start()
    clock.now += 10
    room.pause()
    clock.now += 1000
    assert room.tick() == "question" and room.seconds_left() == pytest.approx(20)
    room.pause()
    clock.now += 19
    assert room.tick() == "question"
    clock.now += 2
    assert room.tick() == "closed"


def test_a_restarted_room_resumes_the_question_with_every_lock(tmp_path, made):
    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock)
    ana, bo = room.join("4321", "ana"), room.join("4321", "bo")
    room.start()
    room.answer(ana, body(0, right_prediction(made[0])))
    room.store.close()  # as if killed: nothing else is written

    clock.now += 29  # one second was left; the restart gives a short grace
    again = room_for(tmp_path, made, clock)
    assert again.resumed and again.phase == "question" and again.index == 0
    assert again.seconds_left() == pytest.approx(live.RESUME_GRACE_SECONDS)
    assert refusal(lambda: again.answer(ana, body(0, wrong_prediction(made[0])))).status == 409
    again.answer(bo, body(0, wrong_prediction(made[0])))
    assert {p["name"]: p["outcome"] for p in again.reveal(0)["players"]} == {"ana": "cleared", "bo": "missed"}


def test_a_finished_match_starts_afresh_and_keeps_the_old_file(tmp_path, made):
    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock)
    room.store.set("phase", "done")
    room.close()
    fresh = room_for(tmp_path, made, clock)
    assert fresh.phase == "lobby" and fresh.archived is not None and fresh.archived.exists()


def test_the_store_keeps_the_first_answer(tmp_path):
    store = LobbyStore(tmp_path / "x.sqlite")
    assert store.add_player("t1", "Ana", "ana", 1.0) and not store.add_player("t2", "ANA", "ana", 2.0)
    assert store.lock(0, "t1", {"lever": "a"}, 3.0) and not store.lock(0, "t1", {"lever": "b"}, 4.0)
    assert store.answers(0)[0].prediction == {"lever": "a"}
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_spread_board_and_the_facilitators_report(tmp_path, made):
    shares = live.spread([{"bottleneck": "a", "lever": "x"}, {"bottleneck": "b", "lever": "x"}],
                         {"bottleneck": ["a", "b", "c"], "lever": ["x", "y"]})
    assert shares["bottleneck"] == {"a": 0.5, "b": 0.5, "c": 0.0} and shares["lever"]["x"] == 1.0
    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock)
    ana, bo, cy = (room.join("4321", n) for n in ("ana", "bo", "cy"))
    room.start()
    room.answer(ana, body(0, right_prediction(made[0])))
    room.answer(bo, body(0, wrong_prediction(made[0])))
    assert [r.points for r in room.rows()] == [0, 0, 0]  # nothing moves while the question is open
    room.answer(cy, body(0, wrong_prediction(made[0])))
    assert room.phase == "closed" and max(r.points for r in room.rows()) > 0
    paths = room.export()
    assert [p.name for p in paths] == ["report.md", "questions.csv", "concepts.csv", "players.csv"]
    assert all(p.parent == tmp_path / "reports" / room.path.stem for p in paths)
    rep = room.report()
    q = rep.questions[0]
    wrong = wrong_prediction(made[0])
    assert (q.players, q.answered, q.right, q.cleared) == (3, 3, 1, 1)
    assert q.wrong == (wrong["bottleneck"], wrong["lever"]) and q.wrong_count == 2
    assert len(rep.questions) == 1  # the questions not closed yet are not in it
    assert rep.concepts and all(c.chances == 3 * c.questions for c in rep.concepts)
    players = paths[3].read_text(encoding="utf-8")
    assert players.splitlines()[1].startswith("1,ana,") and "cleared" in players
    assert "'=cmd" in live.results_csv([live.Row("=cmd", 0, 0, 0, 1)], 1)  # never a formula
    md = paths[0].read_text(encoding="utf-8")
    assert "## Questions" in md and "## Concepts" in md and "## Players" in md and "1/3 (33%)" in md


def test_the_hosts_next_key_never_skips_a_reveal_unseen(tmp_path, made):
    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock)
    room.join("4321", "ana")
    room.skip()
    assert room.phase == "question"
    room.skip()
    assert room.phase == "closed"
    too_soon = refusal(room.skip)
    assert too_soon.status == 409 and room.phase == "closed" and "read" in too_soon.message
    clock.now += live.MIN_REVEAL_SECONDS
    room.skip()
    assert room.phase == "question" and room.index == 1


def test_a_locked_room_takes_no_new_player_but_lets_one_back(tmp_path, made):
    room = room_for(tmp_path, made, Clock(5_000.0))
    seat = "ab" * 16
    ana = room.join("4321", "ana", seat=seat)
    assert room.lock_room()
    locked = refusal(lambda: room.join("4321", "bo"))
    assert locked.status == 423 and "locked" in locked.message
    assert room.join("4321", "ana", seat=seat) == ana
    assert not room.lock_room()
    room.join("4321", "bo")


def test_a_late_answer_says_late_everywhere(tmp_path, made):
    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock)
    ana, bo = room.join("4321", "ana"), room.join("4321", "bo")
    room.start()
    room.answer(ana, body(0, right_prediction(made[0])))
    clock.now += 31
    assert refusal(lambda: room.answer(bo, body(0, right_prediction(made[0])))).status == 409
    rows = {r["name"]: r for r in room.reveal(0)["players"]}
    assert rows["bo"]["outcome"] == "late" and rows["bo"]["points"] == 0
    assert room.reveal(0, viewer=bo)["you"]["outcome"] == "late"
    assert {r.name: r.outcomes[0] for r in room.rows()}["bo"] == "late"
    assert room.report().questions[0].late == 1 and "late" in live.report_markdown(room.report())


def test_a_removed_player_is_off_the_board_and_cannot_answer(tmp_path, made):
    room = room_for(tmp_path, made, Clock(5_000.0))
    ana, bo = room.join("4321", "ana"), room.join("4321", "bo")
    room.start()
    assert room.remove("BO")
    assert refusal(lambda: room.answer(bo, body(0, right_prediction(made[0])))).status == 403
    assert [r.name for r in room.rows()] == ["ana"]
    room.answer(ana, body(0, right_prediction(made[0])))
    assert room.phase == "closed"  # everyone still in has locked in


async def test_a_replayed_match_code_is_practice(tmp_path):
    from app.game import make_app
    from app.screens.match import MatchScreen
    from helpers.forms import fill, lock_in, settle
    from saves.match import read_result

    async def play() -> MatchScreen:
        app = make_app(solo=lambda: MatchScreen(code="R-42-1-1", player="Ada"), save_dir=tmp_path,
                       profile="Ada", strict=True, cursor_blink=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            screen = app.screen
            await settle(pilot, "s")
            if screen.phase != "question":  # the replay prompt
                await settle(pilot, "y")
            await fill(pilot, screen, screen.items[0], estimate_factor=1.0 if screen.writer else 100.0)
            await lock_in(pilot)
            return screen

    first = await play()
    path = first.writer.path
    before = path.read_bytes()
    second = await play()
    assert second.writer is None and path.read_bytes() == before
    assert read_result(path).answers[0].outcome == "cleared"


# --- the phase machine and the late-answer rule, as pure functions (no room, no store) ------------

def test_each_step_moves_the_phase_only_from_where_it_applies():
    assert live.step_to("open", "lobby", 0, 3) == ("question", 0)
    assert live.step_to("close", "question", 1, 3) == ("closed", 1)
    assert live.step_to("next", "closed", 1, 3) == ("question", 2)
    assert live.step_to("next", "closed", 2, 3) == ("done", 2)   # after the last question, the match ends
    for step, phase in (("open", "question"), ("close", "closed"), ("next", "question"), ("next", "done"),
                        ("close", "lobby")):
        assert live.step_to(step, phase, 1, 3) is None, (step, phase)


def test_the_countdown_a_screen_shows_in_each_phase():
    kw = dict(deadline=130.0, paused_left=None, first_join=100.0, lobby_seconds=5, closed_at=150.0, reveal_seconds=8)
    assert live.countdown("question", 110.0, auto=False, **kw) == 20.0
    assert live.countdown("question", 110.0, auto=False, **{**kw, "paused_left": 12.5}) == 12.5
    assert live.countdown("lobby", 102.0, auto=True, **kw) == 3.0
    assert live.countdown("closed", 151.0, auto=True, **kw) == 7.0
    # a hosted room waits for the host's key in the lobby and after a close: no countdown
    assert live.countdown("lobby", 102.0, auto=False, **kw) is None
    assert live.countdown("closed", 151.0, auto=False, **kw) is None
    assert live.countdown("done", 151.0, auto=True, **kw) is None


def test_pause_freezes_and_resumes_from_the_same_second():
    deadline, left = live.paused_clock(130.0, None, 110.0)
    assert (deadline, left) == (130.0, 20.0)
    assert live.paused_clock(deadline, left, 500.0) == (520.0, None)


def test_a_late_answer_is_kept_once_for_the_question_just_closed_and_never_after_its_reveal():
    assert live.keeps_late("closed", 1, 1, already=False, read_reveal=False)
    assert not live.keeps_late("closed", 1, 1, already=True, read_reveal=False)
    assert not live.keeps_late("closed", 1, 1, already=False, read_reveal=True)
    assert not live.keeps_late("closed", 2, 1, already=False, read_reveal=False)   # an older question
    assert not live.keeps_late("question", 1, 1, already=False, read_reveal=False)
    assert live.is_closed(0, 1, "question") and live.is_closed(1, 1, "done") and not live.is_closed(1, 1, "question")
    read = live.answer_refusal("closed", 1, 1, already=False, read_reveal=True)
    assert read is not None and "read its answer" in read.message
    assert "zero points" in live.answer_refusal("closed", 1, 1, already=False).message
    assert live.answer_refusal("question", 1, 1, already=False, read_reveal=False) is None


def test_wrong_pins_block_one_address_for_a_while_and_never_another():
    """PinGuard: the 3rd wrong pin within the window blocks that address (here tries=3), another
    address is untouched, the block lifts once the misses age out, and the oldest address is
    forgotten first when too many are remembered."""
    from puzzles.live import PinGuard

    now = [0.0]
    guard = PinGuard(tries=3, window=60.0, clock=lambda: now[0], addresses=2)
    for _ in range(2):
        guard.miss("10.0.0.1")
    assert not guard.blocked("10.0.0.1")
    guard.miss("10.0.0.1")
    assert guard.blocked("10.0.0.1") and not guard.blocked("10.0.0.2")
    now[0] = 61.0
    assert not guard.blocked("10.0.0.1")  # every miss is older than the window
    for _ in range(3):
        guard.miss("10.0.0.2")
    guard.miss("10.0.0.3")
    guard.miss("10.0.0.4")  # a third address: the oldest (10.0.0.2) is forgotten
    assert not guard.blocked("10.0.0.2")


def test_the_room_says_its_phase_in_one_line_and_a_kept_lobby_reopens_by_name(tmp_path, made):
    """What the headless host prints as each phase begins, and `ridge host --report NAME` finding
    the kept match's lobby by its bare name (with or without .sqlite) and its match in the file."""
    from saves.lobby import kept_lobby

    clock = Clock(5_000.0)
    room = room_for(tmp_path, made, clock)
    assert room.status_line() == "lobby open: 0 joined"
    ana = room.join("4321", "ana")
    room.join("4321", "bo")
    room.start()
    assert room.status_line() == "question 1 of 3 open"
    room.answer(ana, body(0, right_prediction(made[0])))
    clock.now += 31
    room.tick()
    assert room.status_line() == "question 1 of 3 closed: 1 of 2 locked in"
    path = room.path
    room.close()
    for name in (path.stem, path.name, str(path)):
        assert kept_lobby(name, tmp_path) == path
    kept = Room.kept(path, tmp_path, labels)
    try:
        assert (kept.count, kept.settings.seed, kept.phase) == (3, 5, "closed")
    finally:
        kept.close()
