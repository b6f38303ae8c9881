"""The serving simulator's state, as plain Python. A `Simulator` holds what the player typed (raw
text for numbers, ids for choices), turns it into an engine `Deployment`, and keeps the last
deployment that was valid and fits, with its solved levers. A bad value never erases the last good
result: it becomes one message attached to the field it belongs to. Curves are cached per result,
so redrawing a plot after a resize costs nothing."""
from __future__ import annotations

import math
import os
from pathlib import Path

from engine.bounds import ascii_number, shown
from engine.catalog import Accelerator, Catalog, ModelSpec, builtin_catalog, load_catalog
from engine.deployment import build_deployment
from engine.errors import RidgeError
from engine.levers import solve
from engine.sim.curves import (ConcurrencyData, CostTpotData, RooflineData, SpecData, concurrency_data,
                               cost_tpot_data, roofline_data, spec_data)
from engine.sim.inputs import (DEFAULT_LOAD_SLO_TPOT_MS, DEFAULT_LOAD_SLO_TTFT, DEFAULT_RAW,
                               DEFAULT_TPOT_BUDGET_MS, DEPLOYMENT_FIELDS, FIELD_BY_NAME, LOAD_FIELDS,
                               STATIC_CHOICES, parse_value)
from engine.sim.result import CompareRow, Result, compare

# Fields whose change can make the weights or the cache stop fitting: the fit message goes to the
# one the player last touched among them, else to the GPU count.
_FIT_FIELDS = {"model", "gpu", "gpus", "config", "weights", "kv", "reserve_gib", "prompt", "output",
               "shared_prefix", "prefix_caching", "allocator"}



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
                from engine.hfconfig import load_config  # ~13 ms, only when a config.json is loaded

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
            # ~29 ms of imports, paid on the Load tab's first run rather than on opening the simulator
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


def _with_files(base: Catalog, paths: list) -> Catalog:
    """`base` plus the models and GPUs of catalog files (later files add or replace entries)."""
    extra = load_catalog(paths)
    builtin = builtin_catalog()
    models = dict(base.models)
    gpus = dict(base.gpus)
    models.update({k: v for k, v in extra.models.items() if builtin.models.get(k) is not v})
    gpus.update({k: v for k, v in extra.gpus.items() if builtin.gpus.get(k) is not v})
    return Catalog(models, gpus)

