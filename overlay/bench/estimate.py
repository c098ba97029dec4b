"""``bench --estimate FILES``: which cells a bench command would run and about how long they take,
from the process wall times of earlier runs' cells, before any device time is spent on them.

A cell costs what cells of the same model, config, device and mode cost before: a model's first
cell compiles on an empty cache (cold: it autotunes), the others reuse it (warm); under ``--picks`` a
model's first cell starts from earlier autotuning picks (seeded: a cold compile without its
benchmarking).  Where a model or a config has no history, a wider median stands in, and the table
says which one."""
from __future__ import annotations

import statistics
import time

from ..errors import UsageError
from ..results import all_cuts, read_results_file
from .picks import has_picks

#: the worst a wider stand-in can be: a model with no cell at all on that device and mode
NO_HISTORY = "no history: every model's median"

#: ``--budget`` under ``--jobs``: a cell its price says autotunes this many seconds or more does not start
#: while another such cell runs (``MatrixRun.autotuning_ahead``, ``jobs_wall``); warm cells autotune a few
AUTOTUNE_ALONE_S = 60


def _kind(device: str) -> str:
    return "cuda" if device.startswith("cuda") else device


def timed_cells(cells, device: str, mode: str) -> list[dict]:
    """The cells that ran ok and were timed, on that kind of device and mode (any dtype: preferred in
    ``_cost``)."""
    return [c for c in cells if c.get("status") == "ok" and isinstance(c.get("wall_s"), (int, float))
            and _kind(c["device"]) == _kind(device) and c["mode"] == mode]


def cuts_of(meta: dict, device: str, mode: str) -> list[dict]:
    """``all_cuts`` on that kind of device and mode."""
    return _matching(all_cuts(meta), device, mode)


def _matching(cuts: list[dict], device: str, mode: str) -> list[dict]:
    return [c for c in cuts if _kind(c["device"]) == _kind(device) and c["mode"] == mode]


def read_history(paths: list[str], device: str, mode: str) -> tuple[list[dict], list[dict], list[dict]]:
    """The timed cells of ``paths`` on that kind of device, (those of ``mode``, those of the other
    mode), and their cuts of ``mode`` (``cuts_of``), each file read once."""

    cells, cuts = [], []
    for path in paths:
        data = read_results_file(path, "give results files written by `bench` or `merge`")
        cells += data["cells"]
        cuts += cuts_of(data.get("meta", {}), device, mode)
    return timed_cells(cells, device, mode), timed_cells(cells, device, _other_mode(mode)), cuts


def _history(paths: list[str], device: str, mode: str) -> tuple[list[dict], list[dict], list[dict]]:
    """``read_history``; no timed cell of ``mode`` is an error."""
    cells, other_mode, cuts = read_history(paths, device, mode)
    if not cells:
        raise UsageError(f"--estimate {','.join(paths)}: no timed {mode} cell on {_kind(device)} there; "
                         f"give results files of a run on that device and mode")
    return cells, other_mode, cuts


def _median(cells: list[dict]) -> float:
    return statistics.median(c["wall_s"] for c in cells)


def _other_mode(mode: str) -> str:
    return "inference" if mode == "training" else "training"


def per_model_ratios(history: list[dict], other: list[dict], state: str) -> dict[str, float]:
    """{model: the median wall of its ``state`` cells in ``history`` over that in ``other``}, for the
    models with such cells in both: how much dearer a model's training cell is than its inference
    one, or the reverse (docs/bench.md, "Cost", gives them)."""
    ratios = {}
    for model in sorted({c["model"] for c in history} & {c["model"] for c in other}):
        mine = [c for c in history if c["model"] == model and c.get("cache") == state]
        theirs = [c for c in other if c["model"] == model and c.get("cache") == state]
        if mine and theirs:
            ratios[model] = _median(mine) / _median(theirs)
    return ratios


def _mode_ratio(history: list[dict], other: list[dict], state: str) -> tuple[float | None, int]:
    """(the median over models of ``per_model_ratios``, how many models): what a model with cells of
    only the other mode is scaled by."""
    ratios = per_model_ratios(history, other, state)
    return (statistics.median(ratios.values()) if ratios else None), len(ratios)


def per_model_dtype_ratios(history: list[dict], dtype: str, state: str | None = None) -> dict[str, float]:
    """{model: the median, over its configs that ran in ``dtype`` and in another dtype with the cache
    starting ``state`` (None: any state), of the ``dtype`` cell's median wall over the other's}: how
    much dearer a float32 cell is than its bfloat16 twin, or the reverse."""
    walls: dict[tuple, dict[bool, list[float]]] = {}
    for c in history:
        if state is None or c.get("cache") == state:
            key = (c["model"], c["config"], c.get("cache"))
            walls.setdefault(key, {}).setdefault(c["dtype"] == dtype, []).append(c["wall_s"])
    per_model: dict[str, list[float]] = {}
    for (model, _, _), by in walls.items():
        if len(by) == 2:
            per_model.setdefault(model, []).append(statistics.median(by[True]) / statistics.median(by[False]))
    return {model: statistics.median(ratios) for model, ratios in sorted(per_model.items())}


def _dtype_scale(history: list[dict], dtype: str, state: str | None) -> tuple[float, str]:
    """(the factor, the basis' note) for a model whose cells are all of another dtype: the median of
    ``per_model_dtype_ratios`` in that cache state (cold and warm apart, as the modes), else in any;
    1 where no model ran in both dtypes."""
    ratios = per_model_dtype_ratios(history, dtype, state) or per_model_dtype_ratios(history, dtype)
    if not ratios:
        return 1.0, ", other dtype"
    ratio = statistics.median(ratios.values())
    return ratio, f", other dtype x {ratio:.2f} (the median ratio of {len(ratios)} models)"


def _cost(history: list[dict], model: str, config: str, dtype: str, state: str,
          other_mode: list[dict] = ()) -> tuple[float, str, list[dict]]:
    """(seconds, where they come from, the cells behind them) for one cell whose cache starts
    ``state``: cold (empty), warm (its model's earlier cells filled it) or seeded (``bench --picks``:
    autotuning picks only, so it compiles as a cold cell does without benchmarking); the narrowest
    history that has it.  ``other_mode``: cells of the other mode, which price a model that has none of
    this one, scaled by the median ratio of the models that have both."""
    mine = [c for c in history if c["model"] == model]
    same_dtype = [c for c in mine if c["dtype"] == dtype]

    def own(seconds: float, basis: str, pool: list[dict], pool_state: str | None):
        """A price from the model's own cells; those of another dtype are scaled as the models that
        ran both dtypes were."""
        if pool[0]["dtype"] == dtype:
            return seconds, basis, pool
        scale, note = _dtype_scale(history, dtype, pool_state)
        return seconds * scale, basis + note, pool

    # This cell in another dtype comes before the model's other rows in this one: a row that
    # autotunes again on a warm cache (no-freezing, no-pattern-matching) mostly does so in either
    # dtype, and the model's other rows do not show it.
    twin = [c for c in mine if c["config"] == config and c["dtype"] != dtype]
    mine = same_dtype or mine
    this = [c for c in mine if c["config"] == config]
    for pool, basis in (([c for c in this if c.get("cache") == state], f"this cell {state}"),
                        ([c for c in twin if c.get("cache") == state], f"this cell {state}"),
                        ([c for c in mine if c.get("cache") == state], f"this model's {state} cells")):
        if pool:
            return own(_median(pool), basis, pool, state)
    want = state
    if state == "seeded":  # no seeded history: a cold compile of the cell less its autotuning, or a warm one
        cold = [c for c in this if c.get("cache") == "cold" and isinstance(c.get("autotune_s"), (int, float))]
        if cold:
            return own(statistics.median(c["wall_s"] - c["autotune_s"] for c in cold),
                       "this cell cold, less its autotuning", cold, "cold")
        want = "warm"
        pool = [c for c in mine if c.get("cache") == want]
        if pool:
            return own(_median(pool), "this model's warm cells", pool, want)
    theirs = [c for c in other_mode if c["model"] == model] if not mine else []
    theirs = [c for c in theirs if c["dtype"] == dtype] or theirs
    pool = [c for c in theirs if c.get("cache") == want and c["config"] == config] or \
        [c for c in theirs if c.get("cache") == want]
    if pool:
        ratio, models = _mode_ratio(history, other_mode, want)
        if ratio:
            return (_median(pool) * ratio, f"{pool[0]['mode']} {want} cells x {ratio:.2f} (the median ratio of "
                    f"{models} models)", pool)
    pool = [c for c in history if c.get("cache") == want]
    if pool:
        return _median(pool), NO_HISTORY if not mine else f"every model's {want} median", pool
    if mine:  # no cell of that cache state anywhere: the model's own cells, not other models'
        return own(_median(mine), "this model's cells", mine, None)
    return _median(history), NO_HISTORY, history


def _seconds(table: list[list[tuple]]) -> list[list[float]]:
    """Each model's cell prices, of its (seconds, basis, pool) quotes."""
    return [[quote[0] for quote in quotes] for quotes in table]


def jobs_wall(models: list[list[float]], jobs: int, autotunes: list[list[float]] | None = None) -> float:
    """The wall of ``bench --jobs`` as ``run_matrix`` fills its slots: each model's cell prices in
    plan order, the first model's next cell that may start taking a free slot, and a model's later
    cells only once its first has ended (they reuse its autotuning).  With ``autotunes`` (each
    cell's ``expected_autotune``), as under ``--budget``: a cell that autotunes
    ``AUTOTUNE_ALONE_S`` or more waits while another such cell runs."""
    todo = [(m, i, price, bool(autotunes) and autotunes[m][i] >= AUTOTUNE_ALONE_S)
            for m, prices in enumerate(models) for i, price in enumerate(prices)]
    first_end: dict[int, float] = {}
    running: list[tuple[float, bool]] = []  # (its end, whether it autotunes alone) of each cell in flight
    now = 0.0
    while todo:
        running = [(end, alone) for end, alone in running if end > now]
        tuning = any(alone for _, alone in running)
        ready, seen = None, set()
        for k, (m, i, _, alone) in enumerate(todo):
            if m not in seen:  # a model's next cell only, as run_matrix takes them
                seen.add(m)
                if (i == 0 or first_end.get(m, float("inf")) <= now) and not (alone and tuning):
                    ready = k
                    break
        if len(running) < jobs and ready is not None:
            m, i, price, alone = todo.pop(ready)
            running.append((now + price, alone))
            if i == 0:
                first_end[m] = now + price
        else:  # every slot busy, or every model left waits for a cell in flight: until the next end
            now = min(end for end, _ in running)
    return max((end for end, _ in running), default=now)


def _autotunes(table: list[list[tuple]]) -> list[list[float]]:
    """Each model's cells' ``expected_autotune``, of its (seconds, basis, pool) quotes."""
    return [[expected_autotune(*quote) for quote in quotes] for quotes in table]


def _runs(models: list[list[float]], budget: float) -> tuple[int, int]:
    """(runs, cells priced above the budget) for one lane under ``--budget``, as ``run_matrix``
    runs them: each run takes each model's cells in order while they fit, leaves the rest of a
    model at its first cell that does not, and goes on with the next models; what is left waits for
    the next run, in the same order.  A run's first cell starts whatever its price."""
    runs, over = 0, sum(price > budget for prices in models for price in prices)
    while models:
        runs, used, left = runs + 1, 0.0, []
        for prices in models:
            fits = 0
            while fits < len(prices) and (not used or used + prices[fits] <= budget):
                used += prices[fits]
                fits += 1
            if fits < len(prices):
                left.append(prices[fits:])
        models = left
    return runs, over


def estimate(cells: list[dict], history_paths: list[str], *, device: str, dtype: str, mode: str,
             budget: float | None = None, picks: str | None = None, done: list[dict] = (),
             cuts: list[dict] = (), jobs: int | None = None) -> str:
    """The table: per model, its cells, the seconds and their basis; then totals (one cell at a
    time, and under ``--jobs``: ``jobs``, else 2 and 4), and with ``budget`` how many runs of that
    many seconds one lane takes.  ``jobs``: the table prices cells as that run would run them.
    ``picks``: ``bench --picks``; a model with picks there starts seeded, not cold.  ``done``: the cells the results file holds,
    priced from as ``--budget`` prices from them (``Prices``); ``cuts``: its cuts."""

    history, other_mode, history_cuts = _history(history_paths, device, mode)
    done, cuts = timed_cells(done, device, mode), [*history_cuts, *_matching(cuts, device, mode)]
    models: dict[str, list[dict]] = {}
    for cell in cells:
        models.setdefault(cell["model"], []).append(cell)
    firsts = {model: "seeded" if picks and has_picks(picks, mine[0]) else "cold" for model, mine in models.items()}
    seeded = sum(state == "seeded" for state in firsts.values())

    def priced(jobs: int) -> tuple[Prices, list[list[tuple[float, str, list[dict]]]]]:
        """Every model's cells, each (seconds, basis, pool) as a run of that ``--jobs`` runs it."""
        pricer = Prices(history, done, other_mode, cuts, jobs)
        return pricer, [[pricer.cost(model, cell["config"], dtype, firsts[model] if i == 0 else "warm")
                         for i, cell in enumerate(mine)] for model, mine in models.items()]

    scale = f" (and {len(other_mode)} {_other_mode(mode)} cells, for a model with none of {mode})" if other_mode else ""
    lines = [f"estimate from {len(history)} timed {mode} cells{scale} on {_kind(device)} in {', '.join(history_paths)}: "
             f"cell process walls (a model's first cell counted cold, as on a fresh box), not a job's "
             f"start-up, nor a cell that a job's end cuts" + (f"; priced as run --jobs {jobs}" if jobs else ""),
             f"{'model':<28}{'cells':>6}{'est. s':>9}  basis (cells behind it)"]
    if not cells:
        return "\n".join(lines[:1] + ["nothing to run: every cell is done"])
    pricer, table = priced(jobs or 1)
    for model, quotes in zip(models, table):
        bases: dict[str, set] = {}  # basis -> the history cells behind it, each counted once
        for _, basis, pool in quotes:
            bases.setdefault(basis, set()).update(map(id, pool))
        lines.append(f"{model:<28}{len(quotes):>6}{sum(q[0] for q in quotes):>9.0f}  "
                     + "; ".join(f"{basis} ({len(ids)})" for basis, ids in bases.items()))
    prices = _seconds(table)
    total = sum(map(sum, prices if (jobs or 1) == 1 else _seconds(priced(1)[1])))
    if jobs:
        overlapped, quotes = pricer, table
    else:  # the table is priced one cell at a time; --jobs 2 and 4 as they would run
        overlapped, quotes = priced(2)
    beside, autotunes = _seconds(quotes), _autotunes(quotes)
    walls = ", ".join(f"--jobs {n} about {jobs_wall(beside, n, autotunes):,.0f} s"
                      for n in ([jobs] if jobs else [2, 4]) if n > 1)
    if walls and (alone := sum(a >= AUTOTUNE_ALONE_S for row in autotunes for a in row)):
        walls += f" ({alone} cell(s) priced to autotune {AUTOTUNE_ALONE_S} s or more run one at a time, as under --budget)"
    lines.append(f"total: {len(cells)} cells, {len(models) - seeded} cold{f', {seeded} seeded' if seeded else ''}, "
                 f"about {total:,.0f} s ({total / 60:.0f} min) one cell at a time" + (f"; {walls}" if walls else ""))
    lines += sorted({line for p in (pricer, overlapped) for line in p.note().splitlines()})
    if budget is not None:
        runs, over = _runs(prices, budget)
        over_note = (f"; {over} cell(s) priced above {budget:g} s start a run alone, and a hard limit of that "
                     f"length would cut them") if over else ""
        lines.append(f"under --budget {budget:g}: {runs} run{'s' if runs != 1 else ''} of one lane, each leaving a model at its first cell "
                     f"that would not fit and going on with the next models' cells that fit{over_note}")
    return "\n".join(lines)


class BudgetSpent(KeyboardInterrupt):
    """``bench --budget``: the next cell would likely not finish in the seconds left.  A kind of
    interruption: the run keeps what finished and its caches, and the same command resumes."""


def expected_autotune(price: float, basis: str, pool: list[dict]) -> float:
    """The seconds a cell priced from ``pool`` will autotune, mostly holding the device (devicelock):
    the median ``autotune_s`` of the cells behind its price; none for a seeded cell priced as a
    cold one less its autotuning; its whole price for a cell priced by a cut (taken to autotune
    throughout: most cuts of the H100 and H200 pieces were `all` cells on a cold, seeded or
    cut-warmed cache)."""
    if basis.startswith("at least the"):
        return price
    if "less its autotuning" in basis:
        return 0.0
    tuned = [c["autotune_s"] for c in pool if isinstance(c.get("autotune_s"), (int, float))]
    return statistics.median(tuned) if tuned else 0.0


class Budget:
    """``bench --budget SECONDS``: before each cell, its price (as ``--estimate`` prices it, from
    the ``--skip-done`` and ``--history`` files and the cells this results file already holds); a
    cell priced above the seconds left is not started (``run_matrix`` then goes on with the next
    models' cells that fit).  A job that ends at a hard time limit then ends before a cell it
    would cut, whose seconds would be lost, and not after it.  A cell
    with no history at all to price it from is started, and so is the run's first cell whatever its
    price: stopping before it would leave every later run stuck at the same cell."""

    def __init__(self, seconds: float, paths: list[str], rows: dict, device: str, mode: str,
                 cuts: list[dict] = (), jobs: int = 1):
        """``rows``, ``cuts``: the results file's cells and cuts (``run_matrix``'s, which grow);
        ``jobs``: the run's ``--jobs`` (``Prices``)."""
        self.seconds, self.rows, self.device, self.mode, self.cuts = seconds, rows, device, mode, cuts
        self.jobs = jobs
        self.files, self.other_mode, self.file_cuts = read_history(paths, device, mode)
        self.start = time.perf_counter()
        self.first = True

    def left(self) -> float:
        return self.seconds - (time.perf_counter() - self.start)

    def quote(self, cell: dict, state: str) -> dict | None:
        """The cell's price now and the seconds left (``price_s``, ``left_s``; ``basis`` and ``why``
        for a refusal's message), or None with nothing to price it from.  A cut cell's record keeps
        the two numbers, so a cut tells an underpriced cell (cut past its price) from one started
        knowingly (banked, or first)."""
        done = timed_cells(self.rows.values(), self.device, self.mode)
        if not (self.files or done):
            return None
        own = _matching(self.cuts, self.device, self.mode)
        prices = Prices(self.files, done, self.other_mode, [*self.file_cuts, *own], self.jobs, own)
        price, basis, pool = prices.cost(cell["model"], cell["config"], cell["dtype"], state)
        why = "; " + prices.note().replace("\n", "; ") if prices.scaled else ""
        return {"price_s": price, "left_s": self.left(), "basis": f"{basis} ({len(pool)})", "why": why,
                "autotune_s": expected_autotune(price, basis, pool)}

    def check(self, cell: dict, state: str) -> dict | None:
        """``state``: how the cell's cache starts (cold, warm, seeded: ``_cost``).  Returns the
        cell's ``quote``; raises ``BudgetSpent`` when it is priced above the seconds left."""
        first, self.first = self.first, False
        quote = self.quote(cell, state)
        if quote is not None and not first and quote["price_s"] > quote["left_s"]:
            raise BudgetSpent(f"{cell['model']} / {cell['config']} is priced at {quote['price_s']:.0f} s ({quote['basis']}) "
                              f"and {max(quote['left_s'], 0):.0f} s of --budget {self.seconds:g} are left{quote['why']}")
        return quote


class Prices:
    """``_cost`` over the history files and the cells the results file already holds (``done``), a
    price taken from the files alone scaled by ``factor``: on a box slower than the one the files ran
    on, a median price starts a cell in a call's last seconds and the call's end cuts it.  A cell
    that a time limit cut (``cuts``) and that has not run to its end since, in that cache state,
    costs at least what it ran before the cut.  ``jobs``: the run's ``--jobs``; a history cell that
    ran the other way (alone, or beside others) is priced as ``overlap_ratios`` say it would run."""

    def __init__(self, files: list[dict], done: list[dict], other_mode: list[dict], cuts: list[dict] = (),
                 jobs: int = 1, own_cuts: list[dict] = ()):
        """``own_cuts``: those of ``cuts`` that this results file's runs made (``_cut_warmed``)."""
        self.jobs, self.overlap = jobs, overlap_ratios(files)
        files = [self._as_run(c) for c in files]
        other_mode = [self._as_run(c) for c in other_mode]
        self.files, self.done, self.history, self.other_mode = files, done, files + done, other_mode
        self.cuts, self.own_cuts = cuts, own_cuts
        self.ratios = wall_ratios(done, files)
        self.factor = box_factor(self.ratios)
        self._from_files = {id(c) for c in files}
        self.scaled = False  # whether the last price was scaled by ``factor`` or an overlap factor

    def cost(self, model: str, config: str, dtype: str, state: str) -> tuple[float, str, list[dict]]:
        price, basis, pool = self._priced(model, config, dtype, state)
        same = (model, config, dtype, state)
        cut = [c for c in self.cuts if (c["model"], c["config"], c["dtype"], c["cache"]) == same]
        if cut and not any((c["model"], c["config"], c["dtype"], c.get("cache")) == same for c in self.history):
            floor = cut
        else:
            floor = self._cut_warmed(model, config, dtype) if state == "warm" else []
        if floor and price < (longest := max(c["cut_s"] for c in floor)):
            self.scaled = False
            states = "/".join(sorted({c["cache"] for c in floor}))
            return longest, f"at least the {longest:.0f} s it ran before a time limit cut it ({states})", floor
        return price, basis, pool

    def _cut_warmed(self, model: str, config: str, dtype: str) -> list[dict]:
        """The cuts of this cell on a cold or seeded cache when it has not run to its end in this
        results file since: its cache is warm then with what the cut cell left, and what the cut
        left undone is still to do (an H200's MobileNetV3-L `all`, cut cold at 466 s, was priced as
        the model's warm rows, 40 s, and was cut again at 478 s)."""
        key = (model, config, dtype)
        if any((c["model"], c["config"], c["dtype"]) == key for c in self.done):
            return []
        return [c for c in self.own_cuts if (c["model"], c["config"], c["dtype"]) == key and c["cache"] in ("cold", "seeded")]

    def _as_run(self, cell: dict) -> dict:
        """The history cell as this run would run it: its wall times the overlap factor of its cache
        state when it ran alone and this run overlaps cells, divided by it in the reverse case.  Its
        autotuning seconds scale alike: they are part of the wall, and a seeded cell is priced as a
        cold one less them (unscaled, an H200's cold mobilenet_v3_large priced one at -19 s)."""
        factor = overlap_factor(self.overlap, cell.get("cache"))
        if overlapped(cell) == (self.jobs > 1) or factor is None:
            return cell
        scale = factor if self.jobs > 1 else 1 / factor
        autotune = cell.get("autotune_s")
        return {**cell, "wall_s": cell["wall_s"] * scale, "overlap_x": scale,
                **({"autotune_s": autotune * scale} if isinstance(autotune, (int, float)) else {})}

    def _priced(self, model: str, config: str, dtype: str, state: str) -> tuple[float, str, list[dict]]:
        price, basis, pool = _cost(self.history, model, config, dtype, state, self.other_mode)
        scaled = [c["overlap_x"] for c in pool if "overlap_x" in c]
        self.scaled = bool(scaled)
        if scaled:
            basis += f", x{statistics.median(scaled):.2f} as {'overlapped' if self.jobs > 1 else 'alone'}"
        if self.factor > 1 and all(id(c) in self._from_files for c in pool):
            self.scaled = True
            price *= self.factor
            basis += f", x{self.factor:.2f}"
        # A repeat process of a cell this file holds starts from a cache at least as full as its
        # first process's did, so it costs no more than that process took: a history cell labelled
        # warm that autotuned afresh (a cache that missed) must not price it out of the call.
        own = [c for c in self.done if (c["model"], c["config"], c["dtype"]) == (model, config, dtype)]
        if state == "warm" and own and price > (own_wall := max(c["wall_s"] for c in own)):
            self.scaled = False
            return own_wall, "at most this file's own process of it", own
        return price, basis, pool

    def note(self) -> str:
        """What ``factor`` and the overlap factors rest on, for ``--estimate``'s table ('' when they
        scale nothing)."""
        return "\n".join(line for line in (self._overlap_note(), self._box_note()) if line)

    def _overlap_note(self) -> str:
        other = [c for c in self.files if overlapped(c) != (self.jobs > 1)]
        if not other:
            return ""
        way = "beside others (--jobs above 1)" if self.jobs > 1 else "alone (--jobs 1)"
        if overlap_factor(self.overlap, None) is None:
            return (f"{len(other)} history cells ran {'alone' if self.jobs > 1 else 'beside others'} and too few "
                    f"cells ran both ways to scale them, so they are priced as they ran; run {way}, cells take "
                    f"{'longer' if self.jobs > 1 else 'less'}: give --history a file of some of them run {way}")
        pooled = [r for rs in self.overlap.values() for r in rs]
        states = "".join(f", {state} x{statistics.median(rs):.2f}" for state, rs in sorted(self.overlap.items(), key=str)
                         if len(rs) >= FACTOR_PAIRS)
        return (f"history cells that ran {'alone' if self.jobs > 1 else 'beside others'} are priced as run {way}: "
                f"the {len(pooled)} cells that also ran beside others took x{statistics.median(pooled):.2f} their walls "
                f"alone (median{states})")

    def _box_note(self) -> str:
        if self.factor <= 1:
            return ""
        r = self.ratios
        return (f"prices from the history files alone are x{self.factor:.2f}: the results file's {len(r)} cells that "
                f"they also hold took {min(r):.2f} to {max(r):.2f} times their walls (median {statistics.median(r):.2f}, "
                f"3rd quartile {self.factor:.2f})")


#: pairs of cells needed before ``box_factor`` or ``overlap_factor`` scales a price (fewer say little)
FACTOR_PAIRS = 3


def overlapped(cell: dict) -> bool:
    """Whether the cell ran beside others (``bench --jobs`` above 1: its row records its wait for the
    device)."""
    return "wait_s" in cell


def overlap_ratios(cells: list[dict]) -> dict[str | None, list[float]]:
    """{cache state: ``wall_ratios`` of the cells that ran beside others over the same cells run
    alone}: what compiling beside others costs a cell, since the cores and the device are shared."""
    beside = [c for c in cells if overlapped(c)]
    alone = [c for c in cells if not overlapped(c)]
    ratios = {state: wall_ratios([c for c in beside if c.get("cache") == state], alone)
              for state in {c.get("cache") for c in beside}}
    return {state: r for state, r in ratios.items() if r}


def overlap_factor(ratios: dict[str | None, list[float]], state: str | None) -> float | None:
    """The median of ``overlap_ratios`` in that cache state, else over every state; None below
    ``FACTOR_PAIRS`` pairs."""
    for pool in (ratios.get(state, []), [r for rs in ratios.values() for r in rs]):
        if len(pool) >= FACTOR_PAIRS:
            return statistics.median(pool)
    return None


def wall_ratios(done: list[dict], files: list[dict]) -> list[float]:
    """Each cell of the results file that the history files also hold (same model, config, dtype and
    cache state): its wall over the median of theirs."""
    earlier: dict[tuple, list[float]] = {}
    for c in files:
        earlier.setdefault((c["model"], c["config"], c["dtype"], c.get("cache")), []).append(c["wall_s"])
    return [c["wall_s"] / statistics.median(walls) for c in done
            if (walls := earlier.get((c["model"], c["config"], c["dtype"], c.get("cache"))))]


def box_factor(ratios: list[float]) -> float:
    """The third quartile of ``wall_ratios``: three in four of the paired cells took at most that times
    their history; 1.0 below ``FACTOR_PAIRS`` pairs."""
    if len(ratios) < FACTOR_PAIRS:
        return 1.0
    return statistics.quantiles(ratios, n=4, method="inclusive")[2]
