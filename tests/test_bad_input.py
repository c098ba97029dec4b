"""Every bad input: one line on stderr naming the problem, exit status 2, no traceback of ours, and
nothing half-done (no cell run, no file written, no half-patched torch).  One test per case."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env, run_py

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "import torch\nprint('RAN', torch.compile(lambda x: x.sin() + 1)(torch.ones(2)).tolist())\n"


def cli(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "inductor_ablate", *args], env=env or clean_env(), cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def assert_one_line_error(proc, *pieces):
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("inductor_ablate: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for piece in pieces:
        assert piece in lines[0], (piece, lines[0])


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "user_script.py"
    path.write_text(SCRIPT)
    return path


@pytest.mark.parametrize("value", ["maybe", "vertical,bogus"])
def test_bad_switch_value_in_front_of_an_unchanged_script(script, value):
    proc = subprocess.run([sys.executable, str(script)], env=clean_env(INDUCTOR_NO_FUSE=value),
                          capture_output=True, text=True, timeout=600)
    assert_one_line_error(proc, f"INDUCTOR_NO_FUSE={value!r} is not valid", "vertical, horizontal")
    assert "RAN" not in proc.stdout


@pytest.mark.parametrize("env, pieces", [
    ({"INDUCTOR_NO_FUZE": "1"}, ["INDUCTOR_NO_FUZE is not a variable of inductor_ablate (did you mean INDUCTOR_NO_FUSE?)"]),
    ({"INDUCTOR_NO_INLINING": "1"}, ["did you mean INDUCTOR_NO_INLINE?"]),
    ({"INDUCTOR_ABLATE_LOGS": "x.jsonl"}, ["INDUCTOR_ABLATE_LOGS is not a variable", "INDUCTOR_ABLATE_LOG?"]),
    ({"INDUCTOR_NO_FUSE": "1", "INDUCTOR_ABLATE_DEBUG": "maybe"}, ["INDUCTOR_ABLATE_DEBUG='maybe' is not valid"]),
    ({"INDUCTOR_NO_FUSE": "1", "INDUCTOR_ABLATE_LOG": "/proc/no/log.jsonl"},
     ["INDUCTOR_ABLATE_LOG='/proc/no/log.jsonl': cannot write the decision log /proc/no/log.jsonl"]),
])
def test_a_misspelled_variable_or_a_bad_setting_is_not_silently_ignored(script, env, pieces):
    # a typo'd switch name used to change nothing: the run measured stock Inductor under the switch's name
    proc = subprocess.run([sys.executable, str(script)], env=clean_env(**env), capture_output=True, text=True,
                          timeout=600)
    assert_one_line_error(proc, *pieces)
    assert "RAN" not in proc.stdout


def test_torchs_own_inductor_variables_pass(script):
    proc = subprocess.run([sys.executable, str(script)], env=clean_env(INDUCTOR_NO_FUSE="1", INDUCTOR_PROVENANCE="0",
                          INDUCTOR_POST_FUSION_SVG="0"), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "RAN" in proc.stdout, proc.stderr


def test_bad_strict_value():
    proc = run_py("import torch._inductor", env=clean_env(INDUCTOR_ABLATE_STRICT="sometimes"), check=False)
    assert_one_line_error(proc, "INDUCTOR_ABLATE_STRICT='sometimes'")


def test_status_with_a_bad_switch_value_says_so_instead_of_marking_patches_failed():
    assert_one_line_error(cli("status", env=clean_env(INDUCTOR_NO_FUSE="maybe")), "INDUCTOR_NO_FUSE='maybe'")


@pytest.mark.parametrize("content, piece", [("", "is not JSON"), ("{not json", "is not JSON"),
                                            ('{"cells": [{"model": "m"}]}', "cell 0 lacks suite"),
                                            ('{"format": 99, "cells": []}', "newer inductor_ablate (format 99"),
                                            ('{"meta": {"cuts": [{"model": "m"}]}, "cells": []}', "meta's cut 0 is not a cut"),
                                            ('{"meta": {"parts": [{"cuts": [7]}]}, "cells": []}', "meta's cut 0 is not a cut"),
                                            ('{"meta": {"cuts": [{"suite": "s", "model": "m", "config": "all", "device": "cpu", '
                                             '"dtype": "float32", "mode": "inference", "cache": "cold", "cut_s": 5, '
                                             '"priced_s": "soon"}]}, "cells": []}', "meta's cut 0 is not a cut")])
def test_bench_refuses_a_damaged_or_foreign_results_file_before_any_cell(tmp_path, content, piece):
    path = tmp_path / "results.json"
    path.write_text(content)
    proc = cli("bench", "--json", str(path), "--models", "pointwise_chain", "--configs", "no-fusion",
               "--no-progress")
    assert_one_line_error(proc, str(path), piece)
    assert path.read_text() == content  # untouched


def test_bench_accepts_a_results_file_without_a_format_field(tmp_path):
    """Files written before the format field (e.g. docs/data/*.json) have every cell field: read them."""
    from inductor_ablate.results import load_results

    path = tmp_path / "old.json"
    cell = dict(suite="embedded", model="m", config="all", device="cpu", dtype="float32", mode="inference", status="ok")
    path.write_text(json.dumps({"meta": {}, "cells": [cell]}))
    assert len(load_results(str(path))) == 1


@pytest.mark.parametrize("name, content", [("missing.json", None), ("garbage.json", "garbage")])
def test_merge_names_the_bad_file(tmp_path, name, content):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    out = tmp_path / "merged.json"
    assert_one_line_error(cli("merge", str(path), "--json", str(out)), str(path))
    assert not out.exists()


def test_merge_refuses_files_of_two_gpus_and_writes_nothing(tmp_path):
    """An H100's lane merged into the H200's files would put two GPUs' times in one table."""
    out = tmp_path / "merged.json"
    h100 = "docs/results/h100-bf16-inference-paper.json"
    h200 = "docs/results/h200-real-bf16-inference.json"  # a merged file: its parts' names count
    proc = cli("merge", "--pool-repeats", h200, h100, "--json", str(out), cwd=ROOT)
    assert_one_line_error(proc, "would mix 2 devices", f"{h100}: NVIDIA H100 80GB HBM3", f"{h200}: NVIDIA H200",
                          "inductor_ablate compare --labels")
    assert not out.exists() and proc.stdout == ""


def test_bench_refuses_to_resume_a_file_of_another_device_before_any_cell(tmp_path):
    """A lane file carried to a box with another GPU (or one named for another machine) would gain
    this machine's cells beside the other's, under one meta."""
    results = tmp_path / "lane.json"
    cell = dict(suite="embedded", model="mlp_gelu", config="all", device="cpu", dtype="float32", mode="inference",
                status="ok", eager_ms=1.0, compiled_ms=0.5, speedup=2.0)
    results.write_text(json.dumps({"meta": {"device_name": "NVIDIA H200"}, "cells": [cell]}))
    before = results.read_text()
    proc = cli("bench", "--device", "cpu", "--models", "mlp_gelu", "--configs", "all,no-fusion", "--json", str(results),
               "--no-progress")
    assert_one_line_error(proc, f"resuming --json {results} here would mix 2 devices", "NVIDIA H200")
    assert results.read_text() == before and "no-fusion" not in proc.stdout
    # the same file as --skip-done: its cells ran on the H200, so they are not done on this machine
    fresh = tmp_path / "fresh.json"
    proc = cli("bench", "--device", "cpu", "--models", "mlp_gelu", "--configs", "all,no-fusion", "--json", str(fresh),
               "--skip-done", str(results), "--no-progress")
    assert_one_line_error(proc, f"leaving out the cells of --skip-done {results} here would mix 2 devices")
    assert not fresh.exists()


def test_bench_refuses_to_append_another_dtype_to_a_results_file(tmp_path):
    """`bench --dtype bfloat16 --json F` on a float32 file appended silently: one file, two studies."""
    results = tmp_path / "f32.json"
    cell = dict(suite="embedded", model="mlp_gelu", config="all", device="cpu", dtype="float32", mode="inference",
                status="ok", eager_ms=1.0, compiled_ms=0.5, speedup=2.0)
    results.write_text(json.dumps({"meta": {}, "cells": [cell]}))
    before = results.read_text()
    proc = cli("bench", "--device", "cpu", "--models", "mlp_gelu", "--configs", "all", "--dtype", "bfloat16",
               "--json", str(results), "--no-progress")
    assert_one_line_error(proc, f"--json {results} holds cells of embedded float32 inference; this run is embedded "
                                f"bfloat16 inference")
    assert results.read_text() == before


@pytest.mark.parametrize("command", ["merge", "bench"])
def test_a_plot_path_matplotlib_cannot_write_fails_before_any_work(tmp_path, command):
    """matplotlib chooses the format from the suffix: a .txt plot was a traceback once every cell had run."""
    pytest.importorskip("matplotlib")
    results = tmp_path / "results.json"
    if command == "merge":
        proc = cli("merge", str(ROOT / "docs/results/h200-real-bf16-training.json"), "--json", str(results),
                   "--plot", str(tmp_path / "speedups.txt"))
    else:
        proc = cli("bench", "--models", "pointwise_chain", "--configs", "no-fusion", "--no-progress",
                   "--json", str(results), "--plot", str(tmp_path / "speedups.txt"), cwd=tmp_path)
    assert_one_line_error(proc, "--plot", "speedups.txt", "cannot write .txt", ".png")
    assert not results.exists()


def test_bench_where_results_cannot_be_written_fails_before_setup(tmp_path):
    (tmp_path / "results").write_text("a file where the results folder should be")  # root ignores chmod
    proc = cli("bench", "--models", "pointwise_chain", "--configs", "no-fusion", "--no-progress", cwd=tmp_path)
    assert_one_line_error(proc, "cannot write results file results/", "--json")


@pytest.mark.parametrize("args, piece", [
    (["run", "missing.py"], "can't open file"), (["census", "missing.py"], "can't open file"),
    (["run", "-m", "missing_module"], "no module named 'missing_module'"),
    (["census", "-m", "missing_package.sub"], "no module named 'missing_package.sub'"),
])
def test_missing_target(tmp_path, args, piece):
    assert_one_line_error(cli(*args, cwd=tmp_path), piece)


def test_a_script_that_raises_shows_its_own_traceback_and_census_still_reports(tmp_path):
    script = tmp_path / "raises.py"
    script.write_text(SCRIPT + "raise ValueError('boom from the script')\n")
    proc = cli("census", str(script))
    assert proc.returncode == 1, proc.stderr
    assert "cpp_fused_add_sin_0" in proc.stdout and "1 kernels" in proc.stdout  # compiled before the raise
    # the script's traceback, as python prints it (a CUDA build of torch may log a warning line first)
    traceback = proc.stderr[proc.stderr.index("Traceback (most recent call last):"):]
    assert traceback.splitlines()[1].startswith(f'  File "{script}", line 3') and "ValueError: boom from the script" in traceback
    assert "inductor_ablate" not in traceback and "runpy" not in traceback


def test_a_script_exit_code_is_kept(tmp_path):
    script = tmp_path / "exits.py"
    script.write_text("import sys; sys.exit(3)\n")
    assert cli("run", str(script)).returncode == 3


@pytest.mark.parametrize("args, piece", [
    (["--bogus"], "unknown option '--bogus'"), (["frobnicate"], "unknown command 'frobnicate'"),
    (["census", "--bogus"], "census: unrecognized option '--bogus'"),
    (["run", "--bogus", "x.py"], "run: unrecognized option '--bogus'"),
    (["bench", "--configs", "nosuchconfig"], "unknown config 'nosuchconfig'"),
    (["bench", "--configs", "no-fusion-vertical+sideways"], "unknown config 'no-fusion-vertical+sideways'"),
    (["bench", "--models", "nosuchmodel"], "unknown model(s) nosuchmodel"),
    (["bench", "--suite", "nosuchsuite"], "unknown suite 'nosuchsuite'"),
    (["bench", "--bogus"], "bench: unrecognized arguments: --bogus"),
    (["bench", "--shard", "3/2"], "--shard '3/2'"),
    (["bench", "--total-partitions", "2", "--partition-id", "2"], "--partition-id 2: out of range for --total-partitions 2 (0 to 1)"),
    (["bench", "--total-partitions", "0", "--partition-id", "0"], "--total-partitions 0: expected 1 or more"),
    (["bench", "--partition-id", "0"], "--total-partitions N and --partition-id K go together"),
    (["bench", "--total-partitions", "2", "--partition-id", "0", "--shard", "1/2"], "is a share as --shard K/N is"),
    (["bench", "--device", "tpu"], "argument --device: 'tpu' is not cpu, cuda or cuda:N"),
    (["bench", "--device", "cuda:99"], "argument --device: cuda:99: "),  # no CUDA here, or not 100 GPUs
    (["bench", "--models", ""], "--models '': an empty name"),  # not the whole suite
    (["bench", "--configs", "all,"], "--configs 'all,': an empty name"),
    (["bench", "--skip-done", ""], "--skip-done '': expected a path"),
    (["bench", "--estimate", ""], "--estimate '': expected a comma list of results files"),
    (["bench", "--budget", "0"], "--budget 0: expected seconds > 0"),
    (["bench", "--history", "h.json"], "--history prices cells for --budget: give --budget SECONDS too"),
    (["bench", "--budget", "60", "--history", "missing.json"], "results file missing.json: no such file"),
    (["bench", "--estimate", "missing.json"], "results file missing.json: no such file"),
    (["bench", "--picks", ""], "--picks '': expected a path"),
    (["bench", "--picks", "picks", "--caches", "isolated"], "--picks seeds and saves a model's shared cache: it needs --caches shared"),
    (["bench", "--picks", "/dev/null"], "--picks /dev/null: not a folder"),
    (["bench", "--estimate", "missing.json", "--device", "tpu"], "argument --device: 'tpu' is not cpu, cuda or cuda:N"),
    (["bench", "--base", "no-fusion"], "--base 'no-fusion': expected a row that changes Inductor settings only: no-loop-reorder,"),
    (["bench", "--base", "no-freezing", "--configs", "all,no-freezing"], "--base no-freezing: --configs also names no-freezing"),
    (["bench", "--base", "no-cudagraphs", "--device", "cpu"], "--base no-cudagraphs: n/a on cpu inference (cuda only)"),
    (["bench", "--repeat", "0"], "--repeat 0: expected 1 or more"),
    (["bench", "--cell-repeats", "0"], "--cell-repeats 0: expected 1 or more"),
    (["bench", "--warmup", "-1"], "--warmup -1: expected 0 or more"),
    (["bench", "--timeout", "0"], "--timeout 0: expected seconds > 0"),
    (["bench", "--csv", "/proc/no/such.csv"], "cannot write CSV file /proc/no/such.csv"),  # found before, not after, the cells
    (["bench", "--suite", "os:path"], "os.path is a module, not a function"),
    (["bench", "--suite", "os:getcwd"], "getcwd() returned str"),
    (["bisect", "--timeout", "0", "--", "python", "x.py"], "bisect: --timeout 0: expected seconds > 0"),
    (["bisect", "--json", "r.json", "--", "python", "x.py"], "--json writes the ranking, so it goes with --rank"),
    (["bisect", "--rank", "--metric", ""], "--metric '': give the command"),
    (["bisect", "--rank", "--metric", "python x.py", "--json", "/proc/no/r.json"], "cannot write ranking file"),
])
def test_bad_command_line(tmp_path, args, piece):
    proc = cli(*args, cwd=tmp_path)
    assert_one_line_error(proc, piece)
    assert not (tmp_path / "results").exists()


def test_fresh_with_a_bad_option_keeps_the_old_results_file(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": 1, "meta": {}, "cells": []}))
    for bad in (["--cell-repeats", "0"], ["--skip-done", str(tmp_path / "missing.json")]):
        proc = cli("bench", "--fresh", "--json", str(old), "--models", "pointwise_chain", *bad, cwd=tmp_path)
        assert_one_line_error(proc, bad[0] if bad[0] != "--skip-done" else "missing.json: no such file")
        assert old.exists(), bad


def test_bare_no_fuse_means_every_kind_and_leaves_the_target_alone(script):
    script.write_text(SCRIPT + "import inductor_ablate; print('KINDS', len(inductor_ablate.config.effective()['no_fuse']))\n")
    proc = cli("run", "--no-fuse", str(script))
    assert proc.returncode == 0, proc.stderr
    assert "RAN" in proc.stdout and "KINDS 10" in proc.stdout


def test_unknown_switch_in_config_patch_names_it():
    import inductor_ablate

    with pytest.raises(AttributeError, match="no switch 'no_fusion'; switches: no_fuse"):
        inductor_ablate.config.patch(no_fusion=True)


ADD_BROKEN_PATCH = """
    import importlib, sys, torch, inductor_ablate
    from inductor_ablate import importhook
    from inductor_ablate.patcher import Patch
    bad = Patch.from_dict(dict(slug="moved-anchor", target="torch._inductor.scheduler",
                               qualname="Scheduler.create_foreach_nodes", anchor="not in torch",
                               at="start", code="pass", flag="no_fuse"))
    def add_broken_patch():
        importhook.PATCHES.append(bad); importhook.TARGETS[bad.target].append(bad); importhook.SLUGS.append(bad.slug)
        importhook._state["report"][bad.slug] = ("pending", "")
"""


def test_strict_failure_inside_an_import_is_one_line():
    proc = run_py(ADD_BROKEN_PATCH + "    add_broken_patch()\n    import torch._inductor.choices\n",
                  env=clean_env(INDUCTOR_ABLATE_STRICT="1"), check=False)
    assert_one_line_error(proc, "moved-anchor", "INDUCTOR_ABLATE_STRICT=1", "every patch undone")


def test_strict_failure_undoes_every_patch():
    proc = run_py(ADD_BROKEN_PATCH + """
    import torch._inductor.choices, torch._inductor.scheduler  # every patch applied
    assert "__inductor_ablate__" in torch._inductor.choices.InductorChoices.can_fuse.__code__.co_names
    importhook._state["strict"] = True
    add_broken_patch()
    try:
        importhook.patch_module(sys.modules["torch._inductor.scheduler"])
    except inductor_ablate.OverlayError as exc:
        print("RAISED", type(exc).__name__)
    import torch._inductor.codegen.cpp  # patched before the failure or imported after it: stock now
    hooked = [f for f in (torch._inductor.choices.InductorChoices.can_fuse,
                          torch._inductor.codegen.cpp.CppScheduling.ready_to_flush)
              if "__inductor_ablate__" in f.__code__.co_names]
    print("HOOKED", hooked, "INSTALLED", inductor_ablate.is_installed())
    """, env=clean_env(INDUCTOR_NO_FUSE="1"))
    assert "RAISED OverlayError" in proc.stdout and "HOOKED [] INSTALLED False" in proc.stdout, proc.stdout


def test_merge_without_json_prints_the_report_leading_with_the_noise_floor_and_writes_nothing(tmp_path):
    proc = cli("merge", "docs/data/cpu-training-grouping.json", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("noise floor (cpu, training): processes that ran identical code differ") and "%" in first
    assert "| no-fusion" not in proc.stdout and "no-cpp-grouping" in proc.stdout and "nothing written" in proc.stdout
    assert not any(tmp_path.iterdir())


def test_a_results_path_under_a_file_says_not_a_directory(tmp_path):
    (tmp_path / "f").write_text("")
    out = tmp_path / "f" / "merged.json"
    assert_one_line_error(cli("merge", "docs/data/cpu-training-grouping.json", "--json", str(out), cwd=ROOT),
                          f"{tmp_path / 'f'} is a file, not a directory")


@pytest.mark.parametrize("hidden,args,piece", [
    (("matplotlib", "jinja2"), ["report", "docs/results/h100-main-command.json", "-o", "{tmp}/p.html"],
     "report needs matplotlib and jinja2: pip install 'inductor_ablate[report]'"),
    (("jinja2",), ["report", "docs/results/h100-main-command.json", "-o", "{tmp}/p.html"],
     "report needs jinja2: pip install 'inductor_ablate[report]'"),
    (("matplotlib",), ["bench", "--device", "cpu", "--models", "mlp_gelu", "--configs", "all", "--json", "{tmp}/r.json",
                       "--plot", "{tmp}/p.png"], "--plot needs matplotlib: pip install 'inductor_ablate[report]'"),
])
def test_a_missing_extra_is_one_line_naming_it_and_how(tmp_path, hidden, args, piece):
    """A command that needs an optional dependency that is not installed says which and how, exit 2,
    before it writes anything (the modules are hidden as an install without the extra lacks them)."""
    code = (f"import sys\nfor m in {hidden!r}: sys.modules[m] = None\n"
            "from inductor_ablate.__main__ import main\nsys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, *[a.format(tmp=tmp_path) for a in args]], env=clean_env(),
                          capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[1])
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and piece in lines[0], (proc.returncode, proc.stderr)
    assert list(tmp_path.iterdir()) == []


SCOPED = ("import torch\n"
          "class M(torch.nn.Module):\n"
          "    def __init__(self):\n"
          "        super().__init__()\n"
          "        self.encoder = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU())\n"
          "    def forward(self, x):\n"
          "        return self.encoder(x).sin()\n"
          "print('RAN', torch.compile(M())(torch.ones(2, 8)).shape)\n")


@pytest.mark.parametrize("value, piece", [("[", "opens a [ it never closes"), ("layer.0]", "closes a ] it never opened"),
                                          ("layer.[]", "has an empty []"), ("a.[[0]]", "opens a [ inside another")])
def test_a_malformed_glob_is_one_line_before_any_compile(script, value, piece):
    proc = subprocess.run([sys.executable, str(script)], env=clean_env(INDUCTOR_NO_FUSE="1", INDUCTOR_ABLATE_MODULES=value),
                          capture_output=True, text=True, timeout=600)
    assert_one_line_error(proc, f"INDUCTOR_ABLATE_MODULES={value!r} is not valid", piece)
    assert "RAN" not in proc.stdout


@pytest.mark.parametrize("env, pieces", [
    ({"INDUCTOR_NO_FUSE": "1", "INDUCTOR_ABLATE_MODULES": "encodr.*"},
     ["INDUCTOR_ABLATE_MODULES=encodr.* (nearest modules: ", "encoder", "holds no node of a graph Inductor compiled"]),
    ({"INDUCTOR_NO_INLINE": "1", "INDUCTOR_ABLATE_OPS": "notanop"}, ["INDUCTOR_ABLATE_OPS=notanop (nearest ops: ", "gelu"]),
    ({"INDUCTOR_NO_FUSE": "1", "INDUCTOR_ABLATE_MODULES": "encoder.1", "INDUCTOR_ABLATE_OPS": "addmm"},
     ["INDUCTOR_ABLATE_MODULES=encoder.1 (nearest", "with INDUCTOR_ABLATE_OPS=addmm"]),
    ({"INDUCTOR_EXPECT_FUSED": "no.such.module"}, ["INDUCTOR_EXPECT_FUSED no.such.module: graph 1 holds no node",
                                                   "nearest modules: encoder"]),
])
def test_a_scope_that_holds_no_node_warns_and_under_strict_is_one_line(tmp_path, env, pieces):
    path = tmp_path / "model.py"
    path.write_text(SCOPED)
    warned = subprocess.run([sys.executable, str(path)], env=clean_env(**env), capture_output=True, text=True,
                            timeout=600)
    assert warned.returncode == 0 and "RAN" in warned.stdout, warned.stderr
    lines = [l for l in warned.stderr.splitlines() if l.startswith("inductor_ablate:0: ")]
    assert len(lines) == 1 and all(p in lines[0] for p in pieces), warned.stderr
    assert "scheduler.py" not in warned.stderr  # attributed to no torch line, none echoed
    strict = subprocess.run([sys.executable, str(path)], env=clean_env(**env, INDUCTOR_ABLATE_STRICT="1"),
                            capture_output=True, text=True, timeout=600)
    assert_one_line_error(strict, *pieces)


def test_a_scope_that_holds_a_node_says_nothing(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SCOPED)
    proc = subprocess.run([sys.executable, str(path)], env=clean_env(INDUCTOR_NO_FUSE="1", INDUCTOR_ABLATE_MODULES="encoder.1",
                                                                     INDUCTOR_ABLATE_STRICT="1"),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "RAN" in proc.stdout and "inductor_ablate" not in proc.stderr, proc.stderr


def test_a_variable_in_the_wrong_case_gets_did_you_mean(script):
    proc = subprocess.run([sys.executable, str(script)], env=clean_env(inductor_no_fuse="1"), capture_output=True,
                          text=True, timeout=600)
    assert_one_line_error(proc, "inductor_no_fuse is not a variable of inductor_ablate (did you mean INDUCTOR_NO_FUSE?)")
    assert "RAN" not in proc.stdout


def test_a_strict_check_inside_a_compile_under_run_is_one_line(tmp_path):
    """The UsageError a strict check raises inside a compile reaches `run` wrapped by Dynamo and
    Inductor: the command still prints it as one line, exit 2."""
    path = tmp_path / "model.py"
    path.write_text(SCOPED)
    proc = cli("run", "--no-fuse", "--ops", "notanop", str(path), env=clean_env(INDUCTOR_ABLATE_STRICT="1"))
    lines = proc.stderr.strip().splitlines()  # `run` names the switches it set first, on a line of its own
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0] == "inductor_ablate: INDUCTOR_NO_FUSE=1 INDUCTOR_ABLATE_OPS=notanop" and len(lines) == 2, lines
    assert lines[1].startswith("inductor_ablate: error: INDUCTOR_ABLATE_OPS=notanop (nearest ops: "), lines
