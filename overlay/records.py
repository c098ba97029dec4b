"""Typed records of the results file: a cell, its kernel profile, a profiled kernel.

The file stays JSON of plain dicts (format 1, unchanged); these dataclasses are its schema in one
place.  ``from_dict`` checks each known field's type (a bad file is one line naming the cell and
the field) and keeps fields it does not know in ``extra``; ``to_dict`` gives the dict back, keys
in their order, so a file read and written again is the same file.  bench builds its cells through
them, ``read_results_file`` checks every cell with them, and explain reads profiles as them.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from .errors import UsageError

NUMBER, TEXT, LIST, DICT, FLAG = (int, float), (str,), (list,), (dict,), (bool,)


class _Record:
    """from_dict / to_dict for a dataclass whose fields list their JSON types in ``TYPES``."""

    TYPES: ClassVar[dict[str, tuple]] = {}
    NESTED: ClassVar[dict[str, Any]] = {}

    @classmethod
    def from_dict(cls, data: dict, where: str = "record"):
        if not isinstance(data, dict):
            raise UsageError(f"{where} is a {type(data).__name__}, not an object")
        declared = [f.name for f in dataclasses.fields(cls) if f.name not in ("extra", "order")]
        names = set(declared)
        lacking = [n for n in declared if n not in data and not _has_default(cls, n)]
        if lacking:
            raise UsageError(f"{where} lacks {', '.join(lacking)}")
        values = {}
        for name in names & set(data):
            value = data[name]
            if name in cls.NESTED and value is not None:
                value = cls.NESTED[name](value, f"{where}'s {name}")
            elif value is not None and not _is(value, cls.TYPES[name]):
                raise UsageError(f"{where}: {name} is {type(value).__name__} {str(value)[:40]!r}, expected "
                                 f"{' or '.join(t.__name__ for t in cls.TYPES[name])}")
            values[name] = value
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**values, extra=extra, order=tuple(data))

    def to_dict(self) -> dict:
        """The dict it was read from (or built as), nested records included, keys in order; a field
        set since and not in the order comes after, unless it is None."""
        out = {}
        for name in (*self.order, *(f.name for f in dataclasses.fields(self) if f.name not in self.order)):
            if name in ("extra", "order"):
                continue
            if name in self.extra:
                out[name] = self.extra[name]
            elif hasattr(self, name) and (name in self.order or getattr(self, name) is not None):
                value = getattr(self, name)
                out[name] = _plain(value)
        for name, value in self.extra.items():
            out.setdefault(name, value)
        return out


def _has_default(cls, name: str) -> bool:
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _is(value, types: tuple) -> bool:
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def _plain(value):
    if isinstance(value, _Record):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@dataclasses.dataclass
class Kernel(_Record):
    """One kernel of a profile, per step: generated (Inductor's) or library (cuBLAS, ATen, ...)."""

    name: str
    kind: str
    ops: list
    calls: float
    ms: float
    bytes: int | None = None  # per call, as estimated (runtime.kernel_bytes); None: unknown
    read_bytes: int | None = None  # the estimate's read part, per call
    nodes: list | None = None  # the FX nodes whose buffers it writes (None: a file from before)
    inlined: list | None = None  # FX nodes computed inside it, not written
    module: str | None = None
    sites: int | None = None
    extra: dict = dataclasses.field(default_factory=dict, repr=False)
    order: tuple = dataclasses.field(default=(), repr=False)
    TYPES: ClassVar = dict(name=TEXT, kind=TEXT, ops=LIST, calls=NUMBER, ms=NUMBER, bytes=NUMBER, read_bytes=NUMBER,
                           nodes=LIST, inlined=LIST, module=TEXT, sites=NUMBER)

    @property
    def generated(self) -> bool:
        return self.kind == "generated"


def _kernels(value, where: str) -> list[Kernel]:
    if not isinstance(value, list):
        raise UsageError(f"{where} is a {type(value).__name__}, not a list")
    return [Kernel.from_dict(k, f"{where} {i}") for i, k in enumerate(value)]


@dataclasses.dataclass
class Profile(_Record):
    """A cell's kernel profile (``bench --profile``): per step, its kernels, and the time with a
    kernel running (``busy_ms``) within the profiled step."""

    steps: int
    step_ms: float
    busy_ms: float
    kernels: list = dataclasses.field(default_factory=list)
    timed_ms: float | None = None  # the timed samples' step, which the profile is held against
    attempts: int | None = None
    unprofiled_ms: float | None = None
    overhead: float | None = None
    copy_gb_per_s: float | None = None  # this device's copy bandwidth, measured in the cell
    copy_bytes: int | None = None
    llc_bytes: int | None = None
    profile_s: float | None = None
    fusions: list | None = None  # the decision log's fusions, by node (explain's groups)
    extra: dict = dataclasses.field(default_factory=dict, repr=False)
    order: tuple = dataclasses.field(default=(), repr=False)
    TYPES: ClassVar = dict(steps=NUMBER, step_ms=NUMBER, busy_ms=NUMBER, kernels=LIST, timed_ms=NUMBER, attempts=NUMBER,
                           unprofiled_ms=NUMBER, overhead=NUMBER, copy_gb_per_s=NUMBER, copy_bytes=NUMBER,
                           llc_bytes=NUMBER, profile_s=NUMBER, fusions=LIST)
    NESTED: ClassVar = dict(kernels=_kernels)

    def totals(self) -> dict:
        """{generated_ms, library_ms, gaps_ms} per step: kernel times summed (streams may overlap
        them, so their sum can pass busy_ms); gaps, the step's time with no kernel running."""
        out = {"generated_ms": 0.0, "library_ms": 0.0}
        for k in self.kernels:
            out[f"{k.kind}_ms"] += k.ms
        out["gaps_ms"] = self.step_ms - self.busy_ms
        return out


def _profile(value, where: str) -> Profile:
    return Profile.from_dict(value, where)


@dataclasses.dataclass
class Cell(_Record):
    """One (model, row) process of a study: its setting, status, and what it measured."""

    suite: str
    model: str
    config: str
    device: str
    dtype: str
    mode: str
    status: str  # ok, n/a, accuracy, error, timeout, ...
    cell_repeat: int | None = None  # which process of the cell (--cell-repeats); files from before: none
    base: str | None = None  # bench --base
    region: str | None = None  # bench --regions
    message: str | None = None
    eager_ms: float | None = None  # per step, median of the samples
    compiled_ms: float | None = None
    speedup: float | None = None
    samples: int | None = None
    code_hash: str | None = None
    kernels: int | None = None
    compile_s: float | None = None
    busy: bool | None = None  # the machine took the cores away from most of its pairs
    input_arrival: str | None = None  # CUDA: whose copy brings each step's inputs (cell.arriving_steps)
    profile: Profile | None = None
    extra: dict = dataclasses.field(default_factory=dict, repr=False)
    order: tuple = dataclasses.field(default=(), repr=False)
    TYPES: ClassVar = dict(suite=TEXT, model=TEXT, config=TEXT, device=TEXT, dtype=TEXT, mode=TEXT, status=TEXT,
                           cell_repeat=NUMBER, base=TEXT, region=TEXT, message=TEXT, eager_ms=NUMBER,
                           compiled_ms=NUMBER, speedup=NUMBER, samples=NUMBER, code_hash=TEXT, kernels=NUMBER,
                           compile_s=NUMBER, busy=FLAG, input_arrival=TEXT, profile=DICT)
    NESTED: ClassVar = dict(profile=_profile)

    @property
    def ok(self) -> bool:
        return self.status == "ok"
