"""The matrix: which cells to run, in which order, in fresh processes, with resume and shards."""
from __future__ import annotations

import json
import multiprocessing
import os
import platform
import random
import shutil
import sys
import tempfile
import time

from ..errors import UsageError, check_writable
from .configs import by_name
from .estimate import Budget, BudgetSpent, all_cuts

#: ``--budget`` with ``--picks``: the fewest seconds left for which a model's first cell that does not
#: fit is started anyway, to bank its autotuning picks (less would not get past its model's set-up)
BANK_SECONDS = 60

KEY_FIELDS = ("suite", "model", "config", "device", "dtype", "mode")
#: how a cell's error row begins when ``bench --timeout`` stopped it (a cut, as a call's end is)
TIMED_OUT = "timed out after"


def cell_key(row: dict) -> tuple:
    """A cell: the setting, and which of its repeats (``--cell-repeats``; files from before have 0)."""
    return (*(row[k] for k in KEY_FIELDS), row.get("cell_repeat", 0))


def plan(models: list[str], configs: list[str], *, suite: str, device: str, dtype: str, mode: str,
         shard: tuple[int, int] = (1, 1), repeats: int = 1, all_first: bool = False) -> list[dict]:
    """Every (model, config, repeat) cell, in a deterministic interleaved order (configs shuffled per
    model and repeat, so no config always runs first or last), then this shard's share.  Each repeat
    is its own process: between processes is where most of the timing variance is.

    ``all_first`` (shared caches): a model's first cell is `all`, which autotunes every matmul the
    other rows can reuse, and a shard takes whole models when there are at least as many models as
    shards, so each model autotunes once per run, not once per shard."""
    cells = []
    rng = random.Random(0)
    for model in models:
        for r in range(repeats):
            order = list(configs)
            rng.shuffle(order)
            if all_first and r == 0 and "all" in order:
                order.remove("all")
                order.insert(0, "all")
            cells += [dict(suite=suite, model=model, config=c, device=device, dtype=dtype, mode=mode, cell_repeat=r)
                      for c in order]
    k, n = shard
    if all_first and len(models) >= n:
        return [c for c in cells if models.index(c["model"]) % n == k - 1]
    return [c for i, c in enumerate(cells) if i % n == k - 1]


#: Written into every results file; a file from a newer format is refused, not misread.
RESULTS_FORMAT = 1


#: what to do about a bad results file given as --json (the file a run writes and resumes)
RESUME_HINT = "--fresh starts over, or choose another --json path"


def read_results_file(path: str, hint: str = "give a results file written by `bench` or `merge`") -> dict:
    """A results file's ``{"meta", "cells"}``, checked; a UsageError naming the file (and ``hint``,
    what to do about it) otherwise."""
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"results file {path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"results file {path}: cannot read it ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"results file {path} is not JSON ({exc}); {hint}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise UsageError(f"results file {path} is not an inductor_ablate results file (no 'cells' list); {hint}")
    if data.get("format", RESULTS_FORMAT) > RESULTS_FORMAT:
        raise UsageError(f"results file {path} was written by a newer inductor_ablate (format {data['format']}; "
                         f"this one reads {RESULTS_FORMAT}): upgrade, or {hint}")
    for i, cell in enumerate(data["cells"]):
        lacking = [k for k in (*KEY_FIELDS, "status") if not isinstance(cell, dict) or k not in cell]
        if lacking:
            raise UsageError(f"results file {path}: cell {i} lacks {', '.join(lacking)} (written by an older or "
                             f"different tool?); {hint}")
    _check_cuts(data.get("meta"), path, hint)
    return data


def _check_cuts(meta, path: str, hint: str) -> None:
    """Each cut a results file's meta records (``estimate.all_cuts``) names a cell, its cache state
    and seconds, as ``estimate.Prices`` reads it."""
    for i, cut in enumerate(all_cuts(meta)):
        if not (isinstance(cut, dict) and all(k in cut for k in (*KEY_FIELDS, "cache"))
                and isinstance(cut.get("cut_s"), (int, float))
                and all(isinstance(cut.get(k, 0), (int, float)) for k in ("priced_s", "left_s"))):
            raise UsageError(f"results file {path}: meta's cut {i} is not a cut (the cell's fields, 'cache' and "
                             f"'cut_s' seconds, and 'priced_s' and 'left_s' seconds where given); {hint}")


def skip_done(cells: list[dict], paths: list[str], cpu_templates: bool = False) -> list[dict]:
    """``cells`` less those that already ran ok in the results files ``paths`` (another session's
    run, a merged file), so a new run measures only what is missing.  A model's `all` cell stays
    whenever another cell of that model is still to be timed: each row is paired with the `all` of
    its own run, and `all` is what autotunes the model for the rest (``merge --pool-repeats`` then
    pools the two runs).  A row that is n/a there (an inference row in training) times nothing, so it
    does not bring its model's `all` back."""
    done = set()
    for path in paths:
        done |= {cell_key(c)[:-1] for c in read_results_file(path)["cells"] if c.get("status") == "ok"}
    busy = {(c["model"], c.get("cell_repeat", 0)) for c in cells if cell_key(c)[:-1] not in done
            and not by_name(c["config"]).not_applicable(c["device"], c["mode"], cpu_templates)}
    return [c for c in cells if cell_key(c)[:-1] not in done
            or (c["config"] == "all" and (c["model"], c.get("cell_repeat", 0)) in busy)]


def load_results(path: str | None) -> dict:
    if not path or not os.path.exists(path):
        return {}
    return {cell_key(r): r for r in read_results_file(path, RESUME_HINT)["cells"]}


def device_name(device: str) -> str:
    """The name a results file records for ``device`` (``bench``'s meta), and which picks files are
    matched against: the GPU's as torch gives it, or the processor's (often empty, so ``cpu``)."""
    import torch

    return torch.cuda.get_device_name(device) if device.startswith("cuda") else platform.processor() or "cpu"


def device_names(meta: dict) -> set[str]:
    """The devices a results file's cells ran on, by name (``bench`` records ``device_name``: the GPU's,
    or the CPU's), through the parts of a merged file; a file written before the name was recorded
    gives none."""
    names = {meta["device_name"]} if meta.get("device_name") else set()
    for part in meta.get("parts", []):
        names |= device_names(part)
    return names


def _refuse_mixing(named: dict[str, set], what: str, mixed: str, keep: str, shown=str) -> None:
    """``named``: {file or this run: the values it holds}; more than one value in all is one line:
    '{what} would mix {n} {mixed} (where); {keep} and set them side by side with `compare`'."""
    every = set().union(*named.values()) if named else set()
    if len(every) > 1:
        where = "; ".join(f"{k}: {', '.join(sorted(map(shown, v)))}" for k, v in named.items() if v)
        raise UsageError(f"{what} would mix {len(every)} {mixed} ({where}); {keep} and set them side by side "
                         f"with `python -m inductor_ablate compare --labels`")


def check_one_device(named: dict[str, set[str]], what: str) -> None:
    """``named``: {file or 'this machine': device names}.  Two GPUs' (or CPUs') cells in one file or
    one table would be read as one machine's; refuse, in one line, before any work."""
    _refuse_mixing(named, what, "devices", "keep each device's cells in files of their own")


def bases(data: dict) -> set:
    """The ``bench --base`` rows a results file's cells ran with (None: no base; a file from before
    ``--base`` counts as None); an empty file, its meta's."""
    found = {c.get("base") for c in data.get("cells", [])}
    return found or ({data["meta"].get("base")} if "base" in data.get("meta", {}) else set())


def check_one_base(named: dict[str, set], what: str) -> None:
    """``named``: {file or 'this command': bases}.  A row measured with another ``--base`` is another
    measurement under the same name: refuse to resume, skip or merge across bases, in one line."""
    _refuse_mixing(named, what, "bases", "keep each --base's cells in a results file of its own",
                   shown=lambda b: b or "no --base")


def kept_on_resume(path: str | None) -> dict:
    """The rows of ``path`` that a resumed run keeps: all but errors (a timeout, a crash), which it
    runs again."""
    return {k: r for k, r in load_results(path).items() if r.get("status") != "error"}


def earlier_cuts(path: str | None) -> list[dict]:
    """The cuts a results file records (``estimate.all_cuts``): cells a time limit stopped, and how far
    in. A cut leaves no cell (it runs again on resume), so this is what prices it next time."""
    if not path or not os.path.exists(path):
        return []
    return all_cuts(read_results_file(path, RESUME_HINT).get("meta"))


def save_results(path: str, rows: dict, meta: dict, summary: list | None = None) -> None:
    """Atomically; ``summary`` (the report's rows, with intervals) is added at the end of a run."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    data = {"format": RESULTS_FORMAT, "meta": meta, "cells": list(rows.values())}
    if summary is not None:
        data["summary"] = summary
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, default=str)
    os.replace(tmp, path)


def _child(task, conn):
    """Runs in the fresh process: its output (autotuning tables, warnings) goes to a per-cell log."""
    from .cell import run_cell

    log_path = os.path.join(task["artifact_dir"], "cell.log")
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stdout.flush(), sys.stderr.flush()
    os.dup2(log, 1), os.dup2(log, 2)
    row = run_cell(task)
    if row.get("status") == "error":
        sys.stdout.flush(), sys.stderr.flush()
        with open(log_path, errors="replace") as f:
            row["log_tail"] = f.read()[-2000:]
    conn.send(row)
    conn.close()


def _context(device: str):
    """CUDA: a forkserver that has imported torch only (importing Inductor touches CUDA, and CUDA
    cannot be re-initialized in a forked child), so each cell imports Inductor itself.  CPU: A forkserver that has already imported torch, Inductor and the overlay, and probed the CPU's
    vector ISA (about 9 s of g++ runs on a 2-core machine): every cell is a fresh process (its own
    Inductor state and cache directory) without paying those again."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["torch"] if device.startswith("cuda") else ["inductor_ablate.bench.warm"])
    return ctx


def cache_name(cell: dict) -> str:
    """The name of a model's shared cache directory (one per model, dtype, mode and device), and of
    its folder of autotuning picks under ``bench --picks``."""
    return "-".join(str(cell[k]) for k in ("model", "dtype", "mode", "device")).replace(":", "_").replace("/", "_")


def cache_dirs(root: str, cell: dict, shared: bool) -> tuple[str, str]:
    """(Inductor's cache directory, this cell's own directory for FX-graph/AOTAutograd artifacts and
    its log).  Shared: one Inductor directory per model, setting and run, so its cells reuse the
    model's autotuning results and compiled kernels; every cell's graph artifacts stay its own."""
    name = cache_name(cell)
    own = tempfile.mkdtemp(dir=root, prefix=f"{name}-{cell['config']}-")
    return (os.path.join(root, name) if shared else own), own


#: where, under an Inductor cache directory, the autotuning picks live: select_algorithm's
#: PersistentCache, one JSON file per system (GPU or CPU, torch, triton) holding each matmul
#: template choice's benchmarked time, keyed by op and input shapes and layouts
PICKS_SUBDIR = "cache"


def check_picks_folder(picks: str, writable: bool = True) -> None:
    """``--picks DIR`` (bench's, model_latency.py's): one line before any compile when it is a file,
    or (``writable``) a folder where the picks, saved after each compile, cannot be written."""
    if os.path.exists(picks) and not os.path.isdir(picks):
        raise UsageError(f"--picks {picks}: not a folder; give a folder of picks saved by an earlier --picks run, "
                         f"or a new one")
    if writable:
        check_writable(os.path.join(picks, "picks"), "picks folder", "choose another --picks folder")


def has_picks(picks: str, cell: dict, device_name: str | None = None) -> bool:
    """Whether ``bench --picks`` holds autotuning picks for this cell's model and setting; with
    ``device_name``, picks benchmarked on that device: Inductor keys each file by the system (the
    GPU's name among it), so the H200's picks do not seed an H100's compile, and a cell given them
    is cold, not seeded.  A file whose system cannot be read counts as a match."""
    folder = os.path.join(picks, cache_name(cell))
    if device_name is None:
        return _has_files(folder)
    return any(name in (device_name, None) for name in _picks_devices(folder))


def _picks_devices(folder: str) -> set[str | None]:
    """The device names of the picks files under ``folder`` (select_algorithm's PersistentCache
    writes ``{"system": {"device": {"name": ...}, ...}, ...}``); None for a file not of that shape."""
    names: set[str | None] = set()
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                with open(os.path.join(root, name)) as f:
                    names.add(json.load(f)["system"]["device"]["name"])
            except (OSError, ValueError, KeyError, TypeError):
                names.add(None)
    return names


def seed_picks(picks: str, cell: dict, cache_dir: str) -> None:
    """Copy the saved picks of the cell's model and setting into its (empty) cache directory, so its
    first cell compiles with them instead of benchmarking every matmul choice again.  Picks of another
    torch or triton on the same GPU sit in a file Inductor does not read there: that cell autotunes as
    a cold one does, which its ``autotune_s`` shows (another GPU's picks are not seeded: ``has_picks``)."""
    shutil.copytree(os.path.join(picks, cache_name(cell)), os.path.join(cache_dir, PICKS_SUBDIR), dirs_exist_ok=True)


def save_picks(picks: str, cell: dict, cache_dir: str) -> None:
    """Copy the cache directory's picks (what the cell benchmarked, and what it was seeded with) to
    ``picks``, where a later run, on a fresh machine too, starts from them."""
    src = os.path.join(cache_dir, PICKS_SUBDIR)
    if _has_files(src):
        shutil.copytree(src, os.path.join(picks, cache_name(cell)), dirs_exist_ok=True)


def _has_files(path: str) -> bool:
    return any(files for _, _, files in os.walk(path))


def _claim_path(claims_dir: str, model: str) -> str:
    return os.path.join(claims_dir, model.replace("/", "_").replace(":", "_"))


def _owner(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


def claim(claims_dir: str, model: str, lane: int) -> bool:
    """Whether ``model`` is this lane's to run: claimed now (the claim file is created atomically, so
    two lanes never both get it), or claimed by this lane in an earlier run that was cut short."""
    path = _claim_path(claims_dir, model)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return _owner(path) == str(lane)
    with os.fdopen(fd, "w") as f:
        f.write(str(lane))
    return True


def _by_claim(todo: list[dict], claims: tuple[str, int] | None, claiming=lambda: True):
    """The cells to run, model by model.  Without ``claims``: all of them, in order.  With
    ``(claims_dir, lane)``: lanes share one queue of whole models; this lane finishes the models it
    claimed in an earlier run first, then claims each next free model when it is ready for it, so a
    lane whose models were cheap takes more of them instead of idling.  Once ``claiming()`` is
    false, it claims no more (a lane out of budget leaves the free models to the others)."""
    models: dict[str, list[dict]] = {}
    for cell in todo:
        models.setdefault(cell["model"], []).append(cell)
    if claims is None:
        yield from models.values()
        return
    claims_dir, lane = claims
    os.makedirs(claims_dir, exist_ok=True)
    # stable sort: the models this lane claimed in an earlier run first, then the rest in order
    earlier = {m for m in models if _owner(_claim_path(claims_dir, m)) == str(lane)}
    for model in sorted(models, key=lambda m: m not in earlier):
        if (model in earlier or claiming()) and claim(claims_dir, model, lane):
            yield models[model]


def run_matrix(cells: list[dict], *, results_path: str, meta: dict, repeat: int, warmup: int,
               timeout: float, progress: bool = True, cpu_templates: bool = False,
               caches: str = "shared", cache_root: str | None = None, unavailable: dict | None = None,
               claims: tuple[str, int] | None = None, budget: tuple[float, list[str]] | None = None,
               picks: str | None = None, base: str | None = None, profile: int = 0) -> dict:
    """Run the cells not already in ``results_path`` (resume; cells that ended in an error, e.g. a
    timeout, are run again), saving after each one.

    ``caches``: "shared" (a model's cells share Inductor's autotuning and kernel caches under
    ``cache_root``, which is kept until every cell is done, so a resumed run stays warm) or
    "isolated" (every cell starts from an empty cache directory).  ``unavailable``: {model: why}
    for models that cannot be built here (a missing package): their cells are n/a rows.
    ``claims``: (directory, lane) to take whole models from a queue shared with other lanes
    (``bench --claims``): ``cells`` is then every lane's cells, and this lane runs those it claims.
    ``budget``: (seconds, results files to price cells from): a cell priced above the seconds left
    is not started, nor are its model's later cells (they would lose its warm cache); the run goes
    on with the next models' cells that fit, then stops as if interrupted (``estimate.Budget``).
    ``picks``: a folder of autotuning picks (``bench --picks``): a model's first cell starts from
    its picks there (``cache`` "seeded" instead of "cold"), and every cell's picks are saved there
    after it.  ``base``: ``bench --base``, a row whose Inductor settings every cell also takes.
    A cell that a time limit stops (a call's end, ``timeout``) is added to ``meta["cuts"]``, kept
    across resumes, with how far it got: it prices that cell from then on (``estimate.Prices``)."""
    rows = kept_on_resume(results_path)
    meta["cuts"] = earlier_cuts(results_path)
    pricer = None
    if budget is not None and cells:
        pricer = Budget(budget[0], budget[1], rows, cells[0]["device"], cells[0]["mode"], meta["cuts"])
    todo = [c for c in cells if cell_key(c) not in rows]

    def runnable(group: list[dict]) -> list[dict]:
        """n/a rows are decided here, cheaply, and never vanish; the rest are to run."""
        for cell in group:
            why = (unavailable or {}).get(cell["model"]) or \
                by_name(cell["config"]).not_applicable(cell["device"], cell["mode"], cpu_templates)
            if why:
                rows[cell_key(cell)] = {**cell, "status": "n/a", "message": why}
        return [c for c in group if cell_key(c) not in rows]

    if claims is None:
        todo = runnable(todo)
        if len(todo) < len(cells):
            print(f"{len(cells) - len(todo)} of {len(cells)} cells already in {results_path} or n/a", file=sys.stderr)
    save_results(results_path, rows, meta)
    bar = _progress(len(todo), progress)
    ctx = _context(todo[0]["device"]) if todo else None
    owned = cache_root is None  # ours to delete once every cell is done; a --cache-dir is the user's
    cache_root = cache_root or os.path.splitext(results_path)[0] + ".inductor-cache"
    os.makedirs(cache_root, exist_ok=True)
    finished = False
    not_started, first_stop = 0, None  # cells the budget did not start, and why the first was not
    bank = None  # the first model-first cell the budget did not start, when its picks outlive a cut

    def run(cell: dict, state: str, cache_dir: str, artifact_dir: str, quote: dict | None = None) -> None:
        if state == "seeded":
            seed_picks(picks, cell, cache_dir)
        task = {**cell, "repeat": repeat, "warmup": warmup, "cpu_templates": cpu_templates, "base": base, "profile": profile,
                "cache_dir": cache_dir, "artifact_dir": artifact_dir}
        started, row = time.perf_counter(), None
        try:
            row = _run_one(ctx, task, timeout)
        finally:  # a cell stopped by a time limit keeps what it benchmarked, too
            if picks:
                save_picks(picks, cell, cache_dir)
            if row is None or row.get("message", "").startswith(TIMED_OUT):
                cut_s = round(time.perf_counter() - started, 1)
                priced = {} if quote is None else {"priced_s": round(quote["price_s"], 1),
                                                   "left_s": round(max(quote["left_s"], 0), 1)}
                meta["cuts"].append({**{k: cell[k] for k in KEY_FIELDS}, "cache": state, "cut_s": cut_s, **priced})
            if row is None:  # the log says which cell a call's limit cut, how far in, and what it was priced at
                at = "" if not priced else (f" (priced at {priced['priced_s']:.0f} s, with {priced['left_s']:.0f} s "
                                            f"of --budget left at its start)")
                print(f"cut: {cell['model']} / {cell['config']} ({state} cache), "
                      f"{cut_s:.0f} s into its process{at}", file=sys.stderr, flush=True)
                save_results(results_path, rows, meta)
        row["cache"] = state
        rows[cell_key(cell)] = row
        save_results(results_path, rows, meta)
        shutil.rmtree(artifact_dir, ignore_errors=True)
        bar.update(1)

    try:
        for group in _by_claim(todo, claims, claiming=lambda: first_stop is None):
            if claims is not None:
                group = runnable(group)
                save_results(results_path, rows, meta)
            for i, cell in enumerate(group):
                bar.set_description(f"{cell['model']} / {cell['config']}")
                cache_dir, artifact_dir = cache_dirs(cache_root, cell, caches == "shared")
                warm = caches == "shared" and os.path.isdir(cache_dir) and _has_files(cache_dir)
                state = ("warm" if warm else "seeded" if picks and has_picks(picks, cell, meta.get("device_name"))
                         else "cold")
                quote = None
                if pricer is not None:
                    try:
                        quote = pricer.check(cell, state)
                    except BudgetSpent as exc:  # not started, nor its model's later cells
                        shutil.rmtree(artifact_dir, ignore_errors=True)
                        not_started += len(group) - i
                        first_stop = first_stop or exc
                        if bank is None and picks and state != "warm":
                            bank = (cell, state)
                        break
                run(cell, state, cache_dir, artifact_dir, quote)
        banked = bank is not None and pricer.left() >= BANK_SECONDS
        if banked:
            # Nothing else fits: the seconds left go to autotuning this model's first cell, whose
            # picks (``picks``) the next run starts from, though the call's end will likely cut it.
            cell, state = bank
            print(f"banking: {cell['model']} / {cell['config']} ({state}) starts with {pricer.left():.0f} s of the "
                  f"budget left; if a time limit cuts it, --picks keeps what it benchmarked", file=sys.stderr, flush=True)
            not_started -= 1
            run(cell, state, *cache_dirs(cache_root, cell, caches == "shared"), pricer.quote(cell, state))
        if first_stop is not None:
            raise BudgetSpent(f"{first_stop}; {not_started} cell(s) not started (the later models' cells that "
                              f"fitted ran{', then the first of them, banked' if banked else ''})")
        finished = True
    finally:
        bar.close()
        if owned and (finished or caches == "isolated"):
            shutil.rmtree(cache_root, ignore_errors=True)
    return rows


def _run_one(ctx, task: dict, timeout: float) -> dict:
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(task, child))
    t0 = time.perf_counter()
    proc.start()
    child.close()
    base = {k: task[k] for k in (*KEY_FIELDS, "cell_repeat") if k in task}
    row = None
    try:
        if parent.poll(timeout):
            row = parent.recv()
        else:
            row = {**base, "status": "error", "message": f"{TIMED_OUT} {timeout:.0f} s"}
    except EOFError:
        row = {**base, "status": "error", "message": "cell process died without a result"}
    finally:  # also on Ctrl-C / SIGTERM: no cell is left running on the GPU behind us
        proc.join(5 if row is not None else 0)
        if proc.is_alive():
            proc.kill()
            proc.join()
    if proc.exitcode not in (0, None) and row.get("status") != "ok" and "message" not in row:
        row["message"] = f"exit code {proc.exitcode}"
    row["wall_s"] = round(time.perf_counter() - t0, 2)
    return row


class _PlainBar:
    """A line per finished cell (no tqdm), or nothing (``quiet``)."""

    def __init__(self, total, quiet=False):
        self.total, self.n, self.desc, self.quiet = total, 0, "", quiet

    def set_description(self, desc):
        self.desc = desc

    def update(self, k):
        self.n += k
        if not self.quiet:
            print(f"[{self.n}/{self.total}] {self.desc}", file=sys.stderr, flush=True)

    def close(self):
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return _PlainBar(total, quiet=True)
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True)
    except ImportError:
        return _PlainBar(total)
