"""``python -m inductor_ablate bisect [--fuse|--inline] -- COMMAND ...``: the first fusion (or
inlining) decision that makes COMMAND fail.

COMMAND runs with every decision allowed (it must fail: a non-zero exit, so a script can check its
own accuracy), with none allowed (it must pass), then with ``INDUCTOR_FUSE_LIMIT`` /
``INDUCTOR_INLINE_LIMIT`` halving the range between the last passing and the first failing limit:
2 + ceil(log2 N) runs for N decisions.  Decision k is the same decision in every run whose limit is
k or more (decisions.py), so the answer is the record of decision k in the log of the run at limit
k.  Every run compiles afresh: Inductor's FX-graph and AOTAutograd caches are off in the runs, since
a cached graph makes no decisions.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile

from . import decisions
from .errors import OneLineParser, UsageError

KINDS = {"fuse": ("fusion", "INDUCTOR_FUSE_LIMIT"), "inline": ("inline", "INDUCTOR_INLINE_LIMIT")}


class Run:
    def __init__(self, limit, proc, records):
        self.limit, self.proc, self.records = limit, proc, records

    @property
    def failed(self) -> bool:
        return self.proc.returncode != 0

    def describe(self) -> str:
        limit = "unset (every decision)" if self.limit is None else str(self.limit)
        return f"limit {limit}: exit {self.proc.returncode}, {len(self.records)} decisions"


def _run(command: list[str], kind: str, limit: int | None, workdir: str, timeout: float) -> Run:
    record_kind, variable = KINDS[kind]
    log = os.path.join(workdir, f"decisions-{'all' if limit is None else limit}.jsonl")
    if os.path.exists(log):
        os.remove(log)
    env = {k: v for k, v in os.environ.items() if k not in ("INDUCTOR_FUSE_LIMIT", "INDUCTOR_INLINE_LIMIT")}
    env.update({decisions.LOG_ENV: log, "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"})
    if limit is not None:
        env[variable] = str(limit)
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise UsageError(f"bisect: cannot run {command[0]!r}: no such program") from None
    except subprocess.TimeoutExpired:
        proc = subprocess.CompletedProcess(command, 124, "", f"timed out after {timeout:.0f} s")
    return Run(limit, proc, decisions.read_log(log, record_kind))


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


def describe_decision(record: dict) -> str:
    where = f"decision #{record['n']} (graph {record['graph']}, its #{record['graph_n']})"
    if record["decision"] == "fusion":
        return (f"{where}: {record['kind']} fusion of {record['node1']} and {record['node2']} "
                f"(memory score {record['score']})\n  {record['node1']}: {', '.join(record['ops1'])}\n"
                f"  {record['node2']}: {', '.join(record['ops2'])}")
    return f"{where}: the output of {record['fx_node']} ({record['op']}) left to Inductor to inline"


def bisect(command: list[str], kind: str = "fuse", timeout: float = 900, out=print) -> dict:
    """Returns {"decision": record or None, "runs": count, "lo": Run, "hi": Run}."""
    with tempfile.TemporaryDirectory(prefix="ia-bisect-") as workdir:
        full = _run(command, kind, None, workdir, timeout)
        out(f"run 1, {full.describe()}")
        if not full.failed:
            raise UsageError("bisect: the command passes with every decision allowed (exit 0); nothing to find")
        total = len(full.records)
        none = _run(command, kind, 0, workdir, timeout)
        out(f"run 2, {none.describe()}")
        if none.failed:
            raise UsageError(f"bisect: the command fails with limit 0 too (exit {none.proc.returncode}): not a "
                             f"{KINDS[kind][0]} decision; its output ends:\n{_tail(none.proc.stderr or none.proc.stdout)}")
        if total == 0:
            raise UsageError(f"bisect: the command made no {KINDS[kind][0]} decision (is the script compiling with "
                             f"torch.compile, in this Python?)")
        lo, hi, runs = none, full, 2
        lo_limit, hi_limit = 0, total
        while hi_limit - lo_limit > 1:
            mid = (lo_limit + hi_limit) // 2
            run = _run(command, kind, mid, workdir, timeout)
            runs += 1
            out(f"run {runs}, {run.describe()}: {'fails' if run.failed else 'passes'}")
            if run.failed:
                hi, hi_limit = run, mid
            else:
                lo, lo_limit = run, mid
        record = next((r for r in hi.records if r["n"] == hi_limit), None)
        return {"decision": record, "runs": runs, "lo": lo, "hi": hi, "limit": hi_limit, "total": total}


def main(argv: list[str]) -> int:
    p = OneLineParser(prog="python -m inductor_ablate bisect",
                      description="find the first fusion (or inlining) decision that makes a command fail")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--fuse", action="store_const", const="fuse", dest="kind", help="fusion decisions (default)")
    which.add_argument("--inline", action="store_const", const="inline", dest="kind", help="inlining decisions")
    p.add_argument("--timeout", type=float, default=900, help="seconds per run (default 900)")
    p.add_argument("command", nargs="+", help="-- then the command, e.g. -- python script.py")
    args = p.parse_args(argv)
    kind = args.kind or "fuse"
    result = bisect(args.command, kind, args.timeout)
    record = result["decision"]
    expected = 2 + math.ceil(math.log2(max(result["total"], 1)))
    print(f"\n{result['runs']} runs (at most {expected} for {result['total']} decisions)")
    if record is None:  # the failing run's log lacks it: the numbering was not stable between runs
        print(f"limit {result['limit']} fails and {result['limit'] - 1} passes, but the log of the failing run has "
              f"no decision #{result['limit']}: the program's decisions are not deterministic")
        return 1
    print(f"first bad {describe_decision(record)}")
    print(f"  {result['lo'].describe()} (passes)\n  {result['hi'].describe()} (fails); its output ends:")
    print(_tail(result["hi"].proc.stderr or result["hi"].proc.stdout))
    print(f"reproduce: {KINDS[kind][1]}={result['limit']} {' '.join(args.command)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
