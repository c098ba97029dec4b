"""bench --launcher local (submitit's local executor, for real) and the launcher's bad input."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from test_bench import SUITE, bench, cells
from test_bad_input import assert_one_line_error

pytest.importorskip("submitit")


def test_local_launcher_runs_the_jobs_merges_and_resumes(tmp_path):
    out = tmp_path / "study.json"
    args = ("bench", "--launcher", "local", "--suite", SUITE, "--models", "tiny,tiny2", "--configs", "all,no-inlining",
            "--repeat", "3", "--json", str(out))
    proc = bench(*args, tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "started 1 local job(s), on the CPU" in proc.stdout and f"-> {out}" in proc.stdout
    merged = cells(out)
    assert set(merged) == {(m, c) for m in ("tiny", "tiny2") for c in ("all", "no-inlining")}
    assert all(c["status"] == "ok" for c in merged.values())
    part = tmp_path / "study.json.jobs" / "part-0of1.json"
    assert set(cells(part)) == set(merged)
    # the same command again: the job resumes its part file, measures nothing again, merges the same cells
    again = bench(*args, tmp_path=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert {k: c["compiled_ms"] for k, c in cells(out).items()} == {k: c["compiled_ms"] for k, c in merged.items()}


@pytest.mark.parametrize("args, piece", [
    (["--launcher", "local", "--shard", "1/2"], "decides each job's share itself"),
    (["--slurm-partition", "gpu"], "--slurm-partition goes with --launcher"),
    (["--launcher", "local", "--slurm-partition", "gpu"], "--slurm-partition goes with --launcher slurm"),
    (["--launcher", "local", "--time", "0"], "--time 0: expected 1 or more"),
])
def test_bad_launcher_options(tmp_path, args, piece):
    proc = bench("bench", "--suite", SUITE, *args, "--json", str(tmp_path / "r.json"), tmp_path=tmp_path)
    assert_one_line_error(proc, piece)
    assert not (tmp_path / "r.json").exists()


def test_slurm_launcher_where_no_slurm_answers(tmp_path):
    """No sinfo on PATH: one line, exit 2, nothing written and an existing results file kept."""
    old = tmp_path / "r.json"
    old.write_text(json.dumps({"format": 1, "meta": {}, "cells": []}))
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(sys.executable, bare / "python")
    env = {**os.environ, "PATH": str(bare)}
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bench", "--launcher", "slurm", "--fresh",
                           "--json", str(old)], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert_one_line_error(proc, "--launcher slurm: no Slurm here (sinfo and sbatch not found)")
    assert json.loads(old.read_text())["cells"] == []
