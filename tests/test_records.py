"""The results file's typed records (``records.py``): every committed results file reads into them
and back to the very same dicts, key order included; a field of the wrong type is one line naming
the cell and the field; a field the records do not know is kept."""
import glob
import json
import os
import subprocess
import sys

import pytest

from inductor_ablate.errors import UsageError
from inductor_ablate.records import Cell, Profile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _results_files():
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "results", "*.json"))):
        with open(path) as f:
            data = json.load(f)
        if isinstance(data, dict) and isinstance(data.get("cells"), list):
            yield path, data


def test_every_committed_results_file_round_trips():
    files = list(_results_files())
    assert len(files) >= 10
    profiled = 0
    for path, data in files:
        for i, cell in enumerate(data["cells"]):
            record = Cell.from_dict(cell, f"{path} cell {i}")
            back = record.to_dict()
            assert back == cell and list(back) == list(cell), (path, i)
            profiled += record.profile is not None
    assert profiled >= 40  # the explain files' profiles went through Profile and Kernel


def test_a_profile_reads_as_records_and_sums_its_parts():
    path = os.path.join(ROOT, "docs", "results", "cpu-explain-embedded.json")
    with open(path) as f:
        cell = next(c for c in json.load(f)["cells"] if c.get("profile"))
    profile = Cell.from_dict(cell).profile
    assert isinstance(profile, Profile) and profile.kernels and all(k.ms >= 0 for k in profile.kernels)
    parts = profile.totals()
    assert parts["generated_ms"] == pytest.approx(sum(k.ms for k in profile.kernels if k.generated))
    assert parts["gaps_ms"] == pytest.approx(profile.step_ms - profile.busy_ms)


def test_a_wrong_type_is_one_line_and_unknown_fields_are_kept():
    cell = dict(suite="embedded", model="m", config="all", device="cpu", dtype="float32", mode="inference",
                status="ok", speedup="fast", something_new=[1, 2])
    with pytest.raises(UsageError, match=r"^cell 3: speedup is str 'fast', expected int or float$"):
        Cell.from_dict(cell, "cell 3")
    cell["speedup"] = 1.5
    record = Cell.from_dict(cell)
    assert record.speedup == 1.5 and record.extra == {"something_new": [1, 2]} and record.to_dict() == cell
    with pytest.raises(UsageError, match="profile's kernels 0 lacks name"):
        Cell.from_dict({**cell, "profile": {"steps": 1, "step_ms": 1.0, "busy_ms": 0.5, "kernels": [{"kind": "x"}]}})


def test_a_results_file_with_a_bad_field_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cells": [dict(suite="embedded", model="m", config="all", device="cpu", dtype="float32",
                                              mode="inference", status="ok", compiled_ms="1.2")]}))
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "report", "--markdown", str(bad)],
                          capture_output=True, text=True, timeout=300)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "cell 0: compiled_ms is str '1.2'" in lines[0], proc.stderr
