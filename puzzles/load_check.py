"""`ridge puzzles check` for load puzzles: a key that holds across fidelities and arrival seeds.

A load puzzle's key is read from one simulated run, so the check asks more of it than of a
steady-state key:
- robust across fidelities: the floor and the realistic verdict and best lever agree at the
  puzzle's seed, and so does the measured fidelity where the accelerator is covered (its band
  must be one the key accepts);
- robust across arrival seeds: at each of 20 seeds (the puzzle's and the 19 after it) the floor
  and the realistic run name the key's verdict and best lever, and the realistic gain falls in a
  band the key accepts (or within 10% of one, as the grader allows); each fidelity must hold in
  at least 19 of the 20;
- clear: the best lever at least 15% ahead of the runner-up and a gain of at least 1.15, the
  tail's verdict part at least 10% larger than the next, at the puzzle's seed in both fidelities;
- fair: the verdict can bound the objective; the key's reason is offered and no offered reason
  the grader would mark wrong holds; no load lever the puzzle neither offers nor rules out comes
  within 2% of the best or beats it (`puzzles.keys.UNOFFERED_MARGIN`).
"""
from __future__ import annotations

from dataclasses import replace

from engine.bands import accepted_bands, gain_band
from engine.errors import RidgeError
from engine.ids import LOAD_LEVERS, OBJECTIVE_VERDICTS, Fidelity

from engine.load.run import times_cache

from puzzles.keys import LEVER_MARGIN, UNOFFERED_MARGIN
from puzzles.reasons import REASONS, accepted_reasons, reason_holds

SEEDS = 20
AGREE = 19
VERDICT_MARGIN = 1.10


def _margin(view) -> float:
    levers = [lv.gain for lv in view.levers if lv.gain is not None]
    if len(levers) < 2:
        return float("inf")
    return levers[0] / levers[1] if levers[1] > 0 else float("inf")


def seed_agreement(puzzle, key, fidelity: str, seeds: int = SEEDS, times=None,
                   enough: int | None = None) -> tuple[int, list[str]]:
    """(seeds agreeing with the key, what the first few others said) at one fidelity. With
    `enough`, the seeds left are not run once that many agree: the check asks only whether at
    least `enough` do, and says the count only when fewer do (then every seed has run)."""
    from puzzles.load_keys import solve_view

    times = times or times_cache()
    agree, others = 0, []
    for k in range(seeds):
        if enough is not None and agree >= enough:
            break
        spec = puzzle.load.with_(seed=puzzle.load.seed + k)
        known = key.solution if fidelity == Fidelity.FLOOR else key.realistic   # the key's own run
        view = known if k == 0 and known is not None and known.spec == spec else solve_view(puzzle, fidelity, spec, times)
        # a seed's gain near a band edge accepts both bands, as the grader does
        bands = accepted_bands([view.best.gain]) if view.best.gain is not None else ()
        band_ok = fidelity == Fidelity.FLOOR or bool(set(bands) & set(key.bands))
        if view.load.verdict == key.bottleneck and view.best_lever == key.best_lever and band_ok:
            agree += 1
        elif len(others) < 2:
            others.append(f"seed {spec.seed}: {view.load.verdict}, {view.best_lever} "
                          f"{view.best.gain:.2f}x" if view.best.gain is not None else f"seed {spec.seed}: n/a")
    return agree, others


def _measured_view(puzzle, times):
    """The measured fidelity's view at the puzzle's seed, or None where it is not covered."""

    from puzzles.load_keys import solve_view

    try:
        from engine import measured

        measured.check(puzzle.deployment.with_(fidelity=Fidelity.MEASURED))
    except (RidgeError, ImportError, AttributeError):
        return None
    return solve_view(puzzle, Fidelity.MEASURED, None, times)


def load_problems(puzzle, key, seeds: int = SEEDS, measured: bool = True) -> list[tuple[str, str]]:
    """(field, message) for everything wrong with a load puzzle (the module docstring's rules)."""

    out: list[tuple[str, str]] = []
    times = times_cache()
    views = [("floor", key.solution)] + ([("realistic", key.realistic)] if key.realistic is not None else [])
    for fidelity, message in key.band_problems():
        out.append(("expect.gain_band", f"not robust ({fidelity}): {message}"))
    for part, fidelity, floor, other in key.flips():
        out.append((part if part != "best_lever" else "levers",
                    f"not robust: the floor says {floor} but the {fidelity} step times say {other}"))
    if measured:
        view = _measured_view(puzzle, times)
        if view is not None:
            views.append(("measured", view))
            if view.load.verdict != key.bottleneck or view.best_lever != key.best_lever:
                out.append(("levers", f"not robust: measured says {view.load.verdict}, {view.best_lever} against the "
                                      f"key's {key.bottleneck}, {key.best_lever}"))
            elif view.best.gain is not None and gain_band(view.best.gain) not in key.bands:
                out.append(("expect.gain_band", f"not robust: measured gains {view.best.gain:.2f}x "
                                                f"({gain_band(view.best.gain)}), outside the accepted "
                                                f"{' or '.join(key.bands)}"))
    if key.bottleneck not in OBJECTIVE_VERDICTS[puzzle.objective]:
        out.append(("objective", f"the key's bottleneck {key.bottleneck} cannot bound {puzzle.objective}"))
    for name, view in views:
        if view.load.verdict_margin < VERDICT_MARGIN:
            out.append(("deployment", f"ambiguous ({name}): the tail's largest part is less than "
                                      f"{VERDICT_MARGIN - 1:.0%} ahead of the next ({view.load.shares})"))
        if _margin(view) < LEVER_MARGIN:
            out.append(("deployment", f"ambiguous ({name}): best lever {view.best_lever} is less than "
                                      f"{LEVER_MARGIN - 1:.0%} ahead of the runner-up"))
        if view.best.gain is None or view.best.gain < LEVER_MARGIN:
            out.append(("deployment", f"ambiguous ({name}): the best offered lever gains only "
                                      f"{view.best.gain if view.best.gain is None else round(view.best.gain, 3)}x"))
    if key.reason not in puzzle.reasons:
        out.append(("reasons", f"the key's reason '{key.reason}' ({REASONS[key.reason]}) is not among the candidates"))

    right = accepted_reasons(key.solution, key.bottleneck)
    for reason in puzzle.reasons:
        if reason not in right and any(reason_holds(reason, view) for _, view in views[:2]):
            out.append(("reasons", f"the candidate '{reason}' ({REASONS[reason]}) is also true here, so a player who "
                                   f"picks it would be graded wrong for a true reason; offer a false one"))
    unoffered = [lever for lever in LOAD_LEVERS if lever not in puzzle.levers and lever not in puzzle.ruled_out]
    if unoffered:
        from engine.load.levers import remember_outcome
        from puzzles.keys import at_fidelity

        for name, view in views[:2]:
            best = view.best.gain or 0.0
            # each probe starts from the base run (or sizing) the key already made at this fidelity
            remember_outcome(times, at_fidelity(puzzle.deployment, name), view.spec, puzzle.objective, view.load.outcome)
            for lever in unoffered:
                probe = _probe(puzzle, name, lever, times)
                if probe is not None and probe > max(best * UNOFFERED_MARGIN, 1.0):
                    out.append(("ruled_out", f"{lever} (not offered) gains {probe:.2f}x at the {name} fidelity, "
                                             f"against the offered best {view.best_lever} {best:.2f}x: offer it or "
                                             f"rule it out in words"))
    for fidelity in (Fidelity.FLOOR, Fidelity.REALISTIC):
        agree, others = seed_agreement(puzzle, key, fidelity, seeds, times, enough=min(AGREE, seeds))
        if agree < min(AGREE, seeds):
            out.append(("load.seed", f"not robust across arrival seeds: at the {fidelity} fidelity only {agree} of "
                                     f"{seeds} seeds give {key.bottleneck}, {key.best_lever} in "
                                     f"{' or '.join(key.bands)} ({'; '.join(others)})"))
    return out


def _probe(puzzle, fidelity: str, lever: str, times) -> float | None:
    """One unoffered lever's gain on the puzzle at one fidelity and its seed."""

    from puzzles.load_keys import solve_view

    view = solve_view(replace(puzzle, levers=(lever,)), fidelity, None, times)
    return view.best.gain
