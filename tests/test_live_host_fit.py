"""The host's screen at 80x24: the answer wraps under its own value, the board's rows stay one
line each (the Cleared column beside the points), and the spread's bars fit their pane."""
from __future__ import annotations

from app.live.host_app import HostApp
from app import labels
from saves.room import Room, Settings
from app.live.web import Site
from puzzles import generator
from screen_text import screen_lines
from tests.live_helpers import right_prediction
from pilot_wait import settled


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_the_host_screen_fits_80x24(tmp_path):
    made = generator.generate(5, 2, None)
    room = Room(Settings(seed=5, count=2, pin="4321", seconds=60), tmp_path, labels, clock=Clock(), made=made)
    app = HostApp(room, Site("127.0.0.1", 8300, "http://127.0.0.1:8300", 50, ["true"]), serve=False)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            ana, bo = room.join("4321", "ana"), room.join("4321", "bo")
            room.start()
            p = right_prediction(made[0])
            room.answer(ana, {"index": 0, "bottleneck": p["bottleneck"], "lever": p["lever"], "gain": p["gain_band"],
                              "reason": p["reason"], "certainty": p["certainty"], "estimates": p["estimates"]})
            app.refresh_view()
            await settled(pilot)
            head = " ".join(" ".join(screen_lines(app)[:8]).split())
            assert "n closes it now" in head, head  # the question's head line wraps, never cut
            width = app.query_one("#left-text").content_size.width
            spread = str(app.query_one("#left-text").render()).splitlines()
            assert all(len(line) <= width for line in spread), spread
            room.close_question()
            app.refresh_view()
            await settled(pilot)
            lines = screen_lines(app)
            assert any("Points" in line and "Cleared" in line for line in lines), lines
            assert any("ana" in line and "1/1" in line for line in lines), lines
            left = [line[:app.query_one("#left-text").region.right].rstrip() for line in lines]
            because = next(i for i, line in enumerate(left) if line.lstrip().startswith("Because"))
            col = left[because].index("Because")
            assert left[because + 1][col:col + 12].strip() == "", left[because:because + 3]  # wraps under the value
    finally:
        room.close()
