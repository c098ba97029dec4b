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


def classify(events, census, device: str) -> tuple[list[dict], list[tuple[float, float]]]:
    """(kernel rows before dividing by steps, busy intervals) from profiler events."""
    generated = {k.name: k for k in census.kernels}
    rows: dict[str, dict] = {}
    busy = []

    def add(name, kind, start, end, kernel=None):
        row = rows.setdefault(name, {"name": name, "kind": kind, "ops": sorted(kernel.ops) if kernel else [name],
                                     "calls": 0, "ms": 0.0, "bytes": kernel.bytes if kernel else None})
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
