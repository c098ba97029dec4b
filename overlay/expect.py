"""``INDUCTOR_EXPECT_FUSED=glob[,glob]``: a check that a module compiles to one kernel.

At codegen, after every fusion, the scheduler's nodes are the kernels; for each glob (module paths
as ``INDUCTOR_ABLATE_MODULES`` takes them), the kernels computing one of its FX nodes are counted.
More than one: a warning naming them and the refusals Inductor logged between them (``WhyNoFuse``,
the decision log's ``refusal`` records), or under ``INDUCTOR_ABLATE_STRICT=1`` an error, so a test
can pin "this block is one kernel" (upstream's ``fuse_or_err``, pytorch#189499).  It changes no
decision: the generated code is what it would be without it.
"""
from __future__ import annotations

import operator
import os

from . import decisions, scope, switches
from .config import config
from .errors import UsageError, warn


class ExpectFusedWarning(UserWarning):
    """A module named in INDUCTOR_EXPECT_FUSED compiled to more than one kernel."""


class ExpectFusedError(UsageError):
    """The same, under INDUCTOR_ABLATE_STRICT=1."""


def expecting() -> bool:
    return bool(config.effective()["expect_fused"])


def _kernels(nodes, glob: str) -> list:
    """The scheduler nodes that generate a kernel or call one (not views) and compute a node of ``glob``."""
    from torch._inductor import scheduler

    return [n for n in nodes if not isinstance(n, scheduler.NopKernelSchedulerNode)
            and any(scope.module_matches(scope.module_path(o), (glob,)) for o in scope.origins(n))]


def _ops(node) -> str:
    names = sorted({str(o.target).split(".")[1] if str(o.target).startswith("aten.") else str(o.target)
                    for o in scope.origins(node) if getattr(o, "op", None) == "call_function"} - {str(operator.getitem)})
    return ",".join(names[:4]) + (f",+{len(names) - 4}" if len(names) > 4 else "")


def _refusals_between(graph, kernels) -> list[str]:
    members = [decisions._members(k) for k in kernels]  # as the refusals record their sides

    def which(side):
        return next((i for i, m in enumerate(members) if side & m), None)
    out = []
    for side1, side2, reason in getattr(graph, "_inductor_ablate_refusals", ()):
        a, b = which(side1), which(side2)
        if a is not None and b is not None and a != b:
            text = f"{kernels[a].get_name()} + {kernels[b].get_name()}: {reason}"
            if text not in out:
                out.append(text)
    return out


def check(nodes) -> None:
    """Scheduler._codegen: each expected module in one kernel, or a warning (an error if strict)."""
    from torch._inductor.virtualized import V

    graph = V.graph
    strict = switches.strict_from_environ(os.environ)
    for glob in config.effective()["expect_fused"]:
        kernels = _kernels(nodes, glob)
        if not kernels:
            fx = [n for n in graph.graph.nodes if n.op == "call_function"]
            if not any(scope.module_matches(scope.module_path(n), (glob,)) for n in fx):
                near = scope.nearest_modules((glob,), fx)
                message = (f"INDUCTOR_EXPECT_FUSED {glob}: graph {decisions.graph_index()} holds no node of that "
                           f"module (nearest modules: {', '.join(near) or 'none: no node records its module'})")
                if strict:
                    raise ExpectFusedError(message)
                warn(message, ExpectFusedWarning)
        if len(kernels) <= 1:
            continue
        listed = "; ".join(f"{k.get_name()}{' (extern)' if k.is_extern() else ''} [{_ops(k)}]" for k in kernels)
        refusals = _refusals_between(graph, kernels)
        why = ("Inductor refused: " + "; ".join(refusals[:8]) + (f"; +{len(refusals) - 8} more" if len(refusals) > 8 else "")
               if refusals else "no refusal was logged between them (never candidates: an extern call, a "
               "dependency through another kernel, or a switch's veto)")
        on = {k: v for k, v in config.values().items() if v not in (False, None, frozenset(), ()) and k != "expect_fused"}
        if on:
            why += "; switches on: " + ", ".join(switches.SWITCHES[k].env for k in on)
        message = (f"INDUCTOR_EXPECT_FUSED {glob}: graph {getattr(graph, '_inductor_ablate_index', '?')} computes it "
                   f"in {len(kernels)} kernels: {listed}. {why}")
        if strict:
            raise ExpectFusedError(message)
        warn(message, ExpectFusedWarning)
