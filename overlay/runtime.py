"""The hooks that patched torch code calls, visible there as ``__inductor_ablate__``.

Each hook is cheap when its switch is off (one dict lookup), because some run once per candidate
fusion pair.  Torch modules are imported lazily: this module must import without torch.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib

from . import decisions, scope
from .config import config
from .fusion_kinds import fusion_kind  # noqa: F401 (a hook too)
from .decisions import fusion_made, fusion_refused, refusal_nodes  # noqa: F401 (hooks: patched torch calls them)
from .expect import check as check_expected_fused, expecting  # noqa: F401 (hooks too)
from .switches import FUSION_KINDS

_ALL_KINDS = frozenset(FUSION_KINDS)


def on(flag: str) -> bool:
    """True when the boolean switch ``flag`` (no_inline, flush_every_node) is active."""
    return config.effective()[flag]


def cpp_flush_after(backend) -> bool:
    """CppScheduling.ready_to_flush: the C++ flush after every node, or under a scope after a node in it
    (the scheduler's ``current_node``, just generated)."""
    if not on("flush_every_node"):
        return False
    node = getattr(getattr(backend, "scheduler", None), "current_node", None)
    return not scope.scoped() or node is not None and scope.snode_in_scope(node)


def cpp_flush_before(backend, node) -> None:
    """CppScheduling.codegen_node, first: under a scope, close the C++ function being built before a
    node in scope, so it gets one of its own; the nodes out of scope group as stock's do."""
    if on("flush_every_node") and scope.scoped() and backend.kernel_group.scheduled_nodes \
            and scope.snode_in_scope(node):
        backend.flush()


def check_scope_held(graph) -> None:
    """Once per graph (at the FX-graph cache key, else at codegen): warn when a module or op scope
    holds none of its nodes."""
    if scope.scoped():
        scope.check_held(graph)


def ablating() -> bool:
    """True when any switch is on: the correctness fixes apply only then (all off = stock Inductor)."""
    eff = config.effective()
    return bool(eff["no_fuse"] or eff["no_inline"] or eff["flush_every_node"] or eff["fuse_skip"] or eff["no_fuse_pairs"]
                or eff["fuse_limit"] is not None or eff["inline_limit"] is not None)


def decisions_active() -> bool:
    """A decision limit is set or the decision log is on (decisions.py); else the hooks do nothing."""
    return decisions.active()


def kind_blocked(kind: str, node1=None, node2=None) -> bool:
    """A fusion kind decided outside can_fuse is vetoed; under a scope only for a pair with a side in
    it (foreach and combo groupings, made for the whole graph at once, are left as they are)."""
    if kind not in config.effective()["no_fuse"]:
        return False
    blocked = not scope.scoped() or (node1 is not None and scope.pair_in_scope(node1, node2))
    if blocked and decisions.logging_on():
        decisions.fusion_vetoed(node1, node2, kind, _kinds_text())
    return blocked


def _kinds_text() -> str:
    kinds = config.effective()["no_fuse"]
    return "INDUCTOR_NO_FUSE=" + ("1" if kinds == _ALL_KINDS else ",".join(sorted(kinds)))


def _veto(node1, node2) -> str | None:
    """Which switch vetoes the pair, as the decision log names it, or None (stock's decision)."""
    eff = config.effective()
    if not scope.pair_in_scope(node1, node2):
        return None  # out of scope: stock's decision
    kinds, limit = eff["no_fuse"], eff["fuse_limit"]
    if limit is not None and decisions.fusions_counted() >= limit:  # INDUCTOR_FUSE_LIMIT reached: veto the rest
        return f"INDUCTOR_FUSE_LIMIT={limit}"
    if eff["fuse_skip"] and decisions.kept_apart(node1, node2):
        return "INDUCTOR_FUSE_SKIP: its sides were a skipped fusion's"
    if eff["no_fuse_pairs"] and scope.joins_pair(node1, node2, eff["no_fuse_pairs"]):
        return "INDUCTOR_NO_FUSE_PAIRS=" + ",".join(eff["no_fuse_pairs"])
    if kinds and (kinds == _ALL_KINDS or fusion_kind(node1, node2) in kinds):
        return _kinds_text()
    return None


def fusion_blocked(node1, node2) -> bool:
    """Called first thing in InductorChoices.can_fuse: True vetoes the pair (logged, with the log on,
    once per pair and switch in a graph)."""
    reason = _veto(node1, node2)
    if reason is not None and decisions.logging_on():
        decisions.fusion_vetoed(node1, node2, fusion_kind(node1, node2), reason)
    return reason is not None


def tile2d_index_transformed(kernel, expr) -> bool:
    """True when ``expr`` already holds the 2-D tile's inner variable (``x0_inner``): loop bodies
    never use it, so only CppTile2DKernel.transform_indexing can have put it there."""
    return kernel.inner_itervar() in getattr(expr, "free_symbols", ())


def local_buffer_in_tiled_outer_loop(kernel_proxies, depth: int) -> bool:
    """True when C++ outer-loop fusion is about to keep an intermediate in a function-local buffer
    while a kernel tiles one of the fused outer loops: the buffer holds one outer element's row, so
    the tile's lanes (several outer elements at once) overwrite each other's values
    (pytorch/pytorch#185702).  The caller then falls back to codegen without the local buffer."""
    from torch._inductor.virtualized import V

    context = getattr(V, "local_buffer_context", None)
    if not getattr(context, "local_buffers", None):
        return False
    return any(level.steps != 1 for proxy in kernel_proxies for level in (proxy.loop_nest.loops or ())[:depth])


def _buffer_name(x):
    """The buffer behind a TensorBox, a view of one, or a StorageBox; None if not realized
    (ir.try_get_name does this from torch 2.10; 2.9 has it only inside index_put_impl_)."""
    from torch._inductor import ir

    if isinstance(x, ir.TensorBox):
        x = x.data
    if isinstance(x, ir.BaseView):
        x = x.unwrap_view()
    if isinstance(x, ir.StorageBox):
        x = x.data
    return x.get_name() if isinstance(x, ir.Buffer) else None


def copy_if_reads(target, values):
    """``values`` for an index_put_ into ``target``: a fresh copy if they are (a view of) its buffer
    or read it (a ComputedBuffer's read names are its inputs, not itself: check both)."""
    from torch._inductor import lowering

    name = _buffer_name(target)
    if name is not None and (_buffer_name(values) == name or name in values.get_read_names()):
        values = lowering.clone(values)
        values.realize()
    return values


def _unrealized_outputs(node, result) -> list:
    """The StorageBoxes of computed (Pointwise, Reduction, Scan, Sort) data an FX call_function
    node's lowering produced and left unrealized: what Inductor may inline (views stay views)."""
    if node.op != "call_function":
        return []
    import torch.utils._pytree as pytree
    from torch._inductor import ir

    computed = tuple(t for t in (getattr(ir, n, None) for n in ("Pointwise", "Reduction", "Scan", "Sort")) if t)
    boxes = []
    for leaf in pytree.tree_leaves(result):
        if not isinstance(leaf, ir.TensorBox):
            continue
        data = leaf.data
        while isinstance(data, (ir.BaseView, ir.MutableBox)) and not isinstance(data, ir.StorageBox):
            data = data.data
        if isinstance(data, ir.StorageBox) and isinstance(data.data, computed):
            boxes.append(data)
    return boxes


_BARRIER = "tl.debug_barrier()"


def readback_barrier(kernel, name: str) -> None:
    """Before a Triton kernel reloads a buffer it stored in an earlier reduction loop, a barrier (once
    per loop body): Triton may lay the store and the load over different threads with nothing
    ordering them (triton-lang/triton#10924), and a thread then reads the buffer's old values."""
    if name in getattr(kernel.cse, "invalidated_stores", ()) and _BARRIER not in kernel.loads._lines:
        kernel.loads.writeline(_BARRIER)


def inline_hooks_on() -> bool:
    return on("no_inline") or decisions.active()


_LOAD = "_inductor_ablate_load"  # set on a ComputedBuffer: readers load it, even if it reads nothing


def realize_node_outputs(node, result, buffers: list, watermark: int) -> None:
    """After an FX node's lowering: NO_INLINE realizes every computed output; with a limit or the
    log on, each output is an inlining decision, realized past INDUCTOR_INLINE_LIMIT.

    ``buffers[watermark:]``: the buffers this node's lowering registered.  NO_INLINE also has readers
    load a realized buffer that reads nothing (``loads_zero_read``); a limit does the same for the
    buffers of a node past it (its first decision numbered above the limit) and for each output it
    realizes, so that INDUCTOR_INLINE_LIMIT=0 generates exactly NO_INLINE's code."""
    if not scope.lowering_in_scope(node):
        return  # out of scope: Inductor inlines as it would
    no_inline = on("no_inline")
    counting = decisions.active()
    past = not no_inline and decisions.inline_limit_reached()
    if no_inline and scope.scoped():  # only this node's buffers are loaded, not every zero-read one
        past = True
    for box in _unrealized_outputs(node, result):
        realize = counting and decisions.inline_candidate(node, box)
        if no_inline or realize:
            box.realize()
        if realize:
            setattr(box.data, _LOAD, True)
    if past:
        from torch._inductor import ir

        for buf in buffers[watermark:]:
            if isinstance(buf, ir.ComputedBuffer):
                setattr(buf, _LOAD, True)


def loads_zero_read(buffer) -> bool:
    """ComputedBuffer.make_loader: True to load a buffer that reads no memory instead of recomputing
    it in each reader (NO_INLINE, or a buffer realize_node_outputs marked past a limit)."""
    return (on("no_inline") and not scope.scoped()) or getattr(buffer, _LOAD, False)


def as_index_expr(expr):
    """A loop body's index expression as sympy: a static size may arrive as a Python int."""
    if type(expr) is int:
        import sympy

        return sympy.Integer(expr)
    return expr


_patches: list = []  # every patch definition, handed over by importhook (which imports this module)


def set_patches(patches: list) -> None:
    _patches[:] = patches
    _code_digest.cache_clear()


@functools.lru_cache(maxsize=None)
def _code_digest() -> str:
    """Our patches and hooks: a fix to either must not reuse artifacts compiled before it."""
    digest = hashlib.sha256(repr([dataclasses.astuple(p) for p in _patches]).encode())
    with open(__file__, "rb") as f:
        digest.update(f.read())
    return digest.hexdigest()[:16]


def cache_tag():
    """A value for Inductor's FX-graph / AOTAutograd cache keys; None (no change) when all off.

    With the decision log, a limit or a skip on, a value of this process's numbering alone: a graph
    from the cache makes no decisions, so it would neither log nor count them, and every later graph
    of the process would be numbered (and limited) wrongly.  Those compiles always compile; the
    kernel and autotuning caches still serve them."""
    if decisions.active():
        return ("inductor_ablate", "decisions", decisions.nonce(), decisions.counts())
    if not ablating():
        return None
    eff = config.effective()
    return ("inductor_ablate", _code_digest(), tuple(sorted(eff["no_fuse"])), eff["no_inline"], eff["flush_every_node"],
            eff["no_fuse_pairs"], eff["modules"], eff["ops"])


# -- census recording: what each generated kernel holds ------------------------------------------
class _Recording:
    """The census sink: process-wide, since Inductor may compile in another thread than the one
    that started the census (the backward, on CUDA, in autograd's device thread; see config.py)."""

    sink: list | None = None


_recording = _Recording()


def recording() -> bool:
    return _recording.sink is not None


def start_recording() -> list:
    sink: list = []
    _recording.sink = sink
    return sink


def stop_recording() -> None:
    _recording.sink = None


def _origins(nodes) -> list:
    from torch._inductor.utils import aggregate_origins

    return [o for o in aggregate_origins(list(nodes)) if getattr(o, "op", None) == "call_function"]


def _written(nodes) -> list[str]:
    return [name for n in nodes for name in n.get_buffer_names()]


def _record_code(kind: str, backend: str, name: str, nodes, ir_nodes: int,
                 split: tuple[int, int] | None = None) -> None:
    from torch._inductor.virtualized import V

    _recording.sink.append({"kind": kind, "backend": backend, "name": name, "graph": id(V.graph),
                            "ir_nodes": ir_nodes, "origins": _origins(nodes), "writes": _written(nodes),
                            "bytes": None if split is None else sum(split),
                            "read_bytes": None if split is None else split[0]})


def _hint(expr) -> int:
    from torch._inductor.virtualized import V

    sizevars = V.graph.sizevars
    hint = getattr(sizevars, "optimization_hint", None) or sizevars.size_hint  # 2.12 renamed it
    return int(hint(expr, fallback=0))


def _buffer_numel(name: str) -> tuple[int, int]:
    """(elements, bytes per element) of a buffer or graph input."""
    from torch._inductor.utils import sympy_product
    from torch._inductor.virtualized import V

    buf = V.graph.get_buffer(name)
    return _hint(sympy_product(buf.get_size())), buf.get_dtype().itemsize


def _distinct_elements(dep) -> int:
    """Elements of its buffer a dependency touches, each counted once: for an affine index, the
    product of the loop ranges the index depends on (a broadcast read of a [768] bias inside a
    [4096, 768] loop touches 768); for an indirect one (a gather), the loop's size; a StarDep
    (unknown index) touches the whole buffer."""
    from torch._inductor.utils import sympy_product

    if type(dep).__name__ != "MemoryDep":
        return 1 << 62
    if dep.is_indirect():
        return _hint(sympy_product(dep.size))
    return _hint(dep.get_numel())


def _kernel_buffers(args, outside: set[str]) -> dict[str, tuple[bool, bool]]:
    """{buffer: (read, written)} of the buffers a generated kernel takes as pointers (its KernelArgs):
    what it can touch, nothing that fusion kept in registers.  An in-out buffer (Inductor reuses a
    buffer in place) is read only where one of its names is read from ``outside`` the kernel."""
    out: dict[str, tuple[bool, bool]] = {}
    removed = lambda v: type(v).__name__ == "RemovedArg"  # noqa: E731
    for name in args.input_buffers:
        out[name] = (True, False)
    for name, inner in args.output_buffers.items():
        if not removed(inner):
            out[name] = (out.get(name, (False, False))[0], True)
    seen = set()
    for name, buf in args.inplace_buffers.items():
        if removed(buf) or id(buf) in seen:
            continue
        seen.add(id(buf))
        aliases = set(getattr(buf, "other_names", ()) or ()) | {name}
        out[name] = (bool(aliases & outside), True)
    return out


def _aliases(args, name: str) -> set[str]:
    buf = getattr(args, "inplace_buffers", {}).get(name) if args is not None else None
    return set(getattr(buf, "other_names", ()) or ()) | {name}


def kernel_bytes(nodes, args=None) -> int | None:
    """The bytes one call of a kernel moves, read and written (``kernel_bytes_split``)."""
    split = kernel_bytes_split(nodes, args)
    return None if split is None else sum(split)


def kernel_bytes_split(nodes, args=None) -> tuple[int, int] | None:
    """(read, written): an estimate of the bytes one call of a kernel moves (docs/explain.md, "Bytes").

    Which buffers: those the generated kernel takes as pointers (``args``, its KernelArgs), so a
    buffer fusion keeps in registers is never counted; without args (an old caller), the buffers
    read from outside the kernel and those it writes that the graph did not remove.  How much of
    each: the distinct elements its accesses touch (``_distinct_elements``), summed over the
    distinct accesses of the kernel's nodes (two nodes reading x alike count it once), at most the
    whole buffer; an in-out buffer counts twice (read, then written)."""
    from torch._inductor.virtualized import V

    try:
        snodes = [s for n in nodes for s in n.get_nodes()]
        reads = {d for s in snodes for d in s.read_writes.reads if type(d).__name__ != "WeakDep"}
        writes = {d for s in snodes for d in s.read_writes.writes if type(d).__name__ != "WeakDep"}
        if args is not None:
            buffers = _kernel_buffers(args, {d.name for d in reads} - {d.name for d in writes})
        else:
            written = {d.name for d in writes}
            gone = set(V.graph.removed_buffers) | set(getattr(V.graph, "inplaced_to_remove", ()))
            buffers = {d.name: (True, False) for d in reads if d.name not in written}
            for name in written - gone:
                buffers[name] = (buffers.get(name, (False, False))[0], True)
        total = [0, 0]  # read, written
        for name in sorted(buffers):
            try:
                numel, itemsize = _buffer_numel(name)
            except Exception:  # a seed or a name the graph does not know: no bytes to speak of
                continue
            for i, (side, deps) in enumerate(zip(buffers[name], (reads, writes))):
                if side:
                    mine = [d for d in deps if d.name in _aliases(args, name)]  # an in-out buffer has several names
                    touched = sum(_distinct_elements(d) for d in mine) if mine else numel
                    total[i] += min(touched, numel) * itemsize
        return total[0], total[1]
    except Exception:  # an estimate must never break compilation
        return None


def record_kernel(backend: str, name: str, nodes, args=None) -> None:
    """``args``: the kernel's KernelArgs (Triton: ``kernel.args``; C++: ``kernel_args`` or the
    kernel group's), the buffers it takes as pointers, for its byte estimate."""
    nodes = [n for n in nodes if hasattr(n, "get_nodes")]  # Triton node schedules hold markers too
    _record_code("kernel", backend, name, nodes, len(nodes), kernel_bytes_split(nodes, args))


def cpp_kernel_args(scheduling, kernel_args):
    """CppScheduling.define_kernel's buffers: those given, else its kernel group's (a flush)."""
    if kernel_args is not None:
        return kernel_args
    return getattr(getattr(scheduling, "kernel_group", None), "args", None)


def record_extern(scheduler_node) -> None:
    ir_node = scheduler_node.node
    name = getattr(ir_node, "python_kernel_name", None) or type(ir_node).__name__
    _record_code("extern", "extern", str(name), [scheduler_node], 0)


def record_scheduler_nodes(nodes) -> None:
    """The scheduler's nodes after fusion, at codegen: each one that generates code is one loop
    nest (C++) or one kernel (Triton); fusion is what lowers this number."""
    from torch._inductor import scheduler as s
    from torch._inductor.virtualized import V

    count = sum(1 for n in nodes if not isinstance(n, s.NopKernelSchedulerNode) and not n.is_extern())
    _recording.sink.append({"kind": "fused_nodes", "graph": id(V.graph), "count": count})


def record_fx_node(node, buffers) -> None:
    """``buffers``: those this node's lowering registered, to attribute kernels to it.  Where the
    lowering is an extern call (conv, mm, a fallback), the computed buffers beside it are copies of
    its inputs into the layout the library wants: recorded apart, they compute no op."""
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    if node.op != "call_function":
        return
    extern = any(isinstance(b, ir.ExternKernel) for b in buffers)
    copies = [b.get_name() for b in buffers if extern and isinstance(b, ir.ComputedBuffer)]
    created = [b.get_name() for b in buffers if b.get_name() not in copies]
    _recording.sink.append({"kind": "fx", "graph": id(V.graph), "node": node, "created": created, "copies": copies})
