"""The decision log, the decision limits and `bisect` (CPU, real compiles).

The program runs with inlining and the C++ grouping off, so every op is its own node and only a
scheduler fusion can put two ops in one C++ function (named after its ops).  The planted failure:
the script declares wrong any function that computes both sin and cos, as an accuracy check would."""
import json
import math
import re
import subprocess
import sys

from conftest import clean_env, run_py

PROGRAM = """
import re, sys, torch
import inductor_ablate
from torch._inductor.utils import run_and_get_code

def f(x, y):
    a = torch.sin(x) * 2 + y
    b = torch.tanh(y) * 3
    c = torch.cos(a) + b
    return torch.relu(c).exp() * b.sigmoid()

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


def _run(script, **env):
    return subprocess.run([sys.executable, script], env=clean_env(TORCHINDUCTOR_FX_GRAPH_CACHE="0", **env),
                          capture_output=True, text=True, timeout=600)


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


def test_limit_zero_is_the_full_switch_and_unset_is_stock(tmp_path):
    script = _script(tmp_path, SIMPLE)
    hashes = {}
    for name, env in {"stock": {}, "fuse_limit_unset": {"INDUCTOR_FUSE_LIMIT": ""},
                      "fuse_limit_0": {"INDUCTOR_FUSE_LIMIT": "0"}, "no_fuse": {"INDUCTOR_NO_FUSE": "1"},
                      "inline_limit_0": {"INDUCTOR_INLINE_LIMIT": "0"}, "no_inline": {"INDUCTOR_NO_INLINE": "1"},
                      "inline_limit_1000": {"INDUCTOR_INLINE_LIMIT": "1000"}}.items():
        proc = _run(script, **env)
        assert proc.returncode == 0, proc.stderr
        hashes[name] = re.search(r"HASH (\w+)", proc.stdout).group(1)
    assert hashes["fuse_limit_0"] == hashes["no_fuse"] != hashes["stock"]
    assert hashes["inline_limit_0"] == hashes["no_inline"] != hashes["stock"]
    assert hashes["fuse_limit_unset"] == hashes["stock"] == hashes["inline_limit_1000"]


def test_bisect_finds_the_planted_fusion_in_log2_runs(tmp_path):
    script = _script(tmp_path)
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
