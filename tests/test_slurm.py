"""bench --launcher slurm against a real one-node Slurm (started by .ci/slurm-up in CI; skipped where
no Slurm answers, unless TEST_REQUIRE_SLURM=1, as CI sets, makes that a failure)."""
import os
import shutil
import subprocess

import pytest

from test_bench import SUITE, bench, cells
from test_bad_input import assert_one_line_error

pytest.importorskip("submitit")


@pytest.fixture(scope="module")
def slurm():
    answered = shutil.which("sinfo") and subprocess.run(["sinfo", "-h"], capture_output=True, timeout=30).returncode == 0
    if not answered:
        if os.environ.get("TEST_REQUIRE_SLURM") == "1":
            pytest.fail("TEST_REQUIRE_SLURM=1 but no Slurm answers (run .ci/slurm-up as root)")
        pytest.skip("no Slurm answers here (.ci/slurm-up starts a one-node one, as root)")


def test_slurm_launcher_runs_a_job_array_and_merges(slurm, tmp_path):
    out = tmp_path / "study.json"
    proc = bench("bench", "--launcher", "slurm", "--cpus-per-job", "1", "--time", "15", "--suite", SUITE,
                 "--models", "tiny,tiny2", "--configs", "all,no-inlining", "--repeat", "3", "--json", str(out),
                 tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "submitted 2 Slurm jobs (array" in proc.stdout and f"-> {out}" in proc.stdout
    merged = cells(out)
    assert set(merged) == {(m, c) for m in ("tiny", "tiny2") for c in ("all", "no-inlining")}
    assert all(c["status"] == "ok" for c in merged.values())
    for model in ("tiny", "tiny2"):  # one job per model, each its own part file
        assert {m for m, _ in cells(tmp_path / "study.json.jobs" / f"part-{model}.json")} == {model}


def test_a_partition_slurm_does_not_have_is_one_line(slurm, tmp_path):
    proc = bench("bench", "--launcher", "slurm", "--slurm-partition", "no-such-partition", "--suite", SUITE,
                 "--json", str(tmp_path / "r.json"), tmp_path=tmp_path)
    assert_one_line_error(proc, "--slurm-partition no-such-partition: Slurm has no such partition (it has: debug")
    assert not (tmp_path / "r.json").exists()
