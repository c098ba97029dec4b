"""``python -m inductor_ablate explain RESULTS``: its options, then ``explain``'s split, printed."""
from __future__ import annotations

import json

from ..errors import OneLineParser, UsageError, check_writable
from ..explain import explain, print_explanation
from ..results import read_results_file


def main(argv: list[str]) -> int:
    p = OneLineParser(prog="python -m inductor_ablate explain",
                      description="why each row costs what it costs: the change from `all` split into generated "
                                  "kernels, library kernels and gaps, from the profiles of `bench --profile`")
    p.add_argument("results", metavar="RESULTS")
    p.add_argument("--row", action="append", default=None, help="a row to explain (repeatable; default every one)")
    p.add_argument("--model", action="append", default=None, help="a model (repeatable; default every one)")
    p.add_argument("--top", type=int, default=10, help="lines to list per row, and groups by fusion (default 10)")
    p.add_argument("--json", default=None, metavar="F", help="write the split here")
    args = p.parse_args(argv)
    if args.top < 0:
        raise UsageError(f"--top {args.top}: expected 0 or more")
    if args.json is not None:
        check_writable(args.json, "explain file", "choose another --json path")
    data = read_results_file(args.results)
    result = explain(data["cells"], args.row, args.model)
    print_explanation(result, args.top)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
        print(f"\nwrote {args.json}")
    return 0
