"""``inductor_ablate.config``: the switches as a scoped, thread-safe configuration.

Like ``torch._inductor.config``: read and set attributes, or ``config.patch(no_fuse=True)`` as a
context manager or decorator.  Overrides made by ``patch`` belong to the thread that made them (a
compile runs in the calling thread); plain assignments change the process-wide value.  Defaults come
from the environment (INDUCTOR_NO_FUSE, ...) when the overlay is installed.
"""
from __future__ import annotations

import contextlib
import threading

from . import switches


class _Patch(contextlib.ContextDecorator):
    def __init__(self, cfg: "Config", values: dict):
        self._cfg, self._values = cfg, values

    def __enter__(self):
        stack = self._cfg._stack()
        merged = dict(stack[-1][0] if stack else self._cfg._global)
        merged.update(self._values)
        stack.append((merged, switches.effective(merged)))
        return self._cfg

    def __exit__(self, *exc):
        self._cfg._stack().pop()
        return False


class Config:
    """The switches by name: no_fuse, no_inline, flush_every_node, one_kernel_per_op."""

    def __init__(self):
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_local", threading.local())
        defaults = {name: switches.parse(s, "0") for name, s in switches.SWITCHES.items()}
        object.__setattr__(self, "_global", defaults)
        object.__setattr__(self, "_global_effective", switches.effective(defaults))

    # -- reading -------------------------------------------------------------------------------
    def _stack(self) -> list:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def values(self) -> dict:
        """The switches as set (ONE_KERNEL_PER_OP not expanded), for this thread."""
        stack = getattr(self._local, "stack", None)
        return dict(stack[-1][0] if stack else self._global)

    def effective(self) -> dict:
        """What is switched off right now in this thread: {no_fuse: kinds, no_inline, flush_every_node}."""
        stack = getattr(self._local, "stack", None)
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
        self.update(**{name: "0" for name in switches.SWITCHES})

    def patch(self, **values) -> _Patch:
        """Scoped override for this thread: ``with config.patch(no_fuse=True): ...`` or as a decorator."""
        return _Patch(self, self._validated(values))

    def environ(self) -> dict[str, str]:
        """Environment variables that give a child process the same switches."""
        return switches.to_environ(self.values())

    def __repr__(self):
        return f"inductor_ablate.config({', '.join(f'{k}={v!r}' for k, v in self.values().items())})"


config = Config()
