"""`ridge drill plan --until DATE`: the reviews a player needs before an exam, headless.

Prints how many days are left, which concepts would not be recalled on the day (never answered, or
FSRS retrievability on the exam's morning below the target; campaign, exam and match answers count
as recalls beside the drill's, `puzzles.review.player_cards`), weakest first, how many reviews a day
see them all in time, and every concept's readiness. It only prints: `--save` also stores the
`--until` date as the profile's exam date, which the game's drill and home screen then plan toward.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json

from engine.errors import RidgeError


def build(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser("plan", help="the reviews to do before an exam date, and each concept's readiness")
    p.add_argument("--until", metavar="YYYY-MM-DD",
                   help="the exam date (default: the one saved in the profile)")
    p.add_argument("--save", action="store_true", help="also store --until as the profile's exam date, for the game")
    p.add_argument("--profile", metavar="NAME", help="whose schedule (default: the only profile, else the last used)")
    p.add_argument("--save-dir", metavar="DIR", help="the save folder (default: your data folder)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from puzzles.readiness import EXAM_SETTING
    from puzzles.drill import CONCEPT_TITLES, CONCEPTS
    from puzzles.review import exam_plan, local_date, parse_exam_date, profile_cards, readiness
    from saves.locations import data_dir
    from saves.store import SaveStore

    store = SaveStore(data_dir(args.save_dir))
    name = store.choose_profile(args.profile)
    if name is None or not store.header_path(name).exists():
        raise RidgeError("no player yet: play once (or name one with --profile) before planning reviews")
    profile = store.load(name)
    now = _dt.datetime.now(_dt.timezone.utc)
    text = args.until if args.until is not None else str(profile.settings.get(EXAM_SETTING, ""))
    try:
        exam = parse_exam_date(text, local_date(now, None))
    except ValueError as error:
        raise RidgeError(f"--until: {error}") from None
    if exam is None:
        raise RidgeError("say when the exam is: --until YYYY-MM-DD")
    if args.save and args.until is None:
        raise RidgeError("--save stores the --until date: give one")
    if args.save:
        store.update_settings(profile.name, **{EXAM_SETTING: exam.isoformat()})
    cards = profile_cards(profile)  # drill reviews and the recalls of every other mode
    plan = exam_plan(CONCEPTS, cards, now, exam)
    ready = readiness(CONCEPTS, cards, exam)
    if args.json:
        print(json.dumps({"profile": profile.name, "exam": exam.isoformat(), "days_left": plan.days_left,
                          "to_review": list(plan.to_review), "per_day": plan.per_day,
                          "readiness": ready}, indent=2))
        return 0
    print(f"{profile.name}: {plan.describe()}")
    for concept in sorted(ready, key=ready.get):
        mark = "ready" if concept not in plan.to_review else "review"
        print(f"  {CONCEPT_TITLES.get(concept, concept):<36} {ready[concept]:>4.0%}  {mark}")
    return 0
