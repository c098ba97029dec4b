"""How well ``bench --estimate`` would have priced a run's cells before they ran.

    python scripts/backtest_estimate.py RESULTS.json --history HISTORY.json [...] [--state warm]

Each timed cell of RESULTS (in the file's order) is priced as ``--estimate`` prices it, from the
history files and the RESULTS cells before it, and set against its process wall.  It prints, for
the rule as it is and for the rule without the same cell in another dtype (which prices a row from
the model's other rows instead, as the estimator did before), the median and mean of
|log(price / wall)| and the cells priced under two thirds of their wall (a budget starts them and a
call's end can cut them) or over one and a half times it.  The box factor of ``--budget`` (a run
slower than its history) is left out: it scales every price alike.
"""
from __future__ import annotations

import math
import statistics

from inductor_ablate.bench.estimate import _cost, read_history, timed_cells
from inductor_ablate.bench.runner import read_results_file
from inductor_ablate.errors import OneLineParser, UsageError, run_script

#: a price under this share of the wall, or over its inverse, is listed by name
OFF_BY = 1.5


def backtest(results: list[dict], history: list[dict], state: str | None, twin: bool) -> list[tuple]:
    """[(log(price / wall), model, config, price, wall)] for each cell of ``results`` in ``state``
    (None: any), priced from ``history`` and the cells before it; ``twin=False`` leaves out of each
    price the same cell of another dtype."""
    rows = []
    for i, cell in enumerate(results):
        if state and cell.get("cache") != state:
            continue
        known = history + results[:i]
        if not twin:
            known = [c for c in known if (c["model"], c["config"]) != (cell["model"], cell["config"])
                     or c["dtype"] == cell["dtype"]]
        price = _cost(known, cell["model"], cell["config"], cell["dtype"], cell.get("cache"))[0]
        rows.append((math.log(price / cell["wall_s"]), cell["model"], cell["config"], price, cell["wall_s"]))
    return rows


def summary(label: str, rows: list[tuple]) -> str:
    errors = [abs(r[0]) for r in rows]
    under = [r for r in rows if r[0] < -math.log(OFF_BY)]
    over = [r for r in rows if r[0] > math.log(OFF_BY)]

    def named(cells):
        return ", ".join(f"{m} {c} {p:.0f} s for {w:.0f}" for _, m, c, p, w in cells) or "none"
    return (f"{label}: {len(rows)} cells, median |log(price/wall)| {statistics.median(errors):.3f}, mean "
            f"{statistics.mean(errors):.3f}; priced {sum(r[3] for r in rows):,.0f} s for {sum(r[4] for r in rows):,.0f} s\n"
            f"  under 1/{OFF_BY:g} of the wall: {len(under)} ({named(under)})\n"
            f"  over {OFF_BY:g}x the wall: {len(over)} ({named(over)})")


def main(argv: list[str]) -> int:
    p = OneLineParser(prog="scripts/backtest_estimate.py", description=__doc__.split("\n\n")[0])
    p.add_argument("results", help="a results file of the run to price")
    p.add_argument("--history", nargs="+", required=True, help="the results files it would have been priced from")
    p.add_argument("--state", choices=["cold", "warm", "seeded"], help="only cells whose cache started so")
    args = p.parse_args(argv)
    cells = read_results_file(args.results)["cells"]
    if not cells:
        raise UsageError(f"{args.results}: no cell")
    device, mode = cells[0]["device"], cells[0]["mode"]
    history = read_history(args.history, device, mode)[0]
    results = timed_cells(cells, device, mode)
    if not history:
        raise UsageError(f"--history: no timed {mode} cell on {device} there")
    rows = backtest(results, history, args.state, twin=True)
    if not rows:
        raise UsageError(f"{args.results}: no timed {args.state or ''} cell to price".replace("  ", " "))
    print(f"{args.results}: {len(rows)} {args.state or 'timed'} cells, each priced from {', '.join(args.history)} "
          f"and the cells before it")
    print(summary("as --estimate prices", rows))
    print(summary("without the same cell in another dtype", backtest(results, history, args.state, twin=False)))
    return 0


if __name__ == "__main__":
    run_script(main, "backtest_estimate.py")
