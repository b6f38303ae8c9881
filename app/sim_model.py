"""The serving simulator's state and the data behind its plots, as plain Python (no Textual).

A `Simulator` holds what the player typed (raw text for numbers, ids for choices), turns it into
an engine `Deployment`, and keeps the last deployment that was valid and fits, with its solved
levers. A bad value never erases the last good result: it becomes one message attached to the
field it belongs to, and the screen keeps showing the last good numbers beside it.

Every curve is computed with the vectorised `engine.grid` path, so a 1,000-point curve costs about
a millisecond. Curves against batch vary the *requested concurrency* and let the engine take the
batch as min(concurrency, what the KV cache holds), which is what a real server would do; the plot
labels say so. Curves are cached per result, so redrawing a plot after a resize costs nothing.

The module also grades a prediction made before the reveal (with the puzzles' own key and band
rule) and writes the current deployment into the player's own puzzle pack, checked by the same
code `ridge puzzles check` runs.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine import physics
from engine.analysis import GIB, VERDICTS, Report, analyze
from engine.bounds import ascii_number, shown
from engine.catalog import Accelerator, Catalog, ModelSpec, builtin_catalog, load_catalog
from engine.deployment import (ALLOCATORS, OBJECTIVES, PRECISIONS, SCHEDULERS, Deployment,
                               build_deployment, deployment_to_dict)
from engine.errors import RidgeError
from engine.grid import analyze_grid
from engine.levers import DEFAULT_SPEC_K, GAIN_BANDS, LEVERS, Solution, gain_band, solve

CURVE_POINTS = 1000
COURSE_LENGTHS = (1024, 4096, 32768, 131072)
# The course's own table, for Llama 3 70B in BF16 on four H100s with 32 GiB held back.
COURSE_CONCURRENCY = {1024: 501, 4096: 125, 32768: 15, 131072: 3}
DEFAULT_TPOT_BUDGET_MS = 50.0
# The Load tab's traffic (engine.load): a rate (None: 90% of capacity) and the two SLOs, MLPerf's
# Llama 2 70B server targets unless the player sets others.
DEFAULT_LOAD_SLO_TTFT = 2.0
DEFAULT_LOAD_SLO_TPOT_MS = 200.0
LOAD_FIELDS = {"rate": "requests per second", "ttft": "seconds", "tpot": "milliseconds"}
PACK_NAME = "my-puzzles.toml"


# --- the inputs -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Field:
    """One input of the simulator: its id (the engine's field name where there is one), a short
    label, its kind, the unit shown beside it, and the help text F1 shows."""

    name: str
    label: str
    kind: str          # choice | int | float | bool | path
    unit: str = ""
    help: str = ""
    section: str = ""
    blank: str = ""    # what an empty entry means (shown in it); only such fields may be empty


# The engine's default reserve (engine.deployment.Deployment.reserve_gib_per_gpu): None = 10% of
# each GPU's memory. The simulator leaves the field empty for it, so changing the GPU moves it.
RESERVE_DEFAULT_TEXT = "10% of mem"

FIELDS: tuple[Field, ...] = (
    Field("model", "Model", "choice", "", "The model served, from the catalog (or one loaded from a config file).",
          "Model and hardware"),
    Field("gpu", "GPU", "choice", "", "The accelerator kind; every GPU holds a slice of the weights.",
          "Model and hardware"),
    Field("gpus", "GPUs", "int", "", "How many GPUs share the model by tensor parallelism (scaling assumed perfect).",
          "Model and hardware"),
    Field("config", "File", "path", "",
          "Optional: a Hugging Face config.json (adds that model) or a catalog .toml with [models.<id>] "
          "and [gpus.<id>] tables. Press Enter to load it.", "Model and hardware"),
    Field("prompt", "Prompt", "int", "tok", "Average prompt length in tokens.", "Traffic"),
    Field("output", "Output", "int", "tok", "Average output length in tokens.", "Traffic"),
    Field("concurrency", "In flight", "int", "seq",
          "Sequences the traffic wants in flight at once. The batch is the smaller of this and what the "
          "KV cache holds.", "Traffic"),
    Field("shared_prefix", "Prefix len", "int", "tok",
          "Prompt tokens every request shares (a system prompt). Only matters with prefix caching on.", "Traffic"),
    Field("prefix_caching", "Prefix cache", "bool", "",
          "Keep the shared prefix's KV cache once and skip prefilling it again.", "Traffic"),
    Field("weights", "Weights", "choice", "", "Precision the weights are stored in.", "Precision and memory"),
    Field("kv", "KV cache", "choice", "", "Precision the KV cache is stored in.", "Precision and memory"),
    Field("reserve_gib", "Reserve", "float", "GiB/GPU",
          "Memory each GPU holds back for activations and workspace. Leave it empty for the default, "
          "10% of each GPU's memory (8 GiB on an 80 GiB H100, 2.4 GiB on a 24 GiB L4).",
          "Precision and memory", blank=RESERVE_DEFAULT_TEXT),
    Field("mfu", "MFU", "float", "0-1",
          "Fraction of peak FLOP/s the compute terms reach (1 = the datasheet's dense peak).",
          "Precision and memory"),
    Field("scheduler", "Scheduler", "choice", "",
          "none: one request at a time; static: a batch runs until its longest member ends; "
          "continuous: a finished slot is refilled on the next step.", "Serving"),
    Field("allocator", "Allocator", "choice", "",
          "contiguous: each request reserves room for its longest possible output; paged: blocks on demand.",
          "Serving"),
    Field("spec_k", "Spec k", "int", "tok",
          "Draft tokens per verification in speculative decoding (0 turns it off).", "Speculative decoding"),
    Field("spec_alpha", "Spec α", "float", "0-1", "Chance each drafted token is accepted.", "Speculative decoding"),
    Field("spec_draft_cost", "Draft cost", "float", "×step",
          "Cost of drafting one token, as a fraction of one target decode step.", "Speculative decoding"),
    Field("price", "Price", "float", "$/GPU·h", "Rental price of one GPU for an hour.", "Money"),
    Field("objective", "Objective", "choice", "",
          "What the levers are ranked on: cost per million output tokens, TPOT or TTFT.", "Money"),
)
FIELD_BY_NAME = {f.name: f for f in FIELDS}
DEPLOYMENT_FIELDS = tuple(f.name for f in FIELDS if f.name not in ("model", "gpu", "config"))

DEFAULT_RAW: dict[str, object] = {
    "model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "4", "config": "",
    "prompt": "1536", "output": "512", "concurrency": "400", "shared_prefix": "0", "prefix_caching": False,
    "weights": "bf16", "kv": "bf16", "reserve_gib": "", "mfu": "1",
    "scheduler": "continuous", "allocator": "paged",
    "spec_k": "0", "spec_alpha": "0.7", "spec_draft_cost": "0.05",
    "price": "3", "objective": "cost",
}

STATIC_CHOICES: dict[str, tuple[str, ...]] = {
    "weights": PRECISIONS, "kv": PRECISIONS, "scheduler": SCHEDULERS, "allocator": ALLOCATORS,
    "objective": OBJECTIVES,
}

# Fields whose change can make the weights or the cache stop fitting: the fit message goes to the
# one the player last touched among them, else to the GPU count.
_FIT_FIELDS = {"model", "gpu", "gpus", "config", "weights", "kv", "reserve_gib", "prompt", "output",
               "shared_prefix", "prefix_caching", "allocator"}


_WHOLE = re.compile(r"[+-]?[0-9]+")


def parse_value(f: Field, raw: object):
    """The typed value of one raw input; RidgeError names the field when it is not one."""
    if f.kind == "bool":
        if not isinstance(raw, bool):
            raise RidgeError(f"{f.name} must be on or off, got {raw!r}")
        return raw
    if f.kind == "choice" or f.kind == "path":
        return raw
    text = str(raw).strip().replace(",", "").replace("_", "")
    if not text and f.blank:
        return None  # the engine's default (f.blank says which)
    if not text:
        raise RidgeError(f"{f.name} is empty: type a number")
    if f.kind == "int":
        if _WHOLE.fullmatch(text):
            if len(text) > 18:  # beyond every bound, and int() refuses 4,300 digits with ValueError
                raise RidgeError(f"{f.name} is far too large ({len(text)} digits)")
            return int(text)
        try:
            value = ascii_number(text)  # ASCII digits only: float() would also read '١٢'
        except ValueError:
            raise RidgeError(f"{f.name} must be a whole number, got {shown(repr(str(raw).strip()), 60)}") from None
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e18:
            return int(value)
        raise RidgeError(f"{f.name} must be a whole number, got {shown(repr(str(raw).strip()), 60)}")
    try:
        value = ascii_number(text)
    except ValueError:
        raise RidgeError(f"{f.name} must be a number, got {shown(repr(str(raw).strip()), 60)}") from None
    if not math.isfinite(value):
        raise RidgeError(f"{f.name} must be a finite number, got {shown(repr(str(raw).strip()), 60)}")
    return value


# --- one good result --------------------------------------------------------------------------

class Result:
    """A valid deployment that fits, with its solved levers and (on demand) the puzzles' key."""

    def __init__(self, deployment: Deployment, solution: Solution) -> None:
        self.deployment = deployment
        self.solution = solution
        self.report: Report = solution.report
        self._key = None
        from engine.compare import measured_placeholder

        # The measured column: a line (pending, or why there is none) until a worker measures it.
        self.measured = measured_placeholder(deployment)

    @property
    def key(self):
        """The answer key the puzzles module would compute for this deployment (the floor's figures,
        the band keyed on the realistic gain), whatever fidelity the simulator shows."""
        if self._key is None:
            from puzzles.keys import key_from_solution, solve_both

            self._key = key_from_solution(*solve_both(self.deployment, tuple(lv.name for lv in self.solution.levers)))
        return self._key

    @property
    def best_gain(self) -> float | None:
        return self.solution.best.gain

    @property
    def best_band(self) -> str:
        return gain_band(self.best_gain) or GAIN_BANDS[0]


# --- predict first ----------------------------------------------------------------------------
# The simulator asks no reason and no certainty, so the one grader's outcome here is cleared (the
# answer right) or missed.

def sim_puzzle(result: Result):
    """The simulator's deployment as a puzzle the grader can judge: every lever on offer."""
    from puzzles.puzzle import Puzzle

    dep = result.deployment
    return Puzzle(id="simulator", module="clearing-test", title="the simulator's deployment", difficulty=3,
                  scenario="", objective=dep.objective, deployment=dep, levers=tuple(LEVERS), estimates=(),
                  reasons=(), hints=())


def grade_prediction(result: Result, bottleneck: str, lever: str, band: str):
    """Grade bottleneck, best lever and gain band by the one grader (`puzzles.grading.grade`):
    RidgeError for an id the game does not know; a verdict that cannot bound the objective is
    simply wrong."""
    from engine.ids import GainBand, Lever, Verdict
    from puzzles.grading import grade

    for what, value, known in (("bottleneck", bottleneck, Verdict), ("lever", lever, Lever), ("gain band", band, GainBand)):
        if value not in list(known):
            raise RidgeError(f"{what} must be one of {', '.join(known)}, got {value!r}")
    prediction = {"bottleneck": bottleneck, "lever": lever, "gain_band": band, "certainty": "low"}
    return grade(sim_puzzle(result), result.key, prediction, ask_reason=False, strict=False)


# --- curve data -------------------------------------------------------------------------------

@dataclass(frozen=True)
class RooflineData:
    """The roof for all the deployment's GPUs together: attainable = min(peak, intensity × bandwidth)."""

    intensity: np.ndarray        # FLOP per byte, log-spaced
    attainable: np.ndarray       # FLOP/s
    peak: float                  # FLOP/s, all GPUs, dense datasheet figure at the compute precision
    bandwidth: float             # bytes/s, all GPUs
    ridge: float                 # FLOP per byte
    mfu: float
    point_intensity: float       # this deployment's decode step
    point_attainable: float
    batch: int
    batch_one_intensity: float   # the same deployment at batch 1
    max_batch: int
    max_batch_intensity: float   # ... and at the largest batch the cache holds


@dataclass(frozen=True)
class SpecData:
    """Speculative decoding's speedup (TPOT without ÷ TPOT with) against requested concurrency."""

    concurrency: np.ndarray
    batch: np.ndarray
    speedup: np.ndarray
    k: int
    alpha: float
    draft_cost: float
    expected_tokens: float       # accepted tokens per verification, (1 - α^(k+1)) / (1 - α)
    first_below_one: int | None  # the smallest concurrency where speculating slows decode down
    compute_bound_from: int | None  # the smallest batch where plain decode turns compute-bound
    max_batch: int
    ridge: float
    current_concurrency: int
    current_speedup: float


@dataclass(frozen=True)
class ConcurrencyData:
    """Max concurrency against average sequence length S = P + O/2, paged cache, no shared prefix:
    floor(usable KV memory / (KV bytes per token × S))."""

    seq_len: np.ndarray
    max_concurrency: np.ndarray
    usable_bytes: float
    kv_bytes_per_token: float    # as stored across the GPUs (replicated KV heads counted)
    context: int
    table: tuple                 # (S, GiB per sequence, max concurrency, beyond context?)
    point_seq_len: float
    point_max_concurrency: int
    demand: int


@dataclass(frozen=True)
class CostTpotData:
    """Cost per million output tokens and TPOT against requested concurrency, and the TPOT budget."""

    concurrency: np.ndarray
    batch: np.ndarray
    cost: np.ndarray             # dollars per million output tokens
    tpot: np.ndarray             # seconds
    budget_seconds: float
    best_concurrency: int | None  # cheapest point whose TPOT is within the budget
    best_cost: float | None
    best_tpot: float | None
    max_batch: int
    current_concurrency: int
    current_cost: float
    current_tpot: float


def concurrency_axis(current: int, points: int = CURVE_POINTS) -> np.ndarray:
    """1, 2, ..., 1000 — or, when the traffic asks for more than 1,000 in flight, `points`
    log-spaced whole numbers up to twice that."""
    if current <= points:
        return np.arange(1, points + 1, dtype=float)
    top = 2 * current
    axis = np.unique(np.round(np.geomspace(1, top, points)))
    return axis.astype(float)


def roofline_data(result: Result, points: int = CURVE_POINTS) -> RooflineData:
    r, dep = result.report, result.deployment
    gpus = dep.gpus
    peak = r.peak_flops * gpus
    bandwidth = dep.gpu.bandwidth_tbps * 1e12 * gpus
    ridge = peak / bandwidth
    one = analyze(dep.with_(concurrency=1))
    top = analyze(dep.with_(concurrency=max(1, r.max_concurrency)))
    lowest = min(one.intensity, r.intensity, ridge)
    highest = max(top.intensity, r.intensity, ridge)
    intensity = np.geomspace(lowest / 4, highest * 8, points)
    attainable = np.minimum(peak, intensity * bandwidth)
    return RooflineData(
        intensity=intensity, attainable=attainable, peak=peak, bandwidth=bandwidth, ridge=ridge, mfu=dep.mfu,
        point_intensity=r.intensity, point_attainable=min(peak, r.intensity * bandwidth), batch=r.batch,
        batch_one_intensity=one.intensity, max_batch=top.batch, max_batch_intensity=top.intensity,
    )


def spec_data(result: Result, points: int = CURVE_POINTS) -> SpecData:
    dep, r = result.deployment, result.report
    k = dep.spec_k or DEFAULT_SPEC_K
    axis = concurrency_axis(dep.concurrency, points)
    plain = analyze_grid(dep.with_(spec_k=0), concurrency=axis)
    spec = analyze_grid(dep.with_(spec_k=k), concurrency=axis)
    speedup = plain["tpot_seconds"] / spec["tpot_seconds"]
    below = np.nonzero(speedup < 1.0)[0]
    bound = np.nonzero(plain["decode_compute_seconds"] > plain["decode_memory_seconds"])[0]
    alpha = dep.spec_alpha
    expected = float(physics.spec_expected_tokens(float(k), alpha))
    now_plain = r if not dep.spec_k else analyze(dep.with_(spec_k=0))
    now_spec = r if dep.spec_k else analyze(dep.with_(spec_k=k))
    return SpecData(
        concurrency=axis, batch=plain["batch"], speedup=speedup, k=k, alpha=alpha,
        draft_cost=dep.spec_draft_cost, expected_tokens=expected,
        first_below_one=int(axis[below[0]]) if below.size else None,
        compute_bound_from=int(plain["batch"][bound[0]]) if bound.size else None,
        max_batch=int(r.max_concurrency), ridge=r.ridge, current_concurrency=dep.concurrency,
        current_speedup=now_plain.tpot_seconds / now_spec.tpot_seconds,
    )


def concurrency_base(dep: Deployment) -> Deployment:
    """The deployment the concurrency curve describes: paged, nothing shared, continuous."""
    return dep.with_(allocator="paged", prefix_caching=False, scheduler="continuous")


def max_concurrency_at(result: Result, seq_len) -> np.ndarray:
    """Max concurrency at average sequence length(s) `seq_len`, through the engine's grid: a
    prompt of S - 0.5 tokens and one output token average exactly S."""
    s = np.asarray(seq_len, dtype=float)
    grid = analyze_grid(concurrency_base(result.deployment), prompt=s - 0.5, output=np.ones_like(s))
    return np.where(grid["fits"], grid["max_concurrency"], 0.0)


def concurrency_data(result: Result, points: int = CURVE_POINTS) -> ConcurrencyData:
    dep, r = result.deployment, result.report
    low, high = 256.0, float(max(131072, 2 ** math.ceil(math.log2(max(dep.model.context, 2)))))
    exact = [float(s) for s in COURSE_LENGTHS if low < s < high]
    seq = np.unique(np.concatenate([np.geomspace(low, high, points - len(exact)), exact]))
    conc = max_concurrency_at(result, seq)
    stored = r.kv_bytes_per_token * r.kv_replication
    table = []
    for s, m in zip(COURSE_LENGTHS, max_concurrency_at(result, np.array(COURSE_LENGTHS, dtype=float))):
        table.append((s, stored * s / GIB, int(m), s > dep.model.context))
    return ConcurrencyData(
        seq_len=seq, max_concurrency=conc, usable_bytes=r.usable_kv_bytes, kv_bytes_per_token=stored,
        context=dep.model.context, table=tuple(table), point_seq_len=r.seq_len_avg,
        point_max_concurrency=int(r.max_concurrency), demand=dep.concurrency,
    )


def cost_tpot_data(result: Result, budget_ms: float = DEFAULT_TPOT_BUDGET_MS,
                   points: int = CURVE_POINTS) -> CostTpotData:
    dep, r = result.deployment, result.report
    axis = concurrency_axis(dep.concurrency, points)
    grid = analyze_grid(dep, concurrency=axis)
    cost, tpot = grid["cost_per_million_output_tokens"], grid["tpot_seconds"]
    budget = budget_ms / 1e3
    ok = np.nonzero(np.isfinite(cost) & (tpot <= budget))[0]
    if ok.size:
        best = ok[np.argmin(cost[ok])]
        best_c, best_cost, best_tpot = int(axis[best]), float(cost[best]), float(tpot[best])
    else:
        best_c = best_cost = best_tpot = None
    return CostTpotData(
        concurrency=axis, batch=grid["batch"], cost=cost, tpot=tpot, budget_seconds=budget,
        best_concurrency=best_c, best_cost=best_cost, best_tpot=best_tpot, max_batch=int(r.max_concurrency),
        current_concurrency=dep.concurrency, current_cost=r.cost_per_million_output_tokens,
        current_tpot=r.tpot_seconds,
    )


# --- side by side -----------------------------------------------------------------------------

# (label, report attribute, unit kind, lower is better?)
COMPARED = (
    ("max concurrency", "max_concurrency", "count", False),
    ("batch", "batch", "count", False),
    ("intensity FLOP/B", "intensity", "num", None),
    ("TPOT", "tpot_seconds", "seconds", True),
    ("TTFT", "ttft_seconds", "seconds", True),
    ("prefill share", "prefill_share", "pct", None),
    ("throughput tok/s", "throughput_tokens_per_s", "num", False),
    ("$ per M out tok", "cost_per_million_output_tokens", "dollars", True),
    ("weights GiB", "weight_bytes", "gib", None),
    ("KV B/token", "kv_bytes_per_token", "num", None),
    ("usable KV GiB", "usable_kv_bytes", "gib", False),
)


@dataclass(frozen=True)
class CompareRow:
    label: str
    a: float | None
    b: float | None
    ratio: float | None      # B / A
    better: str              # "better" | "worse" | "same" | "" (no preferred direction)
    kind: str


def compare(a: Result, b: Result) -> list[CompareRow]:
    """Every compared quantity of A and B with the ratio B/A, and whether B is the better one."""
    rows = []
    for label, attr, kind, lower_better in COMPARED:
        va, vb = getattr(a.report, attr), getattr(b.report, attr)
        ratio = vb / va if va not in (None, 0) and vb is not None else None
        better = ""
        if lower_better is not None and ratio is not None:
            if abs(ratio - 1.0) < 1e-9:
                better = "same"
            else:
                better = "better" if (ratio < 1.0) == lower_better else "worse"
        rows.append(CompareRow(label, va, vb, ratio, better, kind))
    return rows


def changed_inputs(a: Result, b: Result) -> list[tuple[str, object, object]]:
    """(field, A's value, B's value) for every input that differs."""
    da, db = deployment_to_dict(a.deployment), deployment_to_dict(b.deployment)
    return [(name, da.get(name), db.get(name)) for name in da if da.get(name) != db.get(name)]


# --- the simulator ----------------------------------------------------------------------------

class Simulator:
    """The inputs as typed, the last good result, the pinned result A, and per-field messages."""

    def __init__(self, catalog: Catalog | None = None, user_catalog: str | os.PathLike | None = None,
                 **raw) -> None:
        self.base_catalog = catalog or builtin_catalog()
        self.catalog_note = ""
        self.base_files: list[str] = []
        if user_catalog is not None and Path(user_catalog).exists():
            try:
                self.base_catalog = _with_files(self.base_catalog, [user_catalog])
                self.base_files = [os.fspath(user_catalog)]
            except RidgeError as exc:
                self.catalog_note = f"your catalog was not loaded: {exc}"
        self.catalog = self.base_catalog
        self.file_models: dict[str, ModelSpec] = {}
        self.file_error = ""
        self.loaded_file = ""
        self.raw: dict[str, object] = dict(DEFAULT_RAW)
        unknown = set(raw) - set(self.raw)
        if unknown:
            raise RidgeError(f"unknown simulator input '{sorted(unknown)[0]}'")
        self.raw.update(raw)
        self.errors: dict[str, str] = {}
        self.result: Result | None = None
        self.pinned: Result | None = None
        self.version = 0
        self.last_edited: str | None = None
        self.tpot_budget_ms = DEFAULT_TPOT_BUDGET_MS
        self.load_rate: float | None = None
        self.load_slo_ttft = DEFAULT_LOAD_SLO_TTFT
        self.load_slo_tpot_ms = DEFAULT_LOAD_SLO_TPOT_MS
        self.knee_guesses: dict[int, float] = {}   # result version -> the player's knee, req/s
        self._curves: dict = {}
        if self.raw.get("config"):
            self._load_file(str(self.raw["config"]))
        self.recompute()

    # -- choices ---------------------------------------------------------------------------
    def models(self) -> dict[str, ModelSpec]:
        out = dict(sorted(self.catalog.models.items()))
        out.update(self.file_models)
        return out

    def gpus(self) -> dict[str, Accelerator]:
        return dict(sorted(self.catalog.gpus.items()))

    def choices(self, name: str) -> tuple[str, ...]:
        if name == "model":
            return tuple(self.models())
        if name == "gpu":
            return tuple(self.gpus())
        return STATIC_CHOICES[name]

    # -- editing ---------------------------------------------------------------------------
    def edit(self, name: str, value: object) -> bool:
        """Set one input and recompute; True when the good result changed."""
        if name not in self.raw:
            raise RidgeError(f"unknown simulator input '{name}'")
        self.last_edited = name
        self.raw[name] = value
        if name == "config":
            self._load_file(str(value))
        return self.recompute()

    def set_budget(self, text: str) -> str | None:
        """Set the TPOT budget in milliseconds; the message when the text is not a positive number."""
        try:
            value = ascii_number(str(text).strip().replace(",", ""))
        except ValueError:
            return f"the TPOT budget must be a number of milliseconds, got {shown(repr(str(text).strip()), 60)}"
        if not math.isfinite(value) or value <= 0:
            return f"the TPOT budget must be a positive number of milliseconds, got {shown(repr(str(text).strip()), 60)}"
        self.tpot_budget_ms = value
        return None

    def _load_file(self, text: str) -> None:
        text = text.strip()
        self.file_error = ""
        if not text:
            self.file_models = {}
            self.catalog = self.base_catalog
            self.loaded_file = ""
            return
        path = Path(text).expanduser()
        try:
            if path.suffix.lower() == ".json":
                from engine.hfconfig import load_config

                spec = load_config(path)
                self.file_models = {spec.id: spec}
                self.catalog = self.base_catalog
                self.raw["model"] = spec.id
            elif path.suffix.lower() == ".toml":
                self.catalog = _with_files(self.base_catalog, [path])
                self.file_models = {}
            else:
                raise RidgeError(f"{path}: expected a Hugging Face config.json or a catalog .toml")
        except RidgeError as exc:
            self.file_error = str(exc)
            return
        self.loaded_file = str(path)

    def _blame(self, message: str) -> str:
        """The input a build error belongs to: the field it opens with, else the last one edited."""
        words = message.split()
        first = words[0] if words else ""
        second = words[1] if len(words) > 1 else ""
        if first in FIELD_BY_NAME and second != "+":
            return first
        if first == "prompt" and second == "+":
            return self.last_edited if self.last_edited in ("prompt", "output") else "output"
        if first in ("unknown",) and "model" in message:
            return "model"
        return self.last_edited if self.last_edited in FIELD_BY_NAME else "prompt"

    def parse(self) -> tuple[dict, dict[str, str]]:
        """(typed values for build_deployment, messages by field) for the current raw inputs."""
        values, errors = {}, {}
        for name in DEPLOYMENT_FIELDS:
            try:
                values[name] = parse_value(FIELD_BY_NAME[name], self.raw[name])
            except RidgeError as exc:
                errors[name] = str(exc)
        models, gpus = self.models(), self.gpus()
        if self.raw["model"] not in models:
            errors["model"] = f"unknown model '{self.raw['model']}'"
        if self.raw["gpu"] not in gpus:
            errors["gpu"] = f"unknown accelerator '{self.raw['gpu']}'"
        if self.file_error:
            errors["config"] = self.file_error
        return values, errors

    def recompute(self) -> bool:
        values, errors = self.parse()
        dep = solution = None
        if not errors:
            try:
                dep = build_deployment(self.catalog, self.models()[self.raw["model"]],
                                       self.gpus()[self.raw["gpu"]], **values)
            except RidgeError as exc:
                errors[self._blame(str(exc))] = str(exc)
        if dep is not None and not errors:
            if self.result is not None and dep == self.result.deployment:
                self.errors = errors
                return False
            solution = solve(dep)
            if not solution.report.fits:
                where = self.last_edited if self.last_edited in _FIT_FIELDS else "gpus"
                errors[where] = f"does not fit: {solution.report.fit_problem}"
        self.errors = errors
        if errors:
            return False
        self.result = Result(dep, solution)
        self.version += 1
        self._curves.clear()
        return True

    @property
    def stale(self) -> bool:
        """True when the inputs as typed are not the deployment shown (a message explains why)."""
        return bool(self.errors)

    def pin(self) -> Result | None:
        self.pinned = self.result
        return self.pinned

    def comparison(self) -> list[CompareRow]:
        if self.pinned is None or self.result is None:
            return []
        return compare(self.pinned, self.result)

    # -- curves (cached per result) --------------------------------------------------------
    def _cached(self, name: str, make, *args):
        key = (name, self.version) + args
        if key not in self._curves:
            self._curves[key] = make(self.result, *args)
        return self._curves[key]

    def roofline(self) -> RooflineData | None:
        return None if self.result is None else self._cached("roofline", roofline_data)

    def spec(self) -> SpecData | None:
        return None if self.result is None else self._cached("spec", spec_data)

    def concurrency_curve(self) -> ConcurrencyData | None:
        return None if self.result is None else self._cached("concurrency", concurrency_data)

    def cost_tpot(self) -> CostTpotData | None:
        if self.result is None:
            return None
        return self._cached("cost", cost_tpot_data, self.tpot_budget_ms)

    # -- load (the Load tab) ---------------------------------------------------------------
    def set_load(self, name: str, text: str) -> str | None:
        """Set the Load tab's rate ("rate", blank for 90% of capacity), TTFT SLO ("ttft", seconds)
        or TPOT SLO ("tpot", milliseconds); the message when the text is not a positive number."""
        text = str(text).strip().replace(",", "")
        if name == "rate" and not text:
            self.load_rate = None
            return None
        try:
            value = ascii_number(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0 or value > 1e6:
            return f"must be a positive number of {LOAD_FIELDS[name]}, got {shown(repr(text), 40)}"
        if name == "rate":
            self.load_rate = value
        elif name == "ttft":
            self.load_slo_ttft = value
        else:
            self.load_slo_tpot_ms = value
        return None

    def load_key(self) -> tuple:
        return ("load", self.version, self.load_rate, self.load_slo_ttft, self.load_slo_tpot_ms)

    def load_curve(self):
        """The current deployment's load curve (`engine.load.sweep`): seconds to run, so the
        screen asks from a worker; cached per result and settings. RidgeError, one line, where
        the run cannot be made (a deployment that does not fit)."""
        key = self.load_key()
        if key not in self._curves:
            from engine.load.spec import LoadSpec
            from engine.load.sweep import load_curve

            dep = self.result.deployment
            spec = LoadSpec(qps=1.0, requests=2000, slo_ttft=self.load_slo_ttft,
                            slo_tpot=self.load_slo_tpot_ms / 1e3)
            self._curves[key] = load_curve(dep.with_(spec_k=0), spec, self.load_rate)
        return self._curves[key]

    def cached_load_curve(self):
        """The load curve if it has been computed for the current settings, else None."""
        return self._curves.get(self.load_key())

    def guess_knee(self, text: str) -> str | None:
        """Record the player's knee (requests per second) for this result; the message when the
        text is not a positive number."""
        try:
            value = ascii_number(str(text).strip().replace(",", ""))
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0:
            return f"the knee must be a positive number of requests per second, got {shown(repr(str(text).strip()), 40)}"
        self.knee_guesses[self.version] = value
        return None

    def knee_guess(self) -> float | None:
        return self.knee_guesses.get(self.version)

    # -- predict first ---------------------------------------------------------------------
    def grade(self, bottleneck: str, lever: str, band: str):
        if self.result is None:
            raise RidgeError("there is no result to grade against yet")
        return grade_prediction(self.result, bottleneck, lever, band)


def _with_files(base: Catalog, paths: list) -> Catalog:
    """`base` plus the models and GPUs of catalog files (later files add or replace entries)."""
    extra = load_catalog(paths)
    builtin = builtin_catalog()
    models = dict(base.models)
    gpus = dict(base.gpus)
    models.update({k: v for k, v in extra.models.items() if builtin.models.get(k) is not v})
    gpus.update({k: v for k, v in extra.gpus.items() if builtin.gpus.get(k) is not v})
    return Catalog(models, gpus)


# --- saving as a puzzle -----------------------------------------------------------------------

def pack_path(data_dir: str | os.PathLike | None = None) -> Path:
    """`<data dir>/packs/my-puzzles.toml`, the player's own pack."""
    from saves.locations import data_dir as locate

    return locate(data_dir) / "packs" / PACK_NAME


def save_puzzle(result: Result, path: str | os.PathLike) -> tuple[str, Path]:
    """Add this deployment to the pack at `path` as a puzzle; (its id, the path). The text comes
    from `puzzles.pack_writer` (tomli-w), the whole file is checked by `ridge puzzles check`'s own
    code, and only then written, atomically (`saves.atomic`); RidgeError says why not."""
    from puzzles.check import check_paths
    from puzzles.pack_writer import pack_ids, pack_text, puzzle_entry
    from saves import atomic

    path = Path(path)
    builtin = builtin_catalog()
    dep = result.deployment
    if builtin.models.get(dep.model.id) != dep.model or builtin.gpus.get(dep.gpu.id) != dep.gpu:
        raise RidgeError("only catalog models and GPUs can go in a puzzle pack: pick them from the lists")
    entry = puzzle_entry(dep, result.key)
    from puzzles.schema import read_pack_text

    old = read_pack_text(path) if path.exists() else ""  # capped: PackError names the file
    if entry["id"] in pack_ids(old):
        raise RidgeError(f"this deployment is already in your pack as {entry['id']}")
    text = pack_text(old, entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    trial = path.with_name(f".{path.name}.{os.getpid()}.check.toml")
    try:
        trial.write_text(text, encoding="utf-8")
        problems, _, _ = check_paths([trial])
    finally:
        trial.unlink(missing_ok=True)
    if problems:
        first = problems[0]
        where = f"puzzle {first.puzzle}: " if first.puzzle and first.puzzle != entry["id"] else ""
        field = f"{first.field}: " if first.field else ""
        raise RidgeError(f"not saved: the puzzle check would reject it: {where}{field}{first.detail}")
    try:
        atomic.write_atomic(path, text)
    except OSError as exc:
        raise RidgeError(f"{path}: could not write your pack: {exc}") from None
    return entry["id"], path
