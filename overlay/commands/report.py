"""``python -m inductor_ablate report RESULTS... [-o PAGE] [--markdown] [--log LOG] [--fill DOC]``."""
from __future__ import annotations

import os

from ..decisions import load_log
from ..errors import OneLineParser, UsageError, check_writable, require_extra
from ..views import charts, markdown
from ..views.build import build, page_path, write_page
from ..views.fill import fill
from ..stats import BASELINES
from .compare import main as compare


def main(argv: list[str]) -> int:
    p = OneLineParser(prog="python -m inductor_ablate report",
                      description="one self-contained HTML page (or --markdown tables) from bench results files")
    p.add_argument("results", nargs="*", metavar="RESULTS")
    p.add_argument("-o", "--output", default=None, metavar="PAGE",
                   help="the HTML page to write (default: beside the first results file, .html)")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown instead of writing a page")
    p.add_argument("--log", action="append", default=[], metavar="LOG",
                   help="a decision log (INDUCTOR_ABLATE_LOG) to show as remarks: fused, vetoed, refused; repeatable")
    p.add_argument("--figure", choices=("forest", "heatmap"), default=None,
                   help="write one picture of the first setting as SVG to -o (for a README or a paper)")
    p.add_argument("--table", choices=markdown.TABLES, default=None, help="with --markdown: one table only")
    p.add_argument("--baseline", default="pooled", choices=BASELINES, help="eager time a speedup divides (as bench)")
    p.add_argument("--fill", action="append", default=[], metavar="DOC",
                   help="rewrite the tables of a Markdown doc from the commands above them (see views/fill.py)")
    p.add_argument("--check", action="store_true", help="with --fill: change nothing; exit 1 if a table is stale")
    args = p.parse_args(argv)
    if args.fill:
        if args.results or args.markdown:
            raise UsageError("report --fill DOC takes no results files: each table's command names its own")
        stale = {doc: fill(doc, {"report": main, "compare": compare}, args.check) for doc in args.fill}
        for doc, commands in stale.items():
            for command in commands:
                print(f"{doc}: {'stale' if args.check else 'filled'}: {command}")
        return 1 if args.check and any(stale.values()) else 0
    if args.check:
        raise UsageError("--check goes with --fill DOC")
    if not args.results:
        raise UsageError("report: give one or more results files (bench --json writes them)")
    if args.figure:
        if not args.output or args.markdown:
            raise UsageError("--figure NAME writes an SVG: give it -o FILE.svg (and no --markdown)")
        require_extra("report --figure", ("matplotlib",), "report")
        check_writable(args.output, "figure", "choose another -o path")
        sections, _ = build(args.results[:1], args.baseline)
        svg = getattr(charts, args.figure)(sections[0])
        if svg is None:
            raise UsageError(f"{args.results[0]}: no row paired with `all` to draw")
        with open(args.output, "w") as f:
            f.write(svg)
        print(f"figure: {args.output}")
        return 0
    if args.table and not args.markdown:
        raise UsageError("--table goes with --markdown (the page holds every table)")
    if args.markdown:
        if args.output or args.log:
            raise UsageError("report --markdown prints the tables; -o and --log go with the HTML page")
        sections, splits = build(args.results, args.baseline)
        if args.table:
            print(markdown.table(args.table, sections, splits))
        else:
            print(markdown.document(sections, splits), end="")
        return 0
    require_extra("report", ("matplotlib", "jinja2"), "report")
    out = args.output or page_path(args.results[0])
    if os.path.isdir(out):
        raise UsageError(f"-o {out}: a directory; give the page's file name")
    check_writable(out, "report page", "choose another -o path")
    for log in args.log:  # a bad log is found before the bootstrap runs
        load_log(log)
    print(f"report: {write_page(args.results, out, args.log, args.baseline)}")
    return 0
