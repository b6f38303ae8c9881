"""The pack format: strict pydantic models for `[chapter]` and `[[puzzles]]`, and the loader.

A pack is one TOML file per module (`packs/<module-id>.toml`)::

    [chapter]
    id = "kv-cache"                 # a module id
    title = "..."
    briefing = '''a few paragraphs'''
    expects = "one line: what the chapter expects the player to know"

    [[puzzles]]
    id = "kv-cache-01"              # stable: saves are keyed by it
    title = "..."
    difficulty = 2                  # 1..5
    scenario = "who serves what, and what they care about"
    objective = "cost"              # cost | tpot | ttft
    levers = ["batching", ...]      # optional: the choices offered (default: all nine)
    ruled_out = { quantization = "the accuracy sign-off covers BF16 only" }  # optional: levers the
                                    # scenario excludes, each with the reason the card shows
    reasons = ["kv-cap", ...]       # 3..5 candidate reason ids; the key's must be among them
    hints = ["gentle", "closer", "nearly the answer"]
    ask = { estimates = ["max_concurrency"] }   # optional
    deployment = { model = "llama-3-70b", gpu = "h100-sxm", gpus = 4, prompt = 3072, ... }
    expect = { bottleneck = "kv-capacity", best_lever = "quantization", gain_band = "2-4x", reason = "kv-cap" }

Levers and reasons are kept in the one fixed order (`engine.ids.Lever`, `puzzles.reasons.REASONS`)
whatever order the file lists them in, so an option's position never hints at the answer. An
`expect.bottleneck` must be a verdict that can bound the objective (`engine.ids.OBJECTIVE_VERDICTS`).
Unknown keys and wrong types are errors; every error is one `PackError` line naming the file, the
line (found in the file's text), the puzzle id and the field. `expect` is the author's intended
answer: `puzzles.check` compares it with the engine's key, which alone decides the grade.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engine.ids import LOAD_LEVERS, LOAD_OBJECTIVES, OBJECTIVE_VERDICTS, Lever as LeverId, Objective as ObjectiveId, Verdict as VerdictId
from engine.catalog import Catalog, builtin_catalog
from engine.deployment import FIELD_NAMES, Deployment, build_deployment
from engine.errors import RidgeError
from engine.bands import GAIN_BANDS
from engine.bounds import MAX_DEPTH, MAX_PACK_BYTES, data_depth, decode_utf8, first_control, read_capped, shown
from engine.levers import LEVERS

from puzzles.errors import PackError
from puzzles.puzzle import ESTIMATE_NAMES, MODULES, Puzzle, fixed_order
from puzzles.reasons import REASONS

Module = Literal[MODULES]
Verdict = Literal[tuple(str(v) for v in VerdictId)]
Lever = Literal[tuple(str(x) for x in LeverId)]
Band = Literal[GAIN_BANDS]
Reason = Literal[tuple(REASONS)]
Estimate = Literal[ESTIMATE_NAMES]
Objective = Literal[tuple(str(x) for x in ObjectiveId)]

_STRICT = ConfigDict(extra="forbid", strict=True)
ID_PATTERN = r"^[a-z0-9][a-z0-9.-]*$"


class ChapterSpec(BaseModel):
    model_config = _STRICT
    id: str = Field(pattern=ID_PATTERN, max_length=64)  # a course module id, or a player pack's own
    title: str = Field(min_length=1)
    briefing: str = Field(min_length=1)
    expects: str = Field(min_length=1)


class AskSpec(BaseModel):
    model_config = _STRICT
    estimates: list[Estimate] = Field(default_factory=list)

    @field_validator("estimates")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("estimates are listed twice")
        return value


class LoadTable(BaseModel):
    """A load puzzle's traffic, scheduler and fleet (`engine.load.spec.LoadSpec`'s fields; the
    split and the lever's split as "P:D" strings)."""

    model_config = _STRICT
    arrival: Literal["poisson", "bursty", "closed"] = "poisson"
    qps: float | None = Field(default=None, gt=0, le=1e6)
    users: int | None = Field(default=None, ge=1, le=100_000)
    think_seconds: float = Field(default=0.0, ge=0, le=1e6)
    lengths: Literal["fixed", "exponential", "trace"] = "fixed"
    requests: int = Field(default=600, ge=50, le=20_000)
    seed: int = Field(default=0, ge=0, le=2**31)
    slo_ttft: float = Field(default=2.0, gt=0, le=1e6)
    slo_tpot: float = Field(default=0.2, gt=0, le=1e6)
    chunk_tokens: int | None = Field(default=None, ge=1, le=10**7)
    max_running: int = Field(default=256, ge=1, le=100_000)
    queue_cap: int | None = Field(default=None, ge=0, le=10**7)
    replicas: int = Field(default=1, ge=1, le=4096)
    disaggregate: str | None = None
    link: str = "infiniband-ndr"
    lever_chunk_tokens: int = Field(default=512, ge=1, le=10**7)
    lever_split: str | None = None
    lever_queue_cap: int | None = Field(default=None, ge=0, le=10**7)

    def spec(self):
        """The engine's LoadSpec (RidgeError, one line, for a bad split or link)."""
        from engine.load import links
        from engine.load.spec import LoadSpec, parse_split

        values = self.model_dump()
        for name in ("disaggregate", "lever_split"):
            if values[name] is not None:
                values[name] = parse_split(values[name])
        link, gbps = links.resolve(values.pop("link"))
        return LoadSpec(**values, link=link, link_gbps=gbps)


class ExpectSpec(BaseModel):
    model_config = _STRICT
    bottleneck: Verdict | None = None
    best_lever: Lever | None = None
    gain_band: Band | None = None
    reason: Reason | None = None


class PuzzleSpec(BaseModel):
    model_config = _STRICT
    id: str = Field(pattern=ID_PATTERN, max_length=64)
    title: str = Field(min_length=1)
    difficulty: int = Field(ge=1, le=5)
    scenario: str = Field(min_length=1)
    objective: Objective
    deployment: dict[str, Any]
    levers: list[Lever] = Field(default_factory=lambda: list(LEVERS), min_length=2)
    ask: AskSpec = Field(default_factory=AskSpec)
    reasons: list[Reason] = Field(min_length=3, max_length=5)
    hints: list[str] = Field(min_length=2, max_length=3)
    expect: ExpectSpec | None = None
    ruled_out: dict[Lever, str] = Field(default_factory=dict)
    load: LoadTable | None = None

    @field_validator("ruled_out")
    @classmethod
    def _worded(cls, value: dict[str, str]) -> dict[str, str]:
        for lever, why in value.items():
            if len(why.strip()) < 12:
                raise ValueError(f"say in words why {lever} is ruled out (a sentence the card shows)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "PuzzleSpec":
        offered = set(self.levers)
        both = [lever for lever in self.ruled_out if lever in offered]
        if both:
            raise ValueError(f"ruled_out names {both[0]}, which the puzzle also offers")
        if (self.objective in LOAD_OBJECTIVES) != (self.load is not None):
            raise ValueError(f"a {self.objective} puzzle {'needs' if self.load is None else 'takes no'} [load] "
                             "table (the load objectives are " + ", ".join(LOAD_OBJECTIVES) + ")")
        usable = LOAD_LEVERS if self.load is not None else LEVERS
        stray = [lever for lever in [*self.levers, *self.ruled_out] if lever not in usable]
        if stray:
            kind = "a load run" if self.load is not None else "the steady-state analysis"
            raise ValueError(f"lever {stray[0]} is not one {kind} can apply (those are: {', '.join(usable)})")
        allowed = OBJECTIVE_VERDICTS[self.objective]
        if self.expect is not None and self.expect.bottleneck is not None and self.expect.bottleneck not in allowed:
            raise ValueError(f"expect.bottleneck {self.expect.bottleneck!r} cannot bound the {self.objective} "
                             f"objective (it can be: {', '.join(allowed)})")
        return self

    @field_validator("levers", "reasons")
    @classmethod
    def _no_repeats(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("an entry is listed twice")
        return value

    @field_validator("id")
    @classmethod
    def _not_generated(cls, value: str) -> str:
        if value.startswith("gen-"):
            raise ValueError("ids starting with 'gen-' are reserved for generated puzzles")
        return value


class LoadedPack:
    """A validated pack: its chapter, its puzzles (in file order) and where it came from."""

    def __init__(self, path: str, chapter: ChapterSpec, puzzles: list[Puzzle]) -> None:
        self.path, self.chapter, self.puzzles = path, chapter, puzzles


# --- locating lines in the file's text -------------------------------------------------------

class _Lines:
    """Finds the line of a puzzle's block, or of a field inside it, in a pack's text."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.headers = [i for i, line in enumerate(self.lines) if re.match(r"^\s*\[\[\s*puzzles\s*\]\]", line)]
        self.chapter = next((i for i, line in enumerate(self.lines) if re.match(r"^\s*\[\s*chapter\s*\]", line)), None)

    def block(self, index: int) -> tuple[int, int]:
        if index >= len(self.headers):
            return (0, len(self.lines))
        start = self.headers[index]
        end = self.headers[index + 1] if index + 1 < len(self.headers) else len(self.lines)
        return start, end

    def find(self, index: int | None, field: str | None) -> int | None:
        """1-based line of `field` (a dotted path) in puzzle `index`'s block; the block's header
        when the field is not written there; the [chapter] header for index None."""
        if index is None:
            start, end = (self.chapter or 0), len(self.lines)
            if self.headers and self.chapter is not None and self.chapter < self.headers[0]:
                end = self.headers[0]
            fallback = (self.chapter + 1) if self.chapter is not None else None
        else:
            start, end = self.block(index)
            fallback = start + 1 if index < len(self.headers) else None
        if not field:
            return fallback
        parts = [p for p in field.split(".") if not p.isdigit()]
        for name in reversed(parts):
            pattern = re.compile(rf"^\s*(\[\s*puzzles\.)?{re.escape(name)}\s*(=|\])|[{{,]\s*{re.escape(name)}\s*=")
            for i in range(start, end):
                if pattern.search(self.lines[i]):
                    return i + 1
        return fallback


# --- loading ---------------------------------------------------------------------------------

_BOOL_FIELDS = {name for name, default in Deployment.FIELDS.items() if isinstance(default, bool)}
_TABLE_KEYS = {"model", "gpu", "route_model"} | (set(FIELD_NAMES) - {"model", "gpu", "route_model", "objective", "fidelity"})


def read_pack_text(path: str | Path) -> str:
    """The pack's text, read with a byte cap (engine.bounds) so no file can exhaust memory."""

    try:
        return decode_utf8(read_capped(path, MAX_PACK_BYTES, "puzzle pack"), path)
    except RidgeError as exc:  # the bounds name the file first; PackError names it its own way
        raise PackError(str(exc).removeprefix(f"{shown(path)}: "), path=shown(path)) from None


def parse_toml(path: str, text: str) -> dict:
    """The pack's data; nesting past engine.bounds.MAX_DEPTH and control characters in any text
    (a terminal escape in a title) are refused, naming the key."""

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = re.search(r"at line (\d+)", message)
        line = int(match.group(1)) if match else None
        raise PackError(f"not valid TOML: {message}", path=path, line=line) from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        raise PackError(f"not valid TOML ({type(exc).__name__}: nested or sized past its limits)", path=path) from None
    if data_depth(data) > MAX_DEPTH:
        raise PackError(f"nested more than {MAX_DEPTH} levels deep", path=path)
    found = first_control(data)
    if found:
        raise PackError(f"{found[0]}: text holds a control character ({found[1]}), which could "
                        "rewrite the terminal", path=path)
    return data



def _pydantic_problem(exc: ValidationError) -> tuple[str, str]:
    """(dotted field, message) for the first error pydantic reports."""
    return _pydantic_problems(exc)[0]


def _pydantic_problems(exc: ValidationError) -> list[tuple[str, str]]:
    """(dotted field, message) for every error pydantic reports, in its order."""
    return [_one_problem(err) for err in exc.errors()]


def _one_problem(err: dict) -> tuple[str, str]:
    loc = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        return loc, f"unknown key '{err['loc'][-1]}'"
    if err["type"] == "missing":
        return loc, "missing"
    value = err.get("input")
    shown = repr(value) if not isinstance(value, (dict, list)) or len(repr(value)) < 60 else type(value).__name__
    message = err["msg"]
    if err["type"] == "literal_error":
        message = "must be " + message.removeprefix("Input should be ")
    return loc, f"{message}, got {shown}"


def steady_objective(objective: str) -> str:
    """The steady-state objective a load puzzle's deployment carries (its figures are read by
    the steady-state parts of a card and a reveal): TTFT for P99 TTFT, TPOT for P99 TPOT, cost
    for the rest."""
    return {"p99-ttft": "ttft", "p99-tpot": "tpot"}.get(objective, objective if objective not in LOAD_OBJECTIVES else "cost")


def build_puzzle_deployment(table: dict, objective: str, catalog: Catalog) -> Deployment:
    """The engine Deployment for a pack's `deployment` table; RidgeError names the field."""
    for key in table:
        if key == "objective":
            raise _FieldError("deployment.objective", "set the objective at the puzzle level, not in the deployment")
        if key == "fidelity":
            raise _FieldError("deployment.fidelity", "a puzzle is judged at both fidelities; it names neither")
        if key not in _TABLE_KEYS:
            raise _FieldError(f"deployment.{key}", f"unknown deployment field '{key}'")
    for key in ("model", "gpu"):
        if key not in table:
            raise _FieldError(f"deployment.{key}", "missing")
    for key in ("model", "gpu", "route_model", "draft_model"):
        if key in table and not isinstance(table[key], str):
            raise _FieldError(f"deployment.{key}", f"must be a catalog id (a string), got {table[key]!r}")
    for key in _BOOL_FIELDS & set(table):
        if not isinstance(table[key], bool):
            raise _FieldError(f"deployment.{key}", f"must be true or false, got {table[key]!r}")
    try:
        model = catalog.model(table["model"])
    except RidgeError as exc:
        raise _FieldError("deployment.model", str(exc)) from None
    try:
        gpu = catalog.gpu(table["gpu"])
    except RidgeError as exc:
        raise _FieldError("deployment.gpu", str(exc)) from None
    route = None
    if "route_model" in table:
        try:
            route = catalog.model(table["route_model"])
        except RidgeError as exc:
            raise _FieldError("deployment.route_model", str(exc)) from None
    if "draft_model" in table:
        try:
            catalog.model(table["draft_model"])
        except RidgeError as exc:
            raise _FieldError("deployment.draft_model", str(exc)) from None
    values = {k: v for k, v in table.items() if k not in ("model", "gpu", "route_model")}
    try:
        return build_deployment(catalog, model, gpu, route_model=route, objective=steady_objective(objective), **values)
    except RidgeError as exc:
        message = str(exc)
        first = message.split(" ", 1)[0]
        field = f"deployment.{first}" if first in FIELD_NAMES else "deployment"
        raise _FieldError(field, message) from None


class _FieldError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def puzzle_from_spec(spec: PuzzleSpec, module: str, catalog: Catalog, path: str = "", line: int | None = None) -> Puzzle:
    """A Puzzle from a validated spec (raises _FieldError for a bad deployment)."""
    dep = build_puzzle_deployment(spec.deployment, spec.objective, catalog)
    load = None
    if spec.load is not None:
        from engine.load.spec import validate as validate_load

        try:
            load = validate_load(spec.load.spec(), dep.gpus)
        except RidgeError as exc:
            raise _FieldError("load", str(exc)) from None
    return Puzzle(
        id=spec.id, module=module, title=spec.title, difficulty=spec.difficulty, scenario=spec.scenario.strip(),
        objective=spec.objective, deployment=dep, levers=fixed_order(spec.levers, LeverId),
        estimates=tuple(spec.ask.estimates), reasons=fixed_order(spec.reasons, REASONS),
        hints=tuple(h.strip() for h in spec.hints),
        expect=spec.expect.model_dump(exclude_none=True) if spec.expect else None, source=path, line=line,
        ruled_out={lever: " ".join(spec.ruled_out[lever].split()) for lever in fixed_order(spec.ruled_out, LeverId)},
        load=load,
    )


def load_pack(path: str | Path, catalog: Catalog | None = None, problems: list[PackError] | None = None) -> LoadedPack | None:
    """Load and validate one pack file.

    Without `problems`, the first problem raises PackError. With a list, every problem found is
    appended to it (one per puzzle at most) and the valid puzzles are still returned, so `check`
    can report them all; the return is None when the file itself is unusable."""
    catalog = catalog or builtin_catalog()
    path = str(path)

    def fail(error: PackError) -> None:
        if problems is None:
            raise error
        problems.append(error)

    try:
        text = read_pack_text(path)
        data = parse_toml(path, text)
    except PackError as exc:
        fail(exc)
        return None
    lines = _Lines(text)
    for key in data:
        if key not in ("chapter", "puzzles"):
            fail(PackError(f"unknown top-level key '{key}' (a pack holds [chapter] and [[puzzles]])",
                           path=path, line=_top_line(lines, key)))
            return None
    if "chapter" not in data:
        fail(PackError("missing the [chapter] table", path=path, line=1))
        return None
    try:
        chapter = ChapterSpec.model_validate(data["chapter"])
    except ValidationError as exc:
        field, message = _pydantic_problem(exc)
        fail(PackError(message, path=path, line=lines.find(None, field), field=f"chapter.{field}"))
        return None
    raw_puzzles = data.get("puzzles", [])
    if not isinstance(raw_puzzles, list):
        fail(PackError("puzzles must be an array of tables ([[puzzles]])", path=path, line=_top_line(lines, "puzzles")))
        return None
    puzzles: list[Puzzle] = []
    for index, raw in enumerate(raw_puzzles):
        pid = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"#{index + 1}"
        try:
            spec = PuzzleSpec.model_validate(raw)
        except ValidationError as exc:
            for field, message in _pydantic_problems(exc):
                fail(PackError(message, path=path, line=lines.find(index, field), puzzle=pid, field=field))
            continue
        id_line = lines.find(index, "id")
        try:
            puzzle = puzzle_from_spec(spec, chapter.id, catalog, path, id_line)
            puzzle.extra["index"] = index
            puzzles.append(puzzle)
        except _FieldError as exc:
            fail(PackError(exc.message, path=path, line=lines.find(index, exc.field), puzzle=pid, field=exc.field))
    return LoadedPack(path, chapter, puzzles)


def field_line(puzzle: Puzzle, field: str) -> int | None:
    """The line of `field` (dotted) inside a loaded puzzle's block in its pack, else its id line."""
    index = puzzle.extra.get("index")
    if not puzzle.source or index is None:
        return puzzle.line
    try:
        text = read_pack_text(puzzle.source)
    except RidgeError:  # changed or gone since it loaded
        return puzzle.line
    return _Lines(text).find(index, field) or puzzle.line


def _top_line(lines: _Lines, key: str) -> int | None:
    for i, line in enumerate(lines.lines):
        if re.match(rf"^\s*(\[+\s*)?{re.escape(key)}\b", line):
            return i + 1
    return None
