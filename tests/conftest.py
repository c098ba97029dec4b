"""Shared helpers: subprocesses with a clean environment (no INDUCTOR_* switches leak in)."""
import os
import subprocess
import sys
import textwrap

import pytest


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDUCTOR_")}
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_py(code: str, *, env: dict | None = None, check: bool = True, args=(), timeout=600):
    """Run ``python -c code`` in a fresh interpreter; returns the CompletedProcess."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"subprocess failed ({proc.returncode}):\nSTDOUT:\n{proc.stdout}\nSTDERR:\n{proc.stderr}")
    return proc


@pytest.fixture
def ablate():
    """The overlay, installed, with every switch off before and after the test."""
    import inductor_ablate

    inductor_ablate.install()
    inductor_ablate.config.reset()
    yield inductor_ablate
    inductor_ablate.config.reset()
