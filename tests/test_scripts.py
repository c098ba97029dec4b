"""The commands and scripts that read results files (`compare`), and the study scripts (scripts/),
run as a user runs them, on results files with known answers; and every script's bad options."""
import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the Triton picks of ConvNeXt-T's no-inlining processes on the H200 (docs/correctness.md, "A case on CUDA, closed")
PICKS = os.path.join(ROOT, "archive", "results", "convnext-no-inlining-code")


def script(name, *args, timeout=120, env=None):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", name), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def compare(*args, timeout=120):
    """``python -m inductor_ablate compare ARGS`` (once scripts/compare_runs.py)."""
    return subprocess.run([sys.executable, "-m", "inductor_ablate", "compare", *args],
                          capture_output=True, text=True, timeout=timeout)


def results(path, shares, mode="inference", eager=2.0):
    """A results file: per model, `all` at 2x over eager and `no-fusion` keeping ``shares[model]``."""
    cells = []
    for i, (model, share) in enumerate(shares.items()):
        for config, speed in (("all", 2.0 + 0.1 * i), ("no-fusion", (2.0 + 0.1 * i) * share)):
            cells.append(dict(suite="real", model=model, device="cuda", dtype="bfloat16", mode=mode, config=config,
                              status="ok", eager_ms=eager, compiled_ms=eager / speed, speedup=speed,
                              code_hash=f"{model}{config}", compile_s=1.0, cell_s=2.0, wall_s=3.0))
    path.write_text(json.dumps({"meta": {}, "cells": cells}))
    return str(path)


def row(stdout, config):
    return next(line for line in stdout.splitlines() if line.startswith(f"| {config} |"))


def test_compare_runs_says_whether_a_rows_share_repeats(tmp_path):
    models = [f"m{i}" for i in range(8)]
    earlier = results(tmp_path / "a.json", {m: 0.90 + 0.01 * (i % 3) for i, m in enumerate(models)})
    same = results(tmp_path / "b.json", {m: 0.90 + 0.01 * ((i + 1) % 3) for i, m in enumerate(models)}, eager=2.4)
    moved = results(tmp_path / "c.json", {m: 0.70 + 0.01 * (i % 3) for i, m in enumerate(models)})

    proc = compare(earlier, same)
    assert proc.returncode == 0, proc.stderr
    line = row(proc.stdout, "no-fusion")
    assert line.endswith("| yes |") and "| 8 |" in line, line
    change = line.split("|")[5]  # later - earlier [lo, hi]: holds zero
    lo, hi = (float(v) for v in change[change.index("[") + 1:change.index("]")].split(","))
    assert lo <= 0 <= hi, line
    # the later box 20% slower on both sides: every time moved 20%, the speedups about 1% (the shares' own shift)
    assert "eager ms per call: median |move| 20.0%" in proc.stdout, proc.stdout
    assert "compiled ms per call: median |move| 20.0%" in proc.stdout, proc.stdout
    assert "speedup over eager: median |move| 0.5%" in proc.stdout, proc.stdout

    proc = compare(earlier, moved)
    line = row(proc.stdout, "no-fusion")
    assert line.endswith("| no |") and "| -0.20 [" in line, line
    assert "inside the earlier interval: 0 of 1 rows" in proc.stdout
    assert "- not ok (status other than ok and n/a) in either file: 0 cell(s)" in proc.stdout


def test_compare_runs_90th_percentile_of_the_moves_is_never_below_their_median(tmp_path):
    """Two cells moved 1% and 3%: the median is 2.0% and the 90th percentile (nearest rank) the larger
    move, 3.0%, not the smaller one (a rank over n-1 printed 1.0%, below the median)."""
    earlier = results(tmp_path / "a.json", {"m0": 0.9})
    later = json.loads(open(earlier).read())
    for cell, move in zip(later["cells"], (1.01, 1.03)):
        cell["compiled_ms"] *= move
        cell["speedup"] = cell["eager_ms"] / cell["compiled_ms"]
    (tmp_path / "b.json").write_text(json.dumps(later))
    proc = compare(earlier, str(tmp_path / "b.json"))
    assert proc.returncode == 0, proc.stderr
    assert "compiled ms per call: median |move| 2.0%, 90th percentile 3.0%, largest +3.0%" in proc.stdout, proc.stdout


def test_compare_runs_sets_two_dtypes_of_one_setting_side_by_side_paired_by_model(tmp_path):
    models = [f"m{i}" for i in range(6)]
    bf16 = results(tmp_path / "a.json", {m: 0.60 for m in models})
    fp32 = json.loads(open(results(tmp_path / "b.json", {m: 0.85 for m in models})).read())
    for c in fp32["cells"]:
        c["dtype"] = "float32"
    (tmp_path / "b.json").write_text(json.dumps(fp32))
    proc = compare("--labels", "bfloat16,float32", bf16, str(tmp_path / "b.json"))
    assert proc.returncode == 0, proc.stderr
    assert "dtype: bfloat16 (bfloat16) against float32 (float32), paired by model" in proc.stdout
    assert row(proc.stdout, "no-fusion").startswith("| no-fusion | 6 | 0.60 [0.60, 0.60] | 0.85 [0.85, 0.85] | +0.25 ["), proc.stdout


def test_compare_runs_names_a_cell_that_gave_a_wrong_answer_in_one_file(tmp_path):
    """A row's share leaves out a model whose cell failed, so the rows table alone would hide that a
    switch gave a wrong answer in one run: the cells section names it, with each file's status."""
    models = [f"m{i}" for i in range(4)]
    earlier = results(tmp_path / "a.json", {m: 0.9 for m in models})
    later = results(tmp_path / "b.json", {m: 0.9 for m in models})
    data = json.loads(open(later).read())
    wrong = next(c for c in data["cells"] if c["model"] == "m2" and c["config"] == "no-fusion")
    wrong.update(status="accuracy", message="max relative error 2.33 > 0.05 against eager")
    open(later, "w").write(json.dumps(data))
    proc = compare(earlier, later)
    assert proc.returncode == 0, proc.stderr
    assert "| no-fusion | 3 |" in row(proc.stdout, "no-fusion")
    assert proc.stdout.rstrip().endswith(
        "- not ok (status other than ok and n/a) in either file: 1 cell(s)\n"
        "  - m2 no-fusion: earlier ok; later accuracy (max relative error 2.33 > 0.05 against eager)"), proc.stdout


def test_compare_runs_names_the_files_by_label_and_shows_each_models_move(tmp_path):
    """Two GPUs, not two days: --labels names the columns; the per-model table shows that the row's
    move is one model's (m0 lost 0.30) while the others kept their share."""
    models = [f"m{i}" for i in range(6)]
    h200 = results(tmp_path / "a.json", {m: 0.90 for m in models})
    h100 = results(tmp_path / "b.json", {m: 0.60 if m == "m0" else 0.90 for m in models})
    proc = compare("--labels", "H200,H100", h200, h100)
    assert proc.returncode == 0, proc.stderr
    assert "| row | models | H200: share kept [95% CI] | H100: share kept [95% CI] | H100 - H200 [95% CI] |" in proc.stdout
    assert "H100 / H200 - 1:" in proc.stdout and "earlier" not in proc.stdout
    per_model = [line for line in proc.stdout.splitlines() if line.startswith("| m") and not line.startswith("| model")]
    assert per_model[0] == "| m0 | 0.90, 0.60 (-0.30) |", per_model
    assert all(line.endswith("0.90, 0.90 (+0.00) |") for line in per_model[1:]) and len(per_model) == 6
    # the compiled step moved on m0's no-fusion cell alone: the signed median per row says where
    assert "per row: all +0.0% (6 models), no-fusion +0.0% (6 models)" in proc.stdout, proc.stdout

    # files that count extern calls: a last column gives `all`'s in each file, in file order
    for path, counts in ((h200, [100, 100, 90, 90, 90, 90]), (h100, [80] * 6)):
        data = json.loads(open(path).read())
        for cell, n in zip([c for c in data["cells"] if c["config"] == "all"], counts):
            cell["externs"] = n
        if path == h200:  # m0's `all` run again there: both counts
            data["cells"].append(dict(data["cells"][0], externs=70))
        open(path, "w").write(json.dumps(data))
    proc = compare("--labels", "H200,H100", h200, h100)
    assert "| model | no-fusion: H200, H100 (change) | `all`'s extern calls: H200; H100 |" in proc.stdout, proc.stdout
    assert "| m0 | 0.90, 0.60 (-0.30) | 100/70; 80 |" in proc.stdout and "| m5 | 0.90, 0.90 (+0.00) | 90; 80 |" in proc.stdout

    for bad in (["--labels", "H200", h200, h100], ["--labels", "H200,", h200, h100], ["--labels", "a,b,c", h200, h100]):
        proc = compare(*bad)
        assert proc.returncode == 2 and proc.stdout == "", proc
        assert proc.stderr.strip().startswith("inductor_ablate: error: --labels ") and len(proc.stderr.strip().splitlines()) == 1
    proc = compare(h200, h100, "--table", "x")
    assert proc.returncode == 2 and "invalid choice: 'x'" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_compare_runs_refuses_files_of_two_settings_in_one_line(tmp_path):
    a = results(tmp_path / "a.json", {"m": 0.9})
    b = results(tmp_path / "b.json", {"m": 0.9}, mode="training")
    proc = compare(a, b)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.strip() == ("inductor_ablate: error: the files hold cuda inference and cuda training cells; compare files "
                                   "of one device and mode (the dtype may differ)")
    both = json.loads(open(a).read())
    both["cells"] += json.loads(open(b).read())["cells"]
    (tmp_path / "both.json").write_text(json.dumps(both))
    proc = compare(str(tmp_path / "both.json"), a)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        f"inductor_ablate: error: {tmp_path / 'both.json'} holds 2 settings (device, dtype, mode); give files of one setting each")
    assert compare(a).returncode == 2
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"meta": {}, "cells": []}))
    proc = compare(a, str(empty))
    assert proc.returncode == 2 and proc.stderr.strip() == f"inductor_ablate: error: {empty} holds no cells", proc


@pytest.mark.parametrize("name, args, piece", [
    ("check_stock_identity.py", ["--device", "tpu"], "argument --device: 'tpu' is not cpu, cuda or cuda:N"),
    ("stock_bugs.py", ["--device", "gpu"], "argument --device: 'gpu' is not cpu, cuda or cuda:N"),
    ("model_latency.py", ["mlp_gelu", "--device", "tpu"], "argument --device: 'tpu'"),
    ("model_latency.py", ["nosuchmodel", "--device", "cpu"], "unknown model 'nosuchmodel'; suite 'embedded' has"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--config", "bogus"], "unknown config 'bogus'"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--samples", "0"], "--samples 0: expected 1 or more"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--errors", "0"], "--errors 0: expected 1 or more"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--errors", "2", "--kernels"], "not allowed with"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--checks", "0"], "--checks 0: expected 1 or more"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--checks", "2", "--errors", "2"], "not allowed with"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--save-code", "/dev/null"], "--save-code /dev/null: not a folder"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--save-inputs", "/dev/null"], "--save-inputs /dev/null: not a folder"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--bytes", "--kernels"], "not allowed with"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--set", "nosuch=1"], "has no Inductor option 'nosuch'"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--set", "layout_optimization=3"],
     "layout_optimization is a bool (now True)"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--set", "layout_optimization"], "expected KEY=VALUE"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--picks", "/dev/null"], "--picks /dev/null: not a folder"),
    ("model_latency.py", ["mlp_gelu", "--device", "cpu", "--pin", "/nonexistent/triton-picks.txt"],
     "--pin /nonexistent/triton-picks.txt: pins Triton kernels' configs, and --device cpu generates none"),
    ("bench_overhead.py", ["--rounds", "0"], "--rounds 0: expected 1 or more"),
    ("check_bytes.py", ["census.json"], "give census and ncu files in pairs"),
    ("check_bytes.py", ["/nonexistent/census.json", "/nonexistent/ncu.csv"], "cannot read /nonexistent/census.json"),
    ("check_bytes.py", [__file__, __file__], "not a census file"),
    ("config_sweep.py", ["/nonexistent/graph-2.py"], "/nonexistent/graph-2.py: no such file"),
    ("config_sweep.py", [__file__, "--runs", "1"], "--runs 1: at least 2, to tell a race"),
    ("config_sweep.py", [__file__, "--pin", "/nonexistent/triton-picks.txt"], "--pin /nonexistent/triton-picks.txt: no such file"),
    ("config_sweep.py", [__file__, "--inputs", "/nonexistent/called-2-inputs.pt"],
     "--inputs /nonexistent/called-2-inputs.pt: no such file"),
    ("config_sweep.py", [__file__, "--alone"], "--alone needs --kernel: it copies the arguments of every call"),
    ("readback_check.py", ["/nonexistent/graph-2.py", "--config", "num_warps=2 num_stages=1"],
     "/nonexistent/graph-2.py: No such file or directory"),
    ("readback_check.py", [f"{PICKS}/inputs-called-2.py.gz", "--kernel", "nosuch", "--config", "num_warps=2 num_stages=1"],
     "no Triton kernel named *nosuch*"),
    ("readback_check.py", [f"{PICKS}/inputs-called-2.py.gz", "--config", "R0_BLOCK=big num_warps=2"],
     "'R0_BLOCK=big' is not NAME=NUMBER"),
    ("readback_check.py", [f"{PICKS}/inputs-called-2.py.gz", "--config", "R0_BLOCK=256"],
     "a config names num_warps and num_stages"),
    ("readback_check.py", [f"{PICKS}/inputs-called-2.py.gz", "--picks", "/nonexistent/triton-picks.txt"],
     "--picks /nonexistent/triton-picks.txt: No such file or directory"),
    ("readback_check.py", [f"{PICKS}/inputs-called-2.py.gz"], "one of the arguments --picks --config is required"),
    ("readback_check.py", [f"{PICKS}/inputs-called-2.py.gz", "--kernel", "permute_view_49", "--config",
                           "XBLOCK=2 num_warps=2 num_stages=1"], "the config does not set R0_BLOCK"),
])
def test_a_scripts_bad_option_is_one_line_before_anything_runs(name, args, piece):
    # e.g. a bad --device made every program "crash" in stock_bugs.py's table, as if it were the bug
    proc = script(name, *args)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and piece in lines[0], (proc.returncode, proc.stderr)
    assert proc.stdout == ""


def test_model_latency_set_takes_a_row_apart_one_inductor_option_at_a_time():
    """``--set KEY=VALUE``: on a conv + batch norm training step (CPU, where mkldnn convolutions get
    channels-last layouts), ``layout_optimization=False`` alone generates the kernel count of the
    whole ``no-loop-reorder`` row, and another count than ``all``'s."""
    def kernels(*args):
        proc = script("model_latency.py", "conv_bn_block", "--device", "cpu", "--mode", "training", "--kernels", *args,
                      timeout=600)
        assert proc.returncode == 0, proc.stderr
        # a passing step says how far it was from eager, on stderr (stdout stays the metric)
        error = [line for line in proc.stderr.splitlines() if line.startswith("accuracy ok: max relative error against eager ")]
        assert len(error) == 1 and 0 <= float(error[0].split()[7].rstrip(";")) <= 1e-2, proc.stderr
        return int(proc.stdout.split()[-1])

    layout_off = kernels("--set", "layout_optimization=False")
    assert layout_off == kernels("--config", "no-loop-reorder") and layout_off != kernels()


def test_model_latency_names_the_code_it_ran_by_the_bench_cells_code_hash(tmp_path):
    """A passing process says on stderr its max relative error and the code hash of what it
    generated, the same hash a bench cell of the same model and config records: so a lone process
    can be told to have run a cell's code (or not)."""
    out = tmp_path / "cells.json"
    bench = subprocess.run([sys.executable, "-m", "inductor_ablate", "bench", "--models", "mlp_gelu", "--configs",
                            "all,no-fusion", "--device", "cpu", "--json", str(out), "--no-progress"],
                           capture_output=True, text=True, timeout=600)
    assert bench.returncode == 0, bench.stderr
    cells = {c["config"]: c for c in json.loads(out.read_text())["cells"]}
    for config in ("all", "no-fusion"):
        proc = script("model_latency.py", "mlp_gelu", "--device", "cpu", "--config", config, "--kernels", timeout=600)
        assert proc.returncode == 0, proc.stderr
        said = [line for line in proc.stderr.splitlines() if line.startswith("accuracy ok: ")]
        assert said and said[0].endswith(f"; code hash {cells[config]['code_hash']}"), (said, cells[config])
        assert int(proc.stdout.split()[-1]) == cells[config]["kernels"]
    assert cells["all"]["code_hash"] != cells["no-fusion"]["code_hash"]  # the hash tells the two apart


def test_model_latency_checks_runs_the_same_code_again_and_saves_it(tmp_path):
    """``--checks 2``: the first compiled step and two more of the same code, each checked against
    eager, one line a step, each bit for bit the first on CPU; ``--save-code`` writes the forward's
    and the backward's generated code, whose hash the process names."""
    proc = script("model_latency.py", "conv_bn_block", "--device", "cpu", "--mode", "training", "--config",
                  "no-inlining", "--checks", "2", "--save-code", str(tmp_path / "code"), timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == ["check 1", "check 2", "check 3", "checks"], lines
    assert lines[0].endswith(", ok") and all(line.endswith(", ok; bit for bit step 1") for line in lines[1:3]), lines
    assert lines[-1] == "checks: 0 of 3 steps wrong"
    saved = sorted(os.listdir(tmp_path / "code"))
    assert saved == ["graph-1.py", "graph-2.py", "triton-picks.txt"], saved  # forward, backward, picks
    assert all("def call(" in (tmp_path / "code" / g).read_text() for g in saved[:2])
    # the C++ backend's kernels have no Triton configs: no picks (on CUDA, one line per Triton kernel)
    assert (tmp_path / "code" / "triton-picks.txt").read_text() == ""
    assert "code: 2 graph(s) and the picks of 0 Triton kernel(s) in " in proc.stderr and "code hash " in proc.stderr


def _load_module(path, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_model_latency_save_inputs_writes_each_graphs_code_and_the_values_it_was_called_with(tmp_path):
    """``--save-inputs``: the forward's and the backward's code, and what each was first called with.
    They are the step's own values, not random ones: run on its saved inputs, the forward's code
    returns every tensor the backward was called with but its incoming gradient (the tangent)."""
    import torch

    proc = script("model_latency.py", "conv_bn_block", "--device", "cpu", "--mode", "training", "--config",
                  "no-inlining", "--kernels", "--save-inputs", str(tmp_path / "in"), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert f"inputs: the first call of 2 compiled graph(s) in {tmp_path / 'in'} " in proc.stderr
    saved = sorted(os.listdir(tmp_path / "in"))
    assert saved == ["called-1-inputs.pt", "called-1.py", "called-2-inputs.pt", "called-2.py"], saved
    forward = _load_module(str(tmp_path / "in" / "called-1.py"), "called_1")
    backward = _load_module(str(tmp_path / "in" / "called-2.py"), "called_2")
    forward_in = torch.load(tmp_path / "in" / "called-1-inputs.pt", weights_only=True)
    backward_in = torch.load(tmp_path / "in" / "called-2-inputs.pt", weights_only=True)
    outputs = forward.call(list(forward_in))
    tensors = [x for x in backward_in if isinstance(x, torch.Tensor)]
    from_forward = [x for x in tensors if any(isinstance(o, torch.Tensor) and o.shape == x.shape and
                                              o.dtype == x.dtype and torch.equal(o, x) for o in outputs)]
    assert len(tensors) > 5 and len(from_forward) == len(tensors) - 1, (len(from_forward), len(tensors))
    assert len(backward.call(list(backward_in))) > 0  # the backward runs on them


def test_config_sweep_copies_keep_views_of_one_storage_and_reads_only_saved_inputs(tmp_path, capsys):
    """The sweep runs each call on a copy of its inputs: views of one storage stay views of one copy
    (as a process's inputs can be), with their offsets and strides, and the original is untouched.
    ``--inputs`` takes a list of inputs; another file is a one-line error."""
    import torch

    sweep = _load_module(os.path.join(ROOT, "scripts", "config_sweep.py"), "config_sweep")
    base = torch.arange(12.0)
    a, b, c = base[2:8].view(2, 3), base.view(3, 4).t(), torch.ones(2)
    copies = sweep._copies([a, b, c, 7])
    assert copies[3] == 7 and all(torch.equal(x, y) for x, y in zip(copies[:3], (a, b, c)))
    assert [(x.storage_offset(), x.stride()) for x in copies[:3]] == [(2, (3, 1)), (0, (1, 4)), (0, (1,))]
    assert copies[0].untyped_storage().data_ptr() == copies[1].untyped_storage().data_ptr() != base.data_ptr()
    copies[1][0, 1] = -1.0  # base[4], which a holds too
    assert copies[0][0, 2] == -1.0 and base[4] == 4.0
    torch.save({"not": "a list"}, tmp_path / "dict.pt")
    (tmp_path / "text.pt").write_text("not a torch file\n")
    for name, reason in (("dict.pt", "not saved inputs (a dict, not a list)"), ("text.pt", "not saved inputs (")):
        with pytest.raises(SystemExit) as exit_:
            sweep._saved_inputs(str(tmp_path / name))
        said = capsys.readouterr().err
        assert exit_.value.code == 2 and said.startswith(f"config_sweep.py: --inputs {tmp_path / name}: {reason}"), said
        assert said.count("\n") == 1, said
    torch.save([torch.ones(2), 3], tmp_path / "list.pt")
    loaded = sweep._saved_inputs(str(tmp_path / "list.pt"))
    assert torch.equal(loaded[0], torch.ones(2)) and loaded[1] == 3


def test_config_sweep_alone_leaves_nan_where_a_kernel_did_not_write_and_in_an_in_place_read():
    """``--alone``'s harness, on a plain function in a kernel's place (Inductor's parameter names):
    each run gets a fresh copy of the call's arguments, its outputs poisoned, so an element the
    function does not write stays NaN and is counted; with in/out arguments poisoned too, a read
    of one before writing it (an in-place update) turns NaN, as the docs say it may by right.  The
    copied arguments keep their layout and are left untouched.  The Triton side (recording a
    kernel's calls, its configs) needs CUDA and has run only on the H200."""
    import torch

    sweep = _load_module(os.path.join(ROOT, "scripts", "config_sweep.py"), "config_sweep")
    names = ["in_out_ptr0", "in_ptr0", "out_ptr0", "out_ptr1", "xnumel", "XBLOCK"]
    assert sweep._argument_roles(names) == ([2, 3], [0])

    def launch(in_out, inp, out0, out1, numel, stream=None):
        out0.copy_(inp * 2)      # all of it
        out1[:2] = inp[:2]       # half of it
        in_out.add_(inp)         # reads before it writes
        assert stream == 7

    storage = torch.zeros(10)
    x = torch.arange(4.0)
    snapshot = sweep._copies([torch.ones(4), x, storage[3:7], torch.zeros(4), 4])
    watched = [2, 3, 0]
    runs = sweep._run_alone(launch, snapshot, {"stream": 7}, [2, 3], watched, runs=3)
    assert len(runs) == 3 and [sweep._nan_left(runs, j) for j in range(3)] == [0, 2, 0]
    assert torch.equal(runs[0][0], x * 2) and torch.equal(runs[2][2], x + 1)
    assert all(sweep._alike(r[j], runs[0][j]) for r in runs for j in range(3))  # NaN alike bit for bit
    too = sweep._run_alone(launch, snapshot, {"stream": 7}, [2, 3, 0], watched, runs=2)
    assert [sweep._nan_left(too, j) for j in range(3)] == [0, 2, 4]
    assert torch.equal(snapshot[0], torch.ones(4)) and not torch.isnan(snapshot[2]).any()
    assert snapshot[2].storage_offset() == 3 and torch.equal(storage, torch.zeros(10))


def test_model_latency_poison_says_the_buffers_it_poisoned_and_a_right_step_stays_right():
    """``--poison``: the generated code's buffers start as NaN, none reused; a right training step
    stays right under it, and stderr counts the buffers, so a run that poisoned nothing cannot pass
    for one that did."""
    proc = script("model_latency.py", "mlp_gelu", "--device", "cpu", "--mode", "training", "--config",
                  "no-inlining", "--poison", "--kernels", timeout=600)
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith("poison: ")]
    assert said and int(said[0].split()[1]) > 0, proc.stderr
    assert "accuracy ok: " in proc.stderr and int(proc.stdout.split()[-1]) > 0


def test_repeat_checks_names_the_leaves_a_wrong_step_lands_in_and_those_that_moved():
    """A step that goes wrong at run time (here the third of four: one gradient far off, another a
    rounding apart from the first step) is one line that names the leaf off eager most and both
    leaves that are not bit for bit the first step's; the exit status says a step was wrong."""
    import contextlib
    import io

    import torch

    module = _load_module(os.path.join(ROOT, "scripts", "model_latency.py"), "model_latency")
    from inductor_ablate.bench.cell import accuracy
    expected = [torch.linspace(1, 2, 8), torch.ones(3), torch.full((4,), 5.0)]
    steps = iter([
        [t.clone() for t in expected],
        [expected[0].clone(), expected[1] * 3, expected[2] + 1e-4],
        [t.clone() for t in expected],
    ])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = module.repeat_checks(lambda: next(steps), [t.clone() for t in expected], expected,
                                      ["output", "w.grad", "b.grad"], lambda s: accuracy(s, expected, "float32"), 3)
    lines = out.getvalue().strip().splitlines()
    assert status == 1 and lines[-1] == "checks: 1 of 4 steps wrong", lines
    assert lines[1] == "check 2: max relative error against eager 0, ok; bit for bit step 1", lines
    assert lines[2].startswith("check 3: max relative error against eager 2, wrong: max relative error 2 > 0.002; "
                               "leaves off eager most: w.grad (2), b.grad (2e-05); "
                               "differs from step 1 in 2 of 3 leaves: w.grad (2), b.grad (2e-05)"), lines[2]
    assert lines[3].endswith(", ok; bit for bit step 1")


def test_model_latency_picks_starts_a_fresh_process_from_the_saved_autotuning(tmp_path):
    """``--picks DIR`` with matmul templates autotuned on CPU: the first process, with an empty
    folder, benchmarks the matmuls' choices and saves its picks there under the bench's name for
    the model and setting; the second, in a fresh cache of its own, starts from them and benchmarks
    nothing, for the same kernels. Neither leaves its cache behind."""
    picks = tmp_path / "picks"

    def run():
        proc = script("model_latency.py", "mlp_gelu", "--device", "cpu", "--set", "max_autotune_gemm=True",
                      "--set", "max_autotune_gemm_backends=ATEN,CPP", "--picks", str(picks), "--kernels",
                      timeout=600, env={**os.environ, "TMPDIR": str(tmp_path)})
        assert proc.returncode == 0, proc.stderr
        said = [line for line in proc.stderr.splitlines() if line.startswith("picks: ")]
        return said, proc.stdout.split()[-1]

    said, cold_kernels = run()
    assert said and "none yet in" in said[0] and not said[0].split("; ")[1].startswith("0 "), said
    assert os.listdir(picks) == ["mlp_gelu-float32-inference-cpu"]
    said, seeded_kernels = run()
    assert said == [f"picks: seeded from {picks / 'mlp_gelu-float32-inference-cpu'}; "
                    "0 op(s) whose choices were benchmarked afresh"], said
    assert seeded_kernels == cold_kernels
    # the processes' caches are gone (torch keeps its precompiled C++ headers in its default folder)
    assert not [name for name in os.listdir(tmp_path) if name.startswith("mlp_gelu-")], os.listdir(tmp_path)


def test_model_latency_patterns_counts_the_fx_pattern_matches_that_no_pattern_matching_takes_out():
    """``--patterns``: Inductor's own counts of its FX pattern matches in a real compile (caches off),
    per pattern, then the total. An attention training step matches patterns under ``all`` and none
    under ``no-pattern-matching`` (pattern_matcher=False)."""
    def patterns(*args):
        proc = script("model_latency.py", "attention", "--device", "cpu", "--mode", "training", "--patterns", *args,
                      timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert "per-pattern counts" not in proc.stderr, proc.stderr  # ours agree with Inductor's own
        *per_pattern, total = proc.stdout.strip().splitlines()
        words = total.split()
        assert words[0] == "patterns" and words[2] == "matches," and words[4:] == ["nodes", "matched"], total
        counts = {line.split()[0]: int(line.split()[-1]) for line in per_pattern}
        assert sum(counts.values()) == int(words[1]), proc.stdout  # every match has its pattern's line
        return int(words[1]), int(words[3]), counts

    matches, nodes, counts = patterns()
    assert matches > 0 and nodes >= matches and all(count > 0 for count in counts.values())
    assert patterns("--config", "no-pattern-matching") == (0, 0, {})


def test_model_latency_errors_names_the_gradients_farthest_from_eager():
    """``--errors N``: the N leaves of a training step farthest from eager, worst first, each against
    eager and float64, and how far eager's own leaf moves under rounding-sized nudges; the exit code
    says whether the step is within the tolerance."""
    proc = script("model_latency.py", "mlp_gelu", "--device", "cpu", "--mode", "training", "--errors", "3", timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["output", "or", "gradient"] and "eager nudged" in lines[0] and len(lines) == 5, proc.stdout
    rows = [(" ".join(line.split()[:-5]), [float(x) for x in line.split()[-5:]]) for line in lines[1:4]]
    assert all(name in ("output", "ln.weight", "ln.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "input 0")
               for name, _ in rows), rows
    errors = [numbers[0] for _, numbers in rows]
    assert errors == sorted(errors, reverse=True) and all(0 <= e <= 2e-3 for e in errors)
    # a float32 nudge of half an ulp per module output moves a leaf, but by far less than the tolerance
    assert all(0 < numbers[3] < 1e-4 for _, numbers in rows), rows
    assert lines[4].startswith(f"max relative error against eager {errors[0]:.3g} ")


KINK_SUITE = '''
import torch, torch.nn as nn

def suite():
    def build(device, dtype, mode):
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
        with torch.no_grad():
            model[0].weight.copy_(torch.eye(4)); model[0].bias.zero_()
            model[2].weight.fill_(1.0); model[2].bias.zero_()
        x = torch.tensor([[1e-7, 1.0, -1.0, 2.0]])  # the ReLU's first input sits 1e-7 above its kink
        return model.to(device=device, dtype=dtype), (x.to(device=device, dtype=dtype),), lambda out: out.float().pow(2).mean()
    return {"one_near_kink": build}
'''


def kinks(tmp_path, *args):
    """scripts/kinks.py on KINK_SUITE's model, the suite importable from ``tmp_path``."""
    (tmp_path / "kink_suite.py").write_text(KINK_SUITE)
    return script("kinks.py", *args, "--suite", "kink_suite:suite", timeout=300,
                  env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})


def test_kinks_finds_the_input_nearest_a_kink_and_what_flipping_it_moves(tmp_path):
    """``kinks.py``: the ReLU input 1e-7 above 0 is the nearest; mirrored across 0 (``--flip 1``), it
    stops passing its gradient, so the first layer's weight gradient loses a whole element's share."""
    proc = kinks(tmp_path, "one_near_kink", "--top", "2", "--draws", "2", "--flip", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    nearest = lines[lines.index(next(l for l in lines if l.startswith("module"))) + 1].split()
    assert nearest[:3] == ["1", "ReLU", "0"] and abs(float(nearest[3]) - 1e-7) < 1e-9, proc.stdout
    assert "--flip: 1 input element 0, 1.000e-07 -> -1.000e-07" in proc.stdout, proc.stdout
    start = lines.index(next(l for l in lines if l.startswith("--flip"))) + 1
    moved = dict(l.strip().rsplit(None, 1) for l in lines[start:start + 5])
    # row 0 of the first layer's gradients, and the input's, go to 0; the second layer's barely moves
    assert all(float(moved[leaf]) > 0.1 for leaf in ("0.weight", "0.bias", "input 0")), proc.stdout
    assert float(moved["2.weight"]) < 1e-6, proc.stdout
    draws = [l for l in lines if l[:2] in ("0 ", "1 ") and l.split()[-1] == "none"]
    assert len(draws) == 2, proc.stdout  # a half-ulp nudge of 1e-7 does not reach the kink


@pytest.mark.parametrize("args, piece", [
    (["one_near_kink", "--flip", "0"], "--flip 0: expected 1 to --top (5)"),
    (["one_near_kink", "--top", "0"], "--top 0: expected 1 or more"),
    (["nosuch"], "unknown model 'nosuch'; suite 'kink_suite:suite' has one_near_kink"),
])
def test_kinks_bad_options_are_one_line(tmp_path, args, piece):
    proc = kinks(tmp_path, *args)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and piece in lines[0], (proc.returncode, proc.stderr)


def _tiny2_priced_at_an_hour(tmp_path):
    """A --history file whose one cell prices tiny2's `all` at 3600 s."""
    history = tmp_path / "history.json"
    history.write_text(json.dumps({"meta": {}, "cells": [
        dict(suite="bench_fixtures:suite", model="tiny2", config="all", device="cpu", dtype="float32",
             mode="inference", status="ok", cache="cold", wall_s=3600)]}))
    return history


def _box_shims(tmp_path, gpu_name):
    """A stand-in `python3` (one GPU; `--device cuda` runs as cpu) and `nvidia-smi` (prints
    ``gpu_name``) on PATH: the scripts' shell flow on this CPU machine, bench and merge real."""
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "python3").write_text(
        "#!/bin/bash\n"
        "if [ \"$1\" = -c ] && [[ \"$2\" == *device_count* ]]; then echo 1; exit 0; fi\n"
        "args=(); for a in \"$@\"; do [ \"$a\" = cuda ] && a=cpu; args+=(\"$a\"); done\n"
        f"exec {sys.executable} \"${{args[@]}}\"\n")
    (shim / "nvidia-smi").write_text(f"#!/bin/bash\necho '{gpu_name}, 580.159.04'\n")
    for f in ("python3", "nvidia-smi"):
        (shim / f).chmod(0o755)
    return dict(os.environ, PATH=f"{shim}{os.pathsep}{os.environ['PATH']}", SUITE="bench_fixtures:suite",
                MODELS="tiny,tiny2", TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor-cache"),
                PYTHONPATH=os.path.join(ROOT, "tests") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_config_sweep_without_cuda_is_one_line(tmp_path):
    """The configs it sweeps are Triton's: on a machine without CUDA it says so and runs nothing."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the sweep would run")
    code = tmp_path / "graph-1.py"
    code.write_text("raise SystemExit('the code ran')\n")
    proc = script("config_sweep.py", str(code))
    assert proc.returncode == 2 and proc.stderr.strip() == "config_sweep.py: needs CUDA: the configs swept are Triton's"


def test_triton_picks_files_read_back_and_a_bad_line_is_named(tmp_path):
    """``--save-code``'s triton-picks.txt, as ``config_sweep.py --pin`` reads it: what was written
    comes back; a line that is not ``KERNEL FILE: CONFIG`` is an error naming its file and line."""
    from inductor_ablate.triton_picks import read_picks, write_picks

    picks = {"triton_red_fused_sum_45 cabc.py": "R0_BLOCK=128 XBLOCK=2 num_warps=2 num_stages=1",
             "triton_poi_fused_add_0 cdef.py": "not settled (3 configs)"}
    write_picks(picks, tmp_path / "triton-picks.txt")
    assert read_picks(tmp_path / "triton-picks.txt") == picks
    (tmp_path / "bad.txt").write_text("triton_poi_fused_add_0: XBLOCK=8\n")
    with pytest.raises(ValueError, match=r"bad.txt:1: not 'KERNEL FILE: CONFIG'"):
        read_picks(tmp_path / "bad.txt")


def test_a_kernel_loaded_twice_keeps_its_settled_config():
    """A kernel alive twice in a process, one copy with no config loaded: the picks line names the
    config the settled copy runs, not "not settled" (the bug that hid five kernels' configs in the
    first picks files of ConvNeXt-T's wrong processes)."""
    from inductor_ablate.triton_picks import configs_line

    settled = "R0_BLOCK=128 XBLOCK=2 num_warps=2 num_stages=1"
    assert configs_line({"not settled (0 configs)", settled}) == settled
    assert configs_line({"not settled (0 configs)"}) == "not settled (0 configs)"
    other = "R0_BLOCK=64 XBLOCK=2 num_warps=2 num_stages=1"
    assert configs_line({settled, other, "not settled (0 configs)"}) == f"{settled} | {other}"






NCU_CSV = """==PROF== Connected to process 1
"ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum"
"","","byte","byte","ns"
"0","triton_poi_fused_gelu_0","25,165,824","2,000,000","30,000"
"1","triton_poi_fused_gelu_0","25,165,824","2,000,000","30,000"
"2","nvjet_sm90_gemm","1,000","1,000","5,000"
"""


def test_check_bytes_holds_each_estimate_against_the_dram_counters(tmp_path):
    """A kernel launched twice (one census entry per call site), ncu's thousands separators: the
    estimate over DRAM reads is 2 where a kernel writes as much as it reads, and its read part 1."""
    census = tmp_path / "census.json"
    census.write_text(json.dumps({"device": "NVIDIA H100", "kernels": [
        {"name": "triton_poi_fused_gelu_0", "ops": ["gelu"], "bytes": 2 * 25_165_824, "read_bytes": 25_165_824}] * 2}))
    ncu = tmp_path / "ncu.csv"
    ncu.write_text(NCU_CSV)
    out = tmp_path / "check.json"
    proc = script("check_bytes.py", str(census), str(ncu), "--label", "m/all", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    (kernel,) = data["kernels"]
    assert kernel["dram_read"] == 25_165_824 and kernel["ms"] == pytest.approx(0.03) and kernel["sites"] == 2
    s = data["summary"]["pointwise"]
    assert s["estimate_over_dram_read"]["median"] == pytest.approx(2.0)
    assert s["read_estimate_over_dram_read"]["median"] == pytest.approx(1.0) and s["read_estimate_over_dram_read"]["within_10pct"] == 1
