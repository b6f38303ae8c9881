"""A puzzle as JSON (the scriptable face) and as plain text lines (the command line's card).

The JSON keys are a contract other tools read: `id`, `module`, `title`, `difficulty`, `scenario`,
`deployment` (plain inputs, the same names `ridge solve` takes), `objective`, `levers` (offered),
`reasons` and `reason_texts`, `ruled_out` (lever -> why the scenario excludes it), `card` (the
card's rows: every input the key depends on, in words), `ask` (the options in their one fixed
order; the bottleneck options are those that can bound the objective), `hints`; with the key,
also `answer` (`bottleneck` is what bounds the objective; `gain_bands` every band accepted;
`fidelities` the floor's and the realistic answer side by side, and, from the command line, the
measured one or why there is none).
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field

from engine.ids import Allocator, GainBand, Lever, Scheduler
from engine.bands import GAIN_BANDS, gain_band
from engine.catalog import PRECISION_BYTES
from engine.levers import DEFAULT_SPEC_K, lever_change
from engine.physics import constants

from puzzles import fmt
from puzzles.keys import Key, objective_bottleneck, unmeasured
from puzzles.puzzle import ESTIMATE_UNITS, MODULE_TITLES, OBJECTIVE_TEXT, Puzzle, goal_text
from puzzles.reasons import REASONS


def _clean(x):
    if isinstance(x, float):
        if not math.isfinite(x):
            return None
        if x.is_integer() and abs(x) < 2**53:
            return int(x)
    return x


BOTTLENECK_QUESTION = {
    "cost": "What bounds the cost per million output tokens here?",
    "tpot": "What bounds one decode step, the time per output token, here?",
    "ttft": "What bounds the time to first token here?",
    "stall": "What sets the longest pause in a stream here?",
    "p99-ttft": "What is the slowest 1% of times to first token made of here?",
    "p99-tpot": "What is the slowest 1% of times per output token made of here?",
    "goodput": "What costs the most requests their SLO here?",
    "gpus-for-slo": "What decides how many GPUs the SLOs need here?",
}
BAND_RULE = ("the band is the realistic gain's (the course's floor is only its ceiling); a gain within 10% of "
             "a band edge accepts the bands on both sides of it; where the deployment does not fit, a lever "
             "that makes it fit counts as over-4x, and the best is the one that fits with the best objective")


def answer_json(puzzle: Puzzle, key: Key, measured: bool = False) -> dict:
    """The key as JSON; with `measured`, `fidelities` also has the measured fidelity's answer
    (loads the kernel database: the command line asks for it, a live room never does)."""
    fidelities = key.fidelity_json()
    if measured:
        fidelities.update(measured_fidelity_json(key))
    return {
        "bottleneck": key.bottleneck, "best_lever": key.best_lever, "gain_band": key.gain_band,
        "reason": key.reason, "reason_text": REASONS[key.reason], "gain": _clean(key.gain),
        "band_gain": _clean(key.band_gain),
        "gain_bands": list(key.bands), "deployment_bottleneck": key.deployment_bottleneck,
        "fidelities": fidelities, "deciding": key.deciding,
        "levers": [{"name": lv.name, "gain": _clean(lv.gain), "band": gain_band(lv.gain), "note": lv.note}
                   for lv in key.levers],
        "estimates": {name: _clean(value) for name, value in key.estimates.items() if value is not None},
        "derivation": list(key.derivation),
    }


def measured_fidelity_json(key: Key) -> dict:
    """`measured` (verdict, best lever, gain, band and every offered lever's gain under the
    measured kernels, and which kernels) and `measured_reason` (null, or why there is none: an
    accelerator or precision without measured kernels, or the extra not installed)."""
    m = key.measured
    if m is None:
        return {"measured": None, "measured_reason": key.measured_reason}
    dep = m.report.deployment
    from engine import measured as kernels

    g = m.best.gain if m.report.fits else None
    best, untimed = m.best_lever, None
    if unmeasured(m, key.best_lever):
        # The kernels could not time the key's lever (a precision without measured kernels), so
        # the best of the levers they did time is not the measured best: saying so would read
        # as a flip of the key (clearing-test-12: int8 on an A100 left chunked prefill "best").
        untimed = next((lv.note for lv in m.levers if lv.name == key.best_lever), "not offered there")
        best, g = None, None
    out = {"bottleneck": objective_bottleneck(m.report), "best_lever": best,
           "gain": _clean(g), "gain_band": gain_band(g) if g is not None else None,
           "levers": [{"name": lv.name, "gain": _clean(lv.gain), "note": lv.note} for lv in m.levers],
           "backend": kernels.backend_label(dep.gpu)}
    if untimed is not None:
        out["best_lever_reason"] = f"{key.best_lever}, the key's lever, was not timed: {untimed}"
    return {"measured": out, "measured_reason": None}


def puzzle_json(puzzle: Puzzle, key: Key | None = None, measured: bool = False) -> dict:
    out = {
        "id": puzzle.id, "module": puzzle.module, "title": puzzle.title, "difficulty": puzzle.difficulty,
        "scenario": puzzle.scenario, "deployment": {k: _clean(v) for k, v in puzzle.deployment_dict().items()},
        "objective": puzzle.objective, "levers": list(puzzle.levers), "reasons": list(puzzle.reasons),
        "reason_texts": {r: REASONS[r] for r in puzzle.reasons},
        "ruled_out": dict(puzzle.ruled_out),
        "card": [{"field": name, "value": value}
                 for name, value in card_rows(puzzle.deployment, puzzle.levers, puzzle.ruled_out, puzzle.objective,
                                              puzzle.load)],
        "ask": {"bottleneck": list(puzzle.verdicts), "bottleneck_question": BOTTLENECK_QUESTION[puzzle.objective],
                "lever": list(puzzle.levers), "gain_band": list(GAIN_BANDS), "gain_band_rule": BAND_RULE,
                "reason": list(puzzle.reasons), "estimates": list(puzzle.estimates)},
        "hints": list(puzzle.hints),
    }
    if puzzle.load is not None:
        out["load"] = puzzle.load.to_dict()
    if key is not None:
        out["answer"] = answer_json(puzzle, key, measured)
    return out


def _si_params(n: float) -> str:
    return f"{n / 1e9:,.1f} B" if n >= 1e9 else f"{n / 1e6:,.0f} M"


def layout_text(dep) -> str:
    """How the GPUs share the model: one tensor-parallel group, or groups of the accelerator's
    tensor-parallel domain with whole replicas beyond it."""
    domain = dep.gpu.tp_domain
    if dep.gpus == 1:
        return "one GPU holds the whole model"
    if domain and dep.gpus > domain:
        return f"tensor-parallel groups of {domain} (the accelerator's domain), replicas beyond"
    return "one tensor-parallel group, each GPU holding a slice of every layer"


def card_rows(dep, levers=(), ruled_out=None, objective: str | None = None, load=None) -> list[tuple[str, str]]:
    """(field, value) rows: every input the answer key depends on, in words, and nothing the
    engine derives. The one card, shown by the command line and by the app alike; a test rebuilds
    the key from what it shows (`shown_fields`). A load puzzle (`load`, its LoadSpec) shows its
    traffic, fleet, scheduler and SLOs instead of a concurrency, and what each offered load lever
    would change."""

    m, g = dep.model, dep.gpu
    levers = tuple(levers)
    params = f"{_si_params(m.params)} params"
    if getattr(m, "is_moe", False):
        params += f" ({_si_params(m.active_params)} active: {m.experts_per_token} of {m.experts} experts per token)"
    peaks = ", ".join(f"{v:,.0f} {p}" for p, v in g.peak_tflops.items())
    rows = [
        ("Model", f"{m.name} ({m.id}) · {params}"),
        ("GPUs", f"{dep.gpus} × {g.name} ({g.id}) · {layout_text(dep)}"),
        ("Each GPU", f"{g.memory_gib:g} GiB · {g.bandwidth_tbps:g} TB/s · dense TFLOP/s {peaks} · links "
                     f"{g.link_gbps:g} GB/s, tensor-parallel groups of up to {g.tp_domain}"),
        ("Prompt", f"{dep.prompt:,} tokens (average)"),
        ("Output", f"{dep.output:,} tokens (average)"),
        ("Traffic", f"{dep.concurrency:,} sequence{'s' if dep.concurrency != 1 else ''} wanted at once"),
        ("Precision", f"weights {dep.weights} · KV cache {dep.kv}"),
    ]
    if load is not None:
        return _load_rows(dep, rows[:5] + rows[6:], levers, ruled_out, objective, load)
    serving = {"none": "one request at a time", "static": "static batches run to completion",
               "continuous": "continuous batching"}[dep.scheduler]
    alloc = {"paged": "paged KV blocks", "contiguous": "one contiguous KV region per request"}[dep.allocator]
    rows.append(("Serving", f"{serving} · {alloc}"))
    if dep.scheduler == Scheduler.STATIC:
        rows.append(("Answer spread", "lengths vary widely (exponential around the average): a static batch "
                                      "runs until its longest answer ends, and a sequence still in flight holds "
                                      "on average its prompt plus one whole average answer"))
    if dep.allocator == Allocator.CONTIGUOUS:
        longest = dep.reserve_length - dep.prompt
        rule = f"{dep.max_output:,} tokens" if dep.max_output else "four times the average answer, within the context"
        rows.append(("Reservation", f"each request reserves {dep.reserve_length:,} tokens up front: prompt + "
                                    f"longest answer allowed, {longest:,} ({rule})"))
    if dep.chunked_prefill or Lever.CHUNKED_PREFILL in levers:
        state = "on" if dep.chunked_prefill else "available"
        rows.append(("Chunked prefill", f"{state}: {dep.chunk_tokens:,}-token chunks between decode steps"))
    if dep.spec_k or Lever.SPECULATIVE_DECODING in levers:
        k = dep.spec_k or DEFAULT_SPEC_K
        state = "on" if dep.spec_k else "available"
        named = f" ({dep.draft_model.name})" if dep.draft_model is not None else ""
        rows.append(("Speculation", f"{state}: a draft{named} proposes {k} tokens, each accepted with "
                                    f"p = {dep.spec_alpha:g}; a draft token costs {dep.spec_draft_cost:g} of a "
                                    f"target step"))
        if getattr(m, "is_moe", False):
            reuse = constants()["moe_route_reuse"]
            rows.append(("Expert reuse", f"a drafted position routes to its own sequence's experts {reuse:.0%} of "
                                         f"the time (Cohere's measurement: verifying 4 tokens reads about 2.5x one "
                                         f"token's experts, not 4x), so a verification pass reads fewer experts "
                                         f"than as many independent tokens"))
    for lever, label in ((Lever.QUANTIZATION, "Quantization"), (Lever.KV_QUANTIZATION, "KV quantization")):
        if lever in levers:
            changed, note = lever_change(dep, lever)
            rows.append((label, f"the lever takes {note}" if changed is not None else f"not applicable: {note}"))
    if dep.shared_prefix:
        cached = "cached" if dep.prefix_caching else "not cached"
        paging = ("; caching it turns on paged KV blocks, which it needs to share the prefix's memory"
                  if not dep.prefix_caching and dep.allocator == Allocator.CONTIGUOUS else "")
        rows.append(("Shared prefix", f"{dep.shared_prefix:,} prompt tokens are one fixed text every request "
                                      f"starts with (not a conversation's own history), stored once for all "
                                      f"when cached ({cached}){paging}"))
    elif Lever.PREFIX_CACHING in levers:
        rows.append(("Shared prefix", "none: no two prompts start with the same tokens"))
    if dep.route_model is not None:
        rows.append(("Small model", f"{dep.route_model.name} ({dep.route_model.id}) could answer "
                                    f"{dep.route_fraction:.0%} of requests; routed, it gets its own replicas of the "
                                    f"fewest {g.id} it fits on (a power of two), scaled to its share"))
    elif Lever.ROUTING in levers:
        rows.append(("Small model", "none stated for this traffic"))
    default = dep.reserve_gib is None
    rows.append(("Reserve", f"{dep.reserve_gib_per_gpu:.3g} GiB per GPU for activations and workspace"
                            + (" (10% of its memory)" if default else "")))
    rows.append(("Efficiency", f"arithmetic at {dep.mfu:.0%} of peak (MFU)"))
    rows.append(("Price", f"${dep.price:g} per GPU-hour"))
    goal = objective or dep.objective
    rows.append(("Goal", f"lower the {OBJECTIVE_TEXT.get(goal, goal)}"))
    for lever, why in (ruled_out or {}).items():
        rows.append(("Ruled out", f"{lever}: {why}"))
    return rows


def _load_rows(dep, rows, levers, ruled_out, objective, load) -> list[tuple[str, str]]:
    """The rows of a load puzzle's card (see `card_rows`)."""
    from engine.load import links
    from engine.load.levers import default_split
    from engine.load.run import transfer_seconds

    if load.arrival == "closed":
        traffic = f"a closed loop of {load.users:,} users, each sending its next request {load.think_seconds:g} s " \
                  "(on average, exponential) after its last answer"
    else:
        kind = "Poisson arrivals" if load.arrival == "poisson" else "bursty arrivals (gaps twice as spread as Poisson's)"
        traffic = f"{load.qps:g} requests per second, {kind}"
    rows[1] = ("GPUs", f"{dep.gpus} × {dep.gpu.name} ({dep.gpu.id}) per instance · {layout_text(dep)}")
    rows.insert(5, ("Traffic", f"{traffic}; {load.requests:,} requests simulated (arrival seed {load.seed})"))
    spread = {"fixed": "every request exactly these lengths", "exponential": "lengths vary exponentially around "
              "these averages", "trace": "lengths follow a long-tailed log-normal (sigma 1) around these averages"}
    rows.insert(6, ("Lengths", spread[load.lengths]))
    if load.disaggregate is not None:
        p, d = load.disaggregate
        fleet = f"{p} prefill + {d} decode GPUs (instances of {dep.gpus}); KV caches cross {links.label(load)}"
    else:
        fleet = (f"{load.replicas} replicas of {dep.gpus} × {dep.gpu.id}, requests dealt round robin"
                 if load.replicas > 1 else f"one instance of {dep.gpus} × {dep.gpu.id}")
    sched = ("whole prompts prefilled first, every stream waiting meanwhile" if load.chunk_tokens is None
             else f"chunked prefill: at most {load.chunk_tokens:,} tokens per step, decodes first")
    queue = f"; arrivals finding {load.queue_cap} waiting are shed" if load.queue_cap is not None else ""
    rows += [("Fleet", fleet),
             ("Scheduler", f"continuous batching, paged KV blocks of {load.block_tokens}; up to {load.max_running} "
                           f"sequences running; {sched}{queue}; evicted sequences recompute"),
             ("SLOs", f"P99 TTFT ≤ {load.slo_ttft:g} s, P99 TPOT ≤ {load.slo_tpot:g} s (goodput counts requests "
                      f"within both)")]
    if dep.shared_prefix:
        rows.append(("Shared prefix", f"{dep.shared_prefix:,} prompt tokens are the same fixed text on every "
                                      f"request ({'cached' if dep.prefix_caching else 'not cached'})"))
    elif Lever.PREFIX_CACHING in levers:
        rows.append(("Shared prefix", "none: no two prompts start with the same tokens"))
    levers = tuple(levers)
    if Lever.BATCHING in levers:
        rows.append(("Batching lever", "let up to 256 sequences run at once"
                     + (" (already so)" if load.max_running >= 256 else "")))
    if Lever.CHUNKED_PREFILL in levers:
        rows.append(("Chunking lever", f"at most {max(load.lever_chunk_tokens, load.max_running):,} tokens per step, "
                                        "decodes first"))
    if Lever.MORE_GPUS in levers:
        rows.append(("More GPUs lever", "twice the fleet, at twice the GPU-hours"))
    if Lever.DISAGGREGATION in levers:
        split = default_split(dep, load)
        if split is not None:
            ms = float(transfer_seconds(dep, load, [dep.prompt])[0]) * 1e3
            rows.append(("Split lever", f"the same GPUs as {split[0]} prefill + {split[1]} decode; each average prompt's "
                                        f"KV cache ({fmt.gb(dep.model.kv_values_per_token * _kv_bytes(dep) * dep.prompt)}) "
                                        f"crosses {links.label(load)} in {ms:.3g} ms, added to its TTFT"))
    if Lever.ADMISSION_CONTROL in levers:
        cap = load.lever_queue_cap if load.lever_queue_cap is not None else load.max_running
        rows.append(("Queue-cap lever", f"shed arrivals that find {cap} requests already waiting"))
    rows += [("Reserve", f"{dep.reserve_gib_per_gpu:.3g} GiB per GPU for activations and workspace"),
             ("Price", f"${dep.price:g} per GPU-hour"),
             ("Goal", goal_text(objective or dep.objective))]
    for lever, why in (ruled_out or {}).items():
        rows.append(("Ruled out", f"{lever}: {why}"))
    return rows


def _kv_bytes(dep) -> float:

    return PRECISION_BYTES[dep.kv]


# The deployment fields the card states whatever the puzzle (a switch that is off shows by the
# absence of its row: no speculation, no chunking, no cached prefix); `shown_fields` adds the rest.
_ALWAYS_SHOWN = ("model", "gpu", "gpus", "prompt", "output", "concurrency", "weights", "kv", "scheduler",
                 "allocator", "reserve_gib", "mfu", "price", "objective", "shared_prefix", "spec_k",
                 "chunked_prefill", "prefix_caching", "route_model")


def shown_fields(dep, levers=()) -> set[str]:
    """The deployment fields whose values `card_rows` states for this deployment and these levers
    (every other field must leave the key unchanged: `puzzles.check`)."""
    shown = set(_ALWAYS_SHOWN)
    if dep.allocator == Allocator.CONTIGUOUS:
        shown.add("max_output")
    if dep.chunked_prefill or Lever.CHUNKED_PREFILL in levers:
        shown.update(("chunked_prefill", "chunk_tokens"))
    if dep.spec_k or Lever.SPECULATIVE_DECODING in levers:
        shown.update(("spec_k", "spec_alpha", "spec_draft_cost", "draft_model"))
    if dep.shared_prefix:
        shown.add("prefix_caching")
    if dep.route_model is not None:
        shown.update(("route_model", "route_fraction"))
    return shown


def deployment_lines(puzzle: Puzzle) -> list[str]:
    """The card's rows as aligned text lines (the command line's card)."""
    rows = card_rows(puzzle.deployment, puzzle.levers, puzzle.ruled_out, puzzle.objective, puzzle.load)
    return [f"{name:<16} {value}" for name, value in rows if name != "Goal"]


def card_lines(puzzle: Puzzle, hints: int = 0, width: int = 96) -> list[str]:
    module = MODULE_TITLES.get(puzzle.module, puzzle.module or "generated")  # a player chapter: its id
    lines = [f"{puzzle.id} | {module} | difficulty {puzzle.difficulty}", puzzle.title, ""]
    lines += textwrap.wrap(puzzle.scenario, width) + [""]
    lines += deployment_lines(puzzle)
    lines.append(f"{'Objective':<16} {goal_text(puzzle.objective)}")
    lines += ["", "Commit to:",
              f"  bottleneck   {BOTTLENECK_QUESTION[puzzle.objective]}",
              f"               {' | '.join(puzzle.verdicts)}",
              f"  best lever   {' | '.join(puzzle.levers)}",
              f"  gain band    {' | '.join(GAIN_BANDS)}",
              f"               {BAND_RULE}",
              "  reason"]
    lines += [f"    {r:<20} {REASONS[r]}" for r in puzzle.reasons]
    if puzzle.estimates:
        lines.append("  estimates    " + ", ".join(f"{e} ({ESTIMATE_UNITS[e]})" for e in puzzle.estimates)
                     + "; right within a factor of 1.5")
    lines.append("  certainty    low | medium | high")
    shown = max(0, min(hints, len(puzzle.hints)))
    for i in range(shown):
        lines.append(f"Hint {i + 1}       {puzzle.hints[i]}")
    if shown < len(puzzle.hints):
        lines.append(f"Hints        {len(puzzle.hints) - shown} more available (each costs points)")
    return lines


# -- the prediction form a card asks for ---------------------------------------------------------

@dataclass(frozen=True)
class FormSpec:
    """What a prediction form offers, all as ids in their fixed order (the form shows their
    words), with the texts that belong to this puzzle: its reasons', its estimates' names with
    their units, and the bottleneck question its objective asks."""

    bottlenecks: tuple[str, ...]
    levers: tuple[str, ...]
    bands: tuple[str, ...]
    reasons: tuple[tuple[str, str], ...] = ()  # (id, text)
    estimates: tuple[str, ...] = ()
    certainties: tuple[str, ...] = ("low", "medium", "high")
    estimate_labels: dict[str, str] = field(default_factory=dict)
    bottleneck_question: str = "Bottleneck"


def form_spec(puzzle: Puzzle, words, ask_reason: bool = True) -> FormSpec:
    """What the form offers for this puzzle: only the verdicts that can bound its objective,
    asked in words ("What bounds the time to first token here?"), and no reasons when the mode
    does not ask for one. Every mode's question view starts from it; `words` is the app's labels
    (tidy, estimate_with_unit, bottleneck_question)."""
    reasons = tuple((rid, REASONS.get(rid, words.tidy(rid))) for rid in getattr(puzzle, "reasons", ()) or ())
    estimates = tuple(getattr(puzzle, "estimates", ()) or ())
    return FormSpec(bottlenecks=tuple(puzzle.verdicts), levers=tuple(puzzle.levers), bands=tuple(GainBand),
                    reasons=reasons if ask_reason else (), estimates=estimates,
                    estimate_labels={est: words.estimate_with_unit(est) for est in estimates},
                    bottleneck_question=words.bottleneck_question(puzzle.objective))


def card_form_spec(card: dict, words) -> FormSpec:
    """The form for a live card (the JSON a host sends): the choices of its `ask`, in its order."""
    ask = card.get("ask") or {}
    texts = card.get("reason_texts") or {}
    return FormSpec(bottlenecks=tuple(ask.get("bottleneck") or ()), levers=tuple(ask.get("lever") or ()),
                    bands=tuple(ask.get("gain_band") or ()),
                    reasons=tuple((r, texts.get(r, words.tidy(r))) for r in ask.get("reason") or ()),
                    estimates=tuple(ask.get("estimates") or ()))
