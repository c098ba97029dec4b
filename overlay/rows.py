"""Named configurations of the ablation study, each mapped to concrete switches.

``all`` turns every optimization on (Inductor's defaults, plus matmul templates through
max_autotune_gemm, parameter freezing for inference, and CUDA graphs on GPU), like the paper's
"all TorchInductor optimizations" row.  Every other row changes exactly what its name says from
``all``.  A row that cannot apply to a device or mode is reported as n/a, never dropped.
"""
from __future__ import annotations

import dataclasses
import re

from .errors import UsageError
from .switches import FUSION_KINDS, KIND_DEVICE, KIND_NEEDS, parse_scope


@dataclasses.dataclass(frozen=True)
class BenchConfig:
    name: str
    doc: str
    inductor: dict  # torch._inductor.config overrides on top of ALL_INDUCTOR
    switches: dict  # inductor_ablate switches
    source: str  # "paper" (Table 4 row) or "ours"
    only_device: str | None = None  # "cpu" / "cuda": n/a elsewhere
    only_mode: str | None = None  # "inference" / "training"
    needs: tuple[str, ...] = ()  # torch._inductor.scheduler attributes the row needs (newer torch)
    note: str | None = None  # why the row is n/a everywhere (e.g. the grouping is off in `all`)

    def not_applicable(self, device: str, mode: str, cpu_templates: bool = False) -> str | None:
        dev = "cuda" if device.startswith("cuda") else device
        if self.name == "no-matmul-templates" and dev == "cpu" and not cpu_templates:
            return "cpu `all` has no matmul templates (add --cpu-templates)"
        if self.note:
            return self.note
        if self.only_device and dev != self.only_device:
            return f"{self.only_device} only"
        if self.only_mode and mode != self.only_mode:
            return f"{self.only_mode} only"
        if self.needs:
            import torch
            from torch._inductor import scheduler

            missing = [attr for attr in self.needs if not hasattr(scheduler, attr)]
            if missing:
                return f"torch {torch.__version__} has no {', '.join(missing)}"
        return None


def all_inductor(device: str, mode: str, cpu_templates: bool = False) -> dict:
    """The ``all`` row's Inductor settings on a device/mode.

    On CPU, matmul templates (C++ GEMM templates through max_autotune_gemm) are opt-in
    (``--cpu-templates``): their autotuning costs seconds per matmul shape, which alone would take
    the default CPU matrix past its 10-minute budget on a 2-core machine.  On CUDA, the templates
    are the paper's: matmuls (mm, bmm, addmm) get Triton templates autotuned against ATen;
    convolutions stay on ATen/cuDNN (max_autotune_conv_backends=ATEN), since autotuning Triton
    convolution templates took resnet18's first compile to 515 s on the H200."""
    settings = {}
    if mode == "inference":
        settings["freezing"] = True
    if device.startswith("cuda"):
        settings.update({"triton.cudagraphs": True, "max_autotune_gemm": True,
                         "max_autotune_gemm_backends": "ATEN,TRITON", "max_autotune_conv_backends": "ATEN"})
    elif cpu_templates:
        settings.update({"max_autotune_gemm": True, "max_autotune_gemm_backends": "ATEN,CPP"})
    return settings


_KIND_NOTE = {"combo": "combo_kernels is off in `all`: nothing to remove"}


def _kinds_row(kinds: list[str]) -> BenchConfig:
    """The row that vetoes the given fusion kinds (INDUCTOR_NO_FUSE=kind[,kind...]): one kind is
    `no-fusion-KIND`; several, `no-fusion-KIND+KIND`, measure kinds that stand in for each other
    (without horizontal fusion, the scheduler makes the same groups as vertical fusions)."""
    value = ",".join(kinds)
    doc = FUSION_KINDS[kinds[0]] if len(kinds) == 1 else "these fusion kinds together"
    devices = {KIND_DEVICE[k] for k in kinds if k in KIND_DEVICE}
    notes = [_KIND_NOTE[k] for k in kinds if k in _KIND_NOTE]
    if len(devices) > 1:
        notes.append(f"no device has all of {', '.join(kinds)}")
    return BenchConfig(f"no-fusion-{'+'.join(kinds)}", f"INDUCTOR_NO_FUSE={value}: {doc}", {}, {"no_fuse": value},
                       "ours", only_device=next(iter(devices)) if len(devices) == 1 else None,
                       needs=tuple(KIND_NEEDS[k] for k in kinds if k in KIND_NEEDS), note="; ".join(notes) or None)


CONFIGS: dict[str, BenchConfig] = {c.name: c for c in [
    BenchConfig("all", "every optimization on", {}, {}, "paper"),
    BenchConfig("no-loop-reorder", "no loop/layout reordering: pick_loop_orders, loop_ordering_after_fusion, "
                "layout_optimization off",
                {"pick_loop_orders": False, "loop_ordering_after_fusion": False, "layout_optimization": False},
                {}, "paper"),
    BenchConfig("no-matmul-templates", "no matmul templates: max_autotune_gemm off (ATen / library matmuls only)",
                {"max_autotune_gemm": False}, {}, "paper"),
    BenchConfig("no-freezing", "no parameter freezing (freezing=False)", {"freezing": False}, {}, "paper",
                only_mode="inference"),
    BenchConfig("no-pattern-matching", "no FX pattern matching (pattern_matcher=False)",
                {"pattern_matcher": False}, {}, "paper"),
    BenchConfig("no-cudagraphs", "no CUDA graphs (triton.cudagraphs=False)", {"triton.cudagraphs": False}, {},
                "paper", only_device="cuda"),
    BenchConfig("no-fusion", "INDUCTOR_NO_FUSE=1: every scheduler fusion vetoed", {}, {"no_fuse": True}, "paper"),
    BenchConfig("no-inlining", "INDUCTOR_NO_INLINE=1: every FX node's output realized", {}, {"no_inline": True},
                "paper"),
    BenchConfig("no-fusion-no-inlining", "INDUCTOR_NO_FUSE=1 INDUCTOR_NO_INLINE=1", {},
                {"no_fuse": True, "no_inline": True}, "paper"),
    BenchConfig("no-cpp-grouping", "INDUCTOR_FLUSH_EVERY_NODE=1: one C++ function per scheduler node",
                {}, {"flush_every_node": True}, "ours", only_device="cpu"),
    BenchConfig("one-kernel-per-op", "INDUCTOR_ONE_KERNEL_PER_OP=1: no fusion, no inlining, no C++ grouping",
                {}, {"one_kernel_per_op": True}, "ours"),
    *[_kinds_row([kind]) for kind in FUSION_KINDS],
]}


def base_row(name: str, named: list[str], device: str, mode: str, cpu_templates: bool = False) -> BenchConfig:
    """``bench --base ROW``: a row whose change is Inductor settings alone, applied to every row of the
    run, `all` included, so the whole ablation runs again with that optimization off (e.g. every row
    without matmul templates, to take the autotuning's matmul picks out of a comparison of two GPUs).
    A row that sets the tool's switches would collide with the rows' own, and is refused."""
    bases = [n for n, c in CONFIGS.items() if c.inductor and not c.switches]
    if name not in bases:
        raise UsageError(f"--base {name!r}: expected a row that changes Inductor settings only: {', '.join(bases)}")
    row = CONFIGS[name]
    why = row.not_applicable(device, mode, cpu_templates)
    if why:
        raise UsageError(f"--base {name}: n/a on {device} {mode} ({why})")
    if name in named:  # named in --configs; from a group (paper, full) it is left out quietly
        raise UsageError(f"--base {name}: --configs also names {name}, which would be `all` again; leave it out")
    return row


#: ``--configs`` shorthands
GROUPS = {
    "paper": [n for n, c in CONFIGS.items() if c.source == "paper"],
    "ours": [n for n, c in CONFIGS.items() if c.source == "ours"],
    "kinds": [f"no-fusion-{kind}" for kind in FUSION_KINDS],
    "full": list(CONFIGS),
    # the default on CUDA, where a cell costs 10-20 s and a model's first cell autotunes its matmuls:
    # the rows that fusion and inlining decide, and CUDA graphs, fit README's main command in 10 minutes
    "central": ["all", "no-fusion", "no-inlining", "no-fusion-no-inlining", "no-cudagraphs"],
}


def default_group(device: str) -> str:
    """``--configs`` left out: every row on CPU, the central rows on CUDA (see GROUPS["central"])."""
    return "central" if device.startswith("cuda") else "full"


def by_name(name: str) -> BenchConfig:
    """A named row, or one that vetoes several fusion kinds together, ``no-fusion-KIND+KIND``
    (named with its kinds in FUSION_KINDS order, so one set of kinds is one row), or a row scoped
    to part of the model, ``ROW@GLOB`` (``ROW@op:NAME`` for ops; ``|`` between several)."""
    if name in CONFIGS:
        return CONFIGS[name]
    if "@" in name:
        return _scoped_row(name)
    kinds = name.removeprefix("no-fusion-").split("+") if name.startswith("no-fusion-") and "+" in name else []
    if not kinds or any(k not in FUSION_KINDS for k in kinds) or len(set(kinds)) < len(kinds):
        raise UsageError(f"unknown config {name!r}; configs: {', '.join(CONFIGS)}; groups: {', '.join(GROUPS)}; "
                         f"or fusion kinds together, no-fusion-KIND+KIND (kinds: {', '.join(FUSION_KINDS)})")
    return _kinds_row(sorted(kinds, key=list(FUSION_KINDS).index))


def _scoped_row(name: str) -> BenchConfig:
    """``no-fusion@encoder.layer.*.attention``: the row's switches in that scope only (the rest of the
    model compiles as `all` does), so a row's loss can be split by region."""
    row_name, _, where = name.partition("@")
    label, where = _region_parts(where)
    row = by_name(row_name)
    if not row.switches or row.inductor:
        scopable = [n for n, c in CONFIGS.items() if c.switches and not c.inductor]
        raise UsageError(f"--configs {name}: a scope narrows the tool's fusion and inlining switches; "
                         f"scopable rows: {', '.join(scopable)}")
    key, value = ("ops", where[3:]) if where.startswith("op:") else ("modules", where)
    value = ",".join(parse_scope(value.replace("|", ","), f"--configs {name}"))
    if not value:
        raise UsageError(f"--configs {name}: an empty scope; give ROW@GLOB")
    return dataclasses.replace(row, name=name, doc=f"{row.doc}; only in {label or where}",
                               switches={**row.switches, key: value}, source="ours")


_REGION_LABEL = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)=(.+)")


def _region_parts(where: str) -> tuple[str | None, str]:
    """``attention=*.attn|*.attention`` -> ("attention", the globs); a bare scope has no label."""
    m = _REGION_LABEL.fullmatch(where)
    return (m.group(1), m.group(2)) if m else (None, where)


def region_label(config: str) -> str | None:
    """The region a scoped row runs in, as tables name it: its label (``ROW@NAME=GLOBS``), else its
    scope; None for an unscoped row."""
    if "@" not in config:
        return None
    label, where = _region_parts(config.split("@", 1)[1])
    return label or where


def by_region(configs: list[str], regions: list[str]) -> list[str]:
    """``bench --regions``: each scopable row of ``configs`` once per region (``ROW@REGION``)."""
    rows = [c for c in configs if c != "all" and "@" not in c and by_name(c).switches and not by_name(c).inductor]
    if not rows:
        raise UsageError("--regions splits rows that set the tool's fusion and inlining switches; --configs names "
                         "none (e.g. --configs no-fusion,no-inlining)")
    return [by_name(f"{row}@{region}").name for row in rows for region in regions]


def resolve(spec: str | None) -> list[str]:
    """``--configs`` value -> config names (comma list of names and group names)."""
    names: list[str] = []
    for item in (spec or "full").split(","):  # callers pass default_group(device)
        item = item.strip()
        for name in GROUPS.get(item, [item]):
            name = by_name(name).name
            if name not in names:
                names.append(name)
    if "all" not in names:
        names.insert(0, "all")  # every row is reported against `all`
    return names


def describe() -> str:
    lines = [f"{'config':<32}source  applies      what it sets (on top of `all`)"]
    for c in CONFIGS.values():
        where = c.only_device or c.only_mode or "everywhere"
        sets = ", ".join([f"{k}={v}" for k, v in c.inductor.items()] +
                         [f"{k}={v}" for k, v in c.switches.items()]) or "-"
        lines.append(f"{c.name:<32}{c.source:<8}{where:<13}{sets}")
        lines.append(f"{'':<53}{c.doc}" + (f" [n/a: {c.note}]" if c.note else ""))
    lines.append("\n`all`: Inductor defaults + freezing (inference) + on CUDA triton.cudagraphs and matmul templates "
                 "(max_autotune_gemm, ATEN,TRITON; convolutions on ATen); on CPU matmul templates (ATEN,CPP) only with --cpu-templates")
    lines.append("groups for --configs: " + "; ".join(f"{g} = {len(v)} configs" for g, v in GROUPS.items()))
    lines.append("fusion kinds together: no-fusion-KIND+KIND (e.g. no-fusion-vertical+horizontal), "
                 "INDUCTOR_NO_FUSE=KIND,KIND")
    return "\n".join(lines)
