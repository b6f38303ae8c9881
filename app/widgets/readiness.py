"""Readiness for an exam date, in words for the home screen: how many concepts would be recalled
on the day (FSRS retrievability at the exam's morning) and the weakest ones by name."""
from __future__ import annotations

EXAM_SETTING = "exam-date"  # the profile setting holding the exam date, YYYY-MM-DD


def readiness_lines(profile, now, tz=None, weakest: int = 4) -> list[str]:
    """Two lines when the player has set an exam date that has not passed; none otherwise."""
    from puzzles.drill import CONCEPT_TITLES, CONCEPTS
    from puzzles.review import DESIRED_RETENTION, local_date, parse_exam_date, profile_cards, readiness

    if profile is None:
        return []
    try:
        exam = parse_exam_date(str(profile.settings.get(EXAM_SETTING, "")), local_date(now, tz))
    except ValueError:
        return []
    if exam is None:
        return []
    ready = readiness(CONCEPTS, profile_cards(profile), exam, tz)
    days = (exam - local_date(now, tz)).days
    good = sum(r >= DESIRED_RETENTION for r in ready.values())
    head = (f"Exam {exam.isoformat()}, {'today' if days == 0 else f'in {days} day' + ('s' if days != 1 else '')}: "
            f"{good} of {len(ready)} concepts would be recalled on the day")
    low = sorted(ready, key=ready.get)[:weakest]
    tail = "Weakest: " + " · ".join(f"{CONCEPT_TITLES.get(c, c)} {ready[c]:.0%}" for c in low
                                    if ready[c] < DESIRED_RETENTION)
    return [head + "."] + ([tail + " (drill picks these first)."] if tail != "Weakest: " else [])


def recall_bars(profile, now, tz=None) -> tuple[str, list]:
    """The stats screen's view of the same cards as home and `ridge drill plan`: a heading and
    one bar per concept, its chance of recall on the exam's morning (with an exam date) or now."""
    from app.plots import Bar
    from puzzles.drill import CONCEPT_TITLES, CONCEPTS
    from puzzles.review import exam_moment, local_date, parse_exam_date, profile_cards, recall_words, retrievability

    cards = profile_cards(profile)
    try:
        exam = parse_exam_date(str(profile.settings.get(EXAM_SETTING, "")), local_date(now, tz)) if profile else None
    except ValueError:
        exam = None
    when = exam_moment(exam, tz) if exam else now
    heading = f"Chance of recall on the exam's morning, {exam.isoformat()}" if exam else "Chance of recall now"
    bars = []
    for concept in CONCEPTS:
        card = cards.get(concept)
        bars.append(Bar(CONCEPT_TITLES.get(concept, concept), retrievability(card, when),
                        recall_words(card, when, now)))
    return heading + " (every drill, campaign, exam and match answer counts)", bars
