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


def classify(events, census, device: str, nodes: bool = False) -> tuple[list[dict], list[tuple[float, float]]]:
    """(kernel rows before dividing by steps, busy intervals) from profiler events.  ``nodes``: each
    generated row also names the FX nodes it computes, which a decision log names too (bisect)."""
    generated = {k.name: k for k in census.kernels}
    rows: dict[str, dict] = {}
    busy = []

    def add(name, kind, start, end, kernel=None):
        row = rows.setdefault(name, {"name": name, "kind": kind, "ops": sorted(kernel.ops) if kernel else [name],
                                     "calls": 0, "ms": 0.0, "bytes": kernel.bytes if kernel else None})
        if nodes and kernel is not None:
            row.setdefault("nodes", sorted(kernel.nodes))
        row["calls"] += 1
        row["ms"] += (end - start) / 1000
        busy.append((start, end))

    if device.startswith("cuda"):
        for e in events:
            if e.device_type.name != "CUDA":  # kernels, copies and memsets: the GPU's work
                continue
            kernel = generated.get(e.name)
            add(e.name, "generated" if kernel else "library", e.time_range.start, e.time_range.end, kernel)
    else:
        for e in events:
            name = _CPU_PREFIX.sub("", e.name)
            kernel = generated.get(name)
            parent = getattr(e, "cpu_parent", None)
            if kernel is not None:
                add(name, "generated", e.time_range.start, e.time_range.end, kernel)
            elif parent is not None and _is_graph_call(parent) and "::" in e.name and e.name not in _CPU_BOOKKEEPING:
                add(e.name, "library", e.time_range.start, e.time_range.end)
    return list(rows.values()), busy


def profile_steps(step, steps: int, census, device: str) -> dict:
    """Run ``step`` ``steps`` times under torch.profiler; the ``profile`` field of a results row."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    cuda = device.startswith("cuda")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    step()  # the profiler's own first-call costs stay out of the pass
    if cuda:
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        if cuda:
            torch.cuda.synchronize()
        wall_ms = (time.perf_counter() - t0) * 1000
    rows, busy = classify(prof.events(), census, device)
    for row in rows:
        row["calls"] = round(row["calls"] / steps, 3)
        row["ms"] = row["ms"] / steps
    rows.sort(key=lambda r: -r["ms"])
    return {"steps": steps, "step_ms": wall_ms / steps, "busy_ms": _union_ms(busy) / steps, "kernels": rows}


def totals(profile: dict) -> dict:
    """{generated_ms, library_ms, gaps_ms} per step: the parts ``explain`` splits a change into.
    Kernel times are summed (streams may overlap them, so their sum can pass busy_ms); the gaps are
    the step's time with no kernel running."""
    out = {"generated_ms": 0.0, "library_ms": 0.0}
    for k in profile["kernels"]:
        out[f"{k['kind']}_ms"] += k["ms"]
    out["gaps_ms"] = profile["step_ms"] - profile["busy_ms"]
    return out


from .switches import PROFILE_ENV  # noqa: E402  (the variable is declared with the switches)


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
        rows, busy = classify(prof.events(), census, "cuda" if cuda else "cpu", nodes=True)
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
