"""``python -m inductor_ablate merge FILES... [--json OUT]``: results files joined (shards, lanes,
runs pooled as repeats) into one, with the tables and page bench ends with."""
from __future__ import annotations

import json

from ..errors import OneLineParser, UsageError, check_writable
from ..views import terminal
from ..results import RESULTS_FORMAT, merge
from .common import add_report_options, check_outputs, emit, write_page_beside


def main(argv) -> int:
    p = OneLineParser(prog="python -m inductor_ablate merge", description="join results files (shards) into one report")
    p.add_argument("inputs", nargs="+")
    p.add_argument("--json", default=None, help="merged results file to write (and its page beside it); without it "
                                                "merge prints the report and writes nothing")
    p.add_argument("--pool-repeats", action="store_true",
                   help="a cell that ran in several files (another day, another GPU) counts as further process "
                        "repeats, pooled in the intervals, instead of keeping one")
    p.add_argument("--leave-out", action="append", default=[], metavar="FILE:MODEL",
                   help="leave out MODEL's cells of FILE (one of the inputs): cells that measured a program since "
                        "fixed; repeatable")
    add_report_options(p)
    args = p.parse_args(argv)
    leave_out = []
    for item in args.leave_out:
        path, sep, model = item.rpartition(":")
        if not sep or not path or not model:
            raise UsageError(f"--leave-out {item!r}: expected FILE:MODEL")
        leave_out.append((path, model))
    merged = merge(args.inputs, pool=args.pool_repeats, leave_out=leave_out)  # its inputs checked first
    if args.json:
        check_writable(args.json)
    check_outputs(args)
    summary = emit(merged["cells"], args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"format": RESULTS_FORMAT, **merged, "summary": summary}, f, indent=1, default=str)
    print(f"\n{terminal.time_split(merged['cells'])}")
    print(f"\n{terminal.repeat_spread(merged['cells'])}")
    print(terminal.same_code_spread(merged["cells"]))
    print(terminal.eager_spread(merged["cells"]))
    left = f" (left out: {', '.join(merged['meta']['left_out'])})" if leave_out else ""
    if not args.json:
        print(f"\nmerged {len(args.inputs)} files, {len(merged['cells'])} cells{left}; nothing written (--json FILE "
              f"writes the merged file and its page)")
        return 0
    print(f"\nmerged {len(args.inputs)} files, {len(merged['cells'])} cells{left} -> {args.json}")
    write_page_beside(args.json, args.baseline)
    return 0
