"""The levers: each one re-runs the analysis with one change applied and reports its gain.

A lever's gain is the objective's value before over after (all three objectives are "lower is
better"), so 2.0 means the lever halves cost, TPOT or TTFT. A lever that cannot apply (already on,
nothing to share, no smaller model stated) reports a gain of exactly 1 with a note saying why.
`solve` bundles the base report with every lever, ranked best first.
"""
from __future__ import annotations

from engine.analysis import Report, analyze
from engine.bands import GAIN_BANDS, gain_band  # noqa: F401 (the bands live in engine.bands)
from engine.catalog import PRECISION_BYTES
from engine.deployment import Deployment
from engine.errors import RidgeError
from engine.ids import DEPLOYMENT_LEVERS, Allocator, Fidelity, Lever, Precision, Scheduler
from engine.physics import SharedPasses
from engine.record import REQUIRED, Record

LEVERS = tuple(str(lever) for lever in DEPLOYMENT_LEVERS)   # the fixed option order, as plain ids
DEFAULT_SPEC_K = 4
_ORDER = {name: i for i, name in enumerate(LEVERS)}   # a lever's place in LEVERS, for ranking ties


class LeverResult(Record):
    """One lever's effect: the gain (None when the base does not fit), a one-line note, and the
    changed deployment's report (None when the lever does not apply)."""

    FIELDS = dict(name=REQUIRED, gain=REQUIRED, note=REQUIRED, report=None)

    def __init__(self, name: str, gain: float | None, note: str, report: Report | None = None) -> None:
        # Built nine times per solve: set the four fields directly instead of the generic merge.
        d = self.__dict__
        d["name"], d["gain"], d["note"], d["report"] = name, gain, note, report

    def to_json(self) -> dict:
        after = self.report.objective_value() if self.report is not None and self.report.fits else None
        return {"name": self.name, "gain": self.gain, "band": gain_band(self.gain),
                "objective_after": after, "note": self.note}


# Enum members bound once: an enum class attribute costs ~0.2 us on Python 3.11, and a solve
# compares lever names and deployment fields against them a few hundred times.
_CONTIGUOUS = Allocator.CONTIGUOUS
_PAGED = Allocator.PAGED
_FLOOR = Fidelity.FLOOR
_MEASURED = Fidelity.MEASURED
_REALISTIC = Fidelity.REALISTIC
_BATCHING = Lever.BATCHING
_CHUNKED_PREFILL = Lever.CHUNKED_PREFILL
_KV_QUANTIZATION = Lever.KV_QUANTIZATION
_MORE_GPUS = Lever.MORE_GPUS
_PAGED_KV = Lever.PAGED_KV
_PREFIX_CACHING = Lever.PREFIX_CACHING
_QUANTIZATION = Lever.QUANTIZATION
_ROUTING = Lever.ROUTING
_SPECULATIVE_DECODING = Lever.SPECULATIVE_DECODING
_CONTINUOUS = Scheduler.CONTINUOUS
_BF16, _INT4 = Precision.BF16, Precision.INT4


def _eight_bit(dep: Deployment) -> str:
    """The 8-bit format this accelerator computes natively: FP8 where it has it, else INT8."""
    return "fp8" if dep.gpu.native("fp8") else "int8"


def lever_change(dep: Deployment, name: str) -> tuple[Deployment | None, str]:
    """The deployment with lever `name` applied, or None and the reason it does not apply."""
    if name == _BATCHING:
        if dep.scheduler == _CONTINUOUS:
            return None, "already batching continuously"
        return dep.with_(scheduler="continuous"), f"{dep.scheduler} -> continuous batching"
    if name == _PAGED_KV:
        if dep.allocator == _PAGED:
            return None, "KV cache already paged"
        return dep.with_(allocator="paged"), "contiguous per-request regions -> paged blocks"
    if name == _PREFIX_CACHING:
        if dep.prefix_caching:
            return None, "prefix caching already on"
        if dep.shared_prefix == 0:
            return None, "no shared prompt prefix to cache"
        if dep.allocator == _CONTIGUOUS:
            # Requests share cached blocks only through a block table: prefix caching is built on
            # paged KV (vLLM's automatic prefix caching hashes full blocks), so it turns paging on.
            return (dep.with_(prefix_caching=True, allocator="paged"),
                    f"reuse the {dep.shared_prefix}-token shared prefix, stored once in paged KV blocks "
                    f"(prefix caching needs them, so the lever turns paging on)")
        return dep.with_(prefix_caching=True), f"reuse the {dep.shared_prefix}-token shared prefix"
    if name == _QUANTIZATION:
        eight = _eight_bit(dep)
        kv = eight if PRECISION_BYTES[dep.kv] > 1 else dep.kv
        if dep.weights == _BF16:
            return dep.with_(weights=eight, kv=kv), f"weights and KV cache -> {eight}"
        if dep.weights != _INT4:
            also = f", KV cache -> {kv}" if kv != dep.kv else ""
            return dep.with_(weights="int4", kv=kv), f"weights -> int4 (computed at bf16){also}"
        if kv != dep.kv:
            return dep.with_(kv=kv), f"KV cache -> {eight}"
        return None, "already at int4 weights and 8-bit KV"
    if name == _KV_QUANTIZATION:
        if PRECISION_BYTES[dep.kv] <= 1:
            return None, f"KV cache already {dep.kv}"
        eight = _eight_bit(dep)
        return dep.with_(kv=eight), f"KV cache -> {eight}, weights unchanged"
    if name == _SPECULATIVE_DECODING:
        if dep.spec_k:
            return None, f"already speculating {dep.spec_k} tokens"
        return (dep.with_(spec_k=DEFAULT_SPEC_K),
                f"draft k={DEFAULT_SPEC_K} at acceptance {dep.spec_alpha:g}, draft cost {dep.spec_draft_cost:g}/token")
    if name == _CHUNKED_PREFILL:
        if dep.chunked_prefill:
            return None, "prefill already chunked"
        return dep.with_(chunked_prefill=True), f"prefill in {dep.chunk_tokens}-token chunks between decode steps"
    if name == _MORE_GPUS:
        return dep.with_(gpus=dep.gpus * 2), f"{dep.gpus} -> {dep.gpus * 2} x {dep.gpu.id}"
    if name == _ROUTING:
        if dep.route_model is None or dep.route_fraction <= 0:
            return None, "no smaller model stated to route to"
        return dep, f"send {dep.route_fraction:.0%} of requests to {dep.route_model.id}"
    raise ValueError(f"unknown lever {name}")


def _smallest_fitting(dep: Deployment, shared: SharedPasses | None = None) -> Report | None:
    """The route model's pool: the fewest GPUs (a power of two) on which it fits."""
    gpus = 1
    while gpus <= 64:
        report = analyze(dep.with_(gpus=gpus), shared)
        if report.fits:
            return report
        gpus *= 2
    return None


def routing_value(dep: Deployment, base: Report, shared: SharedPasses | None = None) -> tuple[float | None, str]:
    """Objective after routing a share of requests to the smaller model. Each pool is scaled in
    replicas to its share of the traffic and keeps this deployment's concurrency per replica, so
    each keeps its own per-token economics; the blend is weighted by the share of requests."""
    f = dep.route_fraction
    small_dep = dep.with_(model=dep.route_model, route_model=None)
    if small_dep.prompt + small_dep.output > small_dep.model.context:
        return None, f"{dep.route_model.id}'s context is too short for these requests"
    small = _smallest_fitting(small_dep, shared)
    if small is None:
        return None, f"{dep.route_model.id} does not fit on up to 64 x {dep.gpu.id}"
    value = (1 - f) * base.objective_value() + f * small.objective_value()
    note = (f"send {f:.0%} of requests to {dep.route_model.id} "
            f"(replicas of {small.deployment.gpus} x {dep.gpu.id})")
    return value, note


def evaluate_lever(dep: Deployment, base: Report, name: str, shared: SharedPasses | None = None) -> LeverResult:
    """Lever `name` applied to `dep` (whose report is `base`); `shared` is the solve's (see analyze)."""
    changed, note = lever_change(dep, name)
    if changed is None:
        return LeverResult(name=name, gain=1.0 if base.fits else None, note=note)
    before = base.objective_value()
    if name == _ROUTING:
        if not base.fits:
            return LeverResult(name=name, gain=None, note=note + " (the large model still does not fit)")
        try:
            after, note = routing_value(dep, base, shared)
        except RidgeError as exc:
            if dep.fidelity != _MEASURED:
                raise
            return LeverResult(name=name, gain=None, note=f"{note} (not measured: {exc})")
        if after is None:
            return LeverResult(name=name, gain=1.0 if base.fits else None, note=note)
        return LeverResult(name=name, gain=before / after if before is not None else None, note=note)
    try:
        report = analyze(changed, shared)
    except RidgeError as exc:
        if dep.fidelity != _MEASURED:
            raise
        return LeverResult(name=name, gain=None, note=f"{note} (not measured: {exc})")
    if not report.fits:
        return LeverResult(name=name, gain=None, note=note + " (does not fit)", report=report)
    if before is None:
        return LeverResult(name=name, gain=None, note=note + " (makes it fit)", report=report)
    return LeverResult(name=name, gain=before / report.objective_value(), note=note, report=report)


class Solution(Record):
    """A deployment's report plus every lever, ranked best first. A realistic solution carries the
    floor's solution of the same deployment as `floor`; a measured one carries the floor's and the
    realistic one (`realistic`), so all can be shown side by side."""

    FIELDS = dict(report=REQUIRED, levers=REQUIRED, floor=None, realistic=None)

    @property
    def fidelity(self) -> str:
        return self.report.deployment.fidelity

    @property
    def floor_solution(self) -> "Solution":
        """The floor's solution (this one when it is the floor)."""
        return self.floor if self.floor is not None else self

    @property
    def realistic_solution(self) -> "Solution | None":
        """The realistic solution (this one when it is realistic; None under the floor)."""
        if self.fidelity == _REALISTIC:
            return self
        return self.realistic

    @property
    def best(self) -> LeverResult:
        return self.levers[0]

    @property
    def best_lever(self) -> str:
        return self.levers[0].name

    def lever(self, name: str) -> LeverResult:
        return next(lv for lv in self.levers if lv.name == name)


def _rank_key(result: LeverResult) -> tuple:
    if result.gain is not None:
        return (0, -result.gain, _ORDER[result.name])
    if result.report is not None and result.report.fits:
        # An unfit base: prefer the lever that makes it fit with the best objective.
        return (1, result.report.objective_value(), _ORDER[result.name])
    return (2, 0.0, _ORDER[result.name])


def rank_levers(results) -> tuple:
    """Lever results best first: by gain, then (for an unfit base) by the objective of the
    levers that make it fit, ties in the fixed LEVERS order."""
    return tuple(sorted(results, key=_rank_key))


def solve(dep: Deployment, levers: tuple[str, ...] = LEVERS, base: Report | None = None,
          floor: "Solution | None" = None, realistic: "Solution | None" = None,
          shared: SharedPasses | None = None) -> Solution:
    """Analyse a deployment (or reuse `base`, its report) and every lever, ranked best first. In
    the realistic fidelity the floor's solution is solved too (or `floor` reused) and attached; in
    the measured one the realistic solution as well (or `realistic` reused). Under `measured` a
    lever the database cannot time has no gain and says why; the base itself raises RidgeError.
    `shared` is the enclosing solve's (the floor's and realistic solves of one deployment share
    their memory stages); a solve called alone makes its own, so nothing outlives it."""
    if shared is None:
        shared = SharedPasses()   # the passes and memory stages this solve's analyses share
    base = analyze(dep, shared) if base is None else base
    ranked = rank_levers(evaluate_lever(dep, base, name, shared) for name in levers)
    if dep.fidelity == _FLOOR:
        return Solution(report=base, levers=ranked)
    if floor is None:
        floor = solve(dep.with_(fidelity="floor"), levers, shared=shared)
    if dep.fidelity == _MEASURED:
        if realistic is None:
            realistic = solve(dep.with_(fidelity=_REALISTIC), levers, floor=floor, shared=shared)
        return Solution(report=base, levers=ranked, floor=floor, realistic=realistic)
    return Solution(report=base, levers=ranked, floor=floor)


def solve_both(dep: Deployment, levers: tuple[str, ...] = LEVERS) -> tuple[Solution, Solution]:
    """(floor solution, realistic solution) of one deployment, whatever its own fidelity."""
    realistic = solve(dep.with_(fidelity="realistic"), levers)
    return realistic.floor, realistic
