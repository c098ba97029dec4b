"""What Inductor generated, kernel by kernel, and which post-grad ops each kernel computes.

``metrics.generated_kernel_count`` counts C++ loop nests, not functions, and says nothing about what
is inside a kernel.  The census records, at code generation (patches flagged ``census``), each C++
function / Triton kernel with the FX nodes of its scheduler nodes (their ``origins``), each extern
call (mm, conv, fallbacks), and each post-grad FX op lowered.  Caches are off while it runs, so the
census sees a real compile, never a cached artifact.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import operator
import threading

from . import runtime
from .scope import module_matches, module_path


@dataclasses.dataclass
class Kernel:
    name: str
    backend: str  # cpp / triton / extern
    ops: list[str]  # compute ops inside, one entry per FX node (post-grad aten ops)
    views: list[str]  # view ops folded into the kernel's indexing (not computation)
    nodes: list[str]  # FX node names of the compute ops
    inlined: list[str]  # compute ops computed here that own no buffer (inlined into this kernel)
    ir_nodes: int  # Inductor IR nodes (buffers) computed inside
    graph: int  # which compiled graph (0, 1, ... in compile order; backward comes after forward)
    copies_for: list[str] = dataclasses.field(default_factory=list)  # extern ops whose inputs it lays out
    bytes: int | None = None  # estimated bytes moved per call (runtime.kernel_bytes; kernels only)
    modules: dict[str, str] = dataclasses.field(default_factory=dict)  # node -> module path, where the graph has one
    read_bytes: int | None = None  # of ``bytes``, those read

    def describe(self) -> str:
        return f"{self.name} [{self.backend}]: {self.ops_text()}"

    def ops_text(self) -> str:
        copies = f"(layout copy for {', '.join(self.copies_for)})" if self.copies_for else ""
        return ", ".join(self.ops) or copies or "-"


@dataclasses.dataclass
class Census:
    kernels: list[Kernel]  # generated C++ functions / Triton kernels, in codegen order
    externs: list[Kernel]  # calls into libraries / fallbacks
    fx_ops: int  # post-grad compute ops lowered (views and getitem excluded)
    graphs: int
    fused_nodes: int = 0  # scheduler nodes after fusion that generate code: one loop nest (C++) / kernel (Triton) each
    loop_nests: int = 0  # Inductor's metrics.generated_kernel_count (on C++ it also counts vectorized/tail variants)
    result: object = None  # what fn returned

    @property
    def num_kernels(self) -> int:
        return len(self.kernels)

    def multi_op_kernels(self) -> list[Kernel]:
        return [k for k in self.kernels if len(k.ops) > 1]

    def table(self, modules=()) -> str:
        """Every kernel and extern call with its ops; ``modules`` (globs): only those computing a node
        of these modules (``census --modules``), the totals still over everything."""
        rows = [("graph", "kind", "name", "ops")]
        for k in sorted(self.kernels + self.externs, key=lambda k: k.graph):
            if not modules or any(module_matches(m, modules) for m in k.modules.values()):
                rows.append((str(k.graph), k.backend, k.name, k.ops_text()))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3] for r in rows]
        lines.insert(1, "-" * min(120, max(len(line) for line in lines)))
        lines.append("")
        lines.append(f"{self.num_kernels} kernels from {self.fused_nodes} scheduler nodes, {len(self.externs)} extern calls, "
                     f"{self.fx_ops} post-grad FX ops, {self.graphs} graph(s); "
                     f"kernels holding >1 op: {len(self.multi_op_kernels())}")
        return "\n".join(lines)


def _op_name(target) -> str:
    name = str(target)
    return name[len("aten."):] if name.startswith("aten.") else getattr(target, "__name__", name)


def _is_view(target) -> bool:
    return bool(getattr(target, "is_view", False))


def _is_compute(node) -> bool:
    return node.op == "call_function" and node.target is not operator.getitem and not _is_view(node.target)


def summarize(records: list[dict], result=None) -> Census:
    """Turn raw runtime records into a Census (graphs numbered in compile order).

    A kernel computes an FX node if it writes a buffer that node's lowering created, or if the node
    is among its origins and created no buffer at all (it was inlined).  An origin that created a
    buffer written elsewhere is only *read* here (e.g. through a view of a multi-output node).
    """
    graph_index: dict[int, int] = {}
    creator: dict[tuple[int, str], object] = {}  # (graph, buffer name) -> FX node
    copier: dict[tuple[int, str], object] = {}  # (graph, layout-copy buffer) -> the extern FX node it feeds
    creators: set[tuple[int, object]] = set()
    loop_nests = sum(rec["count"] for rec in records if rec["kind"] == "loop_nests")
    fused_nodes = sum(rec["count"] for rec in records if rec["kind"] == "fused_nodes")
    records = [rec for rec in records if rec["kind"] not in ("loop_nests", "fused_nodes")]
    for rec in records:
        if rec["kind"] == "fx":
            for name in rec["created"]:
                creator[(rec["graph"], name)] = rec["node"]
                creators.add((rec["graph"], rec["node"]))
            for name in rec.get("copies", ()):
                copier[(rec["graph"], name)] = rec["node"]
                creators.add((rec["graph"], rec["node"]))
    kernels, externs, fx_ops = [], [], 0
    for rec in records:
        g = graph_index.setdefault(rec["graph"], len(graph_index))
        if rec["kind"] == "fx":
            fx_ops += _is_compute(rec["node"])
            continue
        owned = {creator[(rec["graph"], b)] for b in rec["writes"] if (rec["graph"], b) in creator}
        origins = sorted({o for o in rec["origins"] if o in owned or (rec["graph"], o) not in creators} | owned,
                         key=lambda n: n.name)
        compute = [o for o in origins if _is_compute(o)]
        if rec["kind"] == "extern" and any(o in owned for o in compute):
            compute = [o for o in compute if o in owned]  # the op it runs, not its inputs' neighbours
        k = Kernel(name=rec["name"], backend=rec["backend"], ops=[_op_name(o.target) for o in compute],
                   inlined=[o.name for o in compute if o not in owned],
                   views=[_op_name(o.target) for o in origins if _is_view(o.target)],
                   nodes=[o.name for o in compute], ir_nodes=rec["ir_nodes"], graph=g,
                   copies_for=sorted({_op_name(copier[(rec["graph"], b)].target) for b in rec["writes"]
                                      if (rec["graph"], b) in copier}), bytes=rec.get("bytes"),
                   modules={o.name: m for o in compute if (m := module_path(o)) is not None},
                   read_bytes=rec.get("read_bytes"))
        (externs if rec["kind"] == "extern" else kernels).append(k)
    return Census(kernels=kernels, externs=externs, fx_ops=fx_ops, graphs=len(graph_index),
                  fused_nodes=fused_nodes, loop_nests=loop_nests, result=result)


@contextlib.contextmanager
def recording(reset_dynamo: bool = True):
    """Record every Inductor compile inside the block; yields a list that receives the records.
    Inductor's FX-graph and AOTAutograd caches are off inside, so every compile is real."""
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    from . import importhook

    importhook.install()
    if reset_dynamo:
        torch._dynamo.reset()
    from torch._inductor import metrics

    sink = runtime.start_recording()
    start = metrics.generated_kernel_count
    try:
        with inductor_config.patch(fx_graph_cache=False, fx_graph_remote_cache=False), \
                functorch_config.patch(enable_autograd_cache=False):
            yield sink
    finally:
        runtime.stop_recording()
        sink.append({"kind": "loop_nests", "count": metrics.generated_kernel_count - start})


def census(fn, *args, **kwargs) -> Census:
    """Compile ``fn`` with torch.compile (unless it already is), run it once on the arguments,
    and return the Census of everything Inductor generated for it."""
    import torch

    compiled = fn if hasattr(fn, "_torchdynamo_orig_callable") else torch.compile(fn)
    with recording() as sink:
        result = compiled(*args, **kwargs)
    return summarize(sink, result)


def assert_one_op_per_kernel(result: Census, *, allow: tuple[str, ...] = ()) -> None:
    """Raise AssertionError naming each kernel that computes more than one op.  ``allow``: op names
    (e.g. a documented exception) that may share a kernel."""
    bad = [k for k in result.multi_op_kernels() if not all(op in allow for op in k.ops)]
    if not result.kernels and not result.externs:
        raise AssertionError("census recorded no kernels: did the function compile?")
    if bad:
        raise AssertionError("kernels holding more than one op:\n" + "\n".join("  " + k.describe() for k in bad))


@contextlib.contextmanager
def counting_patterns():
    """Yields a Counter of the FX pattern matches Inductor applies inside the block, per pattern, named
    as Inductor's own per-pattern counter names them (the entry's ``pattern_name``, else the pattern's
    class and the matched node's target).  Inductor keeps that counter only in newer torch (2.13 has
    it, under TORCHINDUCTOR_PATTERN_MATCH_DEBUG; the H200's 2.11 has none), so this counts the same
    thing on any torch: it wraps the ``apply`` of each pattern-entry class, which
    ``PatternMatcherPass`` calls once for each match it keeps (a subclass's ``apply`` that calls its
    base's is counted once).  Wrap a ``recording()`` block in it, so that caches are off and every
    pass runs."""
    from torch._inductor import pattern_matcher

    classes, stack = [], [pattern_matcher.PatternEntry]
    while stack:
        cls = stack.pop()
        classes.append(cls)
        stack.extend(cls.__subclasses__())
    originals = {cls: cls.__dict__["apply"] for cls in classes if "apply" in cls.__dict__}
    counts: collections.Counter[str] = collections.Counter()
    inside = threading.local()

    def counted(apply):
        @functools.wraps(apply)
        def apply_and_count(entry, match, graph, node):
            depth = getattr(inside, "depth", 0)
            inside.depth = depth + 1
            try:
                result = apply(entry, match, graph, node)
            finally:
                inside.depth = depth
            if not depth:
                counts[getattr(entry, "pattern_name", None) or f"{type(entry.pattern).__name__}_{node.target}"] += 1
            return result
        return apply_and_count

    for cls, apply in originals.items():
        cls.apply = counted(apply)
    try:
        yield counts
    finally:
        for cls, apply in originals.items():
            cls.apply = apply


@contextlib.contextmanager
def counting_bytes():
    """Yields a dict that receives, when the block ends, Inductor's own estimate of the bytes its
    scheduler nodes read and write, summed over the compiles inside the block: ``kernels`` (the
    kernels it generated; a buffer a fused kernel keeps inside itself is not counted) and
    ``externs`` (library calls: convolutions, matmuls, fallbacks).  This is the count behind
    ``metrics.num_bytes_accessed`` (``GraphLowering.count_bytes``), which Inductor makes only while
    its ``inductor_metrics`` log is enabled; the log is enabled at INFO here with no handler, so
    nothing is printed.  Wrap a ``recording()`` block in it, so that caches are off."""
    from torch._inductor import compile_fx, metrics
    from torch._inductor.scheduler import ExternKernelSchedulerNode

    log = getattr(compile_fx, "inductor_metrics_log", None)
    if log is None or not hasattr(metrics, "nodes_num_elem"):
        raise RuntimeError("this torch's Inductor has no inductor_metrics log or metrics.nodes_num_elem: "
                           "its byte count cannot be read")
    out: dict[str, int] = {}
    level, start = log.level, len(metrics.nodes_num_elem)
    log.setLevel("INFO")
    try:
        yield out
    finally:
        log.setLevel(level)
        out.update(kernels=0, externs=0)
        for node, _ in metrics.nodes_num_elem[start:]:
            out["externs" if isinstance(node, ExternKernelSchedulerNode) else "kernels"] += \
                node.get_read_write_buffers_sizes()
