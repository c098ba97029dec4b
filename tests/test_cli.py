"""`python -m inductor_ablate ...`: status, list, run, census, and bad input."""
import re
import subprocess
import sys

from conftest import clean_env

SCRIPT = """
import sys, torch
def f(x):
    return (x.sin() + 1.0).relu()
out = torch.compile(f)(torch.randn(32, 16))
print("ARGS", sys.argv[1:])
"""


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "inductor_ablate", *args], env=env or clean_env(),
                          capture_output=True, text=True, timeout=600)


def test_status_lists_every_patch_applied():
    from inductor_ablate import report
    import torch

    proc = cli("status", env=clean_env(INDUCTOR_NO_FUSE="vertical"))
    assert proc.returncode == 0, proc.stderr
    assert f"torch {torch.__version__}" in proc.stdout
    for row in report():
        assert re.search(rf"^\s+{re.escape(row['slug'])}\s+applied\s", proc.stdout, re.M), row["slug"]
    assert "fusion kinds blocked: vertical;" in proc.stdout


def test_a_reader_that_stops_early_gets_no_traceback():
    """`status | head -1`: the pipe closes before the report is flushed; the reader left, nothing failed."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "status"], env=clean_env(),
                          stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=600)
    os.close(write_end)
    assert proc.returncode == 1
    assert proc.stderr == ""


def test_list_shows_switches_and_kinds():
    proc = cli("list")
    assert proc.returncode == 0, proc.stderr
    for name in ("INDUCTOR_NO_FUSE", "INDUCTOR_NO_INLINE", "INDUCTOR_FLUSH_EVERY_NODE", "INDUCTOR_ONE_KERNEL_PER_OP",
                 "vertical", "outer-loop", "combo"):
        assert name in proc.stdout
    assert re.search(r"foreach\s+\[allowed\]\s+applies: gpu only", proc.stdout)


def test_run_passes_arguments_and_switches(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT + "import inductor_ablate; print('EFFECTIVE', sorted(inductor_ablate.config.effective()['no_fuse']), inductor_ablate.config.no_inline)\n")
    proc = cli("run", "--no-fuse=vertical,horizontal", "--no-inline", str(script), "--flag", "value")
    assert proc.returncode == 0, proc.stderr
    assert "ARGS ['--flag', 'value']" in proc.stdout
    assert "EFFECTIVE ['horizontal', 'vertical'] True" in proc.stdout


def test_run_says_on_one_line_which_switches_and_scope_are_on(tmp_path):
    """Issue 64: the scope travels like a switch (exported to children) and `run` names what it set."""
    script = tmp_path / "user_script.py"
    script.write_text("import inductor_ablate, os\nprint('SCOPE', inductor_ablate.config.modules, "
                      "os.environ['INDUCTOR_ABLATE_MODULES'])\n")
    proc = cli("run", "--no-fuse", "--modules", "encoder.*,pooler", str(script))
    assert proc.returncode == 0, proc.stderr
    assert "SCOPE ('encoder.*', 'pooler') encoder.*,pooler" in proc.stdout
    assert proc.stderr.strip() == "inductor_ablate: INDUCTOR_NO_FUSE=1 INDUCTOR_ABLATE_MODULES=encoder.*,pooler", proc.stderr
    proc = cli("run", "--one-kernel-per-op", "--ops", "mul", str(script))  # the C++ flush takes a scope too
    assert proc.returncode == 0 and "INDUCTOR_ONE_KERNEL_PER_OP=1 INDUCTOR_ABLATE_OPS=mul" in proc.stderr, proc.stderr


def test_census_prints_one_kernel_per_op(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT)
    proc = cli("census", "--one-kernel-per-op", str(script))
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"3 kernels from 3 scheduler nodes.*kernels holding >1 op: 0", proc.stdout), proc.stdout
    summary = [line for line in proc.stdout.splitlines() if "scheduler nodes" in line]
    assert summary and "fused" not in summary[0], summary  # nothing was fused: no line says so
    for op in ("sin.default", "add.Tensor", "relu.default"):
        assert op in proc.stdout


def test_bad_switch_value_is_a_usage_error(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT)
    proc = cli("run", "--no-fuse=sideways", str(script))
    assert proc.returncode == 2 and "ARGS" not in proc.stdout
    assert "--no-fuse='sideways' is not valid" in proc.stderr and "vertical" in proc.stderr
