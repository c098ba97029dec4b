"""The ablation study's plumbing on tiny models (CPU): config mapping, n/a rows, accuracy failures,
resume, shards and merge.  Timings here mean nothing; the structure does."""
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

import pytest

from conftest import clean_env
from inductor_ablate import rows as configs, stats
from inductor_ablate.views import terminal
from inductor_ablate.results import merge
from inductor_ablate.bench.runner import plan
from inductor_ablate.errors import UsageError
from inductor_ablate.switches import FUSION_KINDS

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
SUITE = "bench_fixtures:suite"


def bench_env(tmp_path, **more):
    """A bench subprocess's environment: the test suite importable, Inductor's cache under tmp_path."""
    return clean_env(PYTHONPATH=TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""),
                     TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor-cache"), **more)


def bench(*args, tmp_path):
    env = bench_env(tmp_path)
    extra = ["--no-progress"] if args[0] == "bench" else []
    return subprocess.run([sys.executable, "-m", "inductor_ablate", *args, *extra], env=env,
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)


def cells(path):
    with open(path) as f:
        return {(c["model"], c["config"]): c for c in json.load(f)["cells"]}


def require_packages(*modules):
    """Skip unless each module imports: absent, or installed but built for another torch (a torchvision
    wheel for another torch raises at import), the skip says which and why."""
    from inductor_ablate.bench.models import import_package

    for module in modules:
        try:
            import_package(module)
        except ImportError as exc:
            pytest.skip(str(exc))


def timed(model, config, cache, wall):
    """A timed CPU inference cell of an earlier run, as --history and --budget read it."""
    return dict(suite="s", model=model, config=config, device="cpu", dtype="float32", mode="inference",
                status="ok", cache=cache, wall_s=wall)


def history_file(tmp_path, cells):
    path = tmp_path / "history.json"
    path.write_text(json.dumps({"meta": {}, "cells": cells}))
    return path


def test_config_mapping():
    names = configs.resolve("paper")
    assert names == ["all", "no-loop-reorder", "no-matmul-templates", "no-freezing", "no-pattern-matching",
                     "no-cudagraphs", "no-fusion", "no-inlining", "no-fusion-no-inlining"]
    assert set(configs.resolve("kinds")) - {"all"} == {f"no-fusion-{k}" for k in FUSION_KINDS}
    assert configs.CONFIGS["no-fusion-no-inlining"].switches == {"no_fuse": True, "no_inline": True}
    assert configs.CONFIGS["one-kernel-per-op"].switches == {"one_kernel_per_op": True}
    assert configs.CONFIGS["no-cpp-grouping"].switches == {"flush_every_node": True}
    assert configs.CONFIGS["no-matmul-templates"].inductor == {"max_autotune_gemm": False}
    assert configs.all_inductor("cuda", "inference")["triton.cudagraphs"] is True
    assert configs.all_inductor("cuda", "training")["max_autotune_gemm"] is True
    assert "freezing" not in configs.all_inductor("cpu", "training")
    assert "max_autotune_gemm" not in configs.all_inductor("cpu", "inference")
    assert configs.all_inductor("cpu", "inference", cpu_templates=True)["max_autotune_gemm"] is True
    assert configs.CONFIGS["no-matmul-templates"].not_applicable("cpu", "inference").startswith("cpu `all` has no")
    assert configs.CONFIGS["no-matmul-templates"].not_applicable("cpu", "inference", cpu_templates=True) is None
    # rows that cannot apply say so
    assert configs.CONFIGS["no-cudagraphs"].not_applicable("cpu", "inference") == "cuda only"
    assert configs.CONFIGS["no-freezing"].not_applicable("cuda", "training") == "inference only"
    assert configs.CONFIGS["no-cpp-grouping"].not_applicable("cuda", "inference") == "cpu only"
    assert configs.CONFIGS["no-fusion"].not_applicable("cpu", "training") is None
    with pytest.raises(UsageError, match="unknown config"):
        configs.resolve("no-such-row")


def test_fusion_kinds_together_are_one_row_named_in_kind_order():
    """`no-fusion-KIND+KIND` vetoes the kinds together (INDUCTOR_NO_FUSE=KIND,KIND), under one
    name whatever order they are given in, and applies only where every kind can occur."""
    assert configs.resolve("no-fusion-horizontal+vertical,no-fusion-vertical+horizontal") == \
        ["all", "no-fusion-vertical+horizontal"]
    both = configs.by_name("no-fusion-horizontal+vertical")
    assert both.switches == {"no_fuse": "vertical,horizontal"} and both.source == "ours"
    assert both.not_applicable("cpu", "inference") is None
    assert configs.by_name("no-fusion-vertical+mix-order").not_applicable("cpu", "inference") == "cuda only"
    assert configs.by_name("no-fusion-mix-order+outer-loop").not_applicable("cuda", "inference") == \
        "no device has all of mix-order, outer-loop"
    assert configs.by_name("no-fusion-vertical") is configs.CONFIGS["no-fusion-vertical"]
    for bad in ("no-fusion-vertical+sideways", "no-fusion-vertical+vertical", "no-fusion-+"):
        with pytest.raises(UsageError, match="or fusion kinds together, no-fusion-KIND\\+KIND"):
            configs.by_name(bad)


def test_kinds_together_have_nothing_to_take_out_only_where_all_made_none_of_them():
    """A row of several kinds has nothing to take out on a model only if `all` made no fusion of
    any of them (the kinds are a comma list in the switch, not one kind's name)."""
    def cell(model, config, fusions=None):
        return dict(suite="s", model=model, device="cpu", dtype="float32", mode="inference", config=config,
                    cell_repeat=0, status="ok", eager_ms=2.0, compiled_ms=1.0, speedup=2.0, code_hash=config,
                    **({"fusions": fusions} if fusions is not None else {}))

    cells_ = [cell("made_vertical", "all", {"vertical": 3}), cell("made_vertical", "no-fusion-vertical+horizontal", {}),
              cell("made_none", "all", {"epilogue": 1}), cell("made_none", "no-fusion-vertical+horizontal", {})]
    row = next(r for r in stats.summary_rows(cells_) if r["config"] == "no-fusion-vertical+horizontal")
    assert row["nothing_to_take_out"] == 1 and row["source"] == "ours"
    assert "(no-fusion-vertical+horizontal: `all` made no vertical or horizontal fusion on 1 of its 2 models" \
        in terminal.summary_table(cells_)


def test_plan_interleaves_and_shards_partition_the_matrix():
    full = plan(["a", "b"], ["all", "no-fusion", "no-inlining"], suite="s", device="cpu", dtype="float32",
                mode="inference")
    assert len(full) == 6 and {c["model"] for c in full[:3]} == {"a"}
    shards = [plan(["a", "b"], ["all", "no-fusion", "no-inlining"], suite="s", device="cpu", dtype="float32",
                   mode="inference", shard=(k, 3)) for k in (1, 2, 3)]
    assert sorted(map(str, sum(shards, []))) == sorted(map(str, full))


def test_list_prints_the_mapping(tmp_path):
    proc = bench("bench", "--list", tmp_path=tmp_path)
    assert proc.returncode == 0
    assert "no-fusion-no-inlining" in proc.stdout and "no_fuse=True, no_inline=True" in proc.stdout


def test_matrix_accuracy_failure_na_rows_and_resume(tmp_path):
    results = tmp_path / "r.json"
    proc = bench("bench", "--suite", SUITE, "--models", "tiny,random_output", "--configs",
                 "all,no-fusion,no-cudagraphs", "--repeat", "3", "--json", str(results),
                 "--csv", str(tmp_path / "r.csv"), tmp_path=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the accuracy failure makes the run fail
    got = cells(results)
    assert got[("tiny", "all")]["status"] == "ok" and got[("tiny", "all")]["speedup"] > 0
    assert got[("tiny", "no-fusion")]["kernels"] >= got[("tiny", "all")]["kernels"]
    assert got[("random_output", "all")]["status"] == "accuracy"
    assert got[("tiny", "no-cudagraphs")]["status"] == "n/a"
    # the failure and the n/a row are visible in the tables, not dropped
    assert "ACCURACY" in proc.stdout and "random_output: accuracy" in proc.stdout
    assert "no-cudagraphs" in proc.stdout and "n/a" in proc.stdout
    assert (tmp_path / "r.csv").read_text().count("\n") == 1 + 6
    # a fresh run's n/a cells are not "already done"
    assert "already in" not in proc.stderr and "2 of 6 cells n/a here" in proc.stderr, proc.stderr

    # resume: mark a finished cell; a second run must keep it and run nothing again
    data = json.loads(results.read_text())
    for c in data["cells"]:
        if (c["model"], c["config"]) == ("tiny", "all"):
            c["marker"] = "kept"
    results.write_text(json.dumps(data))
    proc = bench("bench", "--suite", SUITE, "--models", "tiny,random_output", "--configs",
                 "all,no-fusion,no-cudagraphs", "--json", str(results), tmp_path=tmp_path)
    assert "4 of 6 cells already in" in proc.stderr and "2 of 6 cells n/a here" in proc.stderr, proc.stderr
    assert cells(results)[("tiny", "all")]["marker"] == "kept"
    # a resumed study is one study: its wall is the sum of its runs' walls
    meta = json.loads(results.read_text())["meta"]
    assert len(meta["pieces"]) == 2 and meta["pieces"][0]["wall_s"] > 0, meta["pieces"]  # the second ran nothing
    assert meta["wall_s"] == round(sum(p["wall_s"] for p in meta["pieces"]), 1) and meta["gpus"] == 0
    assert f"{meta['wall_s']:.0f} s in 2 runs" in proc.stdout


def test_progress_into_a_log_is_a_line_per_cell_not_a_bar(capsys):
    """Issue 79: into a file that is not a terminal, tqdm wrote 90 carriage-return updates."""
    from inductor_ablate.bench import runner

    bar = runner._progress(2, True)  # pytest captures stderr: not a terminal
    assert isinstance(bar, runner._PlainBar)
    bar.set_description("tiny all")
    bar.update(1)
    err = capsys.readouterr().err
    assert err == "[1/2] tiny all\n"


def test_shards_then_merge(tmp_path):
    """One share by --shard K/N, the other by PyTorch's 0-based --total-partitions/--partition-id."""
    parts = []
    for k in (1, 2):
        out = tmp_path / f"part{k}.json"
        share = ["--shard", "1/2"] if k == 1 else ["--total-partitions", "2", "--partition-id", "1"]
        proc = bench("bench", "--suite", SUITE, "--models", "tiny,tiny2", "--configs", "all,no-inlining",
                     "--repeat", "3", *share, "--json", str(out), tmp_path=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        page = tmp_path / f"part{k}.html"  # bench writes the report page beside its results file
        assert f"report: {page}" in proc.stdout and "tiny" in page.read_text()
        parts.append(str(out))
    assert len(cells(parts[0])) == 2 and len(cells(parts[1])) == 2
    assert len({m for m, _ in cells(parts[0])} | {m for m, _ in cells(parts[1])}) == 2  # whole models each
    merged = tmp_path / "merged.json"
    proc = bench("merge", *parts, "--json", str(merged), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert set(cells(merged)) == {(m, c) for m in ("tiny", "tiny2") for c in ("all", "no-inlining")}
    assert f"report: {tmp_path / 'merged.html'}" in proc.stdout and "tiny2" in (tmp_path / "merged.html").read_text()
    assert "geomean speedup over eager (2 models, 1 process(es) per cell; eager time: pooled)" in proc.stdout
    proc = bench("merge", str(merged), "--json", str(tmp_path / "again.json"), "--baseline", "in-cell", tmp_path=tmp_path)
    assert proc.returncode == 0 and "eager time: in-cell" in proc.stdout, proc.stderr


def test_baselines_divide_by_the_pooled_or_the_cells_own_eager_time():
    def cell(config, eager, compiled):
        return dict(suite="s", model="m", device="cuda", dtype="float32", mode="inference", config=config,
                    status="ok", eager_ms=eager, compiled_ms=compiled, speedup=eager / compiled)

    rows = [cell("all", 1.0, 0.5), cell("no-fusion", 2.0, 1.0), cell("no-inlining", 3.0, 1.0)]
    pooled = {c["config"]: c for c in stats.apply_baseline(rows)}
    assert pooled["all"]["speedup"] == pytest.approx(4.0)  # median eager 2.0 / 0.5
    assert pooled["no-inlining"]["speedup"] == pytest.approx(2.0) and pooled["no-inlining"]["speedup_in_cell"] == 3.0
    in_cell = {c["config"]: c for c in stats.apply_baseline(rows, "in-cell")}
    assert [in_cell[k]["speedup"] for k in ("all", "no-fusion", "no-inlining")] == [2.0, 2.0, 3.0]
    assert in_cell["all"]["speedup_pooled"] == pytest.approx(4.0)
    assert rows[0]["speedup"] == 2.0  # the inputs are not modified
    fastest = {c["config"]: c for c in stats.apply_baseline(rows, "fastest")}
    assert [fastest[k]["speedup"] for k in ("all", "no-fusion", "no-inlining")] == [2.0, 1.0, 1.0]  # eager 1.0
    # a share of `all` (row over `all`, one eager time) is the same under pooled and fastest
    assert fastest["no-fusion"]["speedup"] / fastest["all"]["speedup"] == pytest.approx(
        pooled["no-fusion"]["speedup"] / pooled["all"]["speedup"])
    with pytest.raises(ValueError, match="in-cell"):
        stats.apply_baseline(rows, "mean")


def test_eager_spread_names_the_model_whose_eager_time_moved_most_between_processes():
    def cell(model, eager, status="ok"):
        return dict(suite="s", model=model, device="cuda", dtype="float32", mode="inference", config="all",
                    status=status, eager_ms=eager, compiled_ms=1.0)

    assert terminal.eager_spread([cell("m0", 1.0)]) == "eager: no model timed eager in more than one process"
    line = terminal.eager_spread([cell("m0", 1.0), cell("m0", 1.1), cell("m1", 10.0), cell("m1", 20.0),
                                cell("m1", 40.0, status="accuracy")])  # a failed cell's eager is not counted
    assert line.startswith("eager: 2 models timed eager in 2+ processes"), line
    # medians 1.05 and 15 over fastest 1.0 and 10: 5% and 50% above, a median of 27.5%
    assert "sits a median of 27.5% above its fastest process, at most 50.0% (m1)" in line, line
    assert "slowest over fastest at most 100.0% (m1: 10 to 20 ms)" in line, line


def test_sigterm_stops_the_run_resumably_and_kills_the_running_cell(tmp_path):
    results, pidfile = tmp_path / "r.json", tmp_path / "cell.pid"
    env = bench_env(tmp_path, IA_TEST_PIDFILE=str(pidfile))
    history = history_file(tmp_path, [timed("tiny", "all", "cold", 2.0)])  # --budget prices each cell from it
    proc = subprocess.Popen([sys.executable, "-m", "inductor_ablate", "bench", "--suite", SUITE, "--models", "tiny,sleepy",
                             "--configs", "all", "--repeat", "3", "--json", str(results), "--no-progress",
                             "--budget", "3000", "--history", str(history)],
                            env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 600
        while not pidfile.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert pidfile.exists(), proc.communicate()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # failed: leave no hanging run or cell behind
            proc.kill()
            if pidfile.exists():
                subprocess.run(["kill", "-9", pidfile.read_text()], capture_output=True)
    assert proc.returncode == 130, out + err
    assert "interrupted (SIGTERM): 1 cells saved" in err and "the same command resumes" in err
    assert cells(results)[("tiny", "all")]["status"] == "ok"
    cut = json.loads(results.read_text())["meta"]["cuts"]  # what prices the hanging cell next time
    piece, = json.loads(results.read_text())["meta"]["pieces"]  # the interrupted run's wall counts too
    assert piece["wall_s"] >= cells(results)[("tiny", "all")]["wall_s"], piece
    assert [(c["model"], c["config"], c["cache"]) for c in cut] == [("sleepy", "all", "cold")] and cut[0]["cut_s"] >= 0
    # priced as --estimate would (from the history and tiny's cell of this run), with nearly all of the budget left
    assert cut[0]["priced_s"] > 0 and 2000 < cut[0]["left_s"] <= 3000, cut
    assert (f"cut: sleepy / all (cold cache), {cut[0]['cut_s']:.0f} s into its process (priced at "
            f"{cut[0]['priced_s']:.0f} s, with {cut[0]['left_s']:.0f} s of --budget left at its start)") in err, err
    cell_pid = int(pidfile.read_text())
    for _ in range(50):  # the hanging cell process is gone (killed, then reaped by its forkserver)
        if not os.path.exists(f"/proc/{cell_pid}") or "zombie" in open(f"/proc/{cell_pid}/status").read():
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"cell process {cell_pid} still running after the run was stopped")


def test_a_stop_while_a_cell_process_exits_counts_the_wait_in_the_wall(tmp_path):
    """On an H100 a piece's recorded wall ended about 50 s before `timeout` stopped it, likely in the
    run's wait for cell processes to exit, where a stop skipped the last save and Python's exit then
    waited for them.  A SIGTERM in that wait still kills them, and its seconds count in the wall."""
    results = tmp_path / "r.json"
    run = subprocess.Popen([sys.executable, "-m", "inductor_ablate", "bench", "--suite", SUITE, "--models", "slow_exit",
                            "--configs", "all", "--repeat", "3", "--json", str(results), "--no-progress"],
                           env=bench_env(tmp_path), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and run.poll() is None and \
                not (results.exists() and ("slow_exit", "all") in cells(results)):
            time.sleep(0.1)
        landed = time.time()
        time.sleep(2)  # within the run's wait for the cell's exit
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130 and "interrupted (SIGTERM)" in err, out + err
    assert time.time() - landed < 15, "the run waited for the cell's exit"  # which sleeps 60 s
    piece, = json.loads(results.read_text())["meta"]["pieces"]  # the 2 s of waiting count
    assert piece["wall_s"] >= cells(results)[("slow_exit", "all")]["wall_s"] + 1.5, piece


def test_bad_shard_jobs_and_skip_done_are_rejected_in_one_line(tmp_path):
    (tmp_path / "not-results.json").write_text("{}")
    (tmp_path / "a-file").write_text("")
    for args, expected in [(("--shard", "3/2"), "K/N"),
                           (("--skip-done", str(tmp_path / "missing.json")), "missing.json: no such file"),
                           (("--skip-done", str(tmp_path / "not-results.json")), "written by `bench` or `merge`"),
                           (("--jobs", "0"), "--jobs 0: expected 1 or more")]:
        proc = bench("bench", "--models", "tiny", "--suite", SUITE, *args, tmp_path=tmp_path)
        assert proc.returncode == 2 and expected in proc.stderr, (args, proc.stderr)
        assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_training_mode_checks_gradients(tmp_path):
    results = tmp_path / "t.json"
    proc = bench("bench", "--suite", SUITE, "--models", "tiny", "--configs", "all,no-freezing", "--mode", "training",
                 "--repeat", "3", "--json", str(results), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = cells(results)
    assert got[("tiny", "all")]["status"] == "ok" and got[("tiny", "all")]["graphs"] >= 2  # forward + backward
    assert got[("tiny", "no-freezing")]["status"] == "n/a"


def test_same_code_detection_and_cell_repeats(tmp_path):
    """`tiny` has no template and no reduction: taking out prologue fusion cannot change its code;
    one kernel per op does.  (Taking out all fusion does not either: its pointwise ops are one node,
    inlined at lowering.)  Each cell runs in two processes (--cell-repeats 2)."""
    results = tmp_path / "r.json"
    proc = bench("bench", "--suite", SUITE, "--models", "tiny", "--configs", "one-kernel-per-op,no-fusion-prologue",
                 "--repeat", "3", "--cell-repeats", "2", "--json", str(results), "--csv", str(tmp_path / "r.csv"),
                 tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(results.read_text())
    by = {}
    for c in data["cells"]:
        by.setdefault(c["config"], []).append(c)
    assert sorted(c["cell_repeat"] for c in by["all"]) == [0, 1]
    hashes = {name: {c["code_hash"] for c in rows} for name, rows in by.items()}
    assert all(len(h) == 1 for h in hashes.values()), hashes  # each config: the same code in both processes
    assert hashes["no-fusion-prologue"] == hashes["all"] != hashes["one-kernel-per-op"]
    summary = {r["config"]: r for r in data["summary"]}
    assert summary["no-fusion-prologue"]["same_code"] == 1 and not summary["no-fusion-prologue"]["significant"]
    assert summary["one-kernel-per-op"]["same_code"] == 0 and summary["all"]["repeats"] == 2
    line = next(l for l in proc.stdout.splitlines() if l.startswith("no-fusion-prologue"))
    assert "same code" in line and "1/1" in line, line
    assert "=all" in proc.stdout  # the per-model table marks the cell
    assert (tmp_path / "r-summary.csv").read_text().splitlines()[0].startswith("suite,device,dtype,mode,config")


def _synthetic(speedups: dict[str, list[list[float]]]) -> list[dict]:
    """Cells for models m0.. with the given in-cell speedups per config (one list per model: its repeats)."""
    rows = []
    for config, per_model in speedups.items():
        for i, reps in enumerate(per_model):
            for r, s in enumerate(reps):
                rows.append(dict(suite="s", model=f"m{i}", config=config, device="cpu", dtype="float32",
                                 mode="inference", cell_repeat=r, status="ok", eager_ms=s, compiled_ms=1.0,
                                 speedup=s, code_hash=f"{config}{i}"))
    return rows


def test_intervals_bracket_the_estimate_and_mark_only_real_changes():
    base = [[1.5, 1.6], [2.0, 1.9], [1.2, 1.25], [3.0, 2.8], [1.1, 1.05]]
    noise = [[x * 1.01 for x in reps] for reps in base]
    faster = [[x * 1.5 for x in reps] for reps in base]
    rows = {r["config"]: r for r in stats.summary_rows(_synthetic(
        {"all": base, "no-fusion": noise, "no-inlining": faster}), baseline="in-cell")}
    for r in rows.values():
        assert r["speedup_lo"] <= r["speedup"] <= r["speedup_hi"]
    assert rows["no-fusion"]["vs_all_lo"] < 0.05 and not rows["no-fusion"]["significant"]
    assert rows["no-inlining"]["vs_all_lo"] > 0 and rows["no-inlining"]["significant"]
    assert rows["no-inlining"]["vs_all_lo"] <= rows["no-inlining"]["vs_all"] <= rows["no-inlining"]["vs_all_hi"]
    # the same rows again: the same intervals (seeded), so reports are reproducible
    again = {r["config"]: r for r in stats.summary_rows(_synthetic(
        {"all": base, "no-fusion": noise, "no-inlining": faster}), baseline="in-cell")}
    assert again["no-inlining"]["vs_all_lo"] == rows["no-inlining"]["vs_all_lo"]
    table = terminal.summary_table(_synthetic({"all": base, "no-inlining": faster}), baseline="in-cell")
    assert "*" in next(l for l in table.splitlines() if l.startswith("no-inlining"))


def test_list_models_names_every_suite_and_what_it_needs(tmp_path):
    from inductor_ablate.bench.models import MODEL_NAMES, embedded

    assert tuple(embedded()) == MODEL_NAMES["embedded"]  # the listing is the suite
    proc = bench("bench", "--list-models", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for suite, names in MODEL_NAMES.items():
        assert suite in proc.stdout and all(f"  {n}\n" in proc.stdout + "\n" for n in names)
    assert "embedded     (torch: installed)" in proc.stdout


def test_a_suite_package_that_does_not_load_is_named_in_one_line_and_its_models_are_na(tmp_path, monkeypatch):
    """A torchvision built for another torch is installed but raises RuntimeError at import.  Alone,
    its suite is refused in one line that names the package, the error, where it raised and what to
    install; in the real group its models are n/a with that line; --list-models says it does not load.
    A package whose dependency is missing (timm here) is named the same way, with the dependency to install."""
    for package, source in (("torchvision", "# a build for another torch\n"
                                            "raise RuntimeError('operator torchvision::nms does not exist')\n"),
                            ("timm", "import a_dependency_not_installed\n")):
        (tmp_path / "fake" / package).mkdir(parents=True)
        (tmp_path / "fake" / package / "__init__.py").write_text(source)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    alone = bench("bench", "--suite", "torchvision", "--device", "cpu", tmp_path=tmp_path)
    listed = bench("bench", "--list-models", tmp_path=tmp_path)
    group = bench("bench", "--suite", "real", "--models", "resnet18", "--configs", "all", "--device", "cpu",
                  "--json", str(tmp_path / "r.json"), tmp_path=tmp_path)
    why = ("is installed but does not load with torch", "RuntimeError: operator torchvision::nms does not exist "
           "(raised in torchvision/__init__.py:2)", "install the torchvision release made for torch")
    assert alone.returncode == 2 and "Traceback" not in alone.stderr, alone.stderr
    assert alone.stderr.count("\n") == 1 and alone.stderr.startswith("inductor_ablate: error: suite 'torchvision': torchvision ")
    assert all(w in alone.stderr for w in why), alone.stderr
    line = next(l for l in listed.stdout.splitlines() if l.startswith("torchvision "))
    assert "DOES NOT LOAD" in line and all(w in line for w in why), line
    line = next(l for l in listed.stdout.splitlines() if l.startswith("timm "))
    assert ("DOES NOT LOAD: timm" in line and "ModuleNotFoundError: No module named 'a_dependency_not_installed' "
            "(raised in timm/__init__.py:1); pip install a_dependency_not_installed" in line), line
    assert group.returncode == 0 and "Traceback" not in group.stderr, group.stderr
    na = cells(tmp_path / "r.json")[("resnet18", "all")]
    assert na["status"] == "n/a" and all(w in na["message"] for w in why), na


def test_shared_caches_autotune_once_per_model_but_never_share_a_graph(tmp_path):
    """Shared caches (the default): a model's first cell is `all` and runs cold; its other cells run
    warm in the same Inductor directory.  With the FX-graph and AOTAutograd caches forced on, a config
    that changes the code (no-inlining) still never gets `all`'s artifact, and a repeat of `all` does
    not get its own earlier one: every cell's graph artifacts live in its own directory.  (Training:
    inference freezes parameters, and Inductor does not cache frozen graphs.)"""
    results, shared = tmp_path / "r.json", tmp_path / "caches"
    env_on = dict(TORCHINDUCTOR_FX_GRAPH_CACHE="1", TORCHINDUCTOR_AUTOGRAD_CACHE="1")
    old = {k: os.environ.get(k) for k in env_on}
    os.environ.update(env_on)
    try:
        proc = bench("bench", "--suite", SUITE, "--models", "tiny", "--configs", "no-inlining", "--repeat", "3",
                     "--mode", "training", "--cell-repeats", "2", "--json", str(results), "--cache-dir", str(shared), tmp_path=tmp_path)
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads(results.read_text())["cells"]
    order = sorted(rows, key=lambda c: (c["cell_repeat"], c["cache"] != "cold"))
    assert (order[0]["config"], order[0]["cache"]) == ("all", "cold")
    assert [c["cache"] for c in order[1:]] == ["warm"] * 3
    assert all(c["graph_cache_hits"] == 0 for c in rows), rows
    by = {(c["config"], c["cell_repeat"]): c["code_hash"] for c in rows}
    assert by[("all", 0)] == by[("all", 1)] != by[("no-inlining", 0)] == by[("no-inlining", 1)]
    # the shared directory holds the model's kernels, and no graph artifact of any cell
    model_dirs = os.listdir(shared)
    assert model_dirs == ["tiny-float32-training-cpu"], model_dirs
    kept = [os.path.join(d, f) for d, _, files in os.walk(shared / model_dirs[0]) for f in files]
    assert any(f.endswith(".so") for f in kept), kept
    assert not any("fxgraph" in f or "aotautograd" in f for f in kept), kept
    assert "compile: 1 cold cells" in proc.stdout and "time split over 4 cells" in proc.stdout


def test_isolated_caches_start_every_cell_cold(tmp_path):
    results = tmp_path / "r.json"
    proc = bench("bench", "--suite", SUITE, "--models", "tiny", "--configs", "no-inlining", "--repeat", "3",
                 "--caches", "isolated", "--json", str(results), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {c["cache"] for c in json.loads(results.read_text())["cells"]} == {"cold"}
    assert not (tmp_path / "r.inductor-cache").exists()  # nothing left behind


def test_shared_plan_runs_all_first_and_shards_whole_models():
    kw = dict(suite="s", device="cpu", dtype="float32", mode="inference", all_first=True)
    configs_ = ["no-fusion", "all", "no-inlining", "one-kernel-per-op"]
    full = plan(["a", "b", "c"], configs_, **kw, repeats=2)
    for m in "abc":
        assert [c for c in full if c["model"] == m][0]["config"] == "all"
    shards = [plan(["a", "b", "c"], configs_, **kw, repeats=2, shard=(k, 2)) for k in (1, 2)]
    assert {c["model"] for c in shards[0]} == {"a", "c"} and {c["model"] for c in shards[1]} == {"b"}
    assert sorted(map(str, sum(shards, []))) == sorted(map(str, full))
    # fewer models than shards: cells are dealt out, so no shard idles
    assert all(plan(["a"], configs_, **kw, shard=(k, 2)) for k in (1, 2))


def test_merge_pools_runs_of_other_days_as_repeats_and_counts_a_copied_cell_once(tmp_path):
    def cell(model, config, eager, compiled, code="h"):
        return dict(suite="s", model=model, device="cuda", dtype="bfloat16", mode="inference", config=config,
                    status="ok", eager_ms=eager, compiled_ms=compiled, speedup=eager / compiled, code_hash=code,
                    compile_s=eager * 7, cell_s=compiled * 11)

    day1 = [cell("m", "all", 2.0, 1.0), cell("m", "no-fusion", 2.0, 1.5)]
    day2 = [day1[0], cell("m", "all", 2.2, 1.0, "h2"), cell("n", "all", 3.0, 1.0)]  # a copy, a rerun, a new model
    paths = []
    for i, rows in enumerate((day1, day2)):
        paths.append(str(tmp_path / f"day{i}.json"))
        with open(paths[-1], "w") as f:
            json.dump({"meta": {}, "cells": rows}, f)
    kept = {(c["model"], c["config"], c["cell_repeat"] if "cell_repeat" in c else 0): c for c in merge(paths)["cells"]}
    assert set(kept) == {("m", "all", 0), ("m", "no-fusion", 0), ("n", "all", 0)}  # without pooling: one each
    pooled = merge(paths, pool=True)["cells"]
    assert sorted((c["model"], c["config"], c.get("cell_repeat", 0)) for c in pooled) == [
        ("m", "all", 0), ("m", "all", 1), ("m", "no-fusion", 0), ("n", "all", 0)]
    assert next(c for c in pooled if c.get("cell_repeat") == 1)["from_file"] == paths[1]
    rows = {r["config"]: r for r in stats.summary_rows(pooled)}
    assert rows["all"]["repeats"] == 2 and rows["no-fusion"]["repeats"] == 1
    spread = terminal.repeat_spread(pooled)
    assert "1 cells ran in 2+ processes" in spread and "median 10.0%" in spread and "0/1 cells" in spread


def test_merge_leaves_out_one_models_cells_of_one_file_and_refuses_a_pair_that_names_nothing(tmp_path):
    """A model whose cells in one file measured a program since fixed (T5's degenerate training loss)
    is left out of that file only; its cells of the other files, and the file's other models, stay."""
    def cell(model, config, eager, compiled):
        return dict(suite="s", model=model, device="cuda", dtype="bfloat16", mode="training", config=config,
                    status="ok", eager_ms=eager, compiled_ms=compiled, speedup=eager / compiled, compile_s=1.0, cell_s=eager)

    old = [cell("t5", "all", 2.0, 1.0), cell("t5", "no-fusion", 2.0, 1.5), cell("bert", "all", 3.0, 1.0)]
    new = [cell("t5", "all", 2.5, 1.0), cell("bert", "all", 3.3, 1.0)]
    paths = []
    for name, rows in (("old", old), ("new", new)):
        paths.append(str(tmp_path / f"{name}.json"))
        with open(paths[-1], "w") as f:
            json.dump({"meta": {}, "cells": rows}, f)
    merged = merge(paths, pool=True, leave_out=[(paths[0], "t5")])
    got = sorted((c["model"], c["config"], c["from_file"] == paths[0]) for c in merged["cells"])
    assert got == [("bert", "all", False), ("bert", "all", True), ("t5", "all", False)], got
    assert merged["meta"]["left_out"] == [f"{paths[0]}:t5"]
    with pytest.raises(UsageError, match="not one of the files merged"):
        merge(paths[:1], leave_out=[(paths[1], "t5")])
    with pytest.raises(UsageError, match="holds no cell of model 'gpt2'"):
        merge(paths, leave_out=[(paths[1], "gpt2")])
    proc = bench("merge", *paths, "--json", str(tmp_path / "m.json"), "--leave-out", "t5", tmp_path=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].endswith("expected FILE:MODEL"), proc.stderr


def test_the_own_model_example_of_the_docs_runs_as_written(tmp_path):
    """docs/your-model.md: its my_models.py, from the directory that holds it, trains
    under `all` and a switch, accuracy-checked, with no PYTHONPATH of ours needed for the module."""
    with open(os.path.join(ROOT, "docs", "your-model.md")) as f:
        doc = f.read()
    block = doc.split("<!-- tests/test_bench.py runs this block as my_models.py -->\n```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "my_models.py").write_text(block)
    results = tmp_path / "r.json"
    proc = bench("bench", "--suite", "my_models:suite", "--configs", "no-fusion", "--mode", "training",
                 "--dtype", "bfloat16", "--repeat", "3", "--json", str(results), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = cells(results)
    assert set(got) == {("mlp_block", "all"), ("mlp_block", "no-fusion")}
    assert all(c["status"] == "ok" and c["kernels"] > 0 for c in got.values()), got
    assert got[("mlp_block", "no-fusion")]["code_hash"] != got[("mlp_block", "all")]["code_hash"]


def test_cells_count_the_fusions_each_kind_made(tmp_path):
    """Every cell records the scheduler fusions made, by kind, from the decision log: norm_block's
    `all` makes vertical fusions and no horizontal ones, so taking out horizontal fusion changes
    nothing (same code, same counts), and taking out vertical fusion leaves none of that kind."""
    results = tmp_path / "r.json"
    proc = bench("bench", "--models", "norm_block", "--configs", "no-fusion-vertical,no-fusion-horizontal,no-fusion",
                 "--repeat", "3", "--json", str(results), "--csv", str(tmp_path / "r.csv"), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {config: c for (model, config), c in cells(results).items()}
    assert got["all"]["fusions"].get("vertical", 0) > 0 and "horizontal" not in got["all"]["fusions"], got["all"]
    assert got["no-fusion-horizontal"]["fusions"] == got["all"]["fusions"]
    assert got["no-fusion-horizontal"]["code_hash"] == got["all"]["code_hash"]
    assert "vertical" not in got["no-fusion-vertical"]["fusions"] and got["no-fusion"]["fusions"] == {}
    assert got["no-fusion-vertical"]["code_hash"] != got["all"]["code_hash"]
    row = next(l for l in (tmp_path / "r.csv").read_text().splitlines() if ",all," in l)
    assert f"vertical:{got['all']['fusions']['vertical']}" in row
    summary = {r["config"]: r for r in json.loads(results.read_text())["summary"]}
    assert summary["no-fusion-horizontal"]["nothing_to_take_out"] == 1
    assert summary["no-fusion-vertical"]["nothing_to_take_out"] == 0 and summary["no-fusion"]["nothing_to_take_out"] == 0
    assert "no-fusion-horizontal: `all` made no horizontal fusion on 1 of its 1 models" in proc.stdout


def test_a_row_of_kinds_together_vetoes_each_of_them(tmp_path):
    """pointwise_chain's `all` makes vertical and horizontal fusions; the row of the two together
    makes neither, in one cell, and the report prints it after the named rows."""
    results = tmp_path / "r.json"
    proc = bench("bench", "--models", "pointwise_chain", "--configs", "no-fusion-horizontal+vertical,no-fusion-vertical",
                 "--repeat", "3", "--json", str(results), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {config: c for (model, config), c in cells(results).items()}
    assert set(got) == {"all", "no-fusion-vertical", "no-fusion-vertical+horizontal"}
    assert got["all"]["fusions"].get("vertical", 0) > 0 and got["all"]["fusions"].get("horizontal", 0) > 0
    both = got["no-fusion-vertical+horizontal"]
    assert both["status"] == "ok" and not both["fusions"].get("vertical") and not both["fusions"].get("horizontal")
    assert got["no-fusion-vertical"]["fusions"].get("horizontal", 0) > 0  # vertical alone leaves horizontal
    assert both["code_hash"] not in (got["all"]["code_hash"], got["no-fusion-vertical"]["code_hash"])
    summary = [r["config"] for r in json.loads(results.read_text())["summary"]]
    assert summary == ["all", "no-fusion-vertical", "no-fusion-vertical+horizontal"]


def test_same_code_across_pooled_runs_means_code_some_all_process_generated():
    """Pooled runs of other days may hold `all` code autotuned otherwise: a row is the same code
    when every process of it generated code a process of `all` generated, and not when one did not."""
    def cell(model, config, repeat, code, speedup=2.0):
        return dict(suite="s", model=model, device="cuda", dtype="bfloat16", mode="inference", config=config,
                    cell_repeat=repeat, status="ok", eager_ms=speedup, compiled_ms=1.0, speedup=speedup,
                    code_hash=code)

    cells_ = [cell("m", "all", 0, "day1"), cell("m", "all", 1, "day2"),
              cell("m", "no-fusion-prologue", 0, "day2", 2.1),  # ran on day 2 only: day 2's `all` code
              cell("m", "no-fusion-vertical", 0, "day2"), cell("m", "no-fusion-vertical", 1, "other", 1.5)]
    rows = {r["config"]: r for r in stats.summary_rows(cells_)}
    assert rows["no-fusion-prologue"]["same_code"] == 1 and not rows["no-fusion-prologue"]["significant"]
    assert rows["no-fusion-vertical"]["same_code"] == 0
    table = terminal.per_model_table(cells_)
    marked = {line.split()[0] for line in table.splitlines() if line.endswith("[=all]")}
    assert marked == {"no-fusion-prologue", "no-fusion-vertical"}  # the table shows each row's first process


def test_a_row_is_compared_with_the_all_of_its_own_run():
    """Pooled runs: each run's `all` autotuned afresh and ran at its own speed.  A row that generated
    its run's `all` code and ran as fast is no change, however fast another run's `all` was; pooling
    every run's `all` would call it one (the H200 prologue row did, +0.03 [+0.00, +0.06], with no
    prologue fusion on any model).  A run without an `all` of its own falls back to every run's, and
    a warm row is compared with a warm `all` where its run has one."""
    def cell(model, config, run, speedup, code):
        return dict(suite="s", model=model, device="cuda", dtype="bfloat16", mode="inference", config=config,
                    status="ok", eager_ms=1.0, compiled_ms=1.0 / speedup, speedup=speedup, code_hash=code,
                    from_file=run)

    models = [f"m{i}" for i in range(6)]
    cells_ = [c for i, m in enumerate(models) for c in (
        cell(m, "all", "day1", 1.5 + 0.1 * i, f"{m}-day1"),  # an older run's `all`: slower code
        cell(m, "all", "day2", 2.0 + 0.1 * i, f"{m}-day2"),
        cell(m, "no-fusion-prologue", "day2", 2.0 + 0.1 * i, f"{m}-warm"),  # same speed as its run's `all`
        cell(m, "no-fusion", "day2", 1.8 + 0.1 * i, f"{m}-nofuse"))]
    rows = {r["config"]: r for r in stats.summary_rows(cells_)}
    prologue, no_fusion = rows["no-fusion-prologue"], rows["no-fusion"]
    assert prologue["vs_all"] == pytest.approx(0.0, abs=1e-9) and not prologue["significant"]
    assert no_fusion["vs_all"] == pytest.approx(-0.2, abs=0.01) and no_fusion["significant"]
    assert stats.paired_with_all([cells_[2]], cells_[:2]) == [(2.0, 2.0)]
    # the noise floor: processes of one run with one code; another run's same code is not paired
    floor = terminal.same_code_spread(cells_ + [cell("m0", "no-fusion-epilogue", "day2", 2.2, "m0-warm"),
                                              cell("m0", "no-fusion-horizontal", "day1", 1.0, "m0-warm")])
    assert floor.startswith("same code: 1 pairs") and "median of 10.0%" in floor, floor
    orphan = cell("m0", "no-fusion-prologue", "day3", 2.0, "x")  # day 3 ran no `all`: every run's
    assert stats.paired_with_all([orphan], cells_[:2]) == [(2.0, pytest.approx((1.5 * 2.0) ** 0.5))]
    # a warm row and a run with a cold and a warm `all` (--cell-repeats 2): the warm one is its mate
    cold, warm = ({**cell("m0", "all", "day4", s, "x"), "cache": c} for s, c in ((1.5, "cold"), (2.0, "warm")))
    row = {**cell("m0", "no-fusion-prologue", "day4", 2.0, "x"), "cache": "warm"}
    assert stats.paired_with_all([row], [cold, warm]) == [(2.0, 2.0)]
    assert stats.paired_with_all([{**row, "cache": "cold"}], [cold, warm]) == [(2.0, 1.5)]
    assert stats.paired_with_all([row], [cold]) == [(2.0, 1.5)]  # no warm `all`: the run's cold one



def test_one_process_of_one_model_has_no_interval_and_claims_no_change():
    """Bootstrapping one process of one model gives back the point every time: a zero-width
    "interval" that would mark any difference as real.  No interval then, and no `*`; a second
    process gives one."""
    def cell(config, speedup, repeat=0):
        return dict(suite="s", model="m", device="cpu", dtype="float32", mode="inference", config=config,
                    cell_repeat=repeat, status="ok", eager_ms=1.0, compiled_ms=1.0 / speedup, speedup=speedup,
                    code_hash=config + str(repeat))

    once = [cell("all", 2.0), cell("no-fusion", 1.5)]
    rows = {r["config"]: r for r in stats.summary_rows(once)}
    assert rows["no-fusion"]["vs_all"] == pytest.approx(-0.5)
    assert rows["no-fusion"]["vs_all_lo"] is None and rows["no-fusion"]["speedup_lo"] is None
    assert not rows["no-fusion"]["significant"] and "*" not in terminal.summary_table(once).split("no-fusion")[1]
    twice = once + [cell("all", 2.1, 1), cell("no-fusion", 1.4, 1)]
    rows = {r["config"]: r for r in stats.summary_rows(twice)}
    assert rows["no-fusion"]["vs_all_lo"] is not None and rows["no-fusion"]["speedup_lo"] < rows["no-fusion"]["speedup_hi"]


def test_a_change_is_claimed_only_on_six_or_more_paired_processes():
    """Five models that all lose 10%: the bootstrap interval excludes zero, as it always does when
    every measurement falls on one side, but that happens by chance 6% of the time under no change.
    No `*` with five; with six (3% by chance), the change is claimed."""
    def cells_(n):
        return [dict(suite="s", model=f"m{i}", device="cpu", dtype="float32", mode="inference", config=config,
                     status="ok", eager_ms=1.0, compiled_ms=1.0 / s, speedup=s, code_hash=f"{config}{i}")
                for i in range(n) for config, s in (("all", 2.0 + i), ("no-fusion", 0.9 * (2.0 + i)))]

    five = {r["config"]: r for r in stats.summary_rows(cells_(5))}["no-fusion"]
    assert five["vs_all_hi"] < 0 and not five["significant"]
    six = {r["config"]: r for r in stats.summary_rows(cells_(6))}["no-fusion"]
    assert six["vs_all_hi"] < 0 and six["significant"]

def _six_models(loss: float, **extra) -> list[dict]:
    """Six models whose row keeps ``loss`` of `all`'s speedup, every process with ``extra``."""
    return [dict(suite="s", model=f"m{i}", device="cpu", dtype="float32", mode="inference", config=config,
                 status="ok", eager_ms=1.0, compiled_ms=1.0 / s, speedup=s, code_hash=f"{config}{i}", **extra)
            for i in range(6) for config, s in (("all", 2.0 + i), ("no-fusion", loss * (2.0 + i)))]


def test_no_star_from_a_busy_machine_from_noise_or_from_mostly_same_code():
    """Issue 66: a star only where nothing says the change could be the machine.  The same six
    models that earn a star lose it when one process was timed on a busy machine, when the change is
    within the noise floor the run measured (two processes of identical code 12% apart), and when
    most models generated `all`'s very code; the terminal table says which."""
    base = {r["config"]: r for r in stats.summary_rows(_six_models(0.9))}["no-fusion"]
    assert base["significant"] and base["claim"] == "star" and base["kept"] == pytest.approx(0.9)
    busy = _six_models(0.9)
    busy[1]["busy"] = True
    row = {r["config"]: r for r in stats.summary_rows(busy)}["no-fusion"]
    assert not row["significant"] and row["claim"] == "busy" and row["busy"] == 1
    assert "no star: rests on a busy process" in terminal.summary_table(busy)
    assert "BUSY MACHINE" in terminal.noise_lead(busy, stats.summary_rows(busy))
    noisy = _six_models(0.9) + [dict(_six_models(0.9)[0], cell_repeat=1, compiled_ms=0.5 / 1.12, speedup=2.24)]
    row = {r["config"]: r for r in stats.summary_rows(noisy)}["no-fusion"]
    assert row["within_noise"] and row["claim"] == "noise" and not row["significant"]
    same = [dict(c, code_hash="same" + c["model"]) if c["model"] in ("m0", "m1", "m2", "m3") else c
            for c in _six_models(0.9)]
    row = {r["config"]: r for r in stats.summary_rows(same)}["no-fusion"]
    assert row["same_code"] == 4 and row["claim"] == "same code" and not row["significant"]


def test_the_terminal_shows_the_share_of_all_kept_as_the_page_does():
    """One metric everywhere: the terminal's column is the share kept (0.90), not a difference of
    speedups, with the interval the page and README show."""
    cells = _six_models(0.9)
    line = next(l for l in terminal.summary_table(cells).splitlines() if l.startswith("no-fusion"))
    assert " 0.90*" in line and "[0.90, 0.90]" in line, line


def test_skip_done_runs_only_what_is_missing_with_each_models_all(tmp_path):
    """--skip-done: cells that ran ok in an earlier file are not planned again; a model with any cell
    left keeps its `all` (the pair of its rows, and what autotunes it); a failed cell runs again."""
    from inductor_ablate.bench.runner import skip_done

    cells_ = plan(["m1", "m2", "m3"], ["all", "no-fusion", "no-inlining"], suite="s", device="cuda",
                  dtype="bfloat16", mode="inference", all_first=True)
    earlier = [dict(c, status="ok") for c in cells_ if c["model"] == "m1"]
    earlier += [dict(c, status="ok" if c["config"] == "all" else "error") for c in cells_ if c["model"] == "m2"]
    path = tmp_path / "earlier.json"
    path.write_text(json.dumps({"meta": {}, "cells": earlier}))
    left = skip_done(cells_, [str(path)])
    assert [(c["model"], c["config"]) for c in left] == [(c["model"], c["config"]) for c in cells_ if c["model"] != "m1"]
    assert left[0]["config"] == "all" and left[3]["config"] == "all"  # each model's first cell still autotunes


def test_skip_done_does_not_run_a_models_all_again_for_its_na_rows_alone(tmp_path):
    """An inference-only row (no-freezing) is n/a in training: a model whose other rows are all done
    has nothing left to time, so its `all` (a cold compile, minutes on a real model) is not planned."""
    from inductor_ablate.bench.runner import skip_done

    cells_ = plan(["m1", "m2"], ["all", "no-fusion", "no-freezing"], suite="s", device="cuda",
                  dtype="bfloat16", mode="training", all_first=True)
    earlier = [dict(c, status="ok" if c["config"] != "no-freezing" else "n/a") for c in cells_ if c["model"] == "m1"]
    earlier += [dict(c, status="ok") for c in cells_ if c["model"] == "m2" and c["config"] == "all"]
    path = tmp_path / "earlier.json"
    path.write_text(json.dumps({"meta": {}, "cells": earlier}))
    left = skip_done(cells_, [str(path)])
    assert sorted((c["model"], c["config"]) for c in left) == sorted([
        ("m1", "no-freezing"), ("m2", "all"), ("m2", "no-fusion"), ("m2", "no-freezing")])


def test_estimate_prices_each_cell_from_history_and_runs_nothing(tmp_path):
    """--estimate: a model's first cell at its cold time, the others at their warm time, a model
    without history at every model's median, each with its basis; on a machine without the device;
    nothing is run or written.  A history without that device and mode is refused in one line."""
    def row(model, config, cache, wall, device="cuda", mode="training"):
        return dict(suite="s", model=model, config=config, device=device, dtype="bfloat16", mode=mode,
                    status="ok", cache=cache, wall_s=wall)
    history = tmp_path / "history.json"
    history.write_text(json.dumps({"meta": {}, "cells": [
        row("tiny", "all", "cold", 300), row("tiny", "all", "warm", 90), row("tiny", "no-fusion", "warm", 40),
        row("tiny", "no-inlining", "warm", 60), row("tiny2", "all", "cold", 100), row("tiny", "all", "cold", 5, mode="inference")]}))
    study = ("bench", "--suite", SUITE, "--models", "tiny,tiny2,tiny3", "--configs", "all,no-fusion,no-freezing",
             "--mode", "training", "--dtype", "bfloat16", "--device", "cuda:1", "--estimate", str(history))
    proc = bench(*study, tmp_path=tmp_path)  # CUDA's default: 2 processes per cell
    assert proc.returncode == 0 and "total: 12 cells" in proc.stdout, proc.stdout + proc.stderr
    proc = bench(*study, "--cell-repeats", "1", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()}
    # tiny: 300 cold + 40 warm (no-freezing is n/a in training; the inference cell is not its history)
    assert lines["tiny"].split()[1:] == ["2", "340", "this", "cell", "cold", "(1);", "this", "cell", "warm", "(1)"]
    assert lines["tiny2"].split()[1:3] == ["2", "160"] and "every model's warm median" in lines["tiny2"]  # 100 + 60
    assert lines["tiny3"].split()[1:3] == ["2", "260"] and "no history" in lines["tiny3"]  # 200 cold + 60 warm
    assert "total: 6 cells, 3 cold, about 760 s" in proc.stdout and "--jobs 2 about 420 s" in proc.stdout
    assert sorted(os.listdir(tmp_path)) == ["history.json"]
    # one lane under --budget, cells in order [300, 40 | 100, 60 | 200, 60]; at 250 the 300 s cell starts alone
    for budget, runs in (("350", "3 runs of one lane"), ("250", "4 runs of one lane")):
        proc = bench("bench", "--suite", SUITE, "--models", "tiny,tiny2,tiny3", "--configs", "all,no-fusion",
                     "--mode", "training", "--dtype", "bfloat16", "--device", "cuda", "--estimate", str(history),
                     "--budget", budget, "--cell-repeats", "1", tmp_path=tmp_path)
        assert f"under --budget {budget}: {runs}" in proc.stdout, proc.stdout + proc.stderr
    assert "1 cell(s) priced above 250 s start a run alone" in proc.stdout
    proc = bench("bench", "--suite", SUITE, "--models", "tiny", "--device", "cpu", "--estimate", str(history),
                 tmp_path=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no timed inference cell on cpu" in proc.stderr


def test_budget_runs_count_a_model_left_for_the_next_run_while_later_models_fill_this_one():
    """As the runner packs under --budget: with 100 s used and 235 s left, the second model's 238 s
    `all` waits, and the third model's 130 + 100 s run in the first run; the second model's two
    cells make the second run. Stopping at the first cell that does not fit would take three."""
    from inductor_ablate.bench.estimate import _runs

    assert _runs([[100], [238, 80], [130, 100]], 335) == (2, 0)
    # 400 > 335 starts the second run, as its first cell, whatever its price; its 80 s wait for a third
    assert _runs([[100], [400, 80], [130]], 335) == (3, 1)


def estimate_lines(tmp_path, history_cells, *args) -> dict[str, str]:
    """``bench --estimate`` over a history file of CUDA cells, each (model, config, cache, wall,
    mode, dtype): its table's lines by their first word."""
    history = tmp_path / "history.json"
    history.write_text(json.dumps({"meta": {}, "cells": [
        dict(suite="s", model=model, config=config, device="cuda", dtype=dtype, mode=mode, status="ok", cache=cache,
             wall_s=wall) for model, config, cache, wall, mode, dtype in history_cells]}))
    proc = bench("bench", "--suite", SUITE, "--device", "cuda", "--cell-repeats", "1", "--estimate", str(history), *args,
                 tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return {line.split()[0]: line for line in proc.stdout.splitlines()}


def test_estimate_prices_a_model_without_cells_of_this_mode_from_the_other_mode_scaled(tmp_path):
    """A model that never ran in training, but did in inference, is priced from its inference cells
    times the median ratio (training over inference) of the models that ran both, cold and warm
    apart; a model with neither still falls back to every model's median."""
    bf16 = "bfloat16"
    lines = estimate_lines(tmp_path, [
        ("tiny", "all", "cold", 300, "training", bf16), ("tiny", "no-fusion", "warm", 60, "training", bf16),
        ("tiny", "all", "cold", 100, "inference", bf16), ("tiny", "no-fusion", "warm", 30, "inference", bf16),
        ("tiny2", "all", "cold", 50, "inference", bf16), ("tiny2", "no-fusion", "warm", 10, "inference", bf16)],
        "--models", "tiny2,tiny3", "--configs", "all,no-fusion", "--mode", "training", "--dtype", bf16)
    # tiny2: 50 x 3.00 (300/100) cold + 10 x 2.00 (60/30) warm
    assert lines["tiny2"].split()[1:3] == ["2", "170"], lines["tiny2"]
    assert "inference cold cells x 3.00 (the median ratio of 1 models) (1)" in lines["tiny2"]
    assert lines["tiny3"].split()[1:3] == ["2", "360"] and "no history" in lines["tiny3"]  # 300 + 60
    assert "(and 4 inference cells, for a model with none of training)" in lines["estimate"]


def test_estimate_prices_a_model_with_cells_of_another_dtype_only_scaled_by_the_models_with_both(tmp_path):
    """A model that ran in bfloat16 but never in float32 is priced from its bfloat16 cells times the
    median ratio (float32 over bfloat16) of the same cells of the models that ran both, cold and warm
    apart; a model that ran in float32 is priced from those cells alone, unscaled."""
    inf = "inference"
    lines = estimate_lines(tmp_path, [
        ("tiny", "all", "cold", 100, inf, "bfloat16"), ("tiny", "no-fusion", "warm", 30, inf, "bfloat16"),
        ("tiny", "all", "cold", 150, inf, "float32"), ("tiny", "no-fusion", "warm", 60, inf, "float32"),
        ("tiny2", "all", "cold", 50, inf, "bfloat16"), ("tiny2", "no-fusion", "warm", 10, inf, "bfloat16")],
        "--models", "tiny,tiny2", "--configs", "all,no-fusion", "--dtype", "float32")
    assert lines["tiny"].split()[1:3] == ["2", "210"] and "other dtype" not in lines["tiny"], lines["tiny"]
    # tiny2: 50 x 1.50 (150/100) cold + 10 x 2.00 (60/30) warm
    assert lines["tiny2"].split()[1:3] == ["2", "95"], lines["tiny2"]
    assert "this cell cold, other dtype x 1.50 (the median ratio of 1 models) (1)" in lines["tiny2"]
    assert "this cell warm, other dtype x 2.00 (the median ratio of 1 models) (1)" in lines["tiny2"]


def test_estimate_prices_a_row_from_its_own_cell_in_another_dtype_before_the_models_other_rows(tmp_path):
    """A warm row that autotunes again (here tiny's no-freezing, 90 s in bfloat16 against its other
    rows' 30) is priced from that cell scaled, not from the model's other float32 rows (40 s), which
    do not show it; a row without such a cell still takes the model's float32 median."""
    inf = "inference"
    lines = estimate_lines(tmp_path, [
        ("tiny", "all", "cold", 100, inf, "bfloat16"), ("tiny", "no-fusion", "warm", 30, inf, "bfloat16"),
        ("tiny", "no-freezing", "warm", 90, inf, "bfloat16"),
        ("tiny", "all", "cold", 150, inf, "float32"), ("tiny", "no-fusion", "warm", 40, inf, "float32")],
        "--models", "tiny", "--configs", "all,no-fusion,no-freezing,no-inlining", "--dtype", "float32")
    # 150 cold + 40 warm + 90 x 1.33 (40/30) + 40 (the model's float32 warm median)
    assert lines["tiny"].split()[1:3] == ["4", "350"], lines["tiny"]
    assert "this cell warm, other dtype x 1.33 (the median ratio of 1 models) (1)" in lines["tiny"]
    assert "this model's warm cells (1)" in lines["tiny"]


def test_budget_leaves_a_cell_priced_above_the_seconds_left_runs_the_next_models_and_resumes(tmp_path):
    """--budget: tiny's cells are priced at a few seconds and run; tiny2's `all` is priced at an hour
    (from a --history file), so neither it nor tiny2's later cell starts, but tiny3's cheap cells
    after them do; then the run stops as an interrupted run does (exit 130, the finished cells
    kept, no directory of the unstarted cells left); the same command without the budget then runs
    only tiny2's cells."""
    history = history_file(tmp_path, [timed("tiny", "all", "cold", 2), timed("tiny", "no-fusion", "warm", 2),
                                      timed("tiny2", "all", "cold", 3600), timed("tiny3", "all", "cold", 2)])
    results = tmp_path / "r.json"
    common = ("bench", "--suite", SUITE, "--models", "tiny,tiny2,tiny3", "--configs", "all,no-fusion", "--repeat", "3",
              "--json", str(results))
    proc = bench(*common, "--budget", "600", "--history", str(history), tmp_path=tmp_path)
    assert proc.returncode == 130, proc.stderr  # tiny's `all` first: a run's first cell starts whatever its price
    assert "stopped for --budget: tiny2 / all is priced at 3600 s (this cell cold (1))" in proc.stderr
    assert "2 cell(s) not started (the later models' cells that fitted ran)" in proc.stderr
    assert set(cells(results)) == {(m, c) for m in ("tiny", "tiny3") for c in ("all", "no-fusion")}
    cache_root = tmp_path / "r.inductor-cache"  # kept for the resumed run, but holds no directory of tiny2's
    assert not [d for d in os.listdir(cache_root) if d.startswith("tiny2")]
    proc = bench(*common, tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert set(cells(results)) == {(m, c) for m in ("tiny", "tiny2", "tiny3") for c in ("all", "no-fusion")}
    assert "4 of 6 cells already in" in proc.stderr
    # a run's first cell starts whatever its price: else every later run would stop at the same cell
    proc = bench("bench", "--suite", SUITE, "--models", "tiny2", "--configs", "all,no-fusion", "--repeat", "3",
                 "--json", str(tmp_path / "r2.json"), "--budget", "600", "--history", str(history), tmp_path=tmp_path)
    assert proc.returncode == 0 and len(cells(tmp_path / "r2.json")) == 2, proc.stderr


def test_budget_with_picks_banks_the_seconds_left_on_a_models_first_cell_that_did_not_fit(tmp_path):
    """--budget with --picks: once no later cell fits, tiny2's `all` (priced at an hour) starts
    anyway with the seconds left, since a cut keeps what it benchmarked in the picks; here it
    finishes, and tiny2's later cell still waits. Under a minute left, nothing is banked."""
    history = history_file(tmp_path, [timed("tiny", "all", "cold", 2), timed("tiny", "no-fusion", "warm", 2),
                                      timed("tiny2", "all", "cold", 3600), timed("tiny3", "all", "cold", 2)])
    common = ("bench", "--suite", SUITE, "--models", "tiny,tiny2,tiny3", "--configs", "all,no-fusion", "--repeat", "3",
              "--history", str(history), "--picks", str(tmp_path / "picks"))
    proc = bench(*common, "--json", str(tmp_path / "r.json"), "--budget", "600", tmp_path=tmp_path)
    assert proc.returncode == 130, proc.stderr
    assert "banking: tiny2 / all (cold) starts with" in proc.stderr
    assert "1 cell(s) not started (the later models' cells that fitted ran, then the first of them, banked)" in proc.stderr
    ran = cells(tmp_path / "r.json")
    assert set(ran) == {(m, c) for m in ("tiny", "tiny3") for c in ("all", "no-fusion")} | {("tiny2", "all")}
    assert ran[("tiny2", "all")]["status"] == "ok" and ran[("tiny2", "all")]["cache"] == "cold", ran[("tiny2", "all")].get("message")
    proc = bench(*common, "--json", str(tmp_path / "r2.json"), "--budget", "30", tmp_path=tmp_path)
    assert proc.returncode == 130 and "banking" not in proc.stderr, proc.stderr
    assert ("tiny2", "all") not in cells(tmp_path / "r2.json")


def test_a_banked_cell_that_a_time_limit_cuts_records_its_price_above_the_seconds_it_was_started_with(tmp_path):
    """EfficientNet-B0's float32 `all` was banked with 308 s left and cut 306 s in: the cut's record
    says it was started knowingly, priced above the seconds left (here: an hour, with under 600 s)."""
    history = history_file(tmp_path, [timed("tiny", "all", "cold", 2), timed("sleepy", "all", "cold", 3600)])
    env = bench_env(tmp_path, IA_TEST_PIDFILE=str(tmp_path / "pid"))
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bench", "--suite", SUITE, "--models", "tiny,sleepy",
                           "--configs", "all", "--history", str(history), "--picks", str(tmp_path / "picks"), "--timeout",
                           "4", "--json", str(tmp_path / "r.json"), "--budget", "600", "--no-progress"],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert "banking: sleepy / all (cold) starts with" in proc.stderr, proc.stderr
    # tiny's cell may be cut too on a loaded machine (--timeout 4 holds for every cell): sleepy's is the banked one
    (cut,) = [c for c in json.loads((tmp_path / "r.json").read_text())["meta"]["cuts"] if c["model"] == "sleepy"]
    assert (cut["model"], cut["cache"], cut["priced_s"]) == ("sleepy", "cold", 3600.0), cut
    assert 60 <= cut["left_s"] < 600 and cut["cut_s"] >= 4, cut


def test_picks_seed_a_fresh_runs_first_cell_with_an_earlier_runs_autotuning(tmp_path):
    """--picks, with matmul templates autotuned on CPU: the first run saves the model's picks; a
    second run, with a new results file and empty caches (as on a fresh machine), starts the model's
    `all` from them. It benchmarks nothing again (autotune seconds under a tenth of the cold
    cell's), generates the cold cell's very code, and is labelled seeded; --estimate prices it as
    the cold cell less its autotuning."""
    picks = tmp_path / "picks"
    common = ("bench", "--models", "mlp_gelu", "--configs", "all", "--cpu-templates", "--repeat", "3",
              "--picks", str(picks))
    proc = bench(*common, "--json", str(tmp_path / "cold.json"), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    cold = cells(tmp_path / "cold.json")[("mlp_gelu", "all")]
    assert cold["cache"] == "cold" and cold["autotune_s"] > 1, cold
    assert os.listdir(picks) == ["mlp_gelu-float32-inference-cpu"]
    assert not (tmp_path / "cold.inductor-cache").exists()  # the run finished: its caches are gone, its picks kept

    proc = bench(*common, "--json", str(tmp_path / "seeded.json"), "--estimate", str(tmp_path / "cold.json"),
                 tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    priced = f"{cold['wall_s'] - cold['autotune_s']:.0f}  this cell cold, less its autotuning (1)"
    assert priced in proc.stdout and "total: 1 cells, 0 cold, 1 seeded" in proc.stdout, proc.stdout
    proc = bench(*common, "--json", str(tmp_path / "seeded.json"), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    seeded = cells(tmp_path / "seeded.json")[("mlp_gelu", "all")]
    assert seeded["cache"] == "seeded" and seeded["autotune_s"] < cold["autotune_s"] / 10, (cold, seeded)
    assert seeded["code_hash"] == cold["code_hash"]


def test_picks_of_another_gpu_do_not_seed_a_cell(tmp_path):
    """Inductor keys each picks file by the system it was benchmarked on: the H100's picks (committed,
    as Inductor wrote them) seed an H100's cell and not an H200's, which is then cold, priced and
    labelled so; the H200's committed inference picks of the same model, the other way round.
    Without a device name (``--estimate`` on a machine without the GPU) any picks count; a file
    whose system cannot be read (a CPU system's has none) counts too."""
    from inductor_ablate.bench.picks import has_picks

    cell = dict(model="resnet18", dtype="bfloat16", mode="inference", device="cuda")
    h100 = os.path.join(ROOT, "docs", "results", "picks-h100")
    assert has_picks(h100, cell) and has_picks(h100, cell, "NVIDIA H100 80GB HBM3")
    assert not has_picks(h100, cell, "NVIDIA H200")
    h200, gpt2 = os.path.join(ROOT, "docs", "results", "picks"), dict(cell, model="gpt2")  # both GPUs have its picks
    assert has_picks(h200, gpt2, "NVIDIA H200") and not has_picks(h200, gpt2, "NVIDIA H100 80GB HBM3")
    assert has_picks(h100, gpt2, "NVIDIA H100 80GB HBM3") and not has_picks(h100, gpt2, "NVIDIA H200")
    assert not has_picks(str(tmp_path), cell, "NVIDIA H100 80GB HBM3")  # no folder for the model
    cpu = tmp_path / "resnet18-bfloat16-inference-cuda" / "c0ffee"
    cpu.parent.mkdir()
    cpu.write_text(json.dumps({"system": {"hash": "c0ffee"}, "cache": {}}))
    assert has_picks(str(tmp_path), cell, "NVIDIA H200")


def _triton_kernel_pick(cache_dir, monkeypatch, config=None):
    """Inductor's own autotune cache in ``cache_dir``, as a generated Triton kernel uses it: the
    kernel's source written where Inductor writes it, then its best config saved (``config``) or read
    back (None)."""
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.runtime.autotune_cache import AutotuneCache
    from torch._inductor.runtime.triton_compat import Config

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    _, path = PyCodeCache.write("# a generated kernel's source\n")
    configs = [Config({"XBLOCK": x}, num_warps=4, num_stages=1) for x in (64, 128, 256)]
    cache = AutotuneCache.create({}, path, "configs-hash")
    if config is None:
        return cache.read_best({}, configs)
    cache.save(configs[config], 1_000_000)
    return None


def test_picks_keep_each_triton_kernels_config_per_gpu_and_inductor_reads_them_back(tmp_path, monkeypatch):
    """--picks saves the config each Triton kernel settled on (Inductor's ``.best_config`` files) in a
    folder of the GPU's own, beside the matmul picks; a fresh cache directory seeded from it gives
    Inductor's own lookup that config, so a cold run does not benchmark the kernel's configs again.
    Another GPU's cell is not seeded from them, and the matmul picks still land where they did."""
    from inductor_ablate.bench.picks import CONFIGS_SUBDIR, PICKS_SUBDIR, best_configs, has_picks, save_picks, seed_picks

    cell = dict(model="m", dtype="bfloat16", mode="inference", device="cuda")
    h100, h200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
    first, picks = tmp_path / "first", tmp_path / "picks"
    _triton_kernel_pick(first, monkeypatch, config=2)
    (first / PICKS_SUBDIR).mkdir()
    (first / PICKS_SUBDIR / "c0ffee").write_text(json.dumps({"system": {"device": {"name": h100}}, "cache": {}}))
    [saved] = best_configs(str(first))
    save_picks(str(picks), cell, str(first), h100)
    folder = picks / "m-bfloat16-inference-cuda"
    assert sorted(os.listdir(folder)) == ["c0ffee", CONFIGS_SUBDIR]
    assert os.listdir(folder / CONFIGS_SUBDIR) == ["NVIDIA_H100_80GB_HBM3"]
    assert has_picks(str(picks), cell, h100) and not has_picks(str(picks), cell, h200)
    os.remove(folder / "c0ffee")  # a model with no matmul picks: its Triton configs alone still count, per GPU
    assert has_picks(str(picks), cell, h100) and not has_picks(str(picks), cell, h200)

    fresh = tmp_path / "fresh"
    assert _triton_kernel_pick(fresh, monkeypatch) is None  # empty cache: the kernel would benchmark its configs
    seed_picks(str(picks), cell, str(fresh), h100)
    assert os.path.relpath(best_configs(str(fresh))[0], fresh) == os.path.relpath(saved, first)
    assert not (fresh / PICKS_SUBDIR / CONFIGS_SUBDIR).exists()
    best = _triton_kernel_pick(fresh, monkeypatch)
    assert best is not None and best.kwargs == {"XBLOCK": 256}
    other = tmp_path / "other-gpu"
    seed_picks(str(picks), cell, str(other), h200)
    assert best_configs(str(other)) == []


def test_picks_of_a_cell_stopped_by_a_time_limit_are_kept(tmp_path):
    """A run stopped (SIGTERM, as `timeout` sends) in a model's cold `all`, once Inductor has written
    its first benchmarked picks to the cache, still copies them to --picks: a fresh machine's next
    run resumes that autotuning instead of starting it again."""
    env = bench_env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "inductor_ablate", "bench", "--models", "mlp_gelu", "--configs",
                             "all", "--cpu-templates", "--picks", str(tmp_path / "picks"), "--json",
                             str(tmp_path / "r.json"), "--no-progress"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    written = tmp_path / "r.inductor-cache" / "mlp_gelu-float32-inference-cpu" / "cache"
    deadline = time.time() + 300
    while not (written.is_dir() and os.listdir(written)) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    names = sorted(os.listdir(written))
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130 or "results:" in out, out  # stopped in the cell (or it had just finished)
    if proc.returncode == 130:  # the log names the cell the limit cut
        assert "cut: mlp_gelu / all (cold cache), " in out and " s into its process" in out, out
    kept = tmp_path / "picks" / "mlp_gelu-float32-inference-cpu"
    assert sorted(os.listdir(kept)) == names, out
    assert json.loads(next(kept.iterdir()).read_text())["cache"], out


def test_hf_training_steps_draw_no_random_numbers():
    """Dropout draws random numbers that eager and compiled code draw differently, so an HF model's
    training step is built with every dropout probability of its config at 0 (else no config, stock
    `all` included, could pass the accuracy check); other settings, and inference, keep theirs."""
    import types

    from inductor_ablate.bench.models import _no_dropout

    config = types.SimpleNamespace(hidden_dropout_prob=0.1, attn_pdrop=0.1, classifier_dropout=None,
                                   dropout_rate=0.1, hidden_size=768, layer_norm_eps=1e-12)
    _no_dropout(config)
    assert vars(config) == dict(hidden_dropout_prob=0.0, attn_pdrop=0.0, classifier_dropout=None,
                                dropout_rate=0.0, hidden_size=768, layer_norm_eps=1e-12)
    require_packages("transformers")
    import torch

    from inductor_ablate.bench.cell import build_model

    model, inputs, _ = build_model("hf", "distilbert", "cpu", "float32", "training")
    assert model.training
    assert torch.equal(model(*inputs), model(*inputs))  # no dropout: the same step twice
    model, _, _ = build_model("hf", "distilbert", "cpu", "float32", "inference")
    assert model.model.config.dropout == 0.1  # eval mode never drops out; its config is left alone


def test_training_steps_turn_every_dropout_module_off(tmp_path, monkeypatch):
    """Any model's dropout modules (torchvision's MobileNetV3 has one in its classifier; a user's
    --suite model may too) are at p=0 in a training step, so two steps agree and a compiled step can be
    checked against eager; inference leaves them alone."""
    (tmp_path / "dropout_models.py").write_text(
        "import torch\n"
        "def suite():\n"
        "    def build(device, dtype, mode):\n"
        "        torch.manual_seed(0)\n"
        "        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5), torch.nn.Dropout1d(0.2))\n"
        "        return model.to(device=device, dtype=dtype), (torch.randn(4, 8, 8, device=device, dtype=dtype),), "
        "lambda out: out.float().square().mean()\n"
        "    return {'drop': build}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import torch

    from inductor_ablate.bench.cell import build_model

    model, inputs, _ = build_model("dropout_models:suite", "drop", "cpu", "float32", "training")
    assert model.training and [m.p for m in model[1:]] == [0.0, 0.0]
    assert torch.equal(model(*inputs), model(*inputs))
    model, _, _ = build_model("dropout_models:suite", "drop", "cpu", "float32", "inference")
    assert not model.training and [m.p for m in model[1:]] == [0.5, 0.2]


def test_a_step_of_only_zeros_is_refused_not_checked():
    """A model whose eager step is all zeros (torchvision's ViT-B/16 zero-initializes its classifier
    head) would pass the accuracy check under any config, a wrong one too: its cell is an error that
    says why, before anything compiles.  Some zero leaves beside non-zero ones are fine."""
    import torch

    from inductor_ablate.bench.cell import UncheckableStep, _step, require_checkable

    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 4))
    torch.nn.init.zeros_(model[2].weight), torch.nn.init.zeros_(model[2].bias)
    x = torch.randn(2, 8, requires_grad=True)
    loss = lambda out: out.square().mean()  # noqa: E731
    for mode in ("inference", "training"):
        with pytest.raises(UncheckableStep, match="only zeros .* could not tell a wrong answer"):
            require_checkable(_step(model, (x,), loss, mode), "zero_head")
    torch.nn.init.normal_(model[2].weight)
    require_checkable(_step(model, (x,), loss, "training"), "head")
    require_checkable([torch.zeros(3), torch.ones(3)], "some_zeros")


def test_real_vision_models_give_a_step_that_can_be_checked():
    """Every torchvision and timm model of the real suite, built as the bench builds it, gives an
    eager output that is not all zeros (ViT-B/16's head is initialized at random for it)."""
    require_packages("torchvision.models", "timm")
    from inductor_ablate.bench.cell import _step, build_model, require_checkable
    from inductor_ablate.bench.models import MODEL_NAMES

    for suite in ("torchvision", "timm"):
        for name in MODEL_NAMES[suite]:
            model, inputs, loss_fn = build_model(suite, name, "cpu", "float32", "inference")
            require_checkable(_step(model, inputs, loss_fn, "inference"), name)


def test_t5_training_gradients_are_not_rounding_noise():
    """T5's encoder returns RMS-normalized states, whose mean square is 1 whatever the input: with
    that as the loss, every weight below the final norm got a gradient of rounding noise, and its
    float32 step was far from the float64 one.  With the projected loss, float32 and float64 agree."""
    require_packages("transformers")
    import torch

    from inductor_ablate.bench import cell

    model, inputs, loss_fn = cell.build_model("hf", "t5_small_encoder", "cpu", "float32", "training")
    step = cell._step(model, inputs, loss_fn, "training")
    reference = cell._float64_step(model, inputs, loss_fn, "training")
    assert len(step) == len(reference) > 50  # the output and every weight's gradient
    assert cell._rel_error(step, reference) < 1e-3
    first_query = dict(model.named_parameters())["model.encoder.block.0.layer.0.SelfAttention.q.weight"]
    assert first_query.grad.abs().max() > 1e-3


def test_pointwise_chain_training_gradient_is_not_rounding_noise():
    """pointwise_chain ends in a row norm, so the mean square of its output is fixed: its input
    gradient was about 1e-9 under that loss.  Through the projected loss it is of order one."""
    from inductor_ablate.bench import cell

    model, inputs, loss_fn = cell.build_model("embedded", "pointwise_chain", "cpu", "float32", "training")
    out, grad = cell._step(model, inputs, loss_fn, "training")
    assert grad.shape == inputs[0].shape and grad.abs().max() > 1e-2


def test_low_precision_accuracy_falls_back_to_a_float64_reference():
    """A bfloat16 step that misses eager by more than the tolerance passes when, against the float64
    step, it is off by at most FP64_MARGIN times eager's own error (both round; neither is the truth),
    and fails when it is off by more.  float32 keeps the plain check; a passing cell never pays for
    the float64 step."""
    import torch

    from inductor_ablate.bench import cell

    def never():
        raise AssertionError("the float64 step was computed for a cell that passed")

    truth = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
    eager = torch.tensor([1.0, 2.0, 4.4])  # 10% off the truth
    assert cell.accuracy(eager * 1.01, eager, "bfloat16", never) == {"rel_error": pytest.approx(0.01, rel=1e-3)}
    close = cell.accuracy(torch.tensor([1.0, 2.0, 3.8]), eager, "bfloat16", lambda: truth)  # 5% off truth
    assert close["rel_error"] > cell.TOLERANCE["bfloat16"] and "message" not in close
    assert close["rel_error_fp64"] < close["eager_rel_error_fp64"]
    far = cell.accuracy(torch.tensor([1.0, 2.0, 5.6]), eager, "bfloat16", lambda: truth)  # 40% off truth
    assert far["message"].startswith("max relative error 0.273 > 0.05 against eager, and 0.4 against float64")
    plain = cell.accuracy(torch.tensor([1.0, 2.0, 3.8]), eager, "float32", lambda: truth)
    assert plain == {"rel_error": pytest.approx(0.6 / 4.4, rel=1e-3), "message": "max relative error 0.136 > 0.002"}

    model = torch.nn.Linear(3, 2).to(torch.bfloat16)
    x = torch.randn(4, 3, dtype=torch.bfloat16, requires_grad=True)
    ref = cell._float64_step(model, (x,), lambda out: out.float().pow(2).mean(), "training")
    assert [t.dtype for t in ref] == [torch.float64] * 4  # output, weight and bias grads, input grad
    assert model.weight.dtype == torch.bfloat16  # the model itself is left as it was


def test_box_factor_is_the_third_quartile_of_this_files_walls_over_their_history():
    """Only cells of the same model, config, dtype and cache state pair up; under three pairs the
    factor is 1 (no scaling)."""
    from inductor_ablate.bench.estimate import box_factor, wall_ratios

    def row(model, config, wall, cache="warm", dtype="bfloat16"):
        return dict(model=model, config=config, dtype=dtype, cache=cache, wall_s=wall)
    files = [row("a", "all", 100, "cold"), row("a", "no-fusion", 10), row("a", "no-fusion", 30),
             row("b", "all", 50, "cold"), row("b", "no-fusion", 40), row("b", "no-inlining", 20)]
    done = [row("a", "all", 100, "cold"), row("a", "no-fusion", 40), row("b", "all", 75, "cold"),
            row("b", "no-fusion", 40, "cold"),  # another cache state: no pair
            row("b", "no-inlining", 20, dtype="float32"),  # another dtype: no pair
            row("c", "all", 999, "cold")]  # no history
    assert box_factor(wall_ratios(done[:2], files)) == 1.0
    # ratios 1.0 (a all), 2.0 (a no-fusion: 40 over the median 20), 1.5 (b all): 3rd quartile 1.75
    assert wall_ratios(done, files) == [1.0, 2.0, 1.5] and box_factor([1.0, 2.0, 1.5]) == 1.75


def test_budget_and_estimate_scale_prices_from_history_by_how_much_slower_this_run_is(tmp_path):
    """--budget on a box slower than the history's: tiny's three cells ran here far slower than the
    history's 0.01 s, so tiny2's `all`, priced at 5 s from the history, is scaled by that factor
    and not started with 600 s left; the message gives the factor and its basis.  --estimate with
    that results file as --json prices tiny2's cells the same way and says so."""
    history = history_file(tmp_path, [timed("tiny", "all", "cold", 0.01), timed("tiny", "no-fusion", "warm", 0.01),
                                      timed("tiny", "no-inlining", "warm", 0.01), timed("tiny2", "all", "cold", 5)])
    results = tmp_path / "r.json"
    common = ("bench", "--suite", SUITE, "--models", "tiny,tiny2", "--configs", "all,no-fusion,no-inlining",
              "--repeat", "3", "--json", str(results))
    proc = bench(*common, "--budget", "600", "--history", str(history), tmp_path=tmp_path)
    assert proc.returncode == 130, proc.stderr
    priced = re.search(r"stopped for --budget: tiny2 / all is priced at (\d+) s \(this cell cold, x([\d.]+) \(1\)\) and "
                       r"\d+ s of --budget 600 are left; prices from the history files alone are x\2: the results "
                       r"file's 3 cells that they also hold took", proc.stderr)
    assert priced, proc.stderr
    assert int(priced.group(1)) > 600 and float(priced.group(2)) > 120
    assert set(cells(results)) == {("tiny", c) for c in ("all", "no-fusion", "no-inlining")}
    proc = bench(*common, "--estimate", str(history), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    tiny2 = next(line for line in proc.stdout.splitlines() if line.startswith("tiny2"))
    # 3 cells: `all` at 5 s and two warm at every model's warm median (0.01 s), only `all`'s scaled
    assert "this cell cold, x" in tiny2 and float(tiny2.split()[2]) > 600, proc.stdout
    assert f"prices from the history files alone are x{priced.group(2)}" in proc.stdout


def test_base_runs_every_row_with_that_rows_settings_and_keeps_its_cells_apart(tmp_path):
    """--base no-freezing: its `all` generates the very code of the plain run's `no-freezing` row, and
    its `no-fusion` other code than the plain `no-fusion`; the cells carry base and the report says
    so.  Resuming, skipping or merging across bases is refused in one line, before any cell runs."""
    common = ("bench", "--models", "mlp_gelu", "--repeat", "3")
    plain, based = tmp_path / "plain.json", tmp_path / "based.json"
    proc = bench(*common, "--configs", "all,no-freezing,no-fusion", "--json", str(plain), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = bench(*common, "--base", "no-freezing", "--configs", "all,no-fusion", "--json", str(based), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "(every row, `all` included, ran with --base no-freezing: no parameter freezing (freezing=False))" in proc.stdout
    p, b = cells(plain), cells(based)
    assert b[("mlp_gelu", "all")]["code_hash"] == p[("mlp_gelu", "no-freezing")]["code_hash"]
    assert b[("mlp_gelu", "all")]["code_hash"] != p[("mlp_gelu", "all")]["code_hash"]
    assert b[("mlp_gelu", "no-fusion")]["code_hash"] != p[("mlp_gelu", "no-fusion")]["code_hash"]
    assert {c.get("base") for c in b.values()} == {"no-freezing"} and all("base" not in c for c in p.values())
    for args, what in ((("--json", str(based)), f"resuming --json {based}"),
                       (("--json", str(tmp_path / "new.json"), "--skip-done", str(based)), f"leaving out the cells of --skip-done {based}")):
        proc = bench(*common, "--configs", "all,no-fusion", *args, tmp_path=tmp_path)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and f"{what} here would mix 2 bases" in lines[0], proc.stderr
    assert not (tmp_path / "new.json").exists()
    proc = bench("merge", str(plain), str(based), "--json", str(tmp_path / "m.json"), tmp_path=tmp_path)
    assert proc.returncode == 2 and "merging these files would mix 2 bases" in proc.stderr, proc.stderr
    assert not (tmp_path / "m.json").exists()


def test_a_repeat_process_is_priced_at_most_at_what_this_files_own_process_of_the_cell_took():
    """ConvNeXt-T's training history holds one `all` labelled warm that autotuned afresh (374 s);
    the repeat of a seeded `all` that took 81 s in this very run reuses that run's caches, so it is
    priced at 81 s, not 374 (a time-limited job lost both repeats to that price).  A cheaper history
    price stands, and a cell this file does not hold is priced from the history as before."""
    from inductor_ablate.bench.estimate import Prices

    def row(config, cache, wall):
        return dict(model="convnext_tiny", config=config, dtype="bfloat16", cache=cache, wall_s=wall)
    files = [row("all", "warm", 374.1), row("all", "cold", 342.3), row("no-inlining", "warm", 60.1)]
    done = [row("all", "seeded", 80.6), row("no-inlining", "warm", 90.0)]
    prices = Prices(files, done, [])
    assert prices.cost("convnext_tiny", "all", "bfloat16", "warm")[:2] == (80.6, "at most this file's own process of it")
    price, basis, _ = prices.cost("convnext_tiny", "no-inlining", "bfloat16", "warm")
    assert basis == "this cell warm" and price == statistics.median([60.1, 90.0])
    assert Prices(files, [], []).cost("convnext_tiny", "all", "bfloat16", "warm")[0] == 374.1


def test_cells_that_ran_alone_are_priced_as_overlapped_under_jobs_and_the_reverse(tmp_path):
    """On an H100 every cell run beside three others (--jobs 4) took longer than alone; a history
    of cells run alone priced a 4-job run's cold ResNet-50 at 229 s, and the call's end cut it at
    485 s.  Where the history holds cells run both ways (an overlapped row records its wait for the
    device), a cell that ran the other way is scaled by the median ratio of its cache state, and
    the basis says so; too few pairs scale nothing and the note says how to get them."""
    from inductor_ablate.bench.estimate import Budget, Prices

    def row(model, config, cache, wall, beside=False, **more):
        return dict(model=model, config=config, dtype="bfloat16", cache=cache, wall_s=wall,
                    **({"wait_s": 1.0} if beside else {}), **more)
    pairs = [row("m", c, "warm", 10.0) for c in "abc"] + [row("m", c, "warm", w, True) for c, w in zip("abc", (15, 20, 30))]
    pairs += [row("m", c, "cold", 100.0) for c in "de"] + [row("m", c, "cold", 180.0, True) for c in "de"]
    files = pairs + [row("r50", "all", "cold", 229.0), row("r50", "x", "warm", 40.0), row("vit", "all", "cold", 90.0, True)]
    beside, alone = Prices(files, [], [], jobs=4), Prices(files, [], [])
    # warm: the median of 1.5, 2, 3; cold: two pairs are too few, so every state's median of 5 (1.8)
    assert beside.cost("r50", "x", "bfloat16", "warm")[:2] == (80.0, "this cell warm, x2.00 as overlapped") and beside.scaled
    assert beside.cost("r50", "all", "bfloat16", "cold")[0] == 229.0 * 1.8
    assert alone.cost("r50", "x", "bfloat16", "warm")[:2] == (40.0, "this cell warm") and not alone.scaled
    assert alone.cost("vit", "all", "bfloat16", "cold")[:2] == (50.0, "this cell cold, x0.56 as alone")
    assert "the 5 cells that also ran beside others took x1.80 their walls alone (median, warm x2.00)" in beside.note()
    # a seeded cell is its cold twin less its autotuning, both scaled: never a negative price
    mb = Prices(files + [row("mb", "all", "cold", 300.0, True, autotune_s=250.0)], [], [])
    assert mb.cost("mb", "all", "bfloat16", "seeded")[0] == pytest.approx(50.0 / 1.8)
    few = Prices(files[:2] + files[3:5] + files[-3:], [], [], jobs=4)
    assert few.cost("r50", "all", "bfloat16", "cold")[0] == 229.0 and "too few cells ran both ways" in few.note()
    # --budget prices as its run's --jobs does, and a refusal says why
    history = tmp_path / "h.json"
    history.write_text(json.dumps({"meta": {}, "cells": [dict(c, suite="s", device="cuda", mode="inference", status="ok") for c in files]}))
    budget = Budget(60, [str(history)], {}, "cuda", "inference", jobs=4)
    quote = budget.quote(dict(model="r50", config="x", dtype="bfloat16"), "warm")
    assert quote["price_s"] == 80.0 and "as overlapped" in quote["basis"] and "beside others took x1.80" in quote["why"]
    assert Budget(60, [str(history)], {}, "cuda", "inference").quote(dict(model="r50", config="x", dtype="bfloat16"), "warm")["price_s"] == 40.0


def test_jobs_wall_fills_slots_in_plan_order_and_holds_a_models_cells_until_its_first_ends():
    """As run_matrix starts cells: two slots, model A's cold 100 s first cell, then B's; A's 10 s
    cells wait for A's first, B's for B's; the 300 s C starts as soon as a slot frees."""
    from inductor_ablate.bench.estimate import jobs_wall

    assert jobs_wall([[100, 10, 10], [50, 10], [300]], 2) == 360  # C starts at 60, when B's cells are done
    assert jobs_wall([[100, 10, 10], [50, 10], [300]], 1) == 480
    assert jobs_wall([[100, 10, 10, 10, 10]], 4) == 110  # the four warm cells side by side
    assert jobs_wall([], 4) == 0
    # as under --budget, two cells that autotune a minute or more run one at a time: B's `all` waits
    # for A's, C takes the other slot meanwhile (0-300), A's cells follow A's `all` (100-120), then B's
    tuned = [[120, 0, 0], [90, 0], [0]]
    assert jobs_wall([[100, 10, 10], [50, 10], [300]], 2, tuned) == 300
    # a free slot idles rather than autotune beside another: B's `all` starts when A's ends, at 100
    assert jobs_wall([[100, 10], [50, 10], [30]], 3, [[120, 0], [90, 0], [0]]) == 160


def test_a_cell_a_time_limit_cut_is_priced_at_least_at_how_far_it_got():
    """MobileNetV3-L's float32 `all` was cut at 543 s cold and 545 s seeded by a call's end, where its
    bfloat16 twins priced it at 456 and 84 s: a cut in that cache state, with no finished run of the
    cell in it since, is the price's floor; a cut in another state, or shorter than the price,
    leaves the price alone."""
    from inductor_ablate.bench.estimate import Prices

    def row(config, dtype, cache, wall):
        return dict(model="mobilenet_v3_large", config=config, dtype=dtype, cache=cache, wall_s=wall, autotune_s=0)
    def cut(cache, seconds):
        return dict(model="mobilenet_v3_large", config="all", dtype="float32", cache=cache, cut_s=seconds)
    files = [row("all", "bfloat16", "cold", 270.0), row("all", "bfloat16", "seeded", 50.0)]
    seeded = Prices(files, [], [], [cut("seeded", 545.0)]).cost("mobilenet_v3_large", "all", "float32", "seeded")
    assert seeded[:2] == (545.0, "at least the 545 s it ran before a time limit cut it (seeded)")
    assert Prices(files, [], [], [cut("seeded", 545.0)]).cost("mobilenet_v3_large", "all", "float32", "cold")[0] == 270.0
    assert Prices(files, [], [], [cut("cold", 20.0)]).cost("mobilenet_v3_large", "all", "float32", "cold")[0] == 270.0
    ran = [row("all", "float32", "seeded", 300.0)]  # it finished seeded since: its own wall prices it
    assert Prices(files, ran, [], [cut("seeded", 545.0)]).cost("mobilenet_v3_large", "all", "float32", "seeded")[0] == 300.0


def test_a_cell_cut_on_a_cold_or_seeded_cache_prices_its_retry_on_the_cache_it_left_warm():
    """An H200's MobileNetV3-L `all` was cut cold at 466 s; the next piece found its model's cache
    warm (what the cut cell had left) and priced the retry as the model's warm rows, 40 s: the call's
    end cut it again at 478 s.  A cold or seeded cut of this results file floors the warm retry,
    until the cell runs to its end here; another file's cut, or another cell's, does not, and the
    cell's expected autotuning is its whole price (``expected_autotune``)."""
    from inductor_ablate.bench.estimate import Prices, expected_autotune

    def row(config, cache, wall, autotune=0.0):
        return dict(model="mb", config=config, dtype="bfloat16", cache=cache, wall_s=wall, autotune_s=autotune)
    cut = dict(model="mb", config="all", dtype="bfloat16", cache="cold", cut_s=466.0)
    files = [row("all", "cold", 300.0, 250.0), row("no-fusion", "warm", 40.0), row("no-inlining", "warm", 40.0)]
    price, basis, pool = Prices(files, [], [], [cut], own_cuts=[cut]).cost("mb", "all", "bfloat16", "warm")
    assert (price, basis) == (466.0, "at least the 466 s it ran before a time limit cut it (cold)")
    assert expected_autotune(price, basis, pool) == 466.0
    assert Prices(files, [], [], [cut]).cost("mb", "all", "bfloat16", "warm")[:2] == (40.0, "this model's warm cells")
    assert Prices(files, [], [], [cut], own_cuts=[cut]).cost("mb", "no-fusion", "bfloat16", "warm")[0] == 40.0
    ran = [row("all", "warm", 120.0)]  # it ran to its end here since: its own wall prices it
    assert Prices(files, ran, [], [cut], own_cuts=[cut]).cost("mb", "all", "bfloat16", "warm")[0] == 120.0
    price, basis, pool = Prices(files, [], []).cost("mb", "all", "bfloat16", "cold")
    assert expected_autotune(price, basis, pool) == 250.0
    price, basis, pool = Prices(files, [], []).cost("mb", "all", "bfloat16", "seeded")
    assert basis == "this cell cold, less its autotuning" and expected_autotune(price, basis, pool) == 0.0


def test_budget_keeps_two_cells_that_autotune_a_minute_from_running_side_by_side(tmp_path):
    """--jobs 3 --budget: the history says tiny's and tiny2's `all` autotune two minutes each (real
    ones take seconds here), tiny3's a second.  Autotuning holds the device, so tiny2's `all` waits
    until tiny's has ended, the log says so once, and tiny3's cells run meanwhile."""
    history = history_file(tmp_path, [dict(timed(m, "all", "cold", 150), autotune_s=a)
                                      for m, a in (("tiny", 120), ("tiny2", 120), ("tiny3", 1))]
                           + [timed(m, "no-fusion", "warm", 5) for m in ("tiny", "tiny2", "tiny3")])
    results = tmp_path / "r.json"
    proc = bench("bench", "--suite", SUITE, "--models", "tiny,tiny2,tiny3", "--configs", "all,no-fusion", "--repeat", "3",
                 "--jobs", "3", "--budget", "3000", "--history", str(history), "--json", str(results), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("waits: tiny2 / all would autotune (about 120 s) beside tiny / all") == 1, proc.stderr
    ran = {k: c["ran_at"] for k, c in cells(results).items()}
    assert len(ran) == 6 and ran[("tiny2", "all")][0] >= ran[("tiny", "all")][1] - 0.01
    assert ran[("tiny3", "all")][0] < ran[("tiny", "all")][1]  # the slot did not idle
    # a cell with nothing to price it from (no quote) is never held back
    from inductor_ablate.bench.runner import MatrixRun
    run = MatrixRun([], results_path=str(tmp_path / "n.json"), meta={}, repeat=1, warmup=0, timeout=60, jobs=2)
    assert run.autotuning_ahead(None) is None


def test_a_cut_is_recorded_in_the_results_file_kept_on_resume_and_prices_the_cell_in_estimate(tmp_path):
    """`bench --timeout` stops a hanging cell (a cut, as a call's end is): the results file's meta
    records it with its cache state and how far it got, a resumed run keeps it and adds its own, and
    `--estimate` with that file as `--json` prices the cell at least at the longest cut."""
    results = tmp_path / "r.json"
    env = bench_env(tmp_path, IA_TEST_PIDFILE=str(tmp_path / "pid"))
    history = history_file(tmp_path, [timed("tiny", "all", "cold", 1.0), timed("tiny", "all", "warm", 1.0)])
    command = [sys.executable, "-m", "inductor_ablate", "bench", "--suite", SUITE, "--models", "sleepy", "--configs", "all"]
    for run in (1, 2):  # with --budget: each cut also records the price the run gave the cell at its start
        proc = subprocess.run([*command, "--timeout", "4", "--json", str(results), "--no-progress", "--budget", "3000",
                               "--history", str(history)], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout + proc.stderr  # the cell's error row: timed out
        assert cells(results)[("sleepy", "all")]["message"].startswith("timed out after 4 s")
        cuts = json.loads(results.read_text())["meta"]["cuts"]
        assert len(cuts) == run and all(c["model"] == "sleepy" and c["cache"] == "cold" for c in cuts), cuts
        assert all(4 <= c["cut_s"] < 60 for c in cuts), cuts
    # the first run priced it from the history (1 s), the second at least at the first cut
    assert [c["priced_s"] for c in cuts] == [1.0, cuts[0]["cut_s"]], cuts
    proc = subprocess.run([*command, "--estimate", str(history), "--json", str(results), "--no-progress"],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    line = next(line for line in proc.stdout.splitlines() if line.startswith("sleepy"))
    longest = max(c["cut_s"] for c in cuts)
    assert f"at least the {longest:.0f} s it ran before a time limit cut it (cold)" in line, proc.stdout + proc.stderr
    assert float(line.split()[2]) == round(longest), line


def test_a_compiled_step_that_does_not_follow_its_inputs_is_caught():
    """Freezing folds an input marked static into a constant: the compiled step then returns what it
    computed at compile time (on an H100 that read as a 100x speedup).  Changing the input in place
    shows it; an ordinary input follows, and is left as it was."""
    import torch

    from inductor_ablate.bench.cell import _step, follows_inputs

    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU()).eval()
    for marked in (False, True):
        torch._dynamo.reset()
        x = torch.randn(8, 16)
        before = x.clone()
        if marked:
            torch._dynamo.mark_static_address(x)
        with torch._inductor.config.patch(freezing=True), torch.no_grad():
            compiled = torch.compile(model)
            _step(compiled, (x,), None, "inference")
            why = follows_inputs(model, compiled, (x,), None, "inference", "float32")
        assert torch.equal(x, before)
        assert (why is not None) == marked, why
        if marked:
            assert why.startswith("the compiled step does not follow its inputs (changed in place): max relative error")


def test_every_cuda_step_receives_its_inputs_by_one_copy_the_graphs_own_or_the_harness():
    """Issue 66: a CUDA graph copies its inputs before each replay; the other rows and eager must pay
    the same one copy (cell.arriving_steps).  Run on CPU tensors: the rule, not the device."""
    import torch
    from inductor_ablate.bench.cell import arriving_steps

    x = torch.arange(6.0)
    seen = []
    model = lambda t: seen.append(t.clone()) or t * 2  # noqa: E731
    eager, compiled, arrival = arriving_steps("cpu", model, model, (x,), None, "inference", True)
    assert arrival is None  # CPU: no graph copies, so no row does
    x.zero_(), eager()
    assert seen[-1].sum() == 0

    for graphs_copy, expected in ((False, "harness"), (True, "cudagraph")):
        x.copy_(torch.arange(6.0))
        eager, compiled, arrival = arriving_steps("cuda", model, model, (x,), None, "inference", graphs_copy)
        assert arrival == expected
        x.zero_(), eager()  # eager always receives its request: the values of x when the steps were made
        assert torch.equal(seen[-1], torch.arange(6.0))
        x.zero_(), compiled()  # the harness copies only where the graphs do not
        assert torch.equal(seen[-1], torch.zeros(6) if graphs_copy else torch.arange(6.0))
