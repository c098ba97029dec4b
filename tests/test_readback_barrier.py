"""The fix for a Triton data race that NO_INLINE's kernels reach (docs/correctness.md, "An open case
on CUDA"): a kernel that stores a buffer in one reduction loop and reloads it in the next gets a
barrier before the reload, once per loop, and only while a switch is on.  Checked on Inductor's real
Triton code generation, run here on CPU tensors (``cpu_backend="triton"``) and stopped before the
kernels are compiled (``get_code``), so no GPU is needed; on the H200 the same code runs."""
from unittest import mock

import pytest
import torch
from torch._inductor import config as inductor_config
from torch._inductor.utils import get_code
from torch.testing import FileCheck

import inductor_ablate

pytest.importorskip("triton", reason="Triton code generation needs the triton package (pip install '.[test]')")
inductor_ablate.install()


def centred_product(x, w):
    """Two row reductions over products that NO_INLINE realizes, used again after the reductions."""
    y, z = x * w, x + w
    m = y.sum(-1, keepdim=True) + z.sum(-1, keepdim=True)
    return (y - m / y.shape[-1]) * z


def triton_code(**switches) -> str:
    """Inductor's Triton code for ``centred_product`` under ``switches``.  Triton's backend hash,
    which asks a GPU driver for its target, is a constant here: the code is generated, not built."""
    x, w = torch.randn(64, 192), torch.randn(192)
    torch._dynamo.reset()
    with inductor_config.patch({"cpu_backend": "triton", "force_disable_caches": True,
                                "triton.persistent_reductions": False}), \
            mock.patch("torch.utils._triton.triton_hash_with_backend", return_value="no-gpu"), \
            inductor_ablate.config.patch(**switches):
        return "\n".join(get_code(torch.compile(centred_product), x, w))


def test_a_reload_of_a_buffer_stored_in_an_earlier_loop_waits_at_a_barrier():
    code = triton_code(no_inline=True)
    body = code[code.index("@triton.jit"):]
    loops = body.split("for r0_offset in")
    assert len(loops) == 3, body  # one kernel, two loops over each row
    first, second = loops[1], loops[2]
    stored = sorted(set(s.split(" + ")[0] for s in first.split("tl.store(")[1:]))
    reloaded = [name for name in stored if f"tl.load({name} " in second]
    assert len(reloaded) == 2, (stored, second)  # y and z, realized by NO_INLINE, read back
    assert second.count("tl.debug_barrier()") == 1, second
    check = FileCheck().check("tl.debug_barrier()")
    for name in reloaded:
        check = check.check(f"tl.load({name} ")
    check.run(second)
    assert "tl.debug_barrier()" not in first


def test_with_every_switch_off_the_code_has_no_barrier_and_no_reload():
    code = triton_code()
    assert "@triton.jit" in code and "tl.debug_barrier()" not in code
    body = code[code.index("@triton.jit"):]
    first, second = body.split("for r0_offset in")[1:3]
    assert "tl.store(" not in first  # stock recomputes the products in the second loop
