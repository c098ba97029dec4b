"""``python -m inductor_ablate report RESULTS... [-o PAGE] [--markdown] [--log LOG]``."""
from __future__ import annotations

import os

from ..errors import OneLineParser, UsageError, check_writable
from . import markdown, page, views


def build(paths: list[str], baseline: str = "pooled") -> tuple[list[dict], list]:
    """(sections, profile splits) of every setting in every file, in the order given."""
    from ..bench.runner import read_results_file

    sections, splits = [], []
    for path in paths:
        cells = read_results_file(path)["cells"]
        if not cells:
            raise UsageError(f"{path}: a results file with no cells: nothing to report")
        for group in views.groups(cells).values():
            sections.append(views.section(group, baseline))
            splits.append(views.profile_split(group))
    return sections, splits


def page_path(results_path: str) -> str:
    """Where bench and merge put the page: beside the results file, ``.html`` for ``.json``."""
    root, ext = os.path.splitext(results_path)
    return (root if ext == ".json" else results_path) + ".html"


def write_page(paths: list[str], out: str, logs: list[str] = (), baseline: str = "pooled") -> str:
    from ..decisions import load_log

    sections, splits = build(paths, baseline)
    remarks = [(log, views.remarks(load_log(log))) for log in logs]
    html = page.render(list(paths), sections, splits, remarks)
    with open(out, "w") as f:
        f.write(html)
    return out


def main(argv: list[str]) -> int:
    from ..bench.report import BASELINES

    p = OneLineParser(prog="python -m inductor_ablate report",
                      description="one self-contained HTML page (or --markdown tables) from bench results files")
    p.add_argument("results", nargs="+", metavar="RESULTS")
    p.add_argument("-o", "--output", default=None, metavar="PAGE",
                   help="the HTML page to write (default: beside the first results file, .html)")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown instead of writing a page")
    p.add_argument("--log", action="append", default=[], metavar="LOG",
                   help="a decision log (INDUCTOR_ABLATE_LOG) to show as remarks: fused, vetoed, refused; repeatable")
    p.add_argument("--baseline", default="pooled", choices=BASELINES, help="eager time a speedup divides (as bench)")
    args = p.parse_args(argv)
    if args.markdown:
        if args.output or args.log:
            raise UsageError("report --markdown prints the tables; -o and --log go with the HTML page")
        sections, splits = build(args.results, args.baseline)
        print(markdown.document(sections, splits), end="")
        return 0
    out = args.output or page_path(args.results[0])
    if os.path.isdir(out):
        raise UsageError(f"-o {out}: a directory; give the page's file name")
    check_writable(out, "report page", "choose another -o path")
    for log in args.log:  # a bad log is found before the bootstrap runs
        from ..decisions import load_log

        load_log(log)
    print(f"report: {write_page(args.results, out, args.log, args.baseline)}")
    return 0
