"""Kernel profiles: where a compiled step's time goes, kernel by kernel (``bench --profile``).

A torch.profiler pass over K steps after timing.  Each kernel that ran is ``generated`` (a Triton
kernel, or a C++ function of Inductor's: named as in the census) or ``library`` (a cuBLAS / cuDNN
kernel on CUDA; an aten call from the compiled graph on CPU), with its calls and milliseconds per
step, the FX ops the census says it computes, and for generated kernels the bytes Inductor's buffers
say it moves (``runtime.kernel_bytes``), so GB/s follows.  ``busy_ms``: time per step during which at
least one kernel ran; ``step_ms - busy_ms`` are the gaps (launches, Python, waiting).

On CPU the C++ functions only show in a profile when Inductor wraps them in a RECORD_FUNCTION
(``cpp.enable_kernel_profile``): that is a compile option, so the profiled CPU step is compiled again
with it, and the timed code stays as it was.  Torch is imported lazily.

A user's own script gets the same table from ``INDUCTOR_KERNEL_PROFILE=FILE`` (the whole run, from
the first Inductor import to exit) or ``with inductor_ablate.kernel_profile(FILE):`` around the code
to profile (``KernelProfile``): totals over the run, since only the script knows what a step is.
"""
from __future__ import annotations

import re
import time

from .switches import PROFILE_ENV

_CPU_PREFIX = re.compile(r"^graph_\d+_")
#: Calls from a compiled graph on CPU that allocate or re-view, not compute (not library kernels).
_CPU_BOOKKEEPING = ("aten::empty", "aten::empty_strided", "aten::as_strided", "aten::resolve_conj",
                    "aten::resolve_neg", "aten::detach", "aten::alias", "aten::view", "aten::reshape")


def _union_ms(intervals: list[tuple[float, float]]) -> float:
    """Total length of the union of (start, end) intervals, in the profiler's microseconds -> ms."""
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total / 1000


def _is_graph_call(event) -> bool:
    """The profiler's range around one call of a compiled graph (AOTAutograd's runtime wrapper)."""
    return event.name.startswith("## Call CompiledFxGraph")


def node_key(graph: int, name: str) -> str:
    """An FX node as profiles and explain name it: its name, prefixed by its graph after the first
    (``1:add_3``), since a backward graph reuses the forward's names."""
    return name if not graph else f"{graph}:{name}"


def _generated_by_name(census) -> dict:
    """{kernel name: what its call sites compute}: one generated kernel may run at several places
    (Inductor reuses a kernel whose source is identical, e.g. each layer's layer norm), each site
    computing other FX nodes; the profiler sees one name."""
    from .scope import common_module

    out: dict[str, dict] = {}
    for k in census.kernels:
        site = out.setdefault(k.name, {"ops": [], "nodes": [], "inlined": [], "bytes": [], "read": [], "modules": [],
                                       "sites": 0})
        site["sites"] += 1
        site["ops"] += k.ops
        site["nodes"] += [node_key(k.graph, n) for n in k.nodes]
        site["inlined"] += [node_key(k.graph, n) for n in k.inlined]
        site["modules"] += [k.modules.get(n) for n in k.nodes]
        if k.bytes is not None:
            site["bytes"].append(k.bytes)
            site["read"].append(k.read_bytes or 0)
    for site in out.values():
        site["module"] = common_module(site.pop("modules"))
        # bytes per call: the sites' mean (sites of one source share its sizes)
        site["read_bytes"] = round(sum(site.pop("read")) / len(site["bytes"])) if site["bytes"] else None
        site["bytes"] = round(sum(site["bytes"]) / len(site["bytes"])) if site["bytes"] else None
    return out


def _rows(calls, census) -> tuple[list[dict], list[tuple[float, float]]]:
    """(kernel rows before dividing by steps, busy intervals) from ``calls``: (name, start, end) in
    microseconds, a kernel's name as the census knows it or a library call's.  A generated row names
    the FX nodes it computes (``nodes``; ``inlined``: those it recomputes without owning their
    buffer), its module and its call sites: ``explain`` matches kernels of two rows by them, bisect
    matches fusions to kernels by them."""
    generated = _generated_by_name(census)
    rows: dict[str, dict] = {}
    busy = []
    for name, start, end in calls:
        row = rows.get(name)
        if row is None:
            site = generated.get(name)
            row = rows[name] = {"name": name, "kind": "generated" if site else "library",
                                "ops": sorted(site["ops"]) if site else [name], "calls": 0, "ms": 0.0,
                                "bytes": site["bytes"] if site else None}
            if site:
                row.update(nodes=sorted(set(site["nodes"])), inlined=sorted(set(site["inlined"])),
                           module=site["module"], sites=site["sites"], read_bytes=site["read_bytes"])
        row["calls"] += 1
        row["ms"] += (end - start) / 1000
        busy.append((start, end))
    return list(rows.values()), busy


def classify(events, census, device: str) -> tuple[list[dict], list[tuple[float, float]]]:
    """``_rows`` of torch.profiler events: on CUDA the GPU's work (kernels, copies, memsets); on
    CPU the C++ functions (under ``cpp.enable_kernel_profile``) and the compiled graph's aten calls."""
    generated = {k.name for k in census.kernels}
    calls = []
    if device.startswith("cuda"):
        for e in events:
            if e.device_type.name == "CUDA":
                calls.append((e.name, e.time_range.start, e.time_range.end))
    else:
        for e in events:
            name = _CPU_PREFIX.sub("", e.name)
            parent = getattr(e, "cpu_parent", None)
            if name in generated or (parent is not None and _is_graph_call(parent) and "::" in e.name
                                     and e.name not in _CPU_BOOKKEEPING):
                calls.append((name, e.time_range.start, e.time_range.end))
    return _rows(calls, census)


class _Timed:
    """A callable, or a namespace of them (``aten``, ``extern_kernels``, ``torch.ops``), in a compiled
    graph's output code, timed at each call: the CPU profile without a profiler."""

    def __init__(self, target, name: str, sink: list, chain: bool):
        self._target, self._name, self._sink, self._chain, self._children = target, name, sink, chain, {}

    def __call__(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return self._target(*args, **kwargs)
        finally:
            self._sink.append((self._name, t0 * 1e6, time.perf_counter() * 1e6))

    def __getattr__(self, attr):
        child = self._children.get(attr)
        if child is None:
            value = getattr(self._target, attr)
            if not (self._chain or callable(value)):
                return value
            child = self._children[attr] = _Timed(value, f"{self._name}.{attr}", self._sink, self._chain)
        return child


class _TorchInCode:
    """The ``torch`` a graph's output code sees: itself, but ``torch.ops.*`` calls are timed."""

    def __init__(self, torch, sink):
        self._torch, self.ops = torch, _Timed(torch.ops, "torch.ops", sink, chain=True)

    def __getattr__(self, attr):
        return getattr(self._torch, attr)


def _library_name(name: str) -> str:
    """``aten.addmm.default`` -> ``aten::addmm``; ``torch.ops.mkldnn._linear_pointwise.default`` ->
    ``mkldnn::_linear_pointwise``; ``extern_kernels.mm`` stays."""
    if name.startswith("extern_kernels."):
        return name
    if name.startswith("aten."):
        return "aten::" + name[len("aten."):].removesuffix(".default")
    rest = name.removeprefix("torch.ops.").removesuffix(".default")
    ns, _, op = rest.partition(".")
    return f"{ns}::{op}" if op else rest


def _output_modules() -> list:
    """Every loaded output-code module of a compiled graph (it has ``call``)."""
    from torch._inductor.codecache import PyCodeCache

    return [m for m in list(PyCodeCache.modules) + list(getattr(PyCodeCache, "modules_no_attr", {}).values())
            if callable(getattr(m, "call", None))]


def time_calls_cpu(step, steps: int, census, between=None, per_sample: int | None = None) -> tuple[float, list, int]:
    """Run ``step`` ``steps`` times with each generated kernel and library call of the compiled
    graphs' output code timed in place (a perf_counter pair per call, no profiler thread: on a
    small CPU a profiler's thread stalls OpenMP's).  The code that runs is the code that was timed,
    and as it was timed: with ``between`` (the eager step), samples of ``per_sample`` steps each
    follow a run of ``between``, untimed, as the timing interleaves eager and compiled samples.
    (wall ms, [(name, start us, end us)], steps) of the middle half of the samples by their step time."""
    import torch

    sink: list = []
    generated = {k.name for k in census.kernels}
    saved = []
    for module in {id(m): m for m in _output_modules()}.values():
        names = vars(module)
        for name in list(names):
            if name in generated and callable(names[name]):
                saved.append((module, name, names[name]))
                setattr(module, name, _Timed(names[name], name, sink, chain=False))
        for name, wrap in (("aten", lambda v: _Timed(v, "aten", sink, chain=True)),
                           ("extern_kernels", lambda v: _Timed(v, "extern_kernels", sink, chain=True)),
                           ("torch", lambda v: _TorchInCode(v, sink))):
            if name in names and (names[name] is torch or name != "torch"):
                saved.append((module, name, names[name]))
                setattr(module, name, wrap(names[name]))
    per_sample = per_sample or steps
    samples = []  # (wall s, steps, first call, end call) of each sample
    try:
        step()  # first-call costs stay out of the pass
        sink.clear()
        done = 0
        while done < steps:
            if between is not None:
                for _ in range(per_sample):
                    between()
            n, first = min(per_sample, steps - done), len(sink)
            t0 = time.perf_counter()
            for _ in range(n):
                step()
            samples.append((time.perf_counter() - t0, n, first, len(sink)))
            done += n
    finally:
        for module, name, value in saved:
            setattr(module, name, value)
    # the middle half of the samples by wall, as the timing's median keeps clear of a slow sample
    ranked = sorted(samples, key=lambda x: x[0] / x[1])
    kept = ranked[len(ranked) // 4: max(len(ranked) // 4 + 1, (3 * len(ranked) + 3) // 4)]
    calls = [c for _, _, a, b in kept for c in sink[a:b]]
    return (sum(w for w, *_ in kept) * 1000, [(n if n in generated else _library_name(n), a, b) for n, a, b in calls],
            sum(n for _, n, *_ in kept))


def copy_bandwidth(device: str) -> dict:
    """The device's own memory bandwidth, measured: a large copy (bytes read + written over the
    best time of a few), and its last-level cache size: ``explain.mark`` holds each kernel's GB/s
    against the one and the bytes beyond the other.  ``{"copy_gb_per_s", "llc_bytes",
    "copy_bytes"}``."""
    import torch

    cuda = device.startswith("cuda")
    nbytes = (1 << 30) if cuda else (256 << 20)
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    best = None
    for _ in range(5 if cuda else 3):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dst.copy_(src)
            end.record()
            torch.cuda.synchronize()
            ms = start.elapsed_time(end)
        else:
            t0 = time.perf_counter()
            dst.copy_(src)
            ms = (time.perf_counter() - t0) * 1000
        best = ms if best is None else min(best, ms)
    del src, dst
    return {"copy_gb_per_s": round(2 * nbytes / (best * 1e6), 1), "copy_bytes": 2 * nbytes, "llc_bytes": _llc_bytes(device)}


def measured_bandwidth(cells) -> dict:
    """The copy bandwidth and last-level cache that profiled cells measured, their median: a run's
    own figure (``meta``), and what explain holds each kernel against."""
    profiles = [c.get("profile") or {} for c in cells if c.get("status") == "ok"]
    gbps = sorted(p["copy_gb_per_s"] for p in profiles if p.get("copy_gb_per_s"))
    llc = [p["llc_bytes"] for p in profiles if p.get("llc_bytes")]
    return {"copy_gb_per_s": gbps[len(gbps) // 2] if gbps else None, "llc_bytes": max(llc) if llc else None}


def _llc_bytes(device: str) -> int | None:
    """The last-level cache: the GPU's L2, or the CPU's largest cache (sysfs)."""
    import glob

    if device.startswith("cuda"):
        import torch

        return getattr(torch.cuda.get_device_properties(device), "L2_cache_size", None)
    best = None
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path).read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        size = int(text.rstrip("KMG")) * scale
        best = size if best is None else max(best, size)
    return best


def profile_steps(step, steps: int, census, device: str, between=None, per_sample: int | None = None) -> dict:
    """Run ``step`` ``steps`` times profiled; the ``profile`` field of a results row.  CUDA:
    torch.profiler's GPU activity (kernel times as the GPU ran them).  CPU: ``time_calls_cpu``,
    interleaved with ``between`` as the timing was."""
    import torch

    if not device.startswith("cuda"):
        wall_ms, calls, steps = time_calls_cpu(step, steps, census, between, per_sample)
        rows, busy = _rows(calls, census)
    else:
        from torch.profiler import ProfilerActivity, profile

        step()  # the profiler's own first-call costs stay out of the pass
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            t0 = time.perf_counter()
            for _ in range(steps):
                step()
            torch.cuda.synchronize()
            wall_ms = (time.perf_counter() - t0) * 1000
        rows, busy = classify(prof.events(), census, device)
    for row in rows:
        row["calls"] = round(row["calls"] / steps, 3)
        row["ms"] = row["ms"] / steps
    rows.sort(key=lambda r: -r["ms"])
    return {"steps": steps, "step_ms": wall_ms / steps, "busy_ms": _union_ms(busy) / steps, "kernels": rows}


class KernelProfile:
    """The kernel table of a user's own code, written to ``path`` as JSON when it stops (the block
    must hold the compile, the first call, since Inductor names its kernels there):
    ``{"kind": "kernel-profile", "wall_ms", "busy_ms", "device", "kernels": [{name, kind, ops, nodes,
    calls, ms, bytes}]}``, calls and ms totals over the run.  While it runs, Inductor's caches are off
    (a cached graph generates no code for the census to name) and C++ functions carry Inductor's
    RECORD_FUNCTION (``cpp.enable_kernel_profile``): code generation changes, fusion does not."""

    def __init__(self, path: str):
        from .errors import check_writable

        check_writable(path, "kernel profile", "give a writable file path")
        self.path, self._prof = path, None

    def start(self) -> "KernelProfile":
        import torch
        import torch._functorch.config as functorch_config
        import torch._inductor.config as inductor_config
        from torch.profiler import ProfilerActivity, profile

        from . import runtime

        self._sink = runtime.start_recording()
        self._patches = [inductor_config.patch({"cpp.enable_kernel_profile": True, "fx_graph_cache": False}),
                         functorch_config.patch(enable_autograd_cache=False)]
        for p in self._patches:
            p.__enter__()
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
        self._prof = profile(activities=activities)
        self._prof.__enter__()
        self._t0 = time.perf_counter()
        return self

    def stop(self) -> dict:
        import json

        import torch

        from . import runtime
        from .kernel_census import summarize

        if self._prof is None:
            return {}
        cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
        if cuda:
            torch.cuda.synchronize()
        wall_ms = (time.perf_counter() - self._t0) * 1000
        prof, self._prof = self._prof, None
        prof.__exit__(None, None, None)
        for p in reversed(self._patches):
            p.__exit__(None, None, None)
        runtime.stop_recording()
        census = summarize([r for r in self._sink if r.get("kind")])
        rows, busy = classify(prof.events(), census, "cuda" if cuda else "cpu")
        rows.sort(key=lambda r: -r["ms"])
        out = {"kind": "kernel-profile", "device": "cuda" if cuda else "cpu", "wall_ms": wall_ms,
               "busy_ms": _union_ms(busy), "kernels": rows}
        with open(self.path, "w") as f:
            json.dump(out, f, indent=1)
        return out

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


_from_environ: dict = {}


def start_from_environ() -> None:
    """``INDUCTOR_KERNEL_PROFILE=FILE``: profile this process from now (the first Inductor import)
    to its exit.  The variable is taken out of the environment, so compile workers and other children
    do not profile themselves into the same file."""
    import atexit
    import os

    path = os.environ.pop(PROFILE_ENV, None)
    if not path or _from_environ:
        return
    _from_environ["profile"] = KernelProfile(path).start()
    atexit.register(_from_environ["profile"].stop)
