#!/usr/bin/env python
"""The forum thread's case: conv -> batch_norm (eval) -> + residual -> relu -> max_pool, compiled on CPU.

    python scripts/seed_case.py                                          # stock
    python -m inductor_ablate census --no-fuse --no-inline scripts/seed_case.py
    python -m inductor_ablate census --one-kernel-per-op scripts/seed_case.py
"""
import torch

from inductor_ablate.programs import PROGRAMS

fn, args = PROGRAMS["conv_bn_relu_pool"]("cpu")
out = torch.compile(fn)(*args)
torch.testing.assert_close(out, fn(*args), atol=1e-4, rtol=1e-4)
print("result equals eager:", tuple(out.shape))
