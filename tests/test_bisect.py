"""The decision log, the decision limits and `bisect` (CPU, real compiles).

The program runs with inlining and the C++ grouping off, so every op is its own node and only a
scheduler fusion can put two ops in one C++ function (named after its ops).  The planted failure:
the script declares wrong any function that computes both sin and cos, as an accuracy check would."""
import json
import math
import os
import re
import subprocess
import sys

from conftest import clean_env, run_py

#: Every op its own node with inlining off: sin and cos meet only through a scheduler fusion.
CHAIN = """
def f(x, y):
    a = torch.sin(x) * 2 + y
    b = torch.tanh(y) * 3
    c = torch.cos(a) + b
    return torch.relu(c).exp() * b.sigmoid()
"""

PROGRAM = """
import re, sys, torch
import inductor_ablate
from torch._inductor.utils import run_and_get_code
""" + CHAIN + """
with inductor_ablate.config.patch(no_inline=True, flush_every_node=True):
    out, codes = run_and_get_code(torch.compile(f), torch.randn(64, 64), torch.randn(64, 64))
functions = set(re.findall(r"\\bcpp_fused_\\w+", codes[0]))
print("FUNCTIONS", len(functions))
sys.exit(1 if any("_sin_" in k and "_cos_" in k for k in functions) else 0)
"""

SIMPLE = """
import torch, inductor_ablate
from torch._inductor.utils import run_and_get_code
from inductor_ablate.bench.cell import code_hash

def f(x, y):
    a = torch.sin(x) * 2 + y
    return torch.relu(torch.cos(a) + y).sum(1) + a.mean(1)

_, codes = run_and_get_code(torch.compile(f), torch.randn(64, 64), torch.randn(64, 64))
print("HASH", code_hash(codes))
"""


def _script(tmp_path, text=PROGRAM):
    path = tmp_path / "program.py"
    path.write_text(text)
    return str(path)


SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "scripts")


def _run_argv(argv, **env):
    return subprocess.run(argv, env=clean_env(TORCHINDUCTOR_FX_GRAPH_CACHE="0", **env),
                          capture_output=True, text=True, timeout=600)


def _run(script, **env):
    return _run_argv([sys.executable, script], **env)


def _log(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_decisions_are_numbered_the_same_in_every_run(tmp_path):
    script = _script(tmp_path)
    logs = []
    for i in range(2):
        log = tmp_path / f"log{i}.jsonl"
        _run(script, INDUCTOR_ABLATE_LOG=str(log))
        logs.append(_log(log))
    assert logs[0] == logs[1]
    fusions = [r for r in logs[0] if r["decision"] == "fusion"]
    assert [r["n"] for r in fusions] == list(range(1, len(fusions) + 1)) and len(fusions) >= 5
    assert all(r["kind"] == "vertical" and r["ops1"] and r["ops2"] for r in fusions)
    # a limit keeps the first N decisions as they were, and makes no more
    log = tmp_path / "limited.jsonl"
    _run(script, INDUCTOR_ABLATE_LOG=str(log), INDUCTOR_FUSE_LIMIT="3")
    assert [r for r in _log(log) if r["decision"] == "fusion"] == fusions[:3]
    # a skip vetoes that one decision (numbered and logged), the ones before it stay as they were,
    # and its two sides are never fused later under another number
    log = tmp_path / "skipped.jsonl"
    _run(script, INDUCTOR_ABLATE_LOG=str(log), INDUCTOR_FUSE_SKIP="3")
    skipped = [r for r in _log(log) if r["decision"] == "fusion"]
    assert skipped[:2] == fusions[:2]
    assert {**skipped[2], "result": "fused"} == fusions[2] and skipped[2]["result"] == "vetoed (INDUCTOR_FUSE_SKIP)"
    side1, side2 = set(fusions[2]["node1"].split("_")), set(fusions[2]["node2"].split("_"))
    for r in skipped[3:]:
        joined = set(r["node1"].split("_")) | set(r["node2"].split("_"))
        assert not (side1 & joined and side2 & joined), r


def test_limit_zero_is_the_full_switch_and_unset_is_stock(tmp_path):
    script = _script(tmp_path, SIMPLE)
    hashes = {}
    for name, env in {"stock": {}, "fuse_limit_unset": {"INDUCTOR_FUSE_LIMIT": ""},
                      "fuse_limit_0": {"INDUCTOR_FUSE_LIMIT": "0"}, "no_fuse": {"INDUCTOR_NO_FUSE": "1"},
                      "inline_limit_0": {"INDUCTOR_INLINE_LIMIT": "0"}, "no_inline": {"INDUCTOR_NO_INLINE": "1"},
                      "inline_limit_1000": {"INDUCTOR_INLINE_LIMIT": "1000"},
                      "fuse_skip_1000": {"INDUCTOR_FUSE_SKIP": "1000"}, "fuse_skip_1": {"INDUCTOR_FUSE_SKIP": "1"},
                      "log": {"INDUCTOR_ABLATE_LOG": str(tmp_path / "decisions.jsonl")}}.items():
        proc = _run(script, **env)
        assert proc.returncode == 0, proc.stderr
        hashes[name] = re.search(r"HASH (\w+)", proc.stdout).group(1)
    assert hashes["fuse_limit_0"] == hashes["no_fuse"] != hashes["stock"]
    assert hashes["inline_limit_0"] == hashes["no_inline"] != hashes["stock"]
    assert hashes["fuse_limit_unset"] == hashes["stock"] == hashes["inline_limit_1000"] == hashes["fuse_skip_1000"]
    # the log only observes (bench cells log every compile to count fusions by kind)
    assert hashes["log"] == hashes["stock"] and (tmp_path / "decisions.jsonl").stat().st_size > 0
    assert hashes["fuse_skip_1"] != hashes["stock"]


def test_bisect_finds_the_planted_fusion_in_log2_runs(tmp_path):
    (tmp_path / "a dir").mkdir()
    script = _script(tmp_path / "a dir")
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bisect", "--fuse", "--", sys.executable, script],
                          env=clean_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    total = int(re.search(r"for (\d+) decisions", proc.stdout).group(1))
    runs = int(re.search(r"^(\d+) runs", proc.stdout, re.M).group(1))
    assert runs <= 2 + math.ceil(math.log2(total))
    found = proc.stdout.split("first bad decision", 1)[1]
    side1, side2 = found.splitlines()[1:3]
    assert ("sin:" in side1 and "cos:" in side2 and "cos:" not in side1) or ("cos:" in side1 and "sin:" in side2), found
    limit = int(re.search(r"INDUCTOR_FUSE_LIMIT=(\d+)", proc.stdout).group(1))
    assert _run(script, INDUCTOR_FUSE_LIMIT=str(limit)).returncode == 1
    assert _run(script, INDUCTOR_FUSE_LIMIT=str(limit - 1)).returncode == 0
    # the reproduce line, pasted into a shell, runs the failing command (its path has a space)
    line = re.search(r"^reproduce: (.*)$", proc.stdout, re.M).group(1)
    assert subprocess.run(["bash", "-c", line], env=clean_env(), capture_output=True, timeout=600).returncode == 1, line


def test_bisect_refuses_a_command_that_passes_and_bad_limits(tmp_path):
    ok = _script(tmp_path, SIMPLE)
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bisect", "--", sys.executable, ok],
                          env=clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "passes with every decision allowed" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    for bad in ("-1", "many", "1.5"):
        proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "status"],
                              env=clean_env(INDUCTOR_FUSE_LIMIT=bad), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2 and "INDUCTOR_FUSE_LIMIT" in proc.stderr and "count of decisions" in proc.stderr
    for bad in ("0", "x", "5-2", "3,,y"):
        proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "status"],
                              env=clean_env(INDUCTOR_FUSE_SKIP=bad), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2 and "INDUCTOR_FUSE_SKIP" in proc.stderr and "decision numbers" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bisect", "--rank", "--", sys.executable, ok],
                          env=clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "--rank and --metric CMD go together" in proc.stderr
    out = run_py("""
import inductor_ablate
try:
    inductor_ablate.config.patch(inline_limit=-3)
except inductor_ablate.SwitchValueError as exc:
    print("REFUSED", exc)
with inductor_ablate.config.patch(inline_limit=4):
    print("SET", inductor_ablate.config.inline_limit)
""").stdout
    assert "REFUSED" in out and "SET 4" in out


def test_rank_leaves_out_each_top_fusion_of_an_embedded_model(tmp_path):
    """The ranked list on tiny_lm, with the kernel count as the metric: deterministic, so every
    change is a whole number of kernels and its interval a point.  With a flush after every node
    (no C++ grouping to put the two sides back in one function), each veto costs a kernel."""
    metric = [sys.executable, os.path.join(SCRIPTS, "model_latency.py"), "tiny_lm", "--kernels"]
    log = tmp_path / "log.jsonl"
    assert _run_argv(metric, INDUCTOR_ABLATE_LOG=str(log), INDUCTOR_FLUSH_EVERY_NODE="1").returncode == 0
    fusions = [r for r in _log(log) if r["decision"] == "fusion"]
    top3 = sorted(fusions, key=lambda r: (-(r["score"] or 0), r["n"]))[:3]
    result = tmp_path / "rank.json"
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bisect", "--rank", "--metric", " ".join(metric),
                           "--top", "3", "--repeats", "2", "--json", str(result)],
                          env=clean_env(INDUCTOR_FLUSH_EVERY_NODE="1"), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ranking = json.loads(result.read_text())
    assert ranking["runs"] == 1 + 2 * 4 and ranking["fusions"] == len(fusions) >= 10
    rows = ranking["rows"]
    assert sorted(r["n"] for r in rows) == sorted(r["n"] for r in top3) and not any(r["problems"] for r in rows)
    for r in rows:
        # 2 rounds: no star however clear the change (issue 66: never from fewer rounds than the study's rule)
        assert r["change"] == r["change_lo"] == r["change_hi"] == int(r["change"]) >= 1 and not r["significant"], r
    assert [r["change"] for r in rows] == sorted((r["change"] for r in rows), reverse=True)
    table = proc.stdout.split(" fusion\n", 1)[1].strip().splitlines()
    assert [int(line.split()[1]) for line in table] == [r["n"] for r in rows]


HEAVY_AND_CHEAP = """
import re, torch, inductor_ablate
from torch._inductor.utils import run_and_get_code

def f(x, y):
    a = x
    for _ in range(40):  # heavy: 40 sins per element, each fusion scored on 256 KB
        a = torch.sin(a)
    return a, (y * 2) + 1  # cheap: one fusion scored on 1 MB, the highest memory score

x, y = torch.randn(65536), torch.randn(262144)  # the sin kernel: ~20x the cheap one's time
with inductor_ablate.config.patch(no_inline=True, flush_every_node=True):
    g = torch.compile(f)
    _, codes = run_and_get_code(g, x, y)
    for _ in range(5):
        g(x, y)
print("kernels", len(set(re.findall(r"\\bcpp_fused_\\w+", codes[0]))))
"""


def test_rank_by_time_picks_the_fusions_whose_kernel_took_the_time(tmp_path):
    """By memory score the cheap 1 MB fusion comes first; by time, the sin chain's fusions, whose one
    kernel does 40 sines per element, about 20x the cheap kernel's time (a margin a loaded 2-core
    machine keeps).  The metric (the kernel count) is deterministic: each veto costs one kernel."""
    result = tmp_path / "rank.json"
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bisect", "--rank", "--by", "time", "--metric",
                           f"{sys.executable} {_script(tmp_path, HEAVY_AND_CHEAP)}", "--top", "2", "--repeats", "1",
                           "--json", str(result)], env=clean_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ranking = json.loads(result.read_text())
    assert ranking["by"] == "time" and ranking["fusions"] == 40 and len(ranking["rows"]) == 2
    for row in ranking["rows"]:
        rec = row["record"]
        assert rec["score"] == 65536 * 4 and {op.split(":")[1] for op in rec["ops1"] + rec["ops2"]} == {"aten.sin.default"}
        assert row["kernel"].startswith("cpp_fused_sin") and row["kernel_ms"] > 0 and row["change"] == 1, row
    assert "kernel ms" in proc.stdout and "whose kernels took the most time" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "inductor_ablate", "bisect", "--by", "time", "--", "true"],
                         env=clean_env(), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "goes with --rank" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


REFUSING = """
import torch, inductor_ablate

def f(x, y):
    a = torch.sin(x) * 2 + y
    b = a.sum(0)
    c = torch.cos(y.t()) * 2
    return b, c, a.relu()

with inductor_ablate.config.patch(no_inline=True, flush_every_node=True):
    torch.compile(f)(torch.randn(64, 48), torch.randn(64, 48))
"""


def test_the_log_records_inductors_refusals_without_numbering_them(tmp_path):
    script = _script(tmp_path, REFUSING)
    full, plain = tmp_path / "full.jsonl", tmp_path / "plain.jsonl"
    proc = _run(script, INDUCTOR_ABLATE_LOG=str(full), TORCH_LOGS="+inductor_ablate")
    records = _log(full)
    refusals = [r for r in records if r["decision"] == "refusal"]
    assert refusals, records
    for r in refusals:
        assert r["result"].startswith("refused (") and r["reason"] and r["ops1"] and r["ops2"] and "n" not in r
    assert len({(r["node1"], r["node2"], r["reason"]) for r in refusals}) == len(refusals)  # once each
    # debug level only: TORCH_LOGS=+inductor_ablate shows them, the info level does not
    assert "refused (" in proc.stderr
    quiet = _run(script, INDUCTOR_ABLATE_LOG=str(plain), TORCH_LOGS="inductor_ablate")
    assert "refused (" not in quiet.stderr
    # the fusions keep their numbers: the same records, 1..N, as the limits and bisect count them
    fusions = [r for r in records if r["decision"] == "fusion"]
    assert [r["n"] for r in fusions] == list(range(1, len(fusions) + 1))
    assert fusions == [r for r in _log(plain) if r["decision"] == "fusion"]
    limited = tmp_path / "limited.jsonl"
    _run(script, INDUCTOR_ABLATE_LOG=str(limited), INDUCTOR_FUSE_LIMIT="2")
    assert [r for r in _log(limited) if r["decision"] == "fusion"] == fusions[:2]


def _diff(*logs):
    return subprocess.run([sys.executable, "-m", "inductor_ablate", "diff", *map(str, logs)], env=clean_env(),
                          capture_output=True, text=True, timeout=120)


def test_diff_matches_decisions_by_their_ops_across_runs_and_configs(tmp_path):
    script = _script(tmp_path, REFUSING)
    logs = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b", "no_horizontal")}
    _run(script, INDUCTOR_ABLATE_LOG=str(logs["a"]))
    _run(script, INDUCTOR_ABLATE_LOG=str(logs["b"]))
    _run(script, INDUCTOR_ABLATE_LOG=str(logs["no_horizontal"]), INDUCTOR_NO_FUSE="horizontal")
    same = _diff(logs["a"], logs["b"])  # two runs of one program
    assert same.returncode == 0 and not [l for l in same.stdout.splitlines() if l[:2] in ("- ", "+ ")], same.stdout
    fused = [r for r in _log(logs["a"]) if r["decision"] == "fusion"]
    assert re.search(rf"^0 only in .*, 0 only in .*, {len(fused)} in both$", same.stdout, re.M), same.stdout
    proc = _diff(logs["a"], logs["no_horizontal"])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    removed, added = [l for l in lines if l.startswith("- ")], [l for l in lines if l.startswith("+ ")]
    assert any(l.startswith("- fusion horizontal: ") for l in removed) and removed and added, proc.stdout
    # NO_FUSE=horizontal made none; the log holds its vetoes, each naming the switch that made it
    assert not any(l.startswith("+ fusion horizontal") for l in added), proc.stdout
    vetoes = [r for r in _log(logs["no_horizontal"]) if r["decision"] == "veto"]
    assert vetoes and all(r["result"] == "vetoed (INDUCTOR_NO_FUSE=horizontal)" and r["kind"] == "horizontal"
                          for r in vetoes), vetoes
    assert len({(r["node1"], r["node2"]) for r in vetoes}) == len(vetoes)  # once per pair in a graph
    assert any(l.startswith("+ veto horizontal (INDUCTOR_NO_FUSE=horizontal): ") for l in added), proc.stdout
    assert not [r for r in _log(logs["a"]) if r["decision"] == "veto"]  # stock vetoes nothing
    assert re.search(rf"^{len(removed)} only in .*a.jsonl, {len(added)} only in .*no_horizontal.jsonl, \d+ in both$",
                     lines[-1]), lines[-1]
    # bad input: one line, exit 2
    (tmp_path / "not-a-log.jsonl").write_text('{"cells": []}\n')
    for bad in ([logs["a"], tmp_path / "missing.jsonl"], [logs["a"], script], [logs["a"], tmp_path / "not-a-log.jsonl"],
                [logs["a"]]):
        proc = _diff(*bad)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (bad, proc.stderr)


def _bisect(*argv, **env):
    return subprocess.run([sys.executable, "-m", "inductor_ablate", "bisect", *argv], env=clean_env(**env),
                          capture_output=True, text=True, timeout=900)


def test_bisect_on_cpu_names_the_grouping_and_keeps_the_users_variables(tmp_path):
    grouped = _script(tmp_path, PROGRAM.replace("no_inline=True, flush_every_node=True", "no_inline=True"))
    proc = _bisect("--fuse", "--", sys.executable, grouped)
    assert proc.returncode == 2 and "INDUCTOR_FLUSH_EVERY_NODE=1" in proc.stderr, proc.stdout + proc.stderr
    proc = _bisect("--fuse", "--", sys.executable, grouped, INDUCTOR_FLUSH_EVERY_NODE="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = re.search(r"^reproduce: (.*)$", proc.stdout, re.M).group(1)
    assert line.startswith("INDUCTOR_FLUSH_EVERY_NODE=1 INDUCTOR_FUSE_LIMIT="), line
    assert subprocess.run(line, shell=True, env=clean_env(), capture_output=True).returncode == 1


LARGEST_KERNEL = """
import torch, inductor_ablate
from inductor_ablate.kernel_census import census
""" + CHAIN + """
with inductor_ablate.config.patch(no_inline=True, flush_every_node=True):
    kernels = census(f, torch.randn(64, 64), torch.randn(64, 64)).kernels
print("ops in the largest kernel:", max(len(k.ops) for k in kernels))
"""


def test_bisect_above_finds_the_first_decision_past_a_metric(tmp_path):
    script = _script(tmp_path, LARGEST_KERNEL)
    proc = _bisect("--fuse", "--metric", f"{sys.executable} {script}", "--above", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    limit = int(re.search(r"INDUCTOR_FUSE_LIMIT=(\d+)", proc.stdout).group(1))
    total = int(re.search(r"for (\d+) decisions", proc.stdout).group(1))
    assert int(re.search(r"^(\d+) runs", proc.stdout, re.M).group(1)) <= 2 + math.ceil(math.log2(total))
    largest = {n: int(_run(script, INDUCTOR_FUSE_LIMIT=str(n)).stdout.split()[-1]) for n in (limit - 1, limit)}
    assert largest[limit - 1] <= 3 < largest[limit], largest
    # a metric that never passes the threshold: nothing to find, one line, exit 2
    proc = _bisect("--fuse", "--metric", f"{sys.executable} {script}", "--above", "1000")
    assert proc.returncode == 2 and "nothing to find" in proc.stderr, proc.stderr
    for bad in (["--above", "3", "--", "true"], ["--above", "3", "--rank", "--metric", "true"]):
        proc = _bisect(*bad)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (bad, proc.stderr)
