"""Which config each Triton kernel of a process settled on.

A Triton kernel Inductor generates with several configs (block sizes, warps) benchmarks them at its
first run and keeps the fastest, so two processes running the same generated code can run different
configs: timing noise picks.  A wrong answer that comes in some processes and not others, with the
same code, can hang on such a pick.  ``settled_picks()`` lists, per kernel loaded in this process,
the config it runs; ``scripts/model_latency.py --save-code`` writes it beside the code, and
``scripts/config_sweep.py --pin`` runs the code with a process's picks.

A kernel is keyed by its name and its source file's name (a hash of its source): kernel names
repeat between graphs, sources do not, and the key is the same in every process that generated the
same code.
"""
from __future__ import annotations

import contextlib
import gc
import os


def describe(config) -> str:
    """A Triton config as one line: its block sizes, warps and stages."""
    sizes = " ".join(f"{k}={v}" for k, v in sorted(config.kwargs.items()))
    return f"{sizes} num_warps={config.num_warps} num_stages={config.num_stages}"


def kernel_key(kernel) -> str:
    name = (getattr(kernel, "inductor_meta", None) or {}).get("kernel_name") or kernel.fn.__name__
    return f"{name} {os.path.basename(getattr(kernel, 'filename', '') or '?')}"


def is_kernel(obj) -> bool:
    """Whether ``obj`` is a Triton kernel object of Inductor's (a CachingAutotuner)."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    # type(), not isinstance(): isinstance asks each object's __class__, which some deprecated torch
    # objects answer with a warning
    return issubclass(type(obj), CachingAutotuner)


def loaded_kernels() -> list:
    """Every Triton kernel object alive in this process."""
    return [o for o in gc.get_objects() if is_kernel(o)]


def settled_picks(kernels=None) -> dict[str, str]:
    """{kernel key: the config it runs}, for kernels that have run (one launcher left); a kernel
    not run yet, with its configs still to benchmark, says how many it has."""
    picks: dict[str, set[str]] = {}
    for kernel in loaded_kernels() if kernels is None else kernels:
        launchers = getattr(kernel, "launchers", None) or []
        picks.setdefault(kernel_key(kernel), set()).add(
            describe(launchers[0].config) if len(launchers) == 1 else f"not settled ({len(launchers)} configs)")
    return {key: configs_line(configs) for key, configs in sorted(picks.items())}


def is_settled(config: str) -> bool:
    """Whether a picks line's config is one the kernel ran, not ``settled_picks``' "not settled (N configs)"."""
    return not config.startswith("not settled")


def configs_line(configs: set[str]) -> str:
    """One kernel's configs as one line.  A kernel can be alive twice in a process (on the H200, five
    of ConvNeXt-T's backward reductions had a second copy of the same source with no config loaded),
    so an unsettled copy does not hide a settled one; two settled copies on other configs are both
    named, with ' | ' (a line ``pinned_picks`` cannot pin: it counts it as missing)."""
    settled = sorted(filter(is_settled, configs))
    return " | ".join(settled) if settled else sorted(configs)[0]


def write_picks(picks: dict[str, str], path: str) -> None:
    with open(path, "w") as f:
        f.write("".join(f"{key}: {config}\n" for key, config in picks.items()))


def read_picks(path: str) -> dict[str, str]:
    """``write_picks``' file back; a line not ``NAME FILE: CONFIG`` is a ValueError naming it."""
    picks = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            key, sep, config = line.rstrip("\n").partition(": ")
            if not sep or len(key.split(" ")) != 2:
                raise ValueError(f"{path}:{number}: not 'KERNEL FILE: CONFIG': {line.strip()!r}")
            picks[key] = config
    return picks


@contextlib.contextmanager
def pinned_picks(picks: dict[str, str]):
    """Inside the block, a Triton kernel that ``picks`` names settles on that config at its first run
    instead of benchmarking its configs (Inductor's ``CachingAutotuner.autotune_to_one_config``): the
    same code then runs another process's picks.  Yields {"pinned": set, "missing": set} of kernel
    keys: pinned, and named but without that config (those benchmark as usual).  A kernel that
    settles without benchmarking (one config, or a best config cached on disk) is in neither."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    original = CachingAutotuner.autotune_to_one_config
    seen = {"pinned": set(), "missing": set()}

    def autotune_to_one_config(self, *args, **kwargs):
        key = kernel_key(self)
        wanted = picks.get(key)
        if wanted is not None:
            chosen = [launcher for launcher in self.launchers if describe(launcher.config) == wanted]
            if chosen:
                self.launchers = chosen[:1]
                seen["pinned"].add(key)
                return None
            seen["missing"].add(key)
        return original(self, *args, **kwargs)

    CachingAutotuner.autotune_to_one_config = autotune_to_one_config
    try:
        yield seen
    finally:
        CachingAutotuner.autotune_to_one_config = original
