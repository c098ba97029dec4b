"""Tiny models for the bench plumbing tests (``--suite bench_fixtures:suite`` with tests/ on sys.path)."""
import os
import time

import torch
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x) * 2 + 1).sin()


class RandomOutput(nn.Module):
    """Compiled and eager outputs differ (fresh random numbers): an accuracy failure, on purpose."""

    def forward(self, x):
        return x + torch.rand_like(x) * 10


def _builder(factory):
    def build(device, dtype, mode):
        torch.manual_seed(0)
        return factory().to(device=device, dtype=dtype), (torch.randn(4, 8, device=device, dtype=dtype),), \
            lambda out: out.float().pow(2).mean()
    return build


def _sleepy(device, dtype, mode):
    """A cell that hangs (writing its pid first): what an interrupted run must not leave behind."""
    with open(os.environ["IA_TEST_PIDFILE"], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)


def _slow_exit(device, dtype, mode):
    """Tiny, in a process that takes a minute to exit after sending its row (as one tearing down a
    GPU context can): the run must not wait for it."""
    import multiprocessing.util
    multiprocessing.util.Finalize(None, time.sleep, args=(60,), exitpriority=100)
    return _builder(Tiny)(device, dtype, mode)


def suite():
    return {"tiny": _builder(Tiny), "tiny2": _builder(Tiny), "tiny3": _builder(Tiny), "random_output": _builder(RandomOutput),
            "sleepy": _sleepy, "slow_exit": _slow_exit}
