"""The matrix: which cells to run, in which order, in fresh processes, with resume and shards."""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import os
import random
import shutil
import sys
import tempfile
import time

from ..results import (KEY_FIELDS, all_cuts, cell_key, earlier_meta, kept_on_resume, pieces, read_results_file,
                       save_results)
from ..profile import measured_bandwidth
from ..rows import by_name
from .estimate import AUTOTUNE_ALONE_S, Budget, BudgetSpent
from .picks import cache_name, has_files, has_picks, save_picks, seed_picks

#: ``--budget`` with ``--picks``: the fewest seconds left for which a model's first cell that does not
#: fit is started anyway, to bank its autotuning picks (less would not get past its model's set-up)
BANK_SECONDS = 60

#: the suite whose packages the bench's forkserver imports before forking cells (bench.warm)
PRELOAD_ENV = "ABLATE_BENCH_PRELOAD_SUITE"

#: seconds the run waits for cell processes that sent their row to exit, then for a killed one
EXIT_GRACE_S = 5.0

#: how a cell's error row begins when ``bench --timeout`` stopped it (a cut, as a call's end is)
TIMED_OUT = "timed out after"


def plan(models: list[str], configs: list[str], *, suite: str, device: str, dtype: str, mode: str,
         shard: tuple[int, int] = (1, 1), repeats: int = 1, all_first: bool = False,
         model_configs: dict[str, list[str]] | None = None) -> list[dict]:
    """Every (model, config, repeat) cell, in a deterministic interleaved order (configs shuffled per
    model and repeat, so no config always runs first or last), then this shard's share.  Each repeat
    is its own process: between processes is where most of the timing variance is.

    ``all_first`` (shared caches): a model's first cell is `all`, which autotunes every matmul the
    other rows can reuse, and a shard takes whole models when there are at least as many models as
    shards, so each model autotunes once per run, not once per shard.  ``model_configs``: rows of one
    model only, after ``configs`` (``bench --regions depth:N``: each model's own regions)."""
    cells = []
    rng = random.Random(0)
    for model in models:
        for r in range(repeats):
            order = list(configs) + list((model_configs or {}).get(model, []))
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


def _context(device: str, suite: str):
    """A forkserver that has already imported torch, Inductor, the overlay and the suite's packages
    (transformers, timm, torchvision: seconds each), and probed the CPU's vector ISA (about 9 s of
    g++ runs on a 2-core machine): every cell is a fresh process (its own Inductor state and cache
    directory) without paying those again.

    On CUDA nothing in the server may initialize CUDA, or every forked cell fails with "Cannot
    re-initialize CUDA in forked subprocess".  torch.cuda.is_available(), asked while Inductor is
    imported, counts devices through the CUDA runtime, which does; through NVML it does not (same
    answer).  A probe forked from the server checks it; where CUDA was touched all the same, the
    server is started again with torch alone preloaded and each cell imports the rest itself."""
    os.environ[PRELOAD_ENV] = suite  # the forkserver starts with this environment (bench.warm reads it)
    if device.startswith("cuda"):
        os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["inductor_ablate.bench.warm"])
    if device.startswith("cuda") and not _forks_can_use_cuda(ctx):
        multiprocessing.forkserver._forkserver._stop()  # the next Process starts a fresh server
        ctx.set_forkserver_preload(["torch"])
        print("note: preloading Inductor initialized CUDA here, so each cell imports it itself (slower cells)",
              file=sys.stderr, flush=True)
    return ctx


def _probe(conn) -> None:
    import torch

    conn.send(not torch.cuda._is_in_bad_fork())
    conn.close()


def _forks_can_use_cuda(ctx) -> bool:
    """Whether a process forked from ``ctx``'s server may initialize CUDA (starts the server)."""
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_probe, args=(child,))
    proc.start()
    child.close()
    try:
        return bool(parent.recv()) if parent.poll(600) else False
    except EOFError:
        return False
    finally:
        proc.join(5)
        _stop(proc)


def cache_dirs(root: str, cell: dict, shared: bool, make: bool = True) -> tuple[str, str | None]:
    """(Inductor's cache directory, this cell's own directory for FX-graph/AOTAutograd artifacts and
    its log).  Shared: one Inductor directory per model, setting and run, so its cells reuse the
    model's autotuning results and compiled kernels; every cell's graph artifacts stay its own.
    ``make`` False: the shared one only, for a look (its own is None; isolated: both None)."""
    name = cache_name(cell)
    own = tempfile.mkdtemp(dir=root, prefix=f"{name}-{cell['config']}-") if make else None
    return (os.path.join(root, name) if shared else own), own


def default_jobs(device: str) -> int:
    """``--jobs`` left out: on CUDA, one cell in flight per 4 cores and 16 GiB of memory (each compile
    runs Inductor's compile workers), at most 4; on CPU 1, since a compile beside a timed cell would
    take the cores it is timed on."""
    if not device.startswith("cuda"):
        return 1
    try:
        memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    except (ValueError, OSError):
        memory_gib = 16
    try:  # the cores this process may use: a Slurm job's allocation, a local launcher job's share
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, min(4, cores // 4, int(memory_gib // 16)))


def _cores(device: str, jobs: int) -> dict:
    """``--jobs`` above 1 on CUDA: the cores a cell times on (kept free of compiles, whose launch
    overheads the timing of a row without CUDA graphs would otherwise measure) and the cores for the rest."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return {}
    if jobs < 2 or not device.startswith("cuda") or len(cores) < 4:
        return {}
    return {"timing_cores": cores[:1], "compile_cores": cores[1:]}


class _Flight:
    """A cell whose process is running."""

    def __init__(self, cell, state, cache_dir, artifact_dir, quote, proc, conn):
        self.cell, self.state, self.cache_dir, self.artifact_dir, self.quote = cell, state, cache_dir, artifact_dir, quote
        self.proc, self.conn, self.started = proc, conn, time.perf_counter()


def run_matrix(cells: list[dict], **options) -> dict:
    """Run the cells not already in ``results_path`` (resume; cells that ended in an error, e.g. a
    timeout, are run again), saving after each one; returns every row of the file.  The options are
    ``MatrixRun``'s."""
    return MatrixRun(cells, **options).run()


class MatrixRun:
    """One run of the matrix, with its state named: the queue (``pending``, by model in ``groups``),
    the cells in flight (``flights``) and those exiting, the budget (``pricer``) and the cell it may
    bank, and the rows saved after each cell.

    ``jobs``: cells in flight at once.  Above 1, the others compile while one has the device to
    itself (``devicelock``); a model's first cell still finishes before its other cells start, so
    they reuse its autotuning.  1: one cell after another.
    ``caches``: "shared" (a model's cells share Inductor's autotuning and kernel caches under
    ``cache_root``, which is kept until every cell is done, so a resumed run stays warm) or
    "isolated" (every cell starts from an empty cache directory).  ``unavailable``: {model: why}
    for models that cannot be built here (a missing package): their cells are n/a rows.
    ``budget``: (seconds, results files to price cells from): a cell priced above the seconds left
    is not started, nor are its model's later cells (they would lose its warm cache); the run goes
    on with the next models' cells that fit, then stops as if interrupted (``estimate.Budget``).
    ``picks``: a folder of autotuning picks (``bench --picks``): a model's first cell starts from
    its picks there (``cache`` "seeded" instead of "cold"), and every cell's picks are saved there
    after it.  ``base``: ``bench --base``, a row whose Inductor settings every cell also takes.
    A cell that a time limit stops (a call's end, ``timeout``) is added to ``meta["cuts"]``, kept
    across resumes, with how far it got: it prices that cell from then on (``estimate.Prices``).
    ``meta["pieces"]``: this run's start and wall seconds after the earlier runs' (a resumed study's
    wall is their sum), kept current at every save, so that an interrupted run counts too."""

    def __init__(self, cells: list[dict], *, results_path: str, meta: dict, repeat: int, warmup: int,
                 timeout: float, progress: bool = True, cpu_templates: bool = False,
                 caches: str = "shared", cache_root: str | None = None, unavailable: dict | None = None,
                 budget: tuple[float, list[str]] | None = None, picks: str | None = None,
                 base: str | None = None, profile: int = 0, jobs: int = 1):
        self.cells, self.results_path, self.meta, self.timeout, self.jobs = cells, results_path, meta, timeout, jobs
        self.cpu_templates, self.picks, self.profile, self.progress = cpu_templates, picks, profile, progress
        self.shared, self.isolated = caches == "shared", caches == "isolated"
        self.task = {"repeat": repeat, "warmup": warmup, "cpu_templates": cpu_templates, "base": base, "profile": profile}
        self.unavailable = unavailable or {}
        self.rows = kept_on_resume(results_path)
        earlier = earlier_meta(results_path)
        meta["cuts"] = all_cuts(earlier)
        self.t0, self.piece = time.perf_counter(), {"started": meta.get("started"), "wall_s": 0.0}
        meta["pieces"] = pieces(earlier) + [self.piece]
        self.pricer = None
        if budget is not None and cells:
            self.pricer = Budget(budget[0], budget[1], self.rows, cells[0]["device"], cells[0]["mode"], meta["cuts"], jobs)
        self.owned = cache_root is None  # ours to delete once every cell is done; a --cache-dir is the user's
        self.cache_root = cache_root or os.path.splitext(results_path)[0] + ".inductor-cache"
        self.flights: dict = {}  # connection -> _Flight
        self.exiting: list = []  # processes that sent their row and are exiting
        self.not_started, self.first_stop = 0, None  # cells the budget did not start, and why the first was not
        self.bank = None  # the first model-first cell the budget did not start, when its picks outlive a cut
        self.groups: list[list[dict]] = []  # the cells to run, by model, in plan order
        self.pending: set = set()  # ids of the cells not started yet
        self.told_deferred: set = set()  # ids of the cells whose wait behind another's autotuning was said

    def save(self) -> None:
        self.piece["wall_s"] = round(time.perf_counter() - self.t0, 1)
        if self.profile:  # the device's own bandwidth, as the profiled cells measured it
            self.meta["bandwidth"] = measured_bandwidth(self.rows.values())
        save_results(self.results_path, self.rows, self.meta)

    def _to_run(self) -> list[dict]:
        """The cells to run; n/a rows are decided here, cheaply, and never vanish."""
        todo, done, na = [], 0, 0
        for cell in self.cells:
            if cell_key(cell) in self.rows:
                if self.rows[cell_key(cell)].get("status") == "n/a":
                    na += 1
                else:
                    done += 1
                continue
            why = self.unavailable.get(cell["model"]) or \
                by_name(cell["config"]).not_applicable(cell["device"], cell["mode"], self.cpu_templates)
            if why:
                self.rows[cell_key(cell)] = {**cell, "status": "n/a", "message": why}
                na += 1
            else:
                todo.append(cell)
        if done:  # a fresh run's n/a cells (rows that do not apply here) were never run: not "already done"
            print(f"{done} of {len(self.cells)} cells already in {self.results_path}", file=sys.stderr)
        if na:
            print(f"{na} of {len(self.cells)} cells n/a here (rows that do not apply to this device or mode)",
                  file=sys.stderr)
        return todo

    def _prepare(self, todo: list[dict]) -> None:
        self.bar = _progress(len(todo), self.progress)
        self.ctx = _context(todo[0]["device"], todo[0]["suite"]) if todo else None
        os.makedirs(self.cache_root, exist_ok=True)
        if self.jobs > 1:
            self.task["device_lock"] = os.path.join(self.cache_root, "device.lock")
        self.task.update(_cores(todo[0]["device"], self.jobs) if todo else {})
        for cell in todo:
            if not self.groups or self.groups[-1][0]["model"] != cell["model"]:
                self.groups.append([])
            self.groups[-1].append(cell)
        self.pending = {id(c) for c in todo}

    def state_of(self, cell: dict, cache_dir: str | None) -> str:
        """How the cell's compile starts: warm (its model's shared cache), seeded (--picks) or cold."""
        warm = self.shared and cache_dir is not None and os.path.isdir(cache_dir) and has_files(cache_dir)
        seeded = self.picks and has_picks(self.picks, cell, self.meta.get("device_name"))
        return "warm" if warm else "seeded" if seeded else "cold"

    def start(self, cell: dict, quote: dict | None = None, state: str | None = None) -> None:
        cache_dir, artifact_dir = cache_dirs(self.cache_root, cell, self.shared)
        state = state or self.state_of(cell, cache_dir)
        if state == "seeded":
            seed_picks(self.picks, cell, cache_dir, self.meta.get("device_name"))
        task = {**cell, **self.task, "cache_dir": cache_dir, "artifact_dir": artifact_dir}
        parent, child = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=_child, args=(task, child))
        proc.start()
        child.close()
        self.flights[parent] = _Flight(cell, state, cache_dir, artifact_dir, quote, proc, parent)
        self.bar.set_description(f"{cell['model']} / {cell['config']}")

    def land(self, flight: _Flight, row: dict | None) -> None:
        """A cell's end: its row (None: a time limit cut it), its picks, its cut if it was one."""
        cell, state, quote = flight.cell, flight.state, flight.quote
        del self.flights[flight.conn]
        flight.conn.close()
        if self.picks:  # a cell stopped by a time limit keeps what it benchmarked, too
            save_picks(self.picks, cell, flight.cache_dir, self.meta.get("device_name"))
        if row is None or row.get("message", "").startswith(TIMED_OUT):
            cut_s = round(time.perf_counter() - flight.started, 1)
            priced = {} if quote is None else {"priced_s": round(quote["price_s"], 1),
                                               "left_s": round(max(quote["left_s"], 0), 1)}
            self.meta["cuts"].append({**{k: cell[k] for k in KEY_FIELDS}, "cache": state, "cut_s": cut_s, **priced})
            if row is None:  # the log says which cell a call's limit cut, how far in, and what it was priced at
                at = "" if not priced else (f" (priced at {priced['priced_s']:.0f} s, with {priced['left_s']:.0f} s "
                                            f"of --budget left at its start)")
                print(f"cut: {cell['model']} / {cell['config']} ({state} cache), "
                      f"{cut_s:.0f} s into its process{at}", file=sys.stderr, flush=True)
                self.save()
                return
        row["cache"] = state
        self.rows[cell_key(cell)] = row
        self.save()
        shutil.rmtree(flight.artifact_dir, ignore_errors=True)
        self.bar.update(1)

    def wait_one(self) -> None:
        """Until at least one cell in flight has ended."""
        now = time.perf_counter()
        soonest = min(f.started + self.timeout for f in self.flights.values())
        for conn in multiprocessing.connection.wait(list(self.flights), timeout=max(0.0, soonest - now)):
            flight = self.flights[conn]
            try:
                row = conn.recv()
            except EOFError:
                flight.proc.join(5)
                code = flight.proc.exitcode
                row = {**_key_of(flight.cell), "status": "error", "message": "cell process died without a result" +
                       (f" (exit code {code})" if code not in (0, None) else "")}
            row["wall_s"] = round(time.perf_counter() - flight.started, 2)  # its exit overlaps what comes next
            self.exiting.append(flight.proc)
            self.land(flight, row)
        for flight in [f for f in self.flights.values() if time.perf_counter() - f.started >= self.timeout]:
            _stop(flight.proc)
            self.land(flight, {**_key_of(flight.cell), "status": "error",
                               "message": f"{TIMED_OUT} {self.timeout:.0f} s", "wall_s": round(self.timeout, 2)})
        for proc in [p for p in self.exiting if not p.is_alive()]:
            proc.join()
            self.exiting.remove(proc)

    def next_cell(self, deferred: set = frozenset()) -> tuple[dict | None, list[dict]]:
        """The first cell in plan order that may start: a model's first cell, or (shared caches) one
        of its others once the first has ended, so that it reuses the first's autotuning; a model
        whose next cell is ``deferred`` (``autotuning_ahead``) waits."""
        running = {id(f.cell) for f in self.flights.values()}
        for group in self.groups:
            for cell in group:
                if id(cell) not in self.pending:
                    continue
                if id(cell) in deferred:
                    break
                first_done = id(group[0]) not in self.pending and id(group[0]) not in running
                if cell is group[0] or not self.shared or first_done:
                    return cell, group
                break
        return None, []

    def fill(self) -> None:
        """Start cells until ``jobs`` are in flight or none may start; the budget may refuse a cell,
        and with it its model's later cells, or hold it back while another autotunes."""
        deferred: set = set()
        while len(self.flights) < self.jobs:
            cell, group = self.next_cell(deferred)
            if cell is None:
                return
            quote, state = None, self.state_of(cell, cache_dirs(self.cache_root, cell, self.shared, make=False)[0])
            if self.pricer is not None:
                try:
                    quote = self.pricer.check(cell, state)
                except BudgetSpent as exc:  # not started, nor its model's later cells
                    rest = [c for c in group if id(c) in self.pending]
                    self.pending.difference_update(id(c) for c in rest)
                    self.not_started += len(rest)
                    self.first_stop = self.first_stop or exc
                    if self.bank is None and self.picks and state != "warm":
                        self.bank = (cell, state)
                    continue
                if (ahead := self.autotuning_ahead(quote)) is not None:
                    deferred.add(id(cell))
                    self._say_deferred(cell, quote, ahead)
                    continue
            self.pending.discard(id(cell))
            self.start(cell, quote, state)

    def autotuning_ahead(self, quote: dict) -> dict | None:
        """The cell in flight that this one would autotune beside, both priced to autotune
        ``AUTOTUNE_ALONE_S`` or more; else None.  Autotuning benchmarks hold the device, so two such
        cells only queue behind each other, and at a piece's end both are cut: four cold CNN `all`
        cells started together on an H200 were all cut, 213 to 466 s in, each priced at 95 to 240 s."""
        if quote is None or quote["autotune_s"] < AUTOTUNE_ALONE_S:
            return None
        return next((f.cell for f in self.flights.values()
                     if f.quote is not None and f.quote["autotune_s"] >= AUTOTUNE_ALONE_S), None)

    def _say_deferred(self, cell: dict, quote: dict, ahead: dict) -> None:
        if id(cell) not in self.told_deferred:
            self.told_deferred.add(id(cell))
            print(f"waits: {cell['model']} / {cell['config']} would autotune (about {quote['autotune_s']:.0f} s) beside "
                  f"{ahead['model']} / {ahead['config']}, and autotuning takes the device; other cells run meanwhile",
                  file=sys.stderr, flush=True)

    def bank_last(self) -> bool:
        """Nothing else fits: the seconds left go to autotuning the first refused model's first cell,
        whose picks (``picks``) the next run starts from, though the call's end will likely cut it."""
        if self.bank is None or self.pricer.left() < BANK_SECONDS:
            return False
        cell, state = self.bank
        print(f"banking: {cell['model']} / {cell['config']} ({state}) starts with {self.pricer.left():.0f} s of the "
              f"budget left; if a time limit cuts it, --picks keeps what it benchmarked", file=sys.stderr, flush=True)
        self.not_started -= 1
        self.start(cell, self.pricer.quote(cell, state), state)
        while self.flights:
            self.wait_one()
        return True

    def run(self) -> dict:
        todo = self._to_run()
        self.save()
        self._prepare(todo)
        finished = False
        try:
            while self.pending or self.flights:
                self.fill()
                if not self.flights:
                    break
                self.wait_one()
            banked = self.bank_last()
            if self.first_stop is not None:
                raise BudgetSpent(f"{self.first_stop}; {self.not_started} cell(s) not started (the later models' "
                                  f"cells that fitted ran{', then the first of them, banked' if banked else ''})")
            finished = True
        finally:  # also on Ctrl-C / SIGTERM: no cell is left running behind us, and what it benchmarked is kept
            self.close(finished)
        return self.rows

    def close(self, finished: bool) -> None:
        for flight in list(self.flights.values()):
            _stop(flight.proc)
            self.land(flight, None)
        self.save()
        try:  # cells that sent their row may still be exiting (a GPU context torn down): seconds at most
            deadline = time.perf_counter() + EXIT_GRACE_S
            for proc in self.exiting:
                proc.join(max(0.0, deadline - time.perf_counter()))
        finally:  # a signal in that wait still stops them (or Python's exit would wait for them), and
            for proc in self.exiting:  # its seconds count in this piece's wall
                _stop(proc)
            self.bar.close()
            self.save()
        if self.owned and (finished or self.isolated):
            shutil.rmtree(self.cache_root, ignore_errors=True)


def _key_of(cell: dict) -> dict:
    """The fields that name a cell, for a row its process did not write."""
    return {k: cell[k] for k in (*KEY_FIELDS, "cell_repeat") if k in cell}


def _stop(proc) -> None:
    """Kill the process and wait for it, a bounded while: a process that the kernel keeps past
    SIGKILL (tearing down a GPU context) dies on its own, and the run does not wait on it."""
    if proc.is_alive():
        proc.kill()
    proc.join(EXIT_GRACE_S)


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
    """tqdm's bar on a terminal; into a log or a pipe, a line per cell (a bar there is a stream of
    carriage returns)."""
    if not enabled:
        return _PlainBar(total, quiet=True)
    if not sys.stderr.isatty():
        return _PlainBar(total)
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True)
    except ImportError:
        return _PlainBar(total)
