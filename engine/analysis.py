"""The analysis of one deployment, exactly as DESIGN.md defines it, as one pure function.

Units are SI throughout: bytes, seconds, FLOP and FLOP/s; GiB = 2**30 bytes. `analyze` returns an
immutable Report holding every quantity of the `ridge solve --json` contract except the levers
(see `engine.levers`). The arithmetic itself lives once in `engine.physics`, which the numpy grid
calls too; this module turns its figures into a Report with the verdicts, the margins of each
verdict rule and, in the realistic fidelity, the corrections that moved the figures.
"""
from __future__ import annotations

from engine import physics, units
from engine.catalog import PRECISION_BYTES
from engine.deployment import Deployment
from engine.ids import DEPLOYMENT_VERDICTS, Fidelity, Objective, Precision, Scheduler, Verdict
from engine.physics import LADDER, harmonic, static_dense_sum, static_ladder_sum  # noqa: F401 (re-exported)
from engine.record import REQUIRED, Record

GIB = 2**30
# Enum members bound once (an enum class attribute costs ~0.2 us on Python 3.11; a solve runs a
# dozen analyses).
_FLOOR, _MEASURED, _NONE = Fidelity.FLOOR, Fidelity.MEASURED, Scheduler.NONE
_COST, _TPOT, _STALL, _PREFILL_WEIGHTS = Objective.COST, Objective.TPOT, Objective.STALL, Verdict.PREFILL_WEIGHTS
VERDICTS = tuple(str(v) for v in DEPLOYMENT_VERDICTS)   # the six-rule whole-deployment verdicts, in rule order
ALL_VERDICTS = physics.VERDICT_CODES   # the six plus prefill-weights, in the fixed option order


class Report(Record):
    """Every figure of one deployment. When `fits` is false the figures from max_concurrency on
    are None. Units: bytes, seconds, FLOP, FLOP/s; `margins` pairs each verdict rule with its
    deciding ratio (1.0 is the rule's threshold). `objective_bottleneck` is what bounds the
    deployment's objective; `corrections` lists (name, what it changed) in the realistic fidelity."""

    FIELDS = dict(
        deployment=REQUIRED, params=REQUIRED, active_params=REQUIRED, weight_bytes=REQUIRED,
        kv_bytes_per_token=REQUIRED, kv_replication=REQUIRED, ridge=REQUIRED, peak_flops=REQUIRED,
        compute_precision=REQUIRED, seq_len_avg=REQUIRED, memory_bytes=REQUIRED,
        reserve_bytes=REQUIRED, usable_kv_bytes=REQUIRED, fits=REQUIRED, fit_problem=REQUIRED,
        kv_tokens_held=None, kv_bytes_per_sequence=None, draft_weight_bytes=0.0,
        max_concurrency=None, batch=None, decode_weight_bytes_per_step=None,
        decode_kv_bytes_per_step=None, decode_bytes_per_step=None, decode_flops_per_step=None,
        decode_memory_seconds=None, decode_compute_seconds=None, step_seconds=None,
        step_extra_seconds=None, step_overhead_seconds=None, tensor_parallel=None, tp_groups=None,
        tpot_seconds=None, intensity=None, prefill_flops=None, prefill_seconds=None,
        prefill_compute_seconds=None, prefill_weight_seconds=None, prefill_comm_seconds=None,
        prefill_charge_seconds=None,
        ttft_seconds=None, worst_stall_seconds=None, prefill_share=None,
        throughput_tokens_per_s=None, cost_per_million_output_tokens=None,
        spec_expected_tokens=None, capacity_ratio=None, decode_time_shares=None,
        bottleneck=Verdict.DOES_NOT_FIT, objective_bottleneck=Verdict.DOES_NOT_FIT,
        fidelity="floor", margins=(),
    )

    @property
    def corrections(self) -> tuple:
        """(name, what it changed) for each realistic correction that moved this deployment's
        figures; empty under the floor. Worded on first use, since most callers never read it."""
        cached = self.__dict__.get("_corrections")
        if cached is None:
            figures = self.__dict__   # a report made by analyze keeps every figure of physics.evaluate
            cached = (_corrections(self.deployment, figures)
                      if self.fidelity != Fidelity.FLOOR and self.fits and "step_extra_seconds" in figures else ())
            self.__dict__["_corrections"] = cached
        return cached

    def objective_value(self, objective: str | None = None) -> float | None:
        """The figure a puzzle's objective asks to lower: cost, TPOT, TTFT, or the stall (the
        longest pause a streaming user sees while another request's prefill holds the GPU)."""
        objective = objective or self.deployment.objective
        if not self.fits:
            return None
        if objective == _COST:
            return self.cost_per_million_output_tokens
        if objective == _TPOT:
            return self.tpot_seconds
        if objective == _STALL:
            return self.worst_stall_seconds
        return self.ttft_seconds


def experts_touched(experts: int, per_token: int, tokens: float) -> float:
    """Expected distinct experts a step's tokens route to (see engine.physics)."""
    return physics.experts_touched(experts, per_token, tokens)


def weight_bytes_read(dep: Deployment, tokens: float, bytes_per_weight: float) -> float:
    """Weight bytes one forward pass over `tokens` tokens reads (see engine.physics)."""
    return physics.weight_read_bytes(dep.model, tokens, bytes_per_weight)


def kv_replication(dep: Deployment) -> float:
    """Copies of each token's KV the GPUs hold between them (see engine.physics)."""
    m = dep.model
    return physics.kv_replication(float(dep.gpus), m.kv_heads, m.is_mla)


_FIT_KEYS = ("weight_bytes", "kv_bytes_per_token", "kv_replication", "peak_flops", "compute_precision",
             "ridge", "seq_len_avg", "memory_bytes", "reserve_bytes", "usable_kv_bytes")
_RUN_KEYS = ("batch",
             "decode_weight_bytes_per_step", "decode_kv_bytes_per_step", "decode_bytes_per_step",
             "decode_flops_per_step", "decode_memory_seconds", "decode_compute_seconds", "step_seconds",
             "step_extra_seconds", "step_overhead_seconds", "tensor_parallel", "tp_groups", "tpot_seconds",
             "intensity", "prefill_flops", "prefill_seconds", "prefill_compute_seconds",
             "prefill_weight_seconds", "prefill_comm_seconds", "prefill_charge_seconds", "ttft_seconds",
             "worst_stall_seconds", "prefill_share", "throughput_tokens_per_s", "cost_per_million_output_tokens")


def analyze(dep: Deployment, shared: physics.SharedPasses | None = None) -> Report:
    """Analyse one deployment: memory budget, batch, decode step, prefill, throughput, verdicts.
    `shared` (one solve's) lets the analyses of a solve share their passes."""
    m, g = dep.model, dep.gpu
    passes = physics.Passes if shared is None else shared
    if dep.fidelity == _MEASURED:
        from engine import measured   # the optional extra, loaded only for this fidelity

        measured.check(dep)
        passes = measured.passes_for if shared is None else shared.of(measured.passes_for)
    f = physics.evaluate(dep, physics.numeric_inputs(dep), passes=passes, shared=shared)
    gpus = dep.gpus
    if not f["fits"]:
        return _unfit(dep, f)
    f["batch"] = int(f["batch"]) if dep.scheduler != _NONE else 1
    max_conc = int(f["max_concurrency"])
    # The figures' dict becomes the report's own attributes (it holds every Report field by name).
    # The six rules' ratios are worked once: they are the margins and name the verdict.
    ratios = physics.rule_ratios(f, _COST)
    bottleneck = physics.rule_verdict(ratios, _COST)
    objective_bottleneck = bottleneck if dep.objective == _COST else \
        physics.VERDICT_CODES[physics.objective_verdict_code(f, dep.objective)]
    f["deployment"] = dep
    f["params"], f["active_params"] = m.params, m.active_params
    f["fidelity"] = dep.fidelity
    f["fits"], f["fit_problem"] = True, ""
    f["max_concurrency"] = max_conc
    if not dep.spec_k:
        f["spec_expected_tokens"] = None
    f["bottleneck"], f["objective_bottleneck"] = bottleneck, objective_bottleneck
    f["margins"] = (*ratios, (_PREFILL_WEIGHTS, _ratio(f["prefill_weight_seconds"], f["prefill_compute_seconds"])))
    if dep.fidelity == _FLOOR:
        f["tensor_parallel"], f["tp_groups"] = gpus, 1
    report = object.__new__(Report)
    object.__setattr__(report, "__dict__", f)
    return report


def _unfit(dep: Deployment, f: dict) -> Report:
    """The report of a deployment that does not fit: the memory figures and what is short."""
    m, g = dep.model, dep.gpu
    common = {key: f[key] for key in _FIT_KEYS}
    common.update(deployment=dep, params=m.params, active_params=m.active_params, fidelity=dep.fidelity,
                  kv_tokens_held=f["kv_tokens_held"], kv_bytes_per_sequence=f["kv_bytes_per_sequence"],
                  draft_weight_bytes=f["draft_weight_bytes"])
    usable, memory, reserve, weight_bytes = f["usable_kv_bytes"], f["memory_bytes"], f["reserve_bytes"], f["weight_bytes"]
    if usable <= 0:
        need = (weight_bytes + f["draft_weight_bytes"] + reserve) / GIB
        draft = f" and the draft's {f['draft_weight_bytes'] / GIB:.1f} GiB" if f["draft_weight_bytes"] else ""
        problem = (f"weights ({weight_bytes / GIB:.1f} GiB){draft} plus reserve ({reserve / GIB:.1f} GiB) need "
                   f"{need:.1f} GiB but {dep.gpus} x {g.id} hold {memory / GIB:.1f} GiB")
        return Report(**common, fits=False, fit_problem=problem,
                      margins=((Verdict.DOES_NOT_FIT, (weight_bytes + f["draft_weight_bytes"] + reserve) / memory),))
    per_seq = (f["kv_bytes_per_sequence"] + f["shared_kv_bytes"]) / GIB
    problem = (f"after weights and reserve, {usable / GIB:.2f} GiB is left for the KV cache, less than "
               f"the {per_seq:.2f} GiB one sequence needs")
    return Report(**common, fits=False, fit_problem=problem, max_concurrency=0,
                  margins=((Verdict.DOES_NOT_FIT, per_seq * GIB / usable),))


def _ratio(a: float, b: float) -> float:
    """a / b, with a zero denominator read as "far past the threshold" (or at it, when both are 0)."""
    if b > 0:
        return a / b
    return float("inf") if a > 0 else 1.0


def _corrections(dep: Deployment, f: dict) -> tuple:
    """(name, what it changed) for each realistic correction that applies to this deployment (the
    measured fidelity keeps the realistic bytes and FLOPs that name the bottleneck, and says
    whose kernels timed its steps)."""
    m, g = dep.model, dep.gpu
    c = physics.constants()
    out = []
    if dep.fidelity == Fidelity.MEASURED:
        from engine import measured

        out.append(("measured kernels", f"every pass timed by {measured.backend_label(g)}; fit and capacity are "
                                        f"Ridge's own memory accounting"))
    tp, groups = f["tensor_parallel"], f["tp_groups"]
    tokens = f["batch"] / groups * (dep.spec_k + 1)
    half = c["compute_half_tokens"]
    step_tokens = f"{tokens:,.0f} token" + ("" if f"{tokens:,.0f}" == "1" else "s")
    out.append(("matrix-multiply efficiency",
                f"weights stream at {c['bandwidth_efficiency']:.0%} of {g.bandwidth_tbps:g} TB/s and FLOPs run at "
                f"{c['compute_efficiency']:.0%} of peak, of which a step of {step_tokens} reaches "
                f"{tokens / (tokens + half):.0%} (a GEMM computes whole tiles: ~{half:.0f} rows, a cost of "
                f"streaming the weight tiles, so it counts as memory time); near the ridge the two bounds add "
                f"up rather than overlap"))
    out.append(("attention",
                f"the KV cache streams at {c['kv_bandwidth_efficiency']:.0%} of bandwidth; a {dep.prompt:,}-token "
                f"prompt's attention runs at {c['attention_efficiency'] * dep.prompt / (dep.prompt + c['attention_half_tokens']):.0%} "
                f"of the {physics.attention_precision(dep)} rate"))
    if PRECISION_BYTES[dep.kv] < 2:
        # How much of the smaller cache's saving survives its conversion back to 16 bits.
        bw = g.bandwidth_tbps * 1e12 * c["kv_bandwidth_efficiency"]
        speedup = max(1.0, min(2.0 / PRECISION_BYTES[dep.kv], 2.0 * g.peak_flops("bf16") / (bw * c["kv8_dequant_flops"])))
        out.append((f"{dep.kv} KV cache",
                    f"each cached value is converted back to 16 bits as attention reads it (~{c['kv8_dequant_flops']:.0f} "
                    f"16-bit FLOPs' worth): on the {g.id} a decode step reads it {speedup:.2f}x as fast as a 16-bit "
                    f"cache (at most {2.0 / PRECISION_BYTES[dep.kv]:g}x, never slower)"))
    out.append(("per-step overhead",
                f"+{units.seconds(f['step_overhead_seconds'])} per forward pass ({m.layers} layers x "
                f"{c['per_layer_overhead_us']:g} us of kernel launches, norms and residual adds"
                + (f", + {c['per_step_overhead_us']:g} us per pass" if c["per_step_overhead_us"] >= 0.5 else "")
                + f"), and {c['elementwise_bytes_per_value']:g} bytes per hidden value per layer for each token"))
    if tp > 1:
        step_comm = f["step_extra_seconds"] - f["step_overhead_seconds"]
        out.append(("tensor-parallel communication",
                    f"+{units.seconds(step_comm)} per decode step, "
                    f"+{units.seconds(f['prefill_comm_seconds'])} per prefill: "
                    f"{c['allreduces_per_layer'] * m.layers} all-reduces across {tp:g} GPUs, "
                    f"{g.allreduce_latency_us:g} us each plus the activations at {c['link_efficiency']:.0%} of "
                    f"{g.link_gbps:g} GB/s"))
    if groups > 1:
        out.append(("tensor-parallel domain",
                    f"{dep.gpus} GPUs exceed the {g.tp_domain}-GPU domain of {g.id}: {groups:g} groups of {tp:g} "
                    f"(replicas or pipeline stages), each reading its own weights every step"))
    precision = f["compute_precision"]
    if precision in (Precision.FP8, Precision.INT8):
        out.append(("low-precision formats",
                    f"{precision} speeds only the matrix multiplies, at {c['low_precision_efficiency']:.0%} of the "
                    f"datasheet's {g.peak_flops(precision) / 1e12:,.0f} TFLOP/s; attention, norms and all-reduces "
                    f"keep their 16-bit cost"))
    if PRECISION_BYTES[dep.weights] < 2:
        extra = physics.embedding_params(m) * (2.0 - PRECISION_BYTES[dep.weights])
        out.append(("16-bit embeddings and head",
                    f"the checkpoint keeps the embedding table and output head in 16 bits: +{extra / GIB:.2f} GiB "
                    f"of weights, and the head is read at 16 bits every step"))
    out.append(("batched prefill",
                f"in the steady state a prompt pays its share of a pass over up to {c['prefill_batch_tokens']:g} "
                f"prompt tokens (vLLM's budget), weights read once per pass: "
                f"{units.seconds(f['prefill_charge_seconds'])}"))
    if dep.spec_k:
        if dep.draft_model is not None:
            d = dep.draft_model
            out.append(("draft model cost",
                        f"draft {d.id}: its own weights ({f['draft_weight_bytes'] / GIB:.1f} GiB), KV cache and "
                        f"{d.layers}-layer pass per drafted token; the verification pass is a step over "
                        f"{tokens:,.0f} tokens, dearer as the batch grows"))
        else:
            out.append(("draft model cost",
                        f"each drafted token costs {dep.spec_draft_cost:g} of a realistic decode step; the "
                        f"verification pass is a step over {tokens:,.0f} tokens, dearer as the batch grows; name a "
                        f"draft model to charge its weights and KV cache"))
    return tuple(out)
