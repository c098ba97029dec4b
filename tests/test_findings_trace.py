"""docs/findings.md traces to committed data: the `merge` lines it prints rebuild the committed merged
files exactly, and every table it copies from scripts/findings_table.py or scripts/compare_runs.py is
what those scripts print from the committed files today. A table left stale after a re-merge fails
here. No torch compile runs: these read JSON files."""
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
REPEAT = "docs/results/raw/h200-repeat-bf16-inference-target.json"
H100 = "docs/results/raw/h100-bf16-inference-paper.json"
TRAINING_REPEAT = "docs/results/raw/h200-repeat-bf16-training.json"
LIBRARY_MATMULS = "docs/results/raw/h200-library-matmuls-bf16-inference.json"
FLOAT32 = "docs/results/h200-real-fp32-inference.json"
CPU_VISION = "docs/data/cpu-vision-inference.json"
CPU_TRAINING = "docs/data/cpu-training-grouping.json"
CPU_HF_TRAINING = "docs/data/cpu-hf-training.json"


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


def tables(text: str) -> list[list[str]]:
    """The markdown tables of ``text``: runs of lines that start with '|', stripped."""
    found, current = [], []
    for line in text.splitlines() + [""]:
        if line.strip().startswith("|"):
            current.append(line.strip())
        elif current:
            found.append(current)
            current = []
    return found


def first_column(table: list[str]) -> list[str]:
    return [r.split("|")[1].strip() for r in table[2:]]


def test_every_table_copied_from_a_script_is_what_the_script_prints_now():
    def printed(*argv):
        proc = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return tables(proc.stdout)

    fresh = (printed("scripts/findings_table.py", INFERENCE) + printed("scripts/findings_table.py", TRAINING, INFERENCE)
             + printed("scripts/compare_runs.py", INFERENCE, REPEAT) + printed("scripts/compare_runs.py", TRAINING, TRAINING_REPEAT)
             + printed("scripts/compare_runs.py", "--labels", "H200,H100", INFERENCE, H100)
             + printed("scripts/compare_runs.py", "--labels", "templates,library", INFERENCE, LIBRARY_MATMULS)
             + printed("scripts/compare_runs.py", "--labels", "H200-library,H100", LIBRARY_MATMULS, H100)
             + printed("scripts/findings_table.py", FLOAT32)
             + printed("scripts/compare_runs.py", "--labels", "bfloat16,float32", INFERENCE, FLOAT32)
             + printed("scripts/findings_table.py", CPU_VISION)
             + printed("scripts/findings_table.py", CPU_TRAINING) + printed("scripts/findings_table.py", CPU_HF_TRAINING))
    checked = 0
    for table in tables(findings()):
        same_shape = [t for t in fresh if t[0] == table[0] and first_column(t) == first_column(table)]
        if not same_shape:
            continue  # a table of its own (commands, the paper's numbers, CPU runs)
        # the paper's rows have one shape for the H200 and the CPU files: the doc's must be one of them
        assert table in same_shape, f"findings.md's table under {table[0]!r} is stale:\n" + "\n--\n".join(
            "\n".join(f"doc:    {a}\nscript: {b}" for a, b in zip(table, fresh_table) if a != b)
            for fresh_table in same_shape)
        checked += 1
    # inference: the paper's rows, ours (the kinds), per model, fusions by kind, kinds together; training: the
    # paper's rows, per model, training over inference per model; the repeats against the merged files;
    # the H100 against the H200 (rows, per model); the H200 with the matmul templates off, against the
    # H200 with them and against the H100; CPU vision: paper's rows, ours, fusions; CPU training
    # (vision, HF): paper's rows, ours; float32: the paper's rows, and against bfloat16
    assert checked >= 23, f"only {checked} tables of findings.md matched a script's table"


def test_the_estimates_of_what_is_missing_are_what_bench_estimate_prints():
    """Each `bench --estimate` line under "What is missing" (a line broken over the list's lines is
    joined), run on the committed files, prints the cell count and the seconds on one lane and (for
    two models or more) on two that the section gives; a re-merge that changes them without the text fails here."""
    text = findings()
    missing = text[text.index("## What is missing"):]
    joined = re.sub(r"\n\s+", " ", missing)
    lines = re.findall(r"python -m inductor_ablate bench [^`]*--estimate [^`]*", joined)
    items = re.findall(r"^\d+\. \*\*", missing, re.M)
    assert items and len(lines) == len(items), (len(items), lines)  # one estimate for each item left
    for line in lines:
        proc = subprocess.run([sys.executable, "-m", "inductor_ablate", *shlex.split(line)[3:]], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        # one model prints no two-lane figure: it cannot be split over lanes
        total = re.search(r"total: (\d+) cells, \d+ cold,(?: \d+ seeded,)? about ([\d,]+) s .*?(?:2 lanes about ([\d,]+) s|$)",
                          proc.stdout, re.M)
        assert total, proc.stdout
        cells, one_lane, two_lanes = total.groups()
        figures = [f"{cells} cells", f"{one_lane} s"] + ([f"{two_lanes} s"] if two_lanes else [])
        if "--budget" in line:
            figures.append(re.search(r"under --budget \S+: (\d+ runs?) of", proc.stdout).group(1))
        for figure in figures:
            assert figure in joined, (line, figure)
