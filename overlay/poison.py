"""Poisoned buffers: make a read of memory before it is written show, in every process alike.

A kernel that reads a buffer before anything wrote it reads whatever the allocator hands out: zeros
from a fresh page, the last user's values from a reused block.  The answer then changes from one
process to the next (docs/correctness.md, "A case on CUDA, closed").  Inside ``poisoned_buffers()``
every buffer Inductor's generated code allocates (its ``empty_strided_cpu``/``empty_strided_cuda``,
which the output code takes from ``torch._C._dynamo.guards`` when it is loaded) starts as NaN
(integers: their largest value, booleans: True), and with ``allow_buffer_reuse=False`` (which
``POISON_INDUCTOR`` sets) no buffer is handed a dead one's memory: such a read gives NaN each time.
"""
from __future__ import annotations

import contextlib

import torch

#: The Inductor settings a poisoned compile needs: each buffer gets memory of its own.
POISON_INDUCTOR = {"allow_buffer_reuse": False}

_ALLOCATORS = ("_empty_strided_cpu", "_empty_strided_cuda")


def poison(tensor: torch.Tensor) -> torch.Tensor:
    """Fill ``tensor`` with what no kernel computes by chance: NaN, an integer's max, True."""
    if tensor.is_floating_point() or tensor.is_complex():
        return tensor.fill_(float("nan"))
    if tensor.dtype == torch.bool:
        return tensor.fill_(True)
    return tensor.fill_(torch.iinfo(tensor.dtype).max)


@contextlib.contextmanager
def poisoned_buffers():
    """Yields a dict counting the buffers allocated poisoned, by allocator (``{"cuda": 412}``), so a
    caller can say the poison took effect.  Only output code loaded inside the block is poisoned: it
    binds the allocators when Inductor loads it."""
    guards = torch._C._dynamo.guards
    originals = {name: getattr(guards, name) for name in _ALLOCATORS if hasattr(guards, name)}
    counts: dict[str, int] = {}

    def poisoned(name, allocate):
        device = name.rsplit("_", 1)[1]

        def allocate_poisoned(*args, **kwargs):
            counts[device] = counts.get(device, 0) + 1
            return poison(allocate(*args, **kwargs))
        return allocate_poisoned

    for name, allocate in originals.items():
        setattr(guards, name, poisoned(name, allocate))
    try:
        yield counts
    finally:
        for name, allocate in originals.items():
            setattr(guards, name, allocate)
