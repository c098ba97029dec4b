"""Off means stock: byte-identical generated code with every switch off (CPU here; CUDA on the H200
with the same script, see docs/results.md)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import clean_env

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "scripts", "check_stock_identity.py")


def test_every_switch_off_generates_stock_code():
    proc = subprocess.run([sys.executable, SCRIPT, "--device", "cpu"], env=clean_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ALL IDENTICAL" in proc.stdout and "DIFFERENT" not in proc.stdout


def test_the_check_detects_a_change():
    proc = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--programs", "pointwise_chain",
                           "--overlay-env", "INDUCTOR_ONE_KERNEL_PER_OP=1"], env=clean_env(), capture_output=True, text=True)
    assert proc.returncode == 1 and "MISMATCH" in proc.stdout, proc.stdout + proc.stderr


def test_every_switch_off_generates_stock_triton_code():
    """The same on Inductor's Triton code generation, for CPU tensors (``cpu_backend="triton"``,
    generated and never built, so no GPU is needed): the Triton side's patches, the read-back
    barrier's among them, leave stock's code alone with every switch off."""
    pytest.importorskip("triton", reason="Triton code generation needs the triton package (pip install '.[test]')")
    proc = subprocess.run([sys.executable, SCRIPT, "--cpu-backend", "triton"], env=clean_env(), capture_output=True,
                          text=True)
    assert proc.returncode == 0 and "ALL IDENTICAL" in proc.stdout, proc.stdout + proc.stderr
    kernels = [int(n) for n in re.findall(r"identical .*, (\d+) Triton kernel\(s\)\)", proc.stdout)]
    assert len(kernels) == 11 and all(n >= 1 for n in kernels), proc.stdout
    assert "fix-readback-barrier" in proc.stdout


def test_the_triton_check_detects_a_change():
    pytest.importorskip("triton", reason="Triton code generation needs the triton package (pip install '.[test]')")
    proc = subprocess.run([sys.executable, SCRIPT, "--cpu-backend", "triton", "--programs", "layer_norm",
                           "--overlay-env", "INDUCTOR_NO_INLINE=1"], env=clean_env(), capture_output=True, text=True)
    assert proc.returncode == 1 and "MISMATCH" in proc.stdout, proc.stdout + proc.stderr
