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


BYTES_PROGRAM = r'''
import json, torch
from inductor_ablate.kernel_census import census
table, idx, x = torch.randn(100000, 64), torch.randint(0, 100000, (8,)), torch.randn(1024, 256)
out = {}
for name, fn, args in (("gather", lambda t, i: t[i] * 2, (table, idx)), ("slice", lambda x: x[:, :16] + 1, (x,)),
                       ("whole", lambda x: x.sin() + 1, (x,))):
    out[name] = [k.bytes for k in census(fn, *args).kernels]
print(json.dumps(out))
'''


def test_bytes_estimate_counts_what_the_loops_touch(tmp_path):
    """A gather of 8 rows from a 25.6 MB table moves 8 rows in and out, not the table (the estimate
    once counted whole buffers, so GB/s came out above the GPU's peak); a slice, its slice."""
    proc = subprocess.run([sys.executable, "-c", BYTES_PROGRAM], capture_output=True, text=True, timeout=600,
                          env=clean_env(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache")))
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["gather"] == [8 * 64 * 4 * 2 + 8 * 8], got  # rows read and written, and the int64 indices
    assert got["slice"] == [1024 * 16 * 4 * 2], got
    assert got["whole"] == [1024 * 256 * 4 * 2], got


USER_SCRIPT = r'''
import sys, torch, inductor_ablate
f = torch.compile(lambda x: (x.sin() * 2).sum(-1))
x = torch.randn(256, 256)
torch.randn(8).cos()  # eager work before the block: not in its profile
if len(sys.argv) > 1:  # the context manager: it holds the first call, where Inductor names its kernels
    with inductor_ablate.kernel_profile(sys.argv[1]):
        for _ in range(5):
            f(x)
else:
    for _ in range(5):
        f(x)
'''


def test_a_users_script_gets_a_kernel_profile_from_a_variable_or_a_block(tmp_path):
    script = tmp_path / "user.py"
    script.write_text(USER_SCRIPT)
    whole, block = tmp_path / "whole.json", tmp_path / "block.json"
    env = clean_env(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, str(script)], env={**env, "INDUCTOR_KERNEL_PROFILE": str(whole)},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, str(script), str(block)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    for path, calls in ((whole, 5), (block, 5)):
        data = json.loads(path.read_text())
        assert data["kind"] == "kernel-profile" and data["device"] == "cpu" and 0 < data["busy_ms"] <= data["wall_ms"]
        (kernel,) = [k for k in data["kernels"] if k["kind"] == "generated"]
        assert kernel["calls"] == calls and kernel["ms"] > 0 and kernel["bytes"] == 256 * 256 * 4 + 256 * 4, kernel
        assert sorted(kernel["ops"]) == ["mul.Tensor", "sin.default", "sum.dim_IntList"] and len(kernel["nodes"]) == 3
    bad = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         env={**env, "INDUCTOR_KERNEL_PROFILE": str(tmp_path / "no" / "such" / "dir" / "p.json")})
    assert bad.returncode == 2 and "INDUCTOR_KERNEL_PROFILE" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
