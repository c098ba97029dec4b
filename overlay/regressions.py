"""Programs that once computed a wrong answer under a switch, kept as regression tests.

Each entry builds ``(fn, args)`` on a device; ``backward`` says whether the check also compares the
gradients of every floating input.  ``stock_bug`` names the Inductor bug that stock settings reach
too (the overlay fixes it only while a switch is on: with every switch off it stays stock Inductor).
See docs/correctness.md for the root causes; ``scripts/stock_bugs.py`` shows them on stock torch.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch


@dataclasses.dataclass(frozen=True)
class Regression:
    build: Callable  # device -> (fn, args)
    backward: bool
    stock_bug: str | None  # slug of the overlay's fix for a bug stock Inductor has too
    what: str


def _issue10_gradient(device):
    """The program from issue 10: wrong gradient under NO_INLINE (both stock bugs below, reached
    because realizing every node makes the C++ backend fuse nodes with different loop ranges).  On an
    AVX2-only CPU (8 floats a vector) stock settings reach bug 2 too: the backward's index_add lands
    in a 2-D tiled kernel, the gradient is off by 0.12 and the out-of-bounds writes can abort the
    process later (torch 2.13, AMD EPYC)."""
    def fn(x0, x1):
        v2 = x1 + x0
        v4 = v2.index_select(-1, torch.arange(5, device=x0.device).flip(0)) * 0.9
        v5 = x0.roll(1, -1)
        v6 = torch.cat([v5[..., 1:], v5[..., :1]], -1)
        v8 = torch.maximum(v4, v6)
        return v8.transpose(-1, -2).contiguous().transpose(-1, -2) + 0.5 * v5
    gen = torch.Generator().manual_seed(0)
    return fn, tuple(torch.randn(17, 5, generator=gen).to(device).requires_grad_() for _ in range(2))


def _read_after_index_put(device):
    """Stock bug 1: a node that reads a buffer after an in-place index_put_ is scheduled before it."""
    def fn(x, idx, v):
        acc = torch.zeros(4, 3, device=x.device)
        p = x[:, idx]                      # an indexed read, returned (so it is realized)
        acc.index_put_((torch.arange(4, device=x.device)[:, None], idx), v, accumulate=True)
        return p, p + acc                  # reads acc after the mutation
    gen = torch.Generator().manual_seed(0)
    return fn, (torch.randn(4, 3, generator=gen).to(device), torch.tensor([2, 1, 0], device=device),
                torch.ones(4, 3, device=device))


def _tiled_index_put_accumulate(device):
    """Stock bug 2: an accumulating index_put_ whose values are read both transposed and straight
    (a 2-D tiled C++ kernel) scatters to x0 + 2*x0_inner: wrong sums, writes out of bounds."""
    def fn(t, u, idx):
        acc = torch.zeros(17, 5, device=t.device)
        acc.index_put_((torch.arange(17, device=t.device)[:, None], idx), t.t() + u, accumulate=True)
        return acc
    gen = torch.Generator().manual_seed(0)
    return fn, (torch.randn(5, 17, generator=gen).to(device), torch.randn(17, 5, generator=gen).to(device),
                torch.tensor([4, 3, 2, 1, 0], device=device))


def _index_put_own_values(device):
    """Stock bug 3: ``v.clone().index_put_(idx, v)``: the reinplace pass drops the clone, and the
    scatter then overwrites the values it reads before it has read them all (found by the property test)."""
    def fn(x, rows, perm):
        v = x * 2
        return v.clone().index_put_((rows[:, None], perm), v)
    return fn, (torch.arange(2.0, device=device).reshape(1, 2), torch.arange(1, device=device),
                torch.tensor([1, 0], device=device))


def _inline_limit_int_index(device):
    """Issue 54: stopped Inductor under INDUCTOR_INLINE_LIMIT=0 and =3 on torch 2.11 (CPU, with the
    backward), where INDUCTOR_NO_INLINE=1 compiled it: the limit realized the backward's iota and fmod
    but let Inductor recompute them in their readers, which bounds-checked the index against a size
    kept as a Python int, and the C++ fusion of nodes with different loop ranges asserted on it."""
    def fn(x0, x1):
        a = torch.sin(x0)
        b = torch.lerp(a, a, 0.3)
        c = b.amin(0, keepdim=True) + b  # noqa: F841 (dead code, as in the program found)
        idx = torch.arange(b.shape[-1], device=x0.device).flip(0)
        d = b.index_select(-1, idx) * 0.9
        e = x1.clone()
        e[..., ::2] += 1.0
        e.mul_(0.5)
        g = x1 * d  # noqa: F841
        h = (d * 0.5 + 0.25).roll(1, -1)
        return h + 0.5 * d
    gen = torch.Generator().manual_seed(0)
    return fn, tuple(torch.randn(8, 64, generator=gen).to(device).requires_grad_() for _ in range(2))


def _scoped_no_inline_amax(device):
    """Issue 80: wrong under INDUCTOR_NO_INLINE=1 INDUCTOR_ABLATE_OPS=amax (CPU, error 3.58) where the
    unscoped switch and stock were exact.  The scope realizes only ``neg`` (amax's input), which C++
    outer-loop fusion keeps in a local buffer of one row while both kernels tile the row loop: the
    tile's 8 rows overwrite each other in it (stock bug 6)."""
    def fn(x):
        idx = torch.arange(x.shape[-1], device=x.device).flip(0)
        a = x.index_select(-1, idx) * 0.9
        b = -a
        return b.amax(-1, keepdim=True) + b + 0.5 * a
    gen = torch.Generator().manual_seed(0)
    return fn, (torch.randn(8, 33, generator=gen).to(device),)


#: The FX ops of issue 80's program, as a scope names them (INDUCTOR_ABLATE_OPS): each is a test.
SCOPED_NO_INLINE_AMAX_OPS = ("arange", "flip", "index_select", "mul", "neg", "amax", "add")


def _local_buffer_tiled_outer_loop(device):
    """Stock bug 6, with stock settings: ``b`` is heavy enough that Inductor realizes it, both
    kernels of the row read ``x`` reversed (so the C++ backend tiles rows and columns), and outer-loop
    fusion keeps ``b`` in a one-row local buffer that the tile's rows overwrite."""
    def fn(x):
        r = x.flip(-1)
        b = r.sin() + r.cos() + r.exp() + r.tanh() + r.sigmoid() + r.sin().exp() + r.cos().exp() + r.tanh().exp()
        return b.amax(-1, keepdim=True) + b + r
    gen = torch.Generator().manual_seed(0)
    return fn, (torch.randn(8, 33, generator=gen).to(device),)


REGRESSIONS = {
    "issue10_gradient": Regression(_issue10_gradient, True, "fix-tile2d-atomic-index",
                                   "roll, cat, index_select, maximum, transposed copy; gradients"),
    "read_after_index_put": Regression(_read_after_index_put, False, "fix-mutation-renames",
                                       "a read of an index_put_ result ordered before the index_put_"),
    "tiled_index_put_accumulate": Regression(_tiled_index_put_accumulate, False, "fix-tile2d-atomic-index",
                                             "an accumulating index_put_ in a 2-D tiled C++ kernel"),
    "index_put_own_values": Regression(_index_put_own_values, False, "fix-index-put-self-values",
                                       "index_put_ of a tensor's own values into (what was) its clone"),
    "inline_limit_int_index": Regression(_inline_limit_int_index, True, None,
                                         "an inlining limit over a backward that bounds-checks an index"),
    "scoped_no_inline_amax": Regression(_scoped_no_inline_amax, False, None,
                                        "NO_INLINE scoped to amax: one realized node in a one-row local buffer"),
    "local_buffer_tiled_outer_loop": Regression(_local_buffer_tiled_outer_loop, False,
                                                "fix-local-buffer-tiled-outer-loop",
                                                "a C++ local buffer of one row under a tiled row loop"),
}


def switch_configs(device: str = "cpu") -> dict[str, dict]:
    """Every switch alone, and every fusion kind that can occur on ``device`` taken out alone, with
    and without NO_INLINE: {label: config.patch keyword arguments}."""
    from .switches import FUSION_KINDS, KIND_DEVICE

    configs = {"no-fuse": dict(no_fuse=True), "no-inline": dict(no_inline=True),
               "flush-every-node": dict(flush_every_node=True), "one-kernel-per-op": dict(one_kernel_per_op=True)}
    for kind in FUSION_KINDS:
        if KIND_DEVICE.get(kind, device) == device:
            configs[f"no-fuse={kind}"] = dict(no_fuse=kind)
            configs[f"no-inline,no-fuse={kind}"] = dict(no_inline=True, no_fuse=kind)
    return configs
