"""``python -m inductor_ablate bench``: the study's options, checked before anything runs, then the
matrix of cells run (``bench.runner``) and its tables, files and page (``common.emit``)."""
from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import signal
import sys
import time

from ..bench import launch
from ..bench.estimate import BudgetSpent, estimate
from ..bench.models import list_models, load_suite, module_regions
from ..bench.picks import check_picks_folder
from ..bench.runner import default_jobs, plan, run_matrix, skip_done
from ..errors import OneLineParser, UsageError, check_writable, device_option
from ..views import terminal
from ..results import (bases, cell_key, check_one_base, check_one_device, check_one_setting, device_name,
                       device_names, earlier_cuts, kept_on_resume, load_results, read_results_file, save_results)
from ..rows import base_row, by_name, by_region, default_group, describe, resolve
from ..stats import summary_rows
from . import merge
from .common import add_report_options, check_outputs, emit, names, write_page_beside


def _device_default() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _check_numbers_and_paths(args) -> None:
    for option in ("json", "csv", "plot", "cache_dir", "skip_done", "history", "picks"):
        if getattr(args, option) == "":  # an unset shell variable: not the default
            raise UsageError(f"--{option.replace('_', '-')} '': expected a path")
    for option, value, least in (("--repeat", args.repeat, 1), ("--cell-repeats", args.cell_repeats, 1),
                                 ("--warmup", args.warmup, 0), ("--profile", args.profile, 0), ("--jobs", args.jobs, 1)):
        if value is not None and value < least:
            raise UsageError(f"{option} {value}: expected {least} or more")
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g}: expected seconds > 0")
    if args.budget is not None and args.budget <= 0:
        raise UsageError(f"--budget {args.budget:g}: expected seconds > 0")
    if args.history is not None and args.budget is None:
        raise UsageError("--history prices cells for --budget: give --budget SECONDS too")
    partitions(args)
    if args.picks is not None:
        if args.caches != "shared":
            raise UsageError("--picks seeds and saves a model's shared cache: it needs --caches shared")
        check_picks_folder(args.picks, writable=False)  # --estimate writes nothing; a run checks the rest below


def partitions(args) -> None:
    """``--total-partitions N --partition-id K`` (0-based, as PyTorch's benchmarks/dynamo runners
    split work): the share ``--shard K+1/N`` runs, whole models when there are at least N, so N jobs
    of a scheduler's array each run one and ``merge`` joins their files."""
    total, k = args.total_partitions, args.partition_id
    if total is None and k is None:
        return
    if total is None or k is None:
        raise UsageError("--total-partitions N and --partition-id K go together (K from 0 to N-1)")
    if total < 1:
        raise UsageError(f"--total-partitions {total}: expected 1 or more")
    if not 0 <= k < total:
        raise UsageError(f"--partition-id {k}: out of range for --total-partitions {total} (0 to {total - 1})")
    if args.shard != (1, 1):
        raise UsageError("--total-partitions/--partition-id is a share as --shard K/N is: give one of them")
    args.shard = (k + 1, total)


def _shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
        assert 1 <= k <= n
    except (ValueError, AssertionError):
        raise argparse.ArgumentTypeError(f"--shard {text!r}: expected K/N with 1 <= K <= N") from None
    return k, n


def _interrupt(signum, frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def parser() -> OneLineParser:
    """bench's options, in the groups ``--help`` shows."""
    p = OneLineParser(prog="python -m inductor_ablate bench",
                      description="The ablation study: speedup over eager per config, kernel counts, "
                                  "accuracy checked; every cell in a fresh process.")
    g = p.add_argument_group("what to run")
    g.add_argument("--device", default=None, help="cpu or cuda (default: cuda if present)")
    g.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    g.add_argument("--mode", default="inference", choices=["inference", "training"])
    g.add_argument("--suite", default="embedded", help="embedded (default), torchvision, timm, hf, real (all three), or module:function")
    g.add_argument("--models", default=None, help="comma list (default: the whole suite)")
    g.add_argument("--configs", default=None, help="comma list of configs or groups (paper, ours, kinds, central, full; default full on CPU, central on CUDA); "
                   "fusion kinds together: no-fusion-KIND+KIND (e.g. no-fusion-vertical+horizontal)")
    g.add_argument("--base", default=None, metavar="ROW",
                   help="apply ROW's Inductor settings (e.g. no-matmul-templates) to every row, `all` included: "
                        "the ablation again with that optimization off; its cells carry base=ROW, and a results "
                        "file or merge of another base is refused")
    g.add_argument("--regions", default=None, metavar="GLOBS",
                   help="run each chosen fusion/inlining row once more per region, scoped to it (ROW@GLOB: "
                        "module paths as named_modules() spells them; | joins globs of one region; NAME=GLOBS "
                        "names it; depth:N: each model's paths of N parts, layer indices as *): where its "
                        "loss sits (report --markdown --table regions)")
    g.add_argument("--cpu-templates", action="store_true",
                   help="CPU: include matmul templates (max_autotune_gemm, ATEN,CPP) in `all` (slow autotuning)")
    g = p.add_argument_group("timing")
    g.add_argument("--repeat", type=int, default=None, help="timed samples per cell (default 15 CPU, 50 CUDA)")
    g.add_argument("--cell-repeats", type=int, default=None, metavar="K",
                   help="run each cell in K separate processes and pool them: the intervals then hold the "
                        "noise between processes, where most of it is (default 2 on CUDA, where it costs ~5%% "
                        "more wall and gives the noise floor its pairs; 1 on CPU)")
    g.add_argument("--warmup", type=int, default=3)
    g.add_argument("--profile", type=int, nargs="?", const=20, default=0, metavar="K",
                   help="after timing, profile K steps (default 20) of each cell: kernel times, bytes, gaps "
                        "(results 'profile'; read by `explain`)")
    g.add_argument("--timeout", type=float, default=900, help="seconds per cell")
    g = p.add_argument_group("results")
    g.add_argument("--json", default=None, help="results file (resumed if it exists); default results/bench-*.json")
    g.add_argument("--fresh", action="store_true", help="ignore an existing results file")
    add_report_options(g)
    g = p.add_argument_group("caches and autotuning")
    g.add_argument("--caches", default="shared", choices=["shared", "isolated"],
                   help="shared (default): a model's cells share Inductor's autotuning and kernel caches (each "
                        "cell's FX-graph/AOTAutograd artifacts stay its own), so a model autotunes once; "
                        "isolated: every cell starts from an empty cache, as a first-time user would")
    g.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="where the shared caches live (kept; default: beside the results file, removed once "
                        "every cell is done, kept while a run is unfinished so a resumed run stays warm)")
    g.add_argument("--picks", default=None, metavar="DIR",
                   help="a folder of autotuning picks (which matmul choice won for which shape), one subfolder per "
                        "model and setting: a model's first cell starts from them instead of benchmarking every "
                        "choice again (its cache: seeded), and every cell's picks are saved there, so a run on a "
                        "fresh machine, or one whose cold cell was cut, resumes its autotuning")
    _add_work_options(p)
    return p


def _add_work_options(p: OneLineParser) -> None:
    """How the cells are spread (jobs, shares, a launcher) and within what time (a budget); listing."""
    g = p.add_argument_group("sharing the work")
    g.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="cells in flight at once: while one has the device to itself (timing, autotuning "
                        "benchmarks), the others compile (default on CUDA: one per 4 cores and 16 GiB, at most 4; "
                        "on CPU 1, since compiles would take the cores a cell is timed on); with --budget, a cell whose "
                        "price says it autotunes a minute or more waits while another such cell runs")
    g.add_argument("--shard", type=_shard, default=(1, 1), metavar="K/N", help="run only this share of the cells")
    g.add_argument("--total-partitions", type=int, default=None, metavar="N",
                   help="with --partition-id: split the cells into N shares (whole models where there are N or "
                        "more), as PyTorch's benchmark runners do")
    g.add_argument("--partition-id", type=int, default=None, metavar="K",
                   help="which share to run, 0 to N-1 (= --shard K+1/N); `merge` joins the shares' files")
    g.add_argument("--skip-done", default=None, metavar="FILES",
                   help="comma list of results files (an earlier run, a merged file): cells that ran ok there "
                        "are not run again, but a model's `all` is whenever another of its cells runs")
    g = p.add_argument_group("launcher (through submitit)")
    g.add_argument("--launcher", default=None, choices=["local", "slurm"],
                   help="spread the cells over jobs through submitit (pip install 'inductor_ablate[cluster]'): slurm, "
                        "one job per model as a job array; local, one job per GPU here; merged into --json at the end")
    g.add_argument("--slurm-partition", default=None, metavar="P", help="with --launcher slurm: the partition")
    g.add_argument("--gpus-per-job", type=int, default=None, metavar="G",
                   help="with --launcher slurm: GPUs per job (default 1 on cuda, 0 on cpu)")
    g.add_argument("--cpus-per-job", type=int, default=None, metavar="C", help="with --launcher slurm: CPUs per job")
    g.add_argument("--time", type=int, default=None, metavar="MIN",
                   help="with --launcher: each job's time limit in minutes (default 60 on Slurm); a job cut there "
                        "is submitted again and resumes its part file")
    g = p.add_argument_group("time budget")
    g.add_argument("--estimate", default=None, metavar="FILES",
                   help="run nothing: print the cells this command would run (after --skip-done and what --json "
                        "holds) and about how long they take, from the cell times in FILES (a comma list of "
                        "results files of earlier runs); --device cuda is accepted on a machine without one")
    g.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="do not start a cell that would likely not finish within SECONDS of the start (priced as "
                        "--estimate prices it, from the --skip-done and --history files and the results file); "
                        "stop there as if interrupted: a run under a hard time limit then loses no cut cell")
    g.add_argument("--history", default=None, metavar="FILES",
                   help="with --budget: more results files to price cells from (e.g. another dtype's run)")
    g = p.add_argument_group("listing and output")
    g.add_argument("--list", action="store_true", help="print the configs and what each sets, then exit")
    g.add_argument("--list-models", action="store_true",
                   help="print every model of every suite and whether its package is installed, then exit")
    g.add_argument("--no-progress", action="store_true")


@dataclasses.dataclass
class Study:
    """What one bench command runs, from its checked options."""
    device: str
    suite: dict
    models: list[str]
    cells: list[dict]
    path: str
    repeat: int
    jobs: int


def main(argv) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.list:
        print(describe())
        return 0
    if args.list_models:
        print(list_models())
        return 0
    # Everything is checked before anything is changed (--fresh removes the old results file last).
    study = _plan(args, p)
    if args.estimate is not None:
        return _estimate_main(args, study.cells, study.device, study.path)
    check_outputs(args)
    check_writable(study.path)
    if args.picks:
        check_picks_folder(args.picks)
    if not args.fresh:
        load_results(study.path)  # a damaged or foreign results file is refused now, not after the first cell
    if args.launcher:
        return launch.launch(args, argv, study.models, study.device, study.path, merge.main)
    meta = _meta(args, study)
    _check_earlier(args, study.path, meta)
    if args.fresh and os.path.exists(study.path):
        os.remove(study.path)
    signal.signal(signal.SIGTERM, _interrupt)  # `timeout`, a cluster scheduler: stop like Ctrl-C, resumable
    try:
        rows = _run(args, study, meta)
    except KeyboardInterrupt as exc:
        done = len(load_results(study.path))
        why = f"stopped for --budget: {exc}" if isinstance(exc, BudgetSpent) else f"interrupted ({str(exc) or 'SIGINT, Ctrl-C'})"
        print(f"\n{why}: {done} cells saved in {study.path}; the same command resumes", file=sys.stderr)
        return 130
    return _finish(args, study, rows, meta)


def _plan(args, p: OneLineParser) -> Study:
    """The options checked, and the cells they name."""
    if args.device is not None:
        try:  # an estimate plans a run for another machine: the device need not be here
            device_option(args.device, present=args.estimate is None)
        except argparse.ArgumentTypeError as exc:
            p.error(f"argument --device: {exc}")
    if args.estimate == "":
        raise UsageError("--estimate '': expected a comma list of results files")
    _check_numbers_and_paths(args)
    for history in names("--history", args.history) or []:
        read_results_file(history)  # a bad --history file is one line now, not when the first cell is priced
    device = args.device or _device_default()
    launch.check(args, device)
    suite = load_suite(args.suite)
    models = names("--models", args.models) or list(suite)
    unknown = [m for m in models if m not in suite]
    if unknown:
        raise UsageError(f"unknown model(s) {', '.join(unknown)}; suite {args.suite!r} has {', '.join(suite)}")
    named = names("--configs", args.configs) or [default_group(device)]
    configs = resolve(",".join(named))
    if args.base is not None:
        base_row(args.base, named, device, args.mode, args.cpu_templates)
        configs = [c for c in configs if c != args.base]  # it came with a group: it is every row's now
    model_configs = _regions(args, configs, models)
    jobs = args.jobs or default_jobs(device)
    if args.cell_repeats is None:
        args.cell_repeats = 2 if device.startswith("cuda") else 1
    if jobs > 1 and not device.startswith("cuda"):
        print(f"--jobs {jobs} on CPU: cells compiling beside the one timed share its cores, so its times are "
              f"disturbed; for figures, run with --jobs 1 (the CPU default)", file=sys.stderr)
    shard = f"-shard{args.shard[0]}of{args.shard[1]}" if args.shard != (1, 1) else ""
    path = args.json or os.path.join("results", f"bench-{args.suite.replace(':', '_')}-{device}-{args.dtype}-{args.mode}{shard}.json")
    cells = plan(models, configs, suite=args.suite, device=device, dtype=args.dtype, mode=args.mode,
                 shard=args.shard, repeats=args.cell_repeats, all_first=args.caches == "shared",
                 model_configs=model_configs)
    if args.skip_done is not None:
        cells = skip_done(cells, names("--skip-done", args.skip_done), args.cpu_templates)
    repeat = args.repeat or (50 if device.startswith("cuda") else 15)
    return Study(device, suite, models, cells, path, repeat, jobs)


def _regions(args, configs: list[str], models: list[str]) -> dict[str, list[str]]:
    """``--regions``: each model's scoped rows, run after ``configs``: the same for globs every model
    shares, or for ``depth:N`` the model's own module paths."""
    regions = names("--regions", args.regions)
    if regions is None:
        return {}
    depth = regions[0].removeprefix("depth:") if regions[0].startswith("depth:") else None
    if depth is None:
        scoped = by_region(configs, regions)
        return {m: scoped for m in models}
    if len(regions) > 1 or not depth.isdigit() or int(depth) < 1:
        raise UsageError(f"--regions {args.regions}: depth:N takes a whole number N >= 1, alone (module paths of N parts)")
    by_region(configs, ["*"])  # the rows can be scoped at all: one line now, before models are built
    found = {m: module_regions(args.suite, m, int(depth)) for m in models}
    if not any(found.values()):
        raise UsageError(f"--regions depth:{depth}: no model has a module path of {depth} parts")
    return {m: by_region(configs, regions) for m, regions in found.items() if regions}


def _meta(args, study: Study) -> dict:
    """The results file's ``meta``: the versions, the machine and the options of the run."""
    import importlib.metadata

    import torch

    try:
        triton = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        triton = None
    return dict(torch=torch.__version__, triton=triton, python=platform.python_version(), machine=platform.node(),
                device_name=device_name(study.device), cpus=os.cpu_count(), repeat=study.repeat, warmup=args.warmup,
                started=time.strftime("%Y-%m-%d %H:%M:%S"), shard=f"{args.shard[0]}/{args.shard[1]}",
                cpu_templates=args.cpu_templates, base=args.base, argv=sys.argv, cell_repeats=args.cell_repeats,
                caches=args.caches, jobs=study.jobs, skip_done=args.skip_done, picks=args.picks, profile=args.profile,
                gpus=1 if study.device.startswith("cuda") else 0)


def _check_earlier(args, path: str, meta: dict) -> None:
    """A resumed file, and a --skip-done file, keep one device's cells and one base: cells done on
    another device are not done here."""
    earlier = ([(path, f"resuming --json {path} here")] if not args.fresh and os.path.exists(path) else []) + [
        (done, f"leaving out the cells of --skip-done {done} here") for done in names("--skip-done", args.skip_done) or []]
    if earlier[:1] and earlier[0][0] == path:
        check_one_setting(path, read_results_file(path), (args.suite, args.dtype, args.mode))
    for earlier_path, what in earlier:
        data = read_results_file(earlier_path)
        check_one_device({earlier_path: device_names(data.get("meta", {})), "this machine": {meta["device_name"]}}, what)
        check_one_base({earlier_path: bases(data), "this command": {args.base}}, what)


def _run(args, study: Study, meta: dict) -> dict:
    budget = None
    if args.budget is not None:
        budget = (args.budget, (names("--skip-done", args.skip_done) or []) + (names("--history", args.history) or []))
    return run_matrix(study.cells, results_path=study.path, meta=meta, repeat=study.repeat, warmup=args.warmup,
                      timeout=args.timeout, progress=not args.no_progress, cpu_templates=args.cpu_templates,
                      caches=args.caches, cache_root=args.cache_dir, jobs=study.jobs, budget=budget, picks=args.picks,
                      base=args.base, profile=args.profile,
                      unavailable={m: study.suite[m].missing for m in study.models if hasattr(study.suite[m], "missing")})


def _finish(args, study: Study, rows: dict, meta: dict) -> int:
    """The tables, the results file with its summary, where the time went, and the page."""
    this_run = meta["pieces"][-1]["wall_s"]  # run_matrix keeps each run's wall
    meta["wall_s"] = round(sum(p["wall_s"] for p in meta["pieces"]), 1)  # a resumed study: all its runs
    wanted = {cell_key(c) for c in study.cells}
    mine = [r for k, r in rows.items() if k in wanted]
    summary = emit(mine, args)
    if len(mine) < len(rows):  # the file holds other cells too: its summary covers them all
        summary = summary_rows(list(rows.values()), args.baseline)
    save_results(study.path, rows, meta, summary=summary)
    print(f"\n{terminal.time_split(mine, meta['wall_s'], meta)}")
    print(terminal.same_code_spread(mine))
    print(terminal.eager_spread(mine))
    pieces = f"; {meta['wall_s']:.0f} s in {len(meta['pieces'])} runs" if len(meta["pieces"]) > 1 else ""
    print(f"results: {study.path}  ({len(mine)} cells, this run {this_run:.0f} s{pieces})")
    write_page_beside(study.path, args.baseline)
    return 0 if all(r["status"] in ("ok", "n/a") for r in mine) else 1


def _estimate_main(args, cells, device, path) -> int:
    """``bench --estimate``: of the planned ``cells``, those the same command would run (not in its
    results file, not n/a), and their cost; writes nothing."""
    history = names("--estimate", args.estimate)
    done = {} if args.fresh else kept_on_resume(path)
    cells = [c for c in cells if cell_key(c) not in done
             and not by_name(c["config"]).not_applicable(c["device"], c["mode"], args.cpu_templates)]
    print(estimate(cells, history, device=device, dtype=args.dtype, mode=args.mode, budget=args.budget,
                   picks=args.picks, done=list(done.values()), cuts=[] if args.fresh else earlier_cuts(path),
                   jobs=args.jobs))
    return 0
