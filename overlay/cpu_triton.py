"""Inductor's Triton code for CPU tensors, generated and never built, so that a machine without a GPU
can check what the overlay does to Triton code generation (scripts/check_stock_identity.py
``--cpu-backend triton``, tests/test_readback_barrier.py).  Importing this module installs nothing."""
from __future__ import annotations

import contextlib
from unittest import mock


@contextlib.contextmanager
def cpu_triton_codegen():
    """Inside: Inductor writes Triton kernels for CPU tensors (its ``cpu_backend="triton"``), and
    Triton's backend hash, which asks a GPU driver for its target, is a constant."""
    import torch.utils._triton
    from torch._inductor import config

    with config.patch(cpu_backend="triton"), \
            mock.patch.object(torch.utils._triton, "triton_hash_with_backend", return_value="no-gpu"):
        yield


class _Generated(Exception):
    """Raised where Inductor would build the module: the code is all we want."""


def first_graph_code(fn, *args) -> str:
    """The output code of the first graph that calling ``fn`` compiles; the compile stops there, so
    nothing is built or run (and a graph whose kernels need a GPU to build is fine)."""
    from torch._inductor.graph import GraphLowering

    codes = []

    def compile_to_module(self):
        codes.append(self.codegen()[0].value)
        raise _Generated

    with mock.patch.object(GraphLowering, "compile_to_module", compile_to_module):
        try:
            fn(*args)
        except Exception:  # the stop above, wrapped by dynamo; anything before it is the caller's
            if not codes:
                raise
    return codes[0]
