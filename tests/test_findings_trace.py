"""The docs trace to committed data: the `merge` lines docs/findings.md gives rebuild the committed
merged files exactly, and every table in the docs is what the command above it prints from the
committed files today (`report --fill --check`). A table left stale after a re-merge fails here.
No torch compile runs: these read JSON files."""
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FINDINGS = os.path.join(ROOT, "docs", "findings.md")
INFERENCE = "docs/results/h200-real-bf16-inference.json"
TRAINING = "docs/results/h200-real-bf16-training.json"
FLOAT32 = "docs/results/h200-real-fp32-inference.json"
CPU_VISION = "docs/data/cpu-vision-inference.json"


def findings() -> str:
    with open(FINDINGS) as f:
        return f.read()


def merge_line(merged: str) -> str:
    """The `merge --pool-repeats` command findings.md gives for ``merged`` (a fenced block or a
    backticked line), with its backslash continuations joined."""
    text = findings().replace("\\\n", " ")
    lines = [m for m in re.findall(r"python -m inductor_ablate merge --pool-repeats [^`\n]*", text)
             if f"--json {merged}" in m]
    assert len(lines) == 1, f"findings.md should give one merge line for {merged}, found {len(lines)}"
    return lines[0]


def run_merge(line: str, out: str) -> None:
    """Runs a documented merge line as a shell would (globs expanded in sorted order), writing only
    its JSON, to ``out``."""
    words = shlex.split(line)[3:]  # after `python -m inductor_ablate`
    args, i = [], 0
    while i < len(words):
        w = words[i]
        if w in ("--csv", "--plot"):
            i += 2
            continue
        if w == "--json":
            args += [w, out]
            i += 2
            continue
        args += sorted(glob.glob(w, root_dir=ROOT)) if "*" in w else [w]
        i += 1
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("merged", [INFERENCE, TRAINING, FLOAT32, CPU_VISION])
def test_the_documented_merge_line_rebuilds_the_committed_file(merged, tmp_path):
    out = str(tmp_path / "merged.json")
    run_merge(merge_line(merged), out)
    with open(out) as f:
        rebuilt = json.load(f)
    with open(os.path.join(ROOT, merged)) as f:
        committed = json.load(f)
    assert rebuilt["cells"] == committed["cells"]
    assert rebuilt["summary"] == committed["summary"]


DOCS = ("docs/findings.md", "README.md", "docs/bench.md", "docs/correctness.md", "docs/explain.md", "docs/load.md",
        "docs/jobs.md")


def test_every_table_in_the_docs_is_what_its_command_prints_now():
    """Each table block (``<!-- inductor_ablate report --markdown ... -->`` or ``compare ...``) holds
    exactly what its command prints from the committed files: `report --fill --check`."""
    blocks = sum(open(os.path.join(ROOT, d)).read().count("<!-- inductor_ablate ") for d in DOCS)
    assert blocks >= 15, blocks
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "report", "--check",
                           *(a for d in DOCS for a in ("--fill", d))], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_stale_table_fails_the_check_and_fill_rewrites_it(tmp_path):
    doc = tmp_path / "doc.md"
    command = "report --markdown --table headline docs/data/cpu-training-grouping.json"
    doc.write_text(f"text\n<!-- inductor_ablate {command} -->\n| row | stale |\n<!-- end -->\nafter\n")
    check = subprocess.run([sys.executable, "-m", "inductor_ablate", "report", "--fill", str(doc), "--check"],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert check.returncode == 1 and f"stale: {command}" in check.stdout and "stale |" in doc.read_text()
    fill = subprocess.run([sys.executable, "-m", "inductor_ablate", "report", "--fill", str(doc)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    text = doc.read_text()
    assert fill.returncode == 0 and "| no-cpp-grouping | ours |" in text and text.endswith("<!-- end -->\nafter\n")
    doc.write_text("<!-- inductor_ablate bench --fresh -->\n<!-- end -->\n")
    bad = subprocess.run([sys.executable, "-m", "inductor_ablate", "report", "--fill", str(doc)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "not 'bench --fresh'" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_the_docs_stay_within_their_size_limits():
    """A reader in a hurry: README at most 8,000 characters, findings 30,000, bench 20,000,
    correctness 15,000 (longer detail belongs in docs/results/, not in the pages people read)."""
    limits = {"README.md": 8000, "docs/findings.md": 30000, "docs/bench.md": 20000, "docs/correctness.md": 15000}
    sizes = {doc: len(open(os.path.join(ROOT, doc), encoding="utf-8").read()) for doc in limits}
    assert all(sizes[doc] <= limit for doc, limit in limits.items()), sizes
