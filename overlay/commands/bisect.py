"""``python -m inductor_ablate bisect``: its options, checked, then ``bisector``'s search or ranking."""
from __future__ import annotations

import json
import math
import shlex

from ..bisector import KINDS, tail, bisect, describe_decision, print_ranking, rank, user_switches
from ..errors import OneLineParser, UsageError, check_writable


def main(argv: list[str]) -> int:
    p = OneLineParser(prog="python -m inductor_ablate bisect",
                      description="find the first fusion (or inlining) decision that makes a command fail; or, "
                                  "with --rank --metric CMD, what each of the top fusions is worth to CMD's number")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--fuse", action="store_const", const="fuse", dest="kind", help="fusion decisions (default)")
    which.add_argument("--inline", action="store_const", const="inline", dest="kind", help="inlining decisions")
    p.add_argument("--timeout", type=float, default=900, help="seconds per run (default 900)")
    p.add_argument("--rank", action="store_true", help="leave-one-out over the top fusions (needs --metric)")
    p.add_argument("--metric", metavar="CMD", help="a command (one string) whose last printed number is measured, "
                                                   "e.g. 'python latency.py' (with --rank)")
    p.add_argument("--top", type=int, default=5, help="fusions to rank (default 5)")
    p.add_argument("--by", choices=("score", "time"), default=None,
                   help="choose the --top by Inductor's memory score (default) or by the measured time of the "
                        "kernels they produced, from one profiled run (INDUCTOR_KERNEL_PROFILE)")
    p.add_argument("--repeats", type=int, default=6, help="rounds of runs for --rank (default 6: fewer can star nothing)")
    p.add_argument("--above", type=float, metavar="X", help="with --metric CMD and no --rank: bisect CMD, a run failing "
                                                           "when its number exceeds X (a performance regression)")
    p.add_argument("--json", metavar="PATH", help="with --rank: write the ranking here")
    p.add_argument("command", nargs="*", help="-- then the command, e.g. -- python script.py")
    args = p.parse_args(argv)
    kind = args.kind or "fuse"
    if args.timeout <= 0:
        raise UsageError(f"bisect: --timeout {args.timeout:g}: expected seconds > 0")
    if args.metric == "":
        raise UsageError("bisect: --metric '': give the command whose last printed number is measured")
    if args.by is not None and not args.rank:
        raise UsageError(f"bisect: --by {args.by} chooses what --rank ranks, so it goes with --rank --metric CMD")
    if args.json is not None and not args.rank:
        raise UsageError("bisect: --json writes the ranking, so it goes with --rank --metric CMD")
    if args.above is not None:
        if args.rank or not args.metric or args.command:
            raise UsageError("bisect: --above X goes with --metric CMD, without --rank or -- COMMAND (the first "
                             "decision after which CMD's number exceeds X)")
    elif args.rank or args.metric:
        if not (args.rank and args.metric):
            raise UsageError("bisect: --rank and --metric CMD go together (rank the top fusions by CMD's number)")
        if kind != "fuse" or args.command:
            raise UsageError("bisect --rank: ranks fusions only, by the --metric command (no -- COMMAND)")
        if args.top < 1 or args.repeats < 1:
            raise UsageError(f"bisect --rank: --top and --repeats must be at least 1 (got {args.top}, {args.repeats})")
        if args.json is not None:  # found now, not after every measuring run
            check_writable(args.json, "ranking file", "choose another --json path")
        result = rank(shlex.split(args.metric), args.top, args.repeats, args.timeout, by=args.by or "score")
        print_ranking(result)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        return 0
    command = shlex.split(args.metric) if args.above is not None else args.command
    if not command:
        raise UsageError("bisect: give the command after --, e.g. bisect -- python script.py")
    result = bisect(command, kind, args.timeout, above=args.above)
    record = result["decision"]
    expected = 2 + math.ceil(math.log2(max(result["total"], 1)))
    print(f"\n{result['runs']} runs (at most {expected} for {result['total']} decisions)")
    if record is None:  # the failing run's log lacks it: the numbering was not stable between runs
        print(f"limit {result['limit']} fails and {result['limit'] - 1} passes, but the log of the failing run has "
              f"no decision #{result['limit']}: the program's decisions are not deterministic")
        return 1
    print(f"first bad {describe_decision(record)}")
    print(f"  {result['lo'].describe()} (passes)\n  {result['hi'].describe()} (fails); its output ends:")
    print(tail(result["hi"].proc.stderr or result["hi"].proc.stdout))
    switches = "".join(f"{k}={shlex.quote(v)} " for k, v in user_switches().items())
    print(f"reproduce: {switches}{KINDS[kind][1]}={result['limit']} {shlex.join(command)}")
    return 0
