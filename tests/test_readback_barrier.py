"""The fix for a Triton data race that NO_INLINE's kernels reach (docs/correctness.md, "A case on CUDA,
closed"): a kernel that stores a buffer in one reduction loop and reloads it in the next gets a
barrier before the reload, once per loop, and only while a switch is on.  Checked on Inductor's real
Triton code generation, run here on CPU tensors (``cpu_backend="triton"``) and stopped before the
kernels are built (``inductor_ablate.cpu_triton``), so no GPU is needed; on the H200 the same code runs."""
import gzip
import os
import subprocess
import sys

import pytest
import torch
from torch._inductor import config as inductor_config
from torch.testing import FileCheck

import inductor_ablate
from inductor_ablate.cpu_triton import cpu_triton_codegen, first_graph_code

pytest.importorskip("triton", reason="Triton code generation needs the triton package (pip install '.[test]')")
inductor_ablate.install()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: ConvNeXt-T's backward under no-inlining, as a process on the H200 saved it (docs/correctness.md)
CONVNEXT = os.path.join(ROOT, "archive", "results", "convnext-no-inlining-code", "inputs-called-2.py.gz")
K49 = "triton_red_fused_native_layer_norm_native_layer_norm_backward_permute_view_49"


def centred_product(x, w):
    """Two row reductions over products that NO_INLINE realizes, used again after the reductions."""
    y, z = x * w, x + w
    m = y.sum(-1, keepdim=True) + z.sum(-1, keepdim=True)
    return (y - m / y.shape[-1]) * z


def triton_code(**switches) -> str:
    """Inductor's Triton code for ``centred_product`` under ``switches``, generated, not built; each
    row in two loops (no persistent reduction), so a value used after the reduction is either
    recomputed or stored and read back."""
    x, w = torch.randn(64, 192), torch.randn(192)
    torch._dynamo.reset()
    with cpu_triton_codegen(), inductor_config.patch({"force_disable_caches": True,
                                                      "triton.persistent_reductions": False}), \
            inductor_ablate.config.patch(**switches):
        return first_graph_code(torch.compile(centred_product), x, w)


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


def readback_check(code: str, block: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "readback_check.py"), code, "--kernel",
                           K49, "--config", f"R0_BLOCK={block} XBLOCK=2 num_warps=2 num_stages=1"],
                          capture_output=True, text=True, timeout=300)


def test_readback_check_finds_convnexts_race_at_256_not_at_128_and_not_after_the_fixs_barrier(tmp_path):
    """The kernel ConvNeXt-T's wrong processes ran, compiled by the installed Triton for the H200 (not
    run): at ``R0_BLOCK=256`` its second loop loads buffers its first loop stored, in another thread
    layout with no barrier between; at 128 in the same layout; and with ``tl.debug_barrier()`` where
    the overlay now puts it (before the second loop's first reload) the race is gone."""
    wrong = readback_check(CONVNEXT, 256)
    assert wrong.returncode == 1, wrong.stderr
    # Triton 3.6.0 (the H200's) races on all three buffers; 3.9.0 orders two of them by a barrier
    # its reductions need, and still races on the last one stored
    assert "RACE, no bar.sync between in the PTX: in_out_ptr0: stored at TTGIR line" in wrong.stdout, wrong.stdout
    right = readback_check(CONVNEXT, 128)
    assert right.returncode == 0 and f"{K49} (R0_BLOCK=128 XBLOCK=2 num_warps=2 num_stages=1): no read-back race" \
        in right.stdout, right.stdout + right.stderr
    with gzip.open(CONVNEXT, "rt") as f:
        code = f.read()
    reload = code.index("tmp21 = tl.load(in_out_ptr0", code.index(f"{K49} = async_compile"))
    start = code.rindex("\n", 0, reload) + 1
    fixed = tmp_path / "fixed.py"
    fixed.write_text(code[:start] + "        tl.debug_barrier()\n" + code[start:])
    barrier = readback_check(str(fixed), 256)
    assert barrier.returncode == 0 and "no read-back race" in barrier.stdout, barrier.stdout + barrier.stderr
