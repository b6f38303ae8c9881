"""A deployment: what is served, on what, to what traffic. Immutable; validated once when built.

Lengths are averages in tokens; `concurrency` is how many sequences the traffic wants in flight.
`build_deployment` resolves catalog ids and turns every bad value into one RidgeError line that
names the field, so the command line, the puzzles and the app all reject input the same way.
"""
from __future__ import annotations

from engine.catalog import PRECISION_BYTES, Accelerator, Catalog, ModelSpec
from engine.errors import RidgeError
from engine.ids import DEPLOYMENT_OBJECTIVES, Allocator, Fidelity, Scheduler
from engine.physics import NUMERIC
from engine.record import REQUIRED, Record

SCHEDULERS = tuple(s.value for s in Scheduler)
ALLOCATORS = tuple(a.value for a in Allocator)
OBJECTIVES = tuple(o.value for o in DEPLOYMENT_OBJECTIVES)
PRECISIONS = tuple(PRECISION_BYTES)
FIDELITIES = tuple(f.value for f in Fidelity)


class Deployment(Record):
    """Every input of the analysis; defaults are the course's ($3/GPU-hour; a reserve of 10% of
    each GPU's memory, 8 GiB on an H100, when `reserve_gib` is None).

    model and gpu are a ModelSpec and an Accelerator; lengths are average tokens; `concurrency`
    is the sequences the traffic wants in flight; spec_k 0 means no speculative decoding;
    max_output 0 means "four times the average output, capped by the context". `fidelity` is
    "floor" (the course's model), "realistic" (plus named corrections) or "measured" (step times
    from measured kernels); `draft_model` is the speculative draft whose own weights and KV cache
    the realistic and measured fidelities charge.
    """

    FIELDS = dict(
        model=REQUIRED, gpu=REQUIRED, gpus=1, prompt=1024, output=256, concurrency=32,
        weights="bf16", kv="bf16", reserve_gib=None, mfu=1.0, price=3.0,
        shared_prefix=0, prefix_caching=False,
        spec_k=0, spec_alpha=0.7, spec_draft_cost=0.05,
        scheduler="continuous", allocator="paged", chunked_prefill=False, chunk_tokens=512,
        max_output=0, objective="cost", route_model=None, route_fraction=0.5,
        fidelity="floor", draft_model=None,
    )
    CACHES = ("_numeric",)   # engine.physics.numeric_inputs

    @property
    def reserve_gib_per_gpu(self) -> float:
        """The reserve each GPU holds back: `reserve_gib`, else 10% of its memory."""
        return 0.1 * self.gpu.memory_gib if self.reserve_gib is None else self.reserve_gib

    @property
    def reserve_length(self) -> int:
        """Tokens a contiguous allocator reserves per request: the prompt plus the longest output
        it must allow for (`max_output`, else four times the average, capped by the context)."""
        longest = self.max_output or min(4 * self.output, self.model.context - self.prompt)
        return self.prompt + max(longest, self.output)

    def with_(self, **changes) -> "Deployment":
        """A copy with `changes`. Most changes a solve makes (a lever's precision, scheduler or
        allocator, the floor's fidelity) leave numeric_inputs' figures as they were, so the copy
        keeps them rather than building the same dict again (a solve makes a dozen copies)."""
        if not changes.keys() <= _FIELD_SET:
            return self.replace(**changes)   # which names the unknown field
        # Record.replace's copy, without its generic steps: a deployment derives nothing, and its
        # only cache is numeric_inputs' dict (CACHES).
        values = self.__dict__.copy()
        cached = values.pop("_numeric", None)
        values.update(changes)
        if cached is not None and changes.keys().isdisjoint(_NUMERIC_SOURCES):
            values["_numeric"] = cached
        new = object.__new__(type(self))
        object.__setattr__(new, "__dict__", values)
        return new


# The fields engine.physics.numeric_inputs reads (its numeric fields, and the reserve, which
# defaults to a share of the GPU's memory).
_NUMERIC_SOURCES = frozenset(NUMERIC) | {"reserve_gib", "gpu"}
_FIELD_SET = frozenset(Deployment.FIELDS)
_INT_FIELDS = {"gpus": 1, "prompt": 1, "output": 1, "concurrency": 1, "shared_prefix": 0,
               "spec_k": 0, "chunk_tokens": 1, "max_output": 0}
# Upper bounds keep every figure finite: no accelerator has 10^6 GiB to reserve, and no GPU-hour
# costs a million dollars (a price of 0 would make every cost gain 0/0).
_FLOAT_FIELDS = {"reserve_gib": (0.0, 1e6), "mfu": (1e-6, 1.0), "price": (1e-6, 1e6),
                 "spec_alpha": (0.0, 1.0), "spec_draft_cost": (0.0, 10.0), "route_fraction": (0.0, 1.0)}
_CHOICES = {"weights": PRECISIONS, "kv": PRECISIONS, "scheduler": SCHEDULERS,
            "allocator": ALLOCATORS, "objective": OBJECTIVES, "fidelity": FIDELITIES}
FIELD_NAMES = tuple(Deployment.FIELDS)


def validate(dep: Deployment) -> Deployment:
    """Check every field's range and the cross-field rules; return the deployment unchanged."""
    for name, low in _INT_FIELDS.items():
        value = getattr(dep, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise RidgeError(f"{name} must be a whole number, got {value!r}")
        if value < low:
            raise RidgeError(f"{name} must be at least {low}, got {value}")
    for name, (low, high) in _FLOAT_FIELDS.items():
        value = getattr(dep, name)
        if value is None and name == "reserve_gib":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise RidgeError(f"{name} must be a number, got {value!r}")
        if value < low or (high is not None and value > high) or value in (float("inf"), float("-inf")):
            bound = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            raise RidgeError(f"{name} must be {bound}, got {value:g}")
    for name, choices in _CHOICES.items():
        if getattr(dep, name) not in choices:
            raise RidgeError(f"{name} must be one of {', '.join(choices)}, got {getattr(dep, name)!r}")
    if dep.prompt > dep.model.context:
        raise RidgeError(f"prompt of {dep.prompt} tokens is longer than {dep.model.id}'s context of {dep.model.context}")
    if dep.prompt + dep.output > dep.model.context:
        raise RidgeError(f"prompt + output = {dep.prompt + dep.output} tokens exceeds {dep.model.id}'s context of {dep.model.context}")
    if dep.shared_prefix > dep.prompt:
        raise RidgeError(f"shared_prefix ({dep.shared_prefix}) cannot exceed the prompt ({dep.prompt})")
    if dep.gpus > 4096:
        raise RidgeError(f"gpus must be at most 4096, got {dep.gpus}")
    if max(dep.prompt, dep.output, dep.concurrency, dep.chunk_tokens, dep.max_output) > 10**8:
        raise RidgeError("lengths and concurrency must be at most 100,000,000")
    if dep.spec_k > 64:
        raise RidgeError(f"spec_k must be at most 64, got {dep.spec_k}")
    return dep


def build_deployment(catalog: Catalog, model: str | ModelSpec, gpu: str | Accelerator,
                     route_model: str | ModelSpec | None = None, **values) -> Deployment:
    """Resolve catalog ids, reject unknown fields, and validate: the one way to make a Deployment."""
    unknown = set(values) - set(FIELD_NAMES)
    if unknown:
        raise RidgeError(f"unknown deployment field '{sorted(unknown)[0]}'")
    model_spec = catalog.model(model) if isinstance(model, str) else model
    gpu_spec = catalog.gpu(gpu) if isinstance(gpu, str) else gpu
    route = catalog.model(route_model) if isinstance(route_model, str) else route_model
    draft = values.pop("draft_model", None)
    if isinstance(draft, str):
        draft = catalog.model(draft)
    return validate(Deployment(model=model_spec, gpu=gpu_spec, route_model=route, draft_model=draft, **values))


def deployment_to_dict(dep: Deployment) -> dict:
    """Plain, TOML/JSON-friendly inputs (ids instead of specs), omitting nothing."""
    out = {}
    for name in FIELD_NAMES:
        value = getattr(dep, name)
        if name in ("model", "gpu"):
            value = value.id
        elif name in ("route_model", "draft_model"):
            if value is None:
                continue
            value = value.id
        elif name == "reserve_gib" and value is None:
            continue   # the default: 10% of each GPU's memory
        out[name] = value
    return out
