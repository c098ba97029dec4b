"""``python -m inductor_ablate diff LOG_A LOG_B``: the decisions one log holds and the other does not."""
from __future__ import annotations

import argparse

from .. import decisions
from ..errors import OneLineParser
from ..logdiff import describe, diff, where
from ..switches import parse_scope


def main(argv: list[str]) -> int:
    parser = OneLineParser(prog="python -m inductor_ablate diff",
                           description="the fusions and inlinings in one decision log (INDUCTOR_ABLATE_LOG) "
                                       "and not the other, matched by their ops")
    parser.add_argument("log_a", metavar="LOG_A")
    parser.add_argument("log_b", metavar="LOG_B")
    parser.add_argument("--modules", default=None, metavar="GLOBS",
                        help="only decisions with a side in these modules (a comma list of globs over module paths)")
    args: argparse.Namespace = parser.parse_args(argv)
    modules = parse_scope(args.modules, "--modules") if args.modules is not None else ()
    log_a, log_b = decisions.load_log(args.log_a), decisions.load_log(args.log_b)
    only_a, only_b, both = diff(log_a, log_b, modules)
    for k in only_a:  # each line with its decision numbers and modules: two decisions never read as one
        print(f"- {describe(k)}  [{where(log_a, k)}]")
    for k in only_b:
        print(f"+ {describe(k)}  [{where(log_b, k)}]")
    print(f"{len(only_a)} only in {args.log_a}, {len(only_b)} only in {args.log_b}, {both} in both")
    return 0
