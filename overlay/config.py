"""``inductor_ablate.config``: the switches as a scoped, thread-safe configuration.

Like ``torch._inductor.config``: read and set attributes, or ``config.patch(no_fuse=True)`` as a
context manager or decorator.  Both are process-wide, as torch's own ``config.patch`` is: Inductor
does not always compile in the thread that called the model.  On CUDA, autograd runs the backward in
a per-device engine thread, and AOTAutograd compiles the backward there, lazily, at its first call;
an override scoped to the calling thread would silently miss it.  Defaults come from the environment
(INDUCTOR_NO_FUSE, ...) when the overlay is installed.
"""
from __future__ import annotations

import contextlib
import threading

from . import switches


class _Patch(contextlib.ContextDecorator):
    def __init__(self, cfg: "Config", values: dict):
        self._cfg, self._values = cfg, values
        self._entries = []  # one per active use (a decorated function may recurse)

    def __enter__(self):
        with self._cfg._lock:
            stack = self._cfg._patches
            merged = dict(stack[-1][0] if stack else self._cfg._global)
            merged.update(self._values)
            entry = (merged, switches.effective(merged))
            self._entries.append(entry)
            stack.append(entry)
        return self._cfg

    def __exit__(self, *exc):
        with self._cfg._lock:  # its own entry: patches of several threads need not nest
            stack, entry = self._cfg._patches, self._entries.pop()
            del stack[max(i for i, e in enumerate(stack) if e is entry)]
        return False


class Config:
    """The switches by name: no_fuse, no_inline, flush_every_node, one_kernel_per_op, and the
    decision limits fuse_limit, inline_limit."""

    def __init__(self):
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_patches", [])  # (values, effective) of the active patch() blocks
        defaults = {name: switches.parse(s, s.off) for name, s in switches.SWITCHES.items()}
        object.__setattr__(self, "_global", defaults)
        object.__setattr__(self, "_global_effective", switches.effective(defaults))

    # -- reading -------------------------------------------------------------------------------
    def values(self) -> dict:
        """The switches as set (ONE_KERNEL_PER_OP not expanded)."""
        stack = self._patches
        return dict(stack[-1][0] if stack else self._global)

    def effective(self) -> dict:
        """What is switched off right now: {no_fuse: kinds, no_inline, flush_every_node}."""
        stack = self._patches
        return stack[-1][1] if stack else self._global_effective

    def __getattr__(self, name):
        if name not in switches.SWITCHES:
            raise AttributeError(f"inductor_ablate.config has no switch {name!r}; switches: {', '.join(switches.SWITCHES)}")
        return self.values()[name]

    # -- writing -------------------------------------------------------------------------------
    def _validated(self, updates: dict) -> dict:
        out = {}
        for name, value in updates.items():
            switch = switches.SWITCHES.get(name)
            if switch is None:
                raise AttributeError(f"inductor_ablate.config has no switch {name!r}; switches: {', '.join(switches.SWITCHES)}")
            out[name] = switches.parse(switch, value, where=f"inductor_ablate.config.{name}")
        return out

    def __setattr__(self, name, value):
        self.update(**{name: value})

    def update(self, **values) -> None:
        """Set process-wide values (validated first: a bad value changes nothing)."""
        checked = self._validated(values)
        with self._lock:
            merged = {**self._global, **checked}
            object.__setattr__(self, "_global", merged)
            object.__setattr__(self, "_global_effective", switches.effective(merged))

    def reset(self) -> None:
        """Every switch off, process-wide."""
        self.update(**{name: s.off for name, s in switches.SWITCHES.items()})

    def patch(self, **values) -> _Patch:
        """Override while the block runs: ``with config.patch(no_fuse=True): ...`` or as a decorator.
        Process-wide, like ``torch._inductor.config.patch`` (see the module docstring for why)."""
        return _Patch(self, self._validated(values))

    def environ(self) -> dict[str, str]:
        """Environment variables that give a child process the same switches."""
        return switches.to_environ(self.values())

    def __repr__(self):
        return f"inductor_ablate.config({', '.join(f'{k}={v!r}' for k, v in self.values().items())})"


config = Config()
