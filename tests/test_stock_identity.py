"""Off means stock: byte-identical generated code with every switch off (CPU here; CUDA on the H200
with the same script, see docs/results.md)."""
import os
import subprocess
import sys

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
