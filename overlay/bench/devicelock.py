"""The device to one cell at a time, while other cells compile beside it (``bench --jobs N``).

Every cell process of a run shares one lock file.  A cell holds the lock whenever it runs work on
the device: building its model and the eager reference, the accuracy check, warm-up, timing and
profiling.  It lets go only while Inductor compiles, and takes it back there for the device work a
compile does: autotuning benchmarks (Inductor's benchmarker, template and Triton-config tuning
alike), freezing's constant folding, and running a compiled graph (its first run, CUDA graph
warm-up).  So a cell that times has the device to itself, and a cell that compiles waits for it
only to benchmark.

An ``flock`` on the file: the kernel releases it when a process dies, so a killed cell never
leaves the device locked.  Re-entrant within a process (a benchmark inside a compiled graph's first
run)."""
from __future__ import annotations

import contextlib
import fcntl
import os
import time
from unittest import mock


class DeviceLock:
    """``path`` None: no lock (one cell at a time), every method a no-op that still counts."""

    def __init__(self, path: str | None):
        self.path, self.fd, self.depth = path, None, 0
        self.wait_s = 0.0  # time spent waiting for another cell to let go
        self.compile_wait_s = 0.0  # of which while compiling (inside autotuning, mostly)
        self.bench_wait_s = 0.0  # of which inside autotuning benchmarks (timed as autotuning by Inductor)
        self.compile_holds = 0  # times a compile took the device back
        self.held_s = 0.0  # time this cell had the device (summed over a run's cells: is the lock the bottleneck?)
        self._compiling, self._held_since = False, None

    def _acquire(self) -> None:
        if self.depth == 0 and self.path is not None:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            t0 = time.perf_counter()
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            waited = time.perf_counter() - t0
            self.wait_s += waited
            if self._compiling:
                self.compile_wait_s += waited
            self._held_since = time.perf_counter()
        self.depth += 1

    def _release(self) -> None:
        self.depth -= 1
        if self.depth == 0:
            self._unlock()

    def _unlock(self) -> None:
        if self._held_since is not None:
            self.held_s += time.perf_counter() - self._held_since
            self._held_since = None
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    @contextlib.contextmanager
    def hold(self):
        self._acquire()
        try:
            yield
        finally:
            self._release()

    @contextlib.contextmanager
    def compiling(self):
        """Let go of the device for the compile inside the block, taking it back for the compile's
        own device work (see the module's docstring)."""
        depth, self.depth = self.depth, 0
        self._unlock()
        self._compiling = True
        try:
            with contextlib.ExitStack() as stack:
                for owner, name in _device_work():
                    stack.enter_context(mock.patch.object(owner, name, self._holding(getattr(owner, name),
                                                                                     name.startswith("benchmark"))))
                yield
        finally:
            for _ in range(depth):
                self._acquire()
            self._compiling = False

    def _holding(self, fn, benchmark: bool):
        lock = self

        def wrapper(*args, **kwargs):
            lock.compile_holds += 1
            waited = lock.wait_s
            with lock.hold():
                if benchmark:
                    lock.bench_wait_s += lock.wait_s - waited
                return fn(*args, **kwargs)

        wrapper.__wrapped__ = fn
        return wrapper

    def fields(self) -> dict:
        """The row's record of it: seconds waited for the device (all of them; the row's setup_s,
        compile_s and autotune_s leave them out), seconds it had the device, and how often a compile
        took the device back."""
        return {"wait_s": round(self.wait_s, 3), "held_s": round(self.held_s, 3), "compile_holds": self.compile_holds}


def _device_work() -> list[tuple[object, str]]:
    """(owner, attribute) of every function through which a compile runs work on the device."""
    from torch._inductor import freezing, output_code
    from torch._inductor.runtime import benchmarking

    found = [(freezing, "freeze"), (output_code.CompiledFxGraph, "__call__")]
    for cls in vars(benchmarking).values():
        if isinstance(cls, type) and issubclass(cls, benchmarking.Benchmarker):
            found += [(cls, name) for name in ("benchmark_gpu", "benchmark_cpu") if name in vars(cls)]
    return found
