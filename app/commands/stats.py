"""`ridge stats`: a player's figures, derived from the recorded attempts (never stored totals)."""
from __future__ import annotations

import argparse
import json


def build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", metavar="NAME",
                        help="whose figures (default: the only profile, else the last used)")
    parser.add_argument("--save-dir", metavar="DIR", help="the save folder (default: your data folder)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _n(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def run(args: argparse.Namespace) -> int:
    from puzzles.readiness import recall_now
    from puzzles.stats import derive
    from saves.locations import data_dir
    from saves.store import SaveStore

    store = SaveStore(data_dir(args.save_dir))
    name = store.choose_profile(args.profile)
    exists = name is not None and store.header_path(name).exists()
    profile, problems, uncounted, regraded = None, [], 0, 0
    if exists:
        profile = store.load(name)
        problems = profile.chain_problems()
        uncounted = len(profile.attempts) - len(profile.counted_attempts())
        regraded = profile.regraded_count()
    stats = derive(profile if profile is not None else [])  # hand-edited attempts are not counted
    recall = recall_now(profile)
    if args.json:
        out = {"profile": name, "exists": exists, **stats.to_json(), "recall": recall,
               "history_intact": not problems, "edited_not_counted": uncounted,
               "regraded": regraded}
        print(json.dumps(out, indent=2))
        return 0
    if not exists:
        from engine.bounds import one_line

        who = f"{name}" if name else f"anyone in {one_line(store.dir, escape=True)}"
        print(f"No attempts recorded for {who} yet.")
        return 0
    o = stats.by_outcome
    print(f"{name}: {_n(stats.attempts, 'attempt')}, score {stats.score}")
    print(f"  outcomes     cleared {o['cleared']}, lucky {o['lucky']}, close {o['close']}, "
          f"missed {o['missed']}")
    print(f"  streak       {_n(stats.streak_days, 'day')} (longest {stats.longest_streak_days})")
    cal = ", ".join(f"{c} {v.count} ({_percent(v.share_cleared)} cleared)"
                    for c, v in stats.calibration.items())
    print(f"  certainty    {cal}")
    if stats.by_module:
        print("  mastery      share of puzzles whose latest attempt was cleared")
        for module, m in stats.by_module.items():
            print(f"    {module:<22} {m.cleared_latest}/{m.puzzles} ({_percent(m.mastery)}), "
                  f"{_n(m.attempts, 'attempt')}, {_n(m.score, 'point')}")
    seen = [f"{concept} {share:.0%}" for concept, share in recall.items() if share is not None]
    if seen:
        print(f"  recall now   {', '.join(seen)} (drill and campaign answers; the rest not seen yet)")
    if problems:
        print(f"  history      edited by hand ({_n(len(problems), 'problem')}; "
              f"{_n(uncounted, 'edited attempt')} not counted): `ridge saves check` lists them")
    else:
        print("  history      intact (hash chain verified)")
    if regraded:
        print(f"  regraded     {_n(regraded, 'attempt')} stored an outcome its prediction does not earn "
              "against its key; counted at the outcome it earns")
    return 0
