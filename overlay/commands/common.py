"""What several commands share: comma-list options, the report options of bench and merge (CSV,
plot, baseline), and the tables, files and page both end with."""
from __future__ import annotations

import argparse
import os

from ..errors import UsageError, check_writable, require_extra
from ..views import files, terminal
from ..views.build import page_path, write_page
from ..stats import BASELINES, summary_rows


def names(option: str, text: str | None) -> list[str] | None:
    """A comma list option; None when not given.  An empty list or an empty item is an error, not
    the default (``--models ''`` from an unset shell variable would otherwise run the whole suite)."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UsageError(f"{option} {text!r}: an empty name; give a comma list without empty items")
    return names


def summary_csv(csv_path: str) -> str:
    """Where the summary rows go, beside the cells' CSV."""
    return os.path.splitext(csv_path)[0] + "-summary.csv"


def check_outputs(args) -> None:
    """The report files are written after the last cell: a path that cannot be written is found now."""
    if args.csv:
        check_writable(args.csv, "CSV file", "choose another --csv path")
        check_writable(summary_csv(args.csv), "summary CSV file", "choose another --csv path")
    if args.plot:
        require_extra("--plot", ("matplotlib",), "report")
        check_plot_format(args.plot)
        check_writable(args.plot, "plot file", "choose another --plot path")


def check_plot_format(path: str) -> None:
    """matplotlib picks the format from the suffix and raises on one it lacks, after every cell ran."""
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        return  # write_plot says no plot was written
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        raise UsageError(f"--plot {path}: matplotlib cannot write .{suffix} files; give a path ending in "
                         f".png (or {', '.join('.' + f for f in sorted(formats) if f != 'png')})")


def add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--csv", default=None)
    p.add_argument("--plot", default=None, help="PNG bar chart (needs matplotlib)")
    p.add_argument("--baseline", default="pooled", choices=BASELINES,
                   help="eager time a speedup divides: the model's median over its cells (pooled, default), "
                        "the cell's own, timed interleaved in its process (in-cell), or the model's fastest cell "
                        "(fastest: the least disturbed eager, so the low end of the speedups); docs/bench.md compares them")


def emit(cells, args) -> list[dict]:
    """Print the tables, write CSV and plot; returns the summary rows (computed once: the bootstrap)."""
    rows = summary_rows(cells, args.baseline)
    print(terminal.noise_lead(cells, rows))
    print(terminal.summary_table(cells, args.baseline, rows))
    print(terminal.per_model_table(cells, args.baseline))
    if args.csv:
        files.write_csv(cells, args.csv, args.baseline)
        summary = summary_csv(args.csv)
        files.write_summary_csv(rows, summary)
        print(f"\nCSV: {args.csv} (cells), {summary} (summary rows, intervals)")
    if args.plot and files.write_plot(cells, args.plot, args.baseline):
        print(f"plot: {args.plot}")
    return rows


def write_page_beside(results_path: str, baseline: str) -> None:
    """The report page beside the results file (``report``'s, for one file)."""
    try:
        print(f"report: {write_page([results_path], page_path(results_path), baseline=baseline)}")
    except ImportError as exc:
        print(f"report: not written ({exc.name} is missing: pip install 'inductor_ablate[report]')")
    except OSError as exc:
        print(f"report: not written ({exc.strerror}: {exc.filename})")
