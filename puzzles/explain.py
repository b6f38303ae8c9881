"""Why each option is right or wrong for THIS deployment, with its numbers.

The reveal and the grade's feedback both come from here: a fact per verdict rule (does it hold,
with the numbers that decide it), a story per lever (what it changes, by how much, and why), and
a fact per reason (see `puzzles.reasons.reason_fact`). Nothing here is general advice.
"""
from __future__ import annotations

from engine import physics
from engine.compare import OBJECTIVE_LABELS
from engine.ids import Lever, Objective, Scheduler, Verdict
from engine.bands import gain_band
from engine.levers import DEFAULT_SPEC_K

from puzzles import fmt
from puzzles.keys import Key, shown_gain
from puzzles.puzzle import OBJECTIVE_TEXT, Puzzle
from puzzles.reasons import REASONS, is_load, reason_fact, static_shares_text


def _load(key) -> bool:
    """A load puzzle's key (`puzzles.load_keys.LoadKey`): explained by `puzzles.load_reasons`."""
    return is_load(key.solution)


def objective_value_text(objective: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    return fmt.dollars(value) if objective == Objective.COST else fmt.secs(value)


def prefill_bound(r) -> bool:
    """One request's prefill waits on its arithmetic, not on reading the weights (the engine's
    rule for `prefill-compute` against `prefill-weights`)."""
    return r.prefill_compute_seconds > r.prefill_weight_seconds


def rule_holds(verdict: str, r) -> bool:
    """Whether a verdict's own rule is true for this report (ignoring the rules before it), read
    from the engine's one rule table (`engine.physics.RULES`): the objective's own rules first,
    then the six rules of cost, then what bounds one prompt's prefill. A default verdict
    (decode-weights, prefill-weights) holds where the rule just before it does not."""

    if verdict == Verdict.DOES_NOT_FIT:
        return not r.fits
    if not r.fits:
        return False
    figures = r.__dict__
    for objective in (r.deployment.objective, Objective.COST, Objective.TTFT):
        rules, default = physics.RULES[objective]
        for rule, ratio in rules:
            if rule == verdict:
                return bool(ratio(figures) > 1)
        if default == verdict:
            return not rules[-1][1](figures) > 1
    return False


def verdict_fact(verdict: str, r) -> str:
    """The numbers behind one verdict's rule, for this deployment."""
    dep = r.deployment
    if verdict == Verdict.DOES_NOT_FIT:
        if not r.fits:
            return r.fit_problem
        return (f"weights {fmt.gib(r.weight_bytes)} plus reserve {fmt.gib(r.reserve_bytes)} fit in "
                f"{fmt.gib(r.memory_bytes)}, leaving {fmt.gib(r.usable_kv_bytes)} for the KV cache")
    if not r.fits:
        return "nothing runs until the deployment fits"
    if verdict == Verdict.KV_CAPACITY:
        text = (f"the cache holds {fmt.num(r.max_concurrency)} sequences of {fmt.num(r.seq_len_avg)} tokens "
                f"and the traffic wants {fmt.num(dep.concurrency)}")
        if dep.scheduler == Scheduler.NONE:
            text += ", but with no batching only one runs at a time, so the cap never binds"
        return text
    if verdict in (Verdict.PREFILL_COMPUTE, Verdict.PREFILL_WEIGHTS) and (dep.objective in (Objective.TTFT, Objective.STALL) or verdict == Verdict.PREFILL_WEIGHTS):
        compute, read = r.prefill_compute_seconds, r.prefill_weight_seconds
        if prefill_bound(r):
            return (f"one request's {fmt.num(dep.prompt)}-token prefill computes for {fmt.secs(compute)}, "
                    f"longer than the {fmt.secs(read)} it takes to read the weights")
        return (f"one request's {fmt.num(dep.prompt)}-token prefill computes for only {fmt.secs(compute)} but "
                f"waits {fmt.secs(read)} to read the weights")
    if verdict == Verdict.PREFILL_COMPUTE:
        return prefill_share_fact(r)
    if r.decode_time_shares is not None and verdict in (Verdict.DECODE_COMPUTE, Verdict.DECODE_KV,
                                                          Verdict.DECODE_WEIGHTS):
        return static_shares_text(r)
    if verdict == Verdict.DECODE_COMPUTE:
        return (f"a step's arithmetic takes {fmt.secs(r.decode_compute_seconds)} against "
                f"{fmt.secs(r.decode_memory_seconds)} of memory traffic "
                f"(intensity {fmt.num(r.intensity)} against a ridge of {fmt.num(r.ridge)})")
    return (f"a step reads {fmt.gb(r.decode_kv_bytes_per_step)} of KV cache and "
            f"{fmt.gb(r.decode_weight_bytes_per_step)} of weights")


def prefill_share_fact(r) -> str:
    """The prefill share with the figures that make it: a batch's prompts (the compute each is
    charged in the steady state) against the same batch's decoding, so share = prompts / (prompts
    + decoding) can be checked from the line. (It once stood beside a lone request's prefill time
    and the time per token, from which it could not be worked out.)"""
    batch, charge, share = r.batch, r.prefill_charge_seconds, r.prefill_share
    prompts = batch * charge
    decoding = prompts * (1 - share) / share if share > 0 else r.deployment.output * r.tpot_seconds
    steps = r.deployment.output * r.tpot_seconds
    if abs(decoding - steps) <= 0.005 * decoding:
        how = f"{fmt.num(r.deployment.output)} steps × {fmt.secs(r.tpot_seconds)} = {fmt.secs(decoding)}"
    else:  # a static batch's steps shorten as its sequences finish
        how = f"{fmt.secs(decoding)} (its steps shorten as sequences finish)"
    each = (f"its prompt, {fmt.secs(prompts)}" if batch == 1
            else f"{fmt.num(batch)} prompts × {fmt.secs(charge)} = {fmt.secs(prompts)}")
    return (f"prefill takes {fmt.pct(share)} of the GPU time: a batch spends {each} computing, "
            f"against {how} decoding")


def why_not_verdict(guess: str, key: Key, truth: str | None = None) -> str:
    """One line: why `guess` is not the verdict `truth` (the key's bottleneck when None)."""
    if _load(key):
        from puzzles.load_reasons import why_not_verdict as load_why_not

        return load_why_not(guess, key, truth)
    r = key.solution.report
    truth = truth or key.bottleneck
    if guess == truth:
        return f"{guess}: right: {verdict_fact(guess, r)}"
    if rule_holds(guess, r):
        return (f"{guess}: true as far as it goes ({verdict_fact(guess, r)}), but an earlier rule decides: "
                f"{truth}: {verdict_fact(truth, r)}")
    if guess == Verdict.DECODE_WEIGHTS and truth == Verdict.DECODE_KV:
        return f"{guess}: no: {verdict_fact(guess, r)}, so the cache read is the larger"
    if guess == Verdict.DECODE_KV and truth == Verdict.DECODE_WEIGHTS:
        return f"{guess}: no: {verdict_fact(guess, r)}, so the weight read is the larger"
    return f"{guess}: does not hold: {verdict_fact(guess, r)}"


def lever_story(name: str, key: Key) -> str:
    """What lever `name` does to this deployment, in numbers, ending with its gain."""
    if _load(key):
        from puzzles.load_reasons import lever_story as load_story

        return load_story(name, key)
    lv = next((x for x in key.levers if x.name == name), None)
    if lv is None:
        return f"{name}: not offered in this puzzle"
    base = key.solution.report
    dep = base.deployment
    objective = dep.objective
    after = lv.report
    if after is None and name != Lever.ROUTING:
        return f"{name}: does not apply here ({lv.note})"
    if name == Lever.ROUTING:
        if lv.gain is None or lv.gain == 1.0 and "no smaller model" in lv.note:
            return f"routing: does not apply here ({lv.note})"
        return f"routing: {lv.note}; {OBJECTIVE_LABELS[objective]} gains {fmt.gain(lv.gain)}"
    if not base.fits:
        if after is not None and after.fits:
            return (f"{name}: {lv.note} makes it fit ({fmt.gib(after.usable_kv_bytes)} left for the cache, "
                    f"{fmt.num(after.max_concurrency)} sequences); {OBJECTIVE_LABELS[objective]} then "
                    f"{objective_value_text(objective, after.objective_value())}")
        return f"{name}: {lv.note}, and it still does not fit"
    if after is None or not after.fits:
        return f"{name}: {lv.note}, and then it no longer fits"
    detail = _mechanism(name, base, after, lv.note)
    before_v, after_v = base.objective_value(), after.objective_value()
    return (f"{name}: {detail}; {OBJECTIVE_LABELS[objective]} {objective_value_text(objective, before_v)} -> "
            f"{objective_value_text(objective, after_v)} ({fmt.gain(lv.gain)})")


def _mechanism(name: str, r, a, note: str) -> str:
    batch = "" if a.batch == r.batch else f"; batch {fmt.num(r.batch)} -> {fmt.num(a.batch)}"
    if name == Lever.BATCHING:
        return f"{note}{batch}"
    if name == Lever.PAGED_KV:
        return (f"the cache holds {fmt.num(r.max_concurrency)} -> {fmt.num(a.max_concurrency)} sequences "
                f"once nothing is reserved ahead of use{batch}")
    if name == Lever.PREFIX_CACHING:
        return (f"prefill per request {fmt.secs(r.prefill_seconds)} -> {fmt.secs(a.prefill_seconds)}, prefill share "
                f"{fmt.pct(r.prefill_share)} -> {fmt.pct(a.prefill_share)}; decode steps are untouched{batch}")
    if name in (Lever.QUANTIZATION, Lever.KV_QUANTIZATION):
        text = (f"{note}: per step, weights {fmt.gb(r.decode_weight_bytes_per_step)} -> "
                f"{fmt.gb(a.decode_weight_bytes_per_step)} and KV {fmt.gb(r.decode_kv_bytes_per_step)} -> "
                f"{fmt.gb(a.decode_kv_bytes_per_step)}{batch}")
        if a.compute_precision != r.compute_precision:
            text += f"; arithmetic runs at {a.compute_precision} ({fmt.num(a.peak_flops / 1e12)} TFLOP/s)"
        if r.prefill_share > 0.2 and name == Lever.QUANTIZATION:
            text += f"; prefill {fmt.secs(r.prefill_seconds)} -> {fmt.secs(a.prefill_seconds)}"
        return text
    if name == Lever.SPECULATIVE_DECODING:
        k = a.deployment.spec_k or DEFAULT_SPEC_K
        where = r.intensity / r.ridge
        expected = a.spec_expected_tokens or 0.0
        if a.decode_compute_seconds > a.decode_memory_seconds:
            return (f"at batch {fmt.num(r.batch)}, verifying {k + 1} positions per sequence needs {k + 1}x the FLOPs "
                    f"of a plain step, and the step already runs at {fmt.pct(where)} of the ridge: verification "
                    f"takes {fmt.secs(a.decode_compute_seconds)} of arithmetic for {expected:.2f} tokens")
        return (f"at batch {fmt.num(r.batch)} the step runs at {fmt.pct(where)} of the ridge, so the {k + 1}x "
                f"verification FLOPs fit in idle arithmetic: {expected:.2f} tokens per verification")
    if name == Lever.CHUNKED_PREFILL:
        return (f"prefill is interleaved in chunks, so the worst decode stall drops {fmt.secs(r.worst_stall_seconds)} -> "
                f"{fmt.secs(a.worst_stall_seconds)}, but no prefill and no step gets shorter; TTFT "
                f"{fmt.secs(r.ttft_seconds)} -> {fmt.secs(a.ttft_seconds)}")
    if name == Lever.MORE_GPUS:
        return (f"{note}: each step {fmt.secs(r.step_seconds)} -> {fmt.secs(a.step_seconds)} and prefill "
                f"{fmt.secs(r.prefill_seconds)} -> {fmt.secs(a.prefill_seconds)}, at twice the GPU-hours{batch}")
    return note


def _gains_text(key: Key) -> str:
    """The best lever's realistic gain, which keys the band, with the floor's beside it as the
    ceiling, and every band a prediction may name."""
    if key.gain is None:
        return f"makes it fit, which counts as {key.gain_band}"
    return f"{shown_gain(key)}; accepted: {' or '.join(key.bands)}"


def reveal_lines(puzzle: Puzzle, key: Key) -> list[str]:
    """The reveal: the key, then why every other option is wrong for this deployment."""
    if _load(key):
        from puzzles.load_reasons import reveal_lines as load_reveal

        return load_reveal(puzzle, key)
    r = key.solution.report
    lines = [
        f"Bottleneck   {key.bottleneck}: {verdict_fact(key.bottleneck, r)}",
        f"Best lever   {key.best_lever} ({_gains_text(key)})",
        f"Reason       {key.deciding}",
        "",
        "Why not the other verdicts:",
    ]
    lines += [f"  {why_not_verdict(v, key)}" for v in puzzle.verdicts if v != key.bottleneck]
    lines.append(f"Levers, on {OBJECTIVE_TEXT[puzzle.objective]}, best first:")
    lines += [f"  {lever_story(lv.name, key)}" for lv in key.levers]
    others = [x for x in puzzle.reasons if x != key.reason]
    if others:
        lines.append("The other reasons on offer:")
        lines += [f"  '{REASONS[x]}': {reason_fact(x, key.solution)}" for x in others]
    if puzzle.estimates:
        lines.append("Estimates:")
        lines += [f"  {name} = {fmt.value(name, key.estimates[name])}" for name in puzzle.estimates]
    return lines


def band_text(band: str) -> str:
    return {"under-1.25x": "under 1.25x", "1.25-2x": "1.25x to 2x", "2-4x": "2x to 4x", "over-4x": "over 4x"}[band]


__all__ = ["rule_holds", "verdict_fact", "why_not_verdict", "lever_story", "reveal_lines", "band_text", "gain_band"]
