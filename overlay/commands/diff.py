"""``python -m inductor_ablate diff LOG_A LOG_B``: the decisions one log holds and the other does not."""
from __future__ import annotations

import argparse

from .. import decisions
from ..errors import OneLineParser
from ..logdiff import describe, diff


def main(argv: list[str]) -> int:
    parser = OneLineParser(prog="python -m inductor_ablate diff",
                           description="the fusions and inlinings in one decision log (INDUCTOR_ABLATE_LOG) "
                                       "and not the other, matched by their ops")
    parser.add_argument("log_a", metavar="LOG_A")
    parser.add_argument("log_b", metavar="LOG_B")
    args: argparse.Namespace = parser.parse_args(argv)
    only_a, only_b, both = diff(decisions.load_log(args.log_a), decisions.load_log(args.log_b))
    for k in only_a:
        print(f"- {describe(k)}")
    for k in only_b:
        print(f"+ {describe(k)}")
    print(f"{len(only_a)} only in {args.log_a}, {len(only_b)} only in {args.log_b}, {both} in both")
    return 0
