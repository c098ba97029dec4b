"""Kernel profiles (`bench --profile`) and `explain` on an embedded model, CPU (C++ backend).

One bench run, shared by the tests of this module: mlp_gelu under `all` and `no-fusion-no-inlining`,
each profiled over 5 steps after timing."""
import json
import os
import subprocess
import sys

import pytest

from conftest import clean_env

ROWS = ("all", "no-fusion-no-inlining")


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "inductor_ablate", *args], env=env or clean_env(),
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("profiled")
    path = tmp / "results.json"
    proc = _cli("bench", "--device", "cpu", "--models", "mlp_gelu", "--configs", ",".join(ROWS), "--repeat", "3",
                "--profile", "5", "--json", str(path), "--no-progress",
                env=clean_env(TORCHINDUCTOR_CACHE_DIR=str(tmp / "cache")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return path, json.loads(path.read_text())


def test_every_ok_cell_holds_a_kernel_profile(profiled):
    _, data = profiled
    assert data["meta"]["profile"] == 5
    cells = {c["config"]: c for c in data["cells"]}
    assert set(cells) == set(ROWS) and all(c["status"] == "ok" for c in cells.values())
    for config, cell in cells.items():
        p = cell["profile"]
        assert p["steps"] == 5 and 0 < p["busy_ms"] <= p["step_ms"], (config, p)
        kinds = {k["kind"] for k in p["kernels"]}
        assert kinds == {"generated", "library"}, (config, kinds)  # C++ functions, and MKL's linear calls
        for k in p["kernels"]:
            assert set(k) >= {"name", "kind", "ops", "calls", "ms", "bytes"} and k["calls"] >= 1 and k["ms"] > 0, k
            if k["kind"] == "generated":
                assert k["ops"] and k["bytes"] > 0 and not k["name"].startswith("graph_"), k
        # one thread of kernels on CPU: their times fit in the busy time (the profiler's own rounding aside)
        assert sum(k["ms"] for k in p["kernels"]) <= p["busy_ms"] * 1.01
    # without fusion and inlining the C++ functions compute fewer ops each and move more bytes in all
    generated = {c: [k for k in cells[c]["profile"]["kernels"] if k["kind"] == "generated"] for c in ROWS}
    assert max(len(k["ops"]) for k in generated["no-fusion-no-inlining"]) < max(len(k["ops"]) for k in generated["all"])
    moved = {c: sum(k["bytes"] * k["calls"] for k in generated[c]) for c in ROWS}
    assert moved["no-fusion-no-inlining"] > moved["all"], moved


def test_explain_splits_the_change_into_its_parts(profiled, tmp_path):
    path, data = profiled
    out = tmp_path / "explain.json"
    proc = _cli("explain", str(path), "--json", str(out), "--top", "3")
    assert proc.returncode == 0, proc.stderr
    assert "no-fusion-no-inlining" in proc.stdout and "kernels that moved most" in proc.stdout
    split = json.loads(out.read_text())["rows"]["no-fusion-no-inlining"]["models"]["mlp_gelu"]
    cells = {c["config"]: c for c in data["cells"]}
    profiles = {c: cells[c]["profile"] for c in ROWS}
    assert split["measured_ms"] == pytest.approx(cells[ROWS[1]]["compiled_ms"] - cells["all"]["compiled_ms"])
    # the parts add up to the profiled change in step time, exactly (gaps are what the kernels leave)
    step_change = profiles[ROWS[1]]["step_ms"] - profiles["all"]["step_ms"]
    assert split["generated_ms"] + split["library_ms"] + split["gaps_ms"] == pytest.approx(step_change, abs=1e-9)
    assert split["added_ms"] + split["removed_ms"] + split["changed_ms"] == pytest.approx(split["generated_ms"])
    # the output says when parts and measured change disagree by more than 10%, and never hides it
    off = abs(split["parts_ms"] - split["measured_ms"]) > 0.1 * abs(split["measured_ms"])
    assert split["mismatch"] == off and (("!" in proc.stdout.split("kernels that moved")[0]) == off)


def test_explain_bad_input_is_one_line(profiled, tmp_path):
    path, data = profiled
    bare = tmp_path / "no-profiles.json"
    bare.write_text(json.dumps({**data, "cells": [{k: v for k, v in c.items() if k != "profile"} for c in data["cells"]]}))
    (tmp_path / "file").write_text("")
    for argv, words in ([[str(tmp_path / "missing.json")], "no such file"],
                        [[str(bare)], "no kernel profiles"],
                        [[str(path), "--row", "no-such-row"], "no-fusion-no-inlining"],
                        [[str(path), "--model", "resnet"], "mlp_gelu"],
                        [[str(path), "--json", str(tmp_path / "file" / "x.json")], "cannot write"]):
        proc = _cli("explain", *argv)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and words in lines[0], (argv, proc.stderr)
