"""Kernel profiles (`bench --profile`) and `explain` on an embedded model, CPU (C++ backend).

One bench run, shared by the tests of this module: mlp_gelu and pointwise_chain under `all`,
`no-fusion-no-inlining` and `one-kernel-per-op`, each profiled after timing (at least 5 steps, as
many as a timed sample holds)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import clean_env

ROWS = ("all", "no-fusion-no-inlining", "one-kernel-per-op")
MODELS = ("mlp_gelu", "pointwise_chain")


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "inductor_ablate", *args], env=env or clean_env(),
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("profiled")
    path = tmp / "results.json"
    proc = _cli("bench", "--device", "cpu", "--models", ",".join(MODELS), "--configs", ",".join(ROWS), "--repeat", "3",
                "--profile", "5", "--json", str(path), "--no-progress",
                env=clean_env(TORCHINDUCTOR_CACHE_DIR=str(tmp / "cache")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return path, json.loads(path.read_text())


def _cells(data, model="mlp_gelu"):
    return {c["config"]: c for c in data["cells"] if c["model"] == model}


def test_every_ok_cell_holds_a_kernel_profile(profiled):
    _, data = profiled
    assert data["meta"]["profile"] == 5 and data["meta"]["bandwidth"]["copy_gb_per_s"] > 0.1
    cells = _cells(data)
    assert set(cells) == set(ROWS) and all(c["status"] == "ok" for c in cells.values())
    for config, cell in cells.items():
        p = cell["profile"]
        assert p["steps"] >= 5 and 0 < p["busy_ms"] <= p["step_ms"], (config, p)
        # the profiled pass ran the timed code: its step, the timed median, the same code unprofiled
        assert p["timed_ms"] == cell["compiled_ms"] and 1 <= p["attempts"] <= 3 and p["unprofiled_ms"] > 0
        assert p["overhead"] == pytest.approx(p["step_ms"] / p["unprofiled_ms"] - 1, abs=1e-4)
        assert p["copy_gb_per_s"] > 0.1 and p["llc_bytes"] and p["llc_bytes"] > 0, p
        kinds = {k["kind"] for k in p["kernels"]}
        assert kinds == {"generated", "library"}, (config, kinds)  # C++ functions, and MKL's linear calls
        for k in p["kernels"]:
            assert set(k) >= {"name", "kind", "ops", "calls", "ms", "bytes"} and k["calls"] >= 1 and k["ms"] > 0, k
            if k["kind"] == "generated":
                assert k["bytes"] > 0 and not k["name"].startswith("graph_"), k
                assert (k["nodes"] or not k["ops"]) and set(k["inlined"]) <= set(k["nodes"]), k
        # one thread of kernels on CPU: their times fit in the busy time
        assert sum(k["ms"] for k in p["kernels"]) <= p["busy_ms"] * 1.01
    assert [f["kind"] for f in cells["all"]["profile"]["fusions"]] and not cells["one-kernel-per-op"]["profile"]["fusions"]
    # without fusion and inlining the C++ functions compute fewer ops each and move more bytes in all
    generated = {c: [k for k in cells[c]["profile"]["kernels"] if k["kind"] == "generated"] for c in ROWS}
    assert max(len(k["ops"]) for k in generated["no-fusion-no-inlining"]) < max(len(k["ops"]) for k in generated["all"])
    moved = {c: sum(k["bytes"] * k["calls"] for k in generated[c]) for c in ROWS}
    assert moved["no-fusion-no-inlining"] > moved["all"], moved


def _generated_ms(profile):
    return sum(k["ms"] for k in profile["kernels"] if k["kind"] == "generated")


def test_explain_splits_the_change_into_its_parts(profiled, tmp_path):
    path, data = profiled
    out = tmp_path / "explain.json"
    proc = _cli("explain", str(path), "--json", str(out), "--top", "3")
    assert proc.returncode == 0, proc.stderr
    assert "no-fusion-no-inlining" in proc.stdout and "kernels that moved most" in proc.stdout
    assert "By fusion" in proc.stdout
    result = json.loads(out.read_text())["rows"]
    for row in ROWS[1:]:
        for model in MODELS:
            split = result[row]["models"][model]
            cells = _cells(data, model)
            mine, base = cells[row]["profile"], cells["all"]["profile"]
            assert split["measured_ms"] == pytest.approx(cells[row]["compiled_ms"] - cells["all"]["compiled_ms"])
            # the parts add up to the profiled change in step time; a side whose profiled step was more
            # than 10% off its timed step is scaled to the timed step (and the output says by how much)
            def step(side, profile):
                sc = (split["scaled"] or {}).get(side)
                return profile["step_ms"] if sc is None else profile["timed_ms"] if sc["what"] == "gaps" else \
                    profile["step_ms"] * sc["factor"]
            # (the factor is printed to 3 decimals: a step's share of that rounding is the tolerance)
            assert split["parts_ms"] == pytest.approx(step("row", mine) - step("all", base),
                                                      abs=1e-3 * (mine["step_ms"] + base["step_ms"]))
            assert bool(split["scaled"]) == (f"{model}: scaled" in proc.stdout.split(f"\n{row}:")[1].split("\n\n")[0])
            # every group's change adds up to the generated kernels' change, unscaled
            assert sum(g["delta_ms"] for g in split["groups"]) == pytest.approx(_generated_ms(mine) - _generated_ms(base))
            miss = abs(split["parts_ms"] - split["measured_ms"])
            assert split["close"] == (miss <= max(0.1 * abs(split["measured_ms"]), 0.02)) != split["mismatch"]
            for line in split["movers"]:
                assert set(line) >= {"name", "gb_per_s", "delta_ms"} and ("kernels" not in line or len(line["kernels"]) > 1)


def test_groups_match_all_kernels_to_the_row_kernels_computing_the_same_nodes(profiled, tmp_path):
    """pointwise_chain is one C++ function under `all` and 24 under one-kernel-per-op: one group
    holds all of them, every FX node is in exactly one group, no two kernels share a line."""
    path, data = profiled
    out = tmp_path / "explain.json"
    assert _cli("explain", str(path), "--row", "one-kernel-per-op", "--json", str(out)).returncode == 0
    split = json.loads(out.read_text())["rows"]["one-kernel-per-op"]["models"]["pointwise_chain"]
    cells = _cells(data, "pointwise_chain")
    kernels = {c: [k for k in cells[c]["profile"]["kernels"] if k["kind"] == "generated"] for c in ("all", "one-kernel-per-op")}
    (fused,) = kernels["all"]
    big = [g for g in split["groups"] if g["all"] == [fused["name"]]]
    assert len(big) == 1 and len(big[0]["row"]) == len(kernels["one-kernel-per-op"]) > 10, split["groups"]
    seen = [n for g in split["groups"] for n in g["nodes"]]
    assert len(seen) == len(set(seen)) and set(seen) == set(fused["nodes"]), seen
    named = [n for g in split["groups"] for n in g["all"] + g["row"]]
    assert sorted(named) == sorted(k["name"] for c in kernels.values() for k in c)
    assert big[0]["fusions"] and big[0]["delta_ms"] == pytest.approx(
        sum(k["ms"] for k in kernels["one-kernel-per-op"]) - fused["ms"])
    line = next(m for m in split["movers"] if m["kind"] == "generated" and m["was"] == [fused["name"]])
    assert line["how"] == "split" and len(line["kernels"]) == len(kernels["one-kernel-per-op"])
    for k in line["kernels"]:  # each kernel its own bytes over its own time
        assert k["gb_per_s"] == pytest.approx(k["bytes"] * k["calls"] / (k["ms"] * 1e6))


def _cell(config, kernels, step_ms, timed_ms=None, bandwidth=1000.0, llc=1 << 20):
    return {"model": "m", "config": config, "status": "ok", "compiled_ms": timed_ms or step_ms,
            "profile": {"steps": 10, "step_ms": step_ms, "busy_ms": sum(k["ms"] for k in kernels), "kernels": kernels,
                        "timed_ms": timed_ms or step_ms, "copy_gb_per_s": bandwidth, "llc_bytes": llc}}


def _kernel(name, nodes, ms, nbytes, calls=1, inlined=()):
    return {"name": name, "kind": "generated", "ops": ["add.Tensor"] * len(nodes), "nodes": nodes, "inlined": list(inlined),
            "calls": calls, "ms": ms, "bytes": nbytes, "module": "layer"}


def test_a_synthetic_profile_gives_each_kernel_its_own_bandwidth_and_marks():
    """Known bytes and times: 2 MB in 0.004 ms is 500 GB/s; above the copy bandwidth a kernel that
    fits the last-level cache is cache-resident, one that does not is an estimate error."""
    from inductor_ablate.explain import mark, split

    base = _cell("all", [_kernel("k_all", ["a", "b", "c"], 0.004, 2_000_000)], 0.01)
    row = _cell("row", [_kernel("k_a", ["a"], 0.004, 2_000_000), _kernel("k_b", ["b"], 0.0002, 500_000, calls=2),
                        _kernel("k_c", ["c"], 0.001, 4_000_000)], 0.0152)
    s = split([row], [base])
    (g,) = s["groups"]
    assert sorted(g["row"]) == ["k_a", "k_b", "k_c"] and g["all"] == ["k_all"] and g["nodes"] == ["a", "b", "c"]
    assert g["delta_ms"] == pytest.approx(0.0012) and s["bytes_mb"] == pytest.approx(5.0) and s["launches"] == 3
    line = next(m for m in s["movers"] if m["kind"] == "generated")
    rates = {k["name"]: (k["gb_per_s"], k["mark"]) for k in line["kernels"]}
    assert rates["k_a"] == (pytest.approx(500.0), None)
    assert rates["k_b"] == (pytest.approx(5000.0), "cache")  # 0.5 MB a call fits the 1 MiB cache
    assert rates["k_c"] == (pytest.approx(4000.0), "estimate error")  # 4 MB a call cannot
    assert line["mark"] == "estimate error" and line["gb_per_s"] == pytest.approx(7_000_000 / (0.0052 * 1e6))
    assert mark({"gb_per_s": 900.0, "bytes": 1 << 30}, {"copy_gb_per_s": 1000.0, "llc_bytes": 1}) is None
    assert s["close"] and s["scaled"] is None
    # a profiled step 30% slower than timed is scaled, and the parts then meet the timed change
    slow = split([_cell("row", row["profile"]["kernels"], 0.0152 * 1.3, timed_ms=0.0152)], [base])
    gaps = 0.0152 * 1.3 - 0.0052
    assert slow["scaled"] == {"row": {"what": "gaps", "factor": pytest.approx((0.0152 - 0.0052) / gaps, abs=1e-3)}}
    assert slow["parts_ms"] == pytest.approx(slow["measured_ms"], abs=1e-6)  # the kernels' own times kept


def test_a_profile_from_before_nodes_were_recorded_still_reads():
    from inductor_ablate.explain import split

    old = lambda name, ms: {"name": name, "kind": "generated", "ops": ["add.Tensor"], "calls": 1, "ms": ms, "bytes": 100}  # noqa: E731
    s = split([_cell("row", [old("x", 0.002), old("y", 0.002)], 0.005)], [_cell("all", [old("z", 0.003)], 0.004)])
    assert s["groups"] is None and len([m for m in s["movers"] if m["kind"] == "generated"]) == 3


def test_explain_bad_input_is_one_line(profiled, tmp_path):
    path, data = profiled
    bare = tmp_path / "no-profiles.json"
    bare.write_text(json.dumps({**data, "cells": [{k: v for k, v in c.items() if k != "profile"} for c in data["cells"]]}))
    no_all = tmp_path / "no-all.json"
    no_all.write_text(json.dumps({**data, "cells": [c for c in data["cells"] if c["config"] != "all"]}))
    (tmp_path / "file").write_text("")
    for argv, words in ([[str(tmp_path / "missing.json")], "no such file"],
                        [[str(bare)], "no kernel profiles"],
                        [[str(path), "--row", "no-such-row"], "no-fusion-no-inlining"],
                        [[str(path), "--model", "resnet"], "mlp_gelu"],
                        [[str(no_all)], "no profiled `all`"],
                        [[str(path), "--top", "-1"], "--top -1"],
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


TRITON_BYTES = r'''
import json, torch
from inductor_ablate.cpu_triton import cpu_triton_codegen, first_graph_code
from inductor_ablate.kernel_census import recording, summarize
x, b = torch.randn(512, 256), torch.randn(256)
out = {}
for name, fn in (("chain", lambda x, b: (x.sin().cos() * 2).exp()), ("bias", lambda x, b: (x + b).relu()),
                 ("norm", lambda x, b: torch.nn.functional.layer_norm(x + 1, (256,), b, b))):
    torch._dynamo.reset()
    with cpu_triton_codegen(), recording() as sink:
        first_graph_code(torch.compile(fn), x, b)
    out[name] = [k.bytes for k in summarize(sink).kernels]
print(json.dumps(out))
'''


@pytest.mark.parametrize("no_inline", ["0", "1"])
def test_triton_bytes_count_only_the_buffers_a_kernel_takes(tmp_path, no_inline):
    """The Triton kernels a GPU runs (generated here for CPU tensors, never built): under
    no-inlining each op's output is realized, but a buffer the fused kernel keeps in registers is
    not moved (it was counted, which put BERT's kernels at 20 TB/s); a broadcast bias is read once."""
    proc = subprocess.run([sys.executable, "-c", TRITON_BYTES], capture_output=True, text=True, timeout=600,
                          env=clean_env(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"), INDUCTOR_NO_INLINE=no_inline))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    whole = 512 * 256 * 4
    assert got["chain"] == [2 * whole], got  # x in, the result out: the intermediates never leave the kernel
    assert got["bias"] == [2 * whole + 256 * 4], got
    assert got["norm"] == [2 * whole + 256 * 4], got  # x in, out, and b (weight and bias both) once


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
    # one rule for output paths (issue 65): missing folders are made; a file where a folder should be is refused
    (tmp_path / "a-file").write_text("")
    bad = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         env={**env, "INDUCTOR_KERNEL_PROFILE": str(tmp_path / "a-file" / "p.json")})
    assert bad.returncode == 2 and "INDUCTOR_KERNEL_PROFILE" in bad.stderr and "is a file" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr


BLOCK = r'''
import json, torch
from inductor_ablate.kernel_census import census
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln, self.fc, self.out = torch.nn.LayerNorm(64), torch.nn.Linear(64, 128), torch.nn.Linear(128, 64)
    def forward(self, x):
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln(x))))
with torch.no_grad():
    c = census(Block(), torch.randn(32, 64))
print(json.dumps({"externs": [k.ops for k in c.externs], "modules": [sorted(set(k.modules.values())) for k in c.kernels]}))
'''


def test_census_of_a_small_block_names_each_extern_call_by_the_op_it_runs(tmp_path):
    """An addmm extern call once listed the layer-norm ops of the kernel beside it; each kernel
    names the modules its nodes came from, as named_modules() spells them."""
    proc = subprocess.run([sys.executable, "-c", BLOCK], capture_output=True, text=True, timeout=600,
                          env=clean_env(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["externs"] and all(len(ops) == 1 and ops[0] in ("addmm.default", "mm.default") for ops in got["externs"]), got
    modules = {m for ms in got["modules"] for m in ms}
    assert "ln" in modules and modules <= {"", "ln", "fc", "out"}, got


def test_fusions_ranked_by_kernel_time_beside_memory_score():
    """A high memory score on a cheap kernel and a low one on the costly kernel: ranked by time, the
    costly kernel's fusion comes first and carries its score rank; a view (in no kernel) does not
    stop a fusion from finding its kernel."""
    from inductor_ablate.explain import rank_fusions

    kernels = [_kernel("cheap", ["a", "b"], 0.01, 100), _kernel("costly", ["c", "d", "e"], 0.50, 100)]
    cell = _cell("all", kernels, 1.0)
    cell["profile"]["fusions"] = [
        {"n": 1, "kind": "vertical", "result": "fused", "score": 9000, "nodes": ["a", "b", "view_1"]},
        {"n": 2, "kind": "vertical", "result": "fused", "score": 10, "nodes": ["c", "d"]},
        {"n": 3, "kind": "horizontal", "result": "fused", "score": 500, "nodes": ["c", "d", "e"]},
        {"n": 4, "kind": "vertical", "result": "vetoed (INDUCTOR_FUSE_SKIP)", "score": 1, "nodes": ["a"]}]
    r = rank_fusions([cell])["m"]
    assert r["fusions"] == 3 and r["scored"]
    assert [(e["n"], e["kernel"], e["score_rank"]) for e in r["by_time"]] == [(3, "costly", 2), (2, "costly", 3), (1, "cheap", 1)]
    assert [(e["n"], e["time_rank"]) for e in r["by_score"]] == [(1, 3), (3, 1), (2, 2)]
    del cell["profile"]["fusions"][0]["score"]  # a profile from before scores were recorded
    assert not rank_fusions([cell])["m"]["scored"] and rank_fusions([cell])["m"]["by_score"] == []


def test_the_embedded_ranking_comes_from_the_profiles(profiled):
    from inductor_ablate.explain import explain

    _, data = profiled
    ranking = explain(data["cells"])["ranking"]
    assert ranking and all(r["scored"] for r in ranking.values())
    for r in ranking.values():
        times = [e["ms"] for e in r["by_time"]]
        assert times == sorted(times, reverse=True) and all(e["score_rank"] for e in r["by_time"])
        scores = [e["score"] for e in r["by_score"]]
        assert scores == sorted(scores, reverse=True)
