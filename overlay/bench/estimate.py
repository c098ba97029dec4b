"""``bench --estimate FILES``: which cells a bench command would run and about how long they take,
from the process wall times of earlier runs' cells, before any device time is spent on them.

A cell costs what cells of the same model, config, device and mode cost before: a model's first
cell compiles on an empty cache (cold: it autotunes), the others reuse it (warm).  Where a model or
a config has no history, a wider median stands in, and the table says which one."""
from __future__ import annotations

import statistics

from ..errors import UsageError
from .runner import read_results_file

#: the worst a wider stand-in can be: a model with no cell at all on that device and mode
NO_HISTORY = "no history: every model's median"


def _kind(device: str) -> str:
    return "cuda" if device.startswith("cuda") else device


def _history(paths: list[str], device: str, mode: str) -> list[dict]:
    """The timed cells of ``paths`` on that kind of device and mode (any dtype, preferred below)."""
    cells = []
    for path in paths:
        cells += [c for c in read_results_file(path, "give results files written by `bench` or `merge`")["cells"]
                  if c.get("status") == "ok" and isinstance(c.get("wall_s"), (int, float))
                  and _kind(c["device"]) == _kind(device) and c["mode"] == mode]
    if not cells:
        raise UsageError(f"--estimate {','.join(paths)}: no timed {mode} cell on {_kind(device)} there; "
                         f"give results files of a run on that device and mode")
    return cells


def _median(cells: list[dict]) -> float:
    return statistics.median(c["wall_s"] for c in cells)


def _cost(history: list[dict], model: str, config: str, dtype: str, cold: bool) -> tuple[float, str, list[dict]]:
    """(seconds, where they come from, the cells behind them) for one cell: the narrowest history
    that has it."""
    mine = [c for c in history if c["model"] == model]
    same_dtype = [c for c in mine if c["dtype"] == dtype]
    mine, other = (same_dtype, "") if same_dtype else (mine, ", other dtype")
    want = "cold" if cold else "warm"
    for pool, basis in (([c for c in mine if c.get("cache") == want and c["config"] == config], f"this cell {want}"),
                        ([c for c in mine if c.get("cache") == want], f"this model's {want} cells")):
        if pool:
            return _median(pool), basis + other, pool
    pool = [c for c in history if c.get("cache") == want] or history
    return _median(pool), NO_HISTORY if not mine else f"every model's {want} median", pool


def _lanes(per_model: list[float], lanes: int) -> float:
    """Whole models to the least loaded lane, dearest first: the wall time of the busiest lane."""
    load = [0.0] * lanes
    for seconds in sorted(per_model, reverse=True):
        load[load.index(min(load))] += seconds
    return max(load)


def estimate(cells: list[dict], history_paths: list[str], *, device: str, dtype: str, mode: str) -> str:
    """The table: per model, its cells, how many cold, the seconds and their basis; then totals."""
    history = _history(history_paths, device, mode)
    models: dict[str, list[dict]] = {}
    for cell in cells:
        models.setdefault(cell["model"], []).append(cell)
    lines = [f"estimate from {len(history)} timed {mode} cells on {_kind(device)} in {', '.join(history_paths)}: "
             f"cell process walls (a model's first cell counted cold, as on a fresh box), not a device call's "
             f"start, nor a cell that a call's end cuts",
             f"{'model':<28}{'cells':>6}{'est. s':>9}  basis (cells behind it)"]
    totals = []
    for model, mine in models.items():
        seconds, bases = 0.0, {}  # basis -> the history cells behind it, each counted once
        for i, cell in enumerate(mine):
            s, basis, pool = _cost(history, model, cell["config"], dtype, cold=i == 0)
            seconds += s
            bases.setdefault(basis, set()).update(map(id, pool))
        totals.append(seconds)
        lines.append(f"{model:<28}{len(mine):>6}{seconds:>9.0f}  "
                     + "; ".join(f"{basis} ({len(ids)})" for basis, ids in bases.items()))
    if not cells:
        return "\n".join(lines[:1] + ["nothing to run: every cell is done"])
    total = sum(totals)
    lanes = ", ".join(f"{n} lanes about {_lanes(totals, n):,.0f} s" for n in (2, 4) if n <= len(totals))
    lines.append(f"total: {len(cells)} cells, {len(models)} cold, about {total:,.0f} s ({total / 60:.0f} min) on one "
                 f"lane" + (f"; {lanes} (whole models to the least loaded lane, dearest first)" if lanes else ""))
    return "\n".join(lines)
