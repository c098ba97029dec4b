"""``python -m inductor_ablate bisect [--fuse|--inline] -- COMMAND ...``: the first fusion (or
inlining) decision that makes COMMAND fail; ``bisect --rank --metric CMD``: what each of the top
fusions is worth to a number CMD prints (a latency).

COMMAND runs with every decision allowed (it must fail: a non-zero exit, so a script can check its
own accuracy), with none allowed (it must pass), then with ``INDUCTOR_FUSE_LIMIT`` /
``INDUCTOR_INLINE_LIMIT`` halving the range between the last passing and the first failing limit:
2 + ceil(log2 N) runs for N decisions.  Decision k is the same decision in every run whose limit is
k or more (decisions.py), so the answer is the record of decision k in the log of the run at limit
k.  Every run compiles afresh: Inductor's FX-graph and AOTAutograd caches are off in the runs, since
a cached graph makes no decisions.

``--metric CMD --above X``: the same search with CMD, a run failing when the last number it prints
exceeds X (a latency past a budget): the first decision after which the program got slow.

``--rank``: one run of the metric command logs the fusions; the ``--top`` with the highest memory
score (Inductor's own ranking term) are the candidates, or with ``--by time`` those whose kernels
took the most time in that run (profiled through ``INDUCTOR_KERNEL_PROFILE``: a fusion's time is
that of the generated kernel holding all of its FX nodes).  Then ``--repeats`` rounds, each running the
command once with every fusion and once per candidate with ``INDUCTOR_FUSE_SKIP`` vetoing it alone
(leave-one-out), in an order rotated per round so drift does not favour one.  A candidate's worth is
its metric without it minus with it, paired within each round, with a bootstrap 95% interval over
the rounds.
"""
from __future__ import annotations

import json
import os
import statistics
import re
import subprocess
import tempfile

from . import decisions
from .errors import UsageError
from .explain import by_kernel_time, kernel_holding
from .stats import MIN_PAIRS_FOR_A_CLAIM, mean_interval

KINDS = {"fuse": ("fusion", "INDUCTOR_FUSE_LIMIT"), "inline": ("inline", "INDUCTOR_INLINE_LIMIT")}


class Run:
    """One run of the command; with ``above``, it also fails when its metric (the last number it
    printed) exceeds that value: a performance regression, not only a crash or a wrong answer."""

    def __init__(self, limit, proc, records, above: float | None = None):
        self.limit, self.proc, self.records, self.above = limit, proc, records, above
        self.metric = metric_value(proc.stdout) if above is not None else None

    @property
    def failed(self) -> bool:
        if self.proc.returncode != 0:
            return True
        return self.above is not None and (self.metric is None or self.metric > self.above)

    def describe(self) -> str:
        limit = "unset (every decision)" if self.limit is None else str(self.limit)
        metric = "" if self.above is None else f", metric {'none' if self.metric is None else f'{self.metric:g}'}"
        return f"limit {limit}: exit {self.proc.returncode}{metric}, {len(self.records)} decisions"


#: Set by bisect itself in each run; every other INDUCTOR_* variable of the user's is passed on.
_OURS = ("INDUCTOR_FUSE_LIMIT", "INDUCTOR_INLINE_LIMIT", "INDUCTOR_FUSE_SKIP", decisions.LOG_ENV)


def user_switches() -> dict[str, str]:
    """The INDUCTOR_* variables the user set (INDUCTOR_FLUSH_EVERY_NODE=1, say): every run keeps
    them, so the reproduce line must name them too."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("INDUCTOR_") and k not in _OURS and v}


def _run(command: list[str], kind: str, limit: int | None, workdir: str, timeout: float,
         skip: int | None = None, name: str | None = None, above: float | None = None,
         extra_env: dict | None = None) -> Run:
    record_kind, variable = KINDS[kind]
    log = os.path.join(workdir, f"decisions-{name or ('all' if limit is None else limit)}.jsonl")
    if os.path.exists(log):
        os.remove(log)
    env = {k: v for k, v in os.environ.items() if k not in _OURS}
    env.update({decisions.LOG_ENV: log, "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"})
    if limit is not None:
        env[variable] = str(limit)
    if skip is not None:
        env["INDUCTOR_FUSE_SKIP"] = str(skip)
    env.update(extra_env or {})
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise UsageError(f"bisect: cannot run {command[0]!r}: no such program") from None
    except subprocess.TimeoutExpired:
        proc = subprocess.CompletedProcess(command, 124, "", f"timed out after {timeout:.0f} s")
    return Run(limit, proc, in_scope_numbering(decisions.read_log(log, record_kind)), above)


def in_scope_numbering(records: list[dict]) -> list[dict]:
    """Under a scope (the user's INDUCTOR_ABLATE_MODULES/OPS, passed on to every run), the fusion
    limit and the skips count in-scope fusions (the log's ``scope_n``): bisect and rank those, each
    numbered as the limit numbers it (``n``; ``n_all``: its number in the whole program)."""
    if not any("scope_n" in r for r in records):
        return records
    return [dict(r, n=r["scope_n"], n_all=r["n"]) for r in records if r.get("scope_n") is not None]


def tail(text: str, lines: int = 6) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


def describe_decision(record: dict) -> str:
    where = f"decision #{record['n']} (graph {record['graph']}, its #{record['graph_n']})"
    if "n_all" in record:
        where = f"in-scope decision #{record['n']} (#{record['n_all']} of the program; graph {record['graph']})"
    if record["decision"] == "fusion":
        return (f"{where}: {record['kind']} fusion of {record['node1']} and {record['node2']} "
                f"(memory score {record['score']})\n  {record['node1']}: {', '.join(record['ops1'])}\n"
                f"  {record['node2']}: {', '.join(record['ops2'])}")
    return f"{where}: the output of {record['fx_node']} ({record['op']}) left to Inductor to inline"


def _grouping_hint(kind: str) -> str:
    """Why a fusion bisect can fail at limit 0 on CPU: the C++ backend still writes consecutive nodes
    into one function (not a fusion, so no limit reaches it)."""
    if kind != "fuse" or user_switches().get("INDUCTOR_FLUSH_EVERY_NODE", "0").lower() in ("1", "true", "yes", "on"):
        return ""
    return ("\n  on CPU the C++ backend still groups unfused nodes into one function; if the command inspects "
            "functions, run bisect with INDUCTOR_FLUSH_EVERY_NODE=1 (every run keeps your INDUCTOR_* variables)")


def bisect(command: list[str], kind: str = "fuse", timeout: float = 900, out=print, above: float | None = None) -> dict:
    """Returns {"decision": record or None, "runs": count, "lo": Run, "hi": Run}.  With ``above``, a
    run fails when its metric exceeds it (see Run)."""
    what = "fails" if above is None else f"fails or its metric exceeds {above:g}"
    with tempfile.TemporaryDirectory(prefix="ia-bisect-") as workdir:
        full = _run(command, kind, None, workdir, timeout, above=above)
        out(f"run 1, {full.describe()}")
        if not full.failed:
            raise UsageError(f"bisect: the command passes with every decision allowed ({full.describe()}); "
                             f"nothing to find")
        total = len(full.records)
        none = _run(command, kind, 0, workdir, timeout, above=above)
        out(f"run 2, {none.describe()}")
        if none.failed:
            raise UsageError(f"bisect: the command {what} with limit 0 too ({none.describe()}): not a "
                             f"{KINDS[kind][0]} decision{_grouping_hint(kind)}; its output ends:\n"
                             f"{tail(none.proc.stderr or none.proc.stdout)}")
        if total == 0:
            raise UsageError(f"bisect: the command made no {KINDS[kind][0]} decision (is the script compiling with "
                             f"torch.compile, in this Python?)")
        lo, hi, runs = none, full, 2
        lo_limit, hi_limit = 0, total
        while hi_limit - lo_limit > 1:
            mid = (lo_limit + hi_limit) // 2
            run = _run(command, kind, mid, workdir, timeout, above=above)
            runs += 1
            out(f"run {runs}, {run.describe()}: {'fails' if run.failed else 'passes'}")
            if run.failed:
                hi, hi_limit = run, mid
            else:
                lo, lo_limit = run, mid
        record = next((r for r in hi.records if r["n"] == hi_limit), None)
        return {"decision": record, "runs": runs, "lo": lo, "hi": hi, "limit": hi_limit, "total": total}


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def metric_value(stdout: str) -> float | None:
    """The last number the metric command printed (None if it printed none)."""
    numbers = _NUMBER.findall(stdout)
    return float(numbers[-1]) if numbers else None


def _interval(diffs: list[float], seed: str) -> tuple[float, float] | None:
    """Bootstrap 95% interval of the mean of ``diffs`` (None for fewer than 2), as bench's tables do."""
    return mean_interval(diffs, seed)


def _short_ops(ops: list[str], most: int = 4) -> str:
    targets = sorted({op.split(":", 1)[-1].replace("aten.", "").rsplit(".", 1)[0] for op in ops})
    return ",".join(targets[:most]) + (f",+{len(targets) - most}" if len(targets) > most else "")


def fusion_times(records: list[dict], profile: dict) -> dict[int, tuple[float, str]]:
    """{fusion number: (ms, kernel name)}: the time of the generated kernel that holds every FX node
    of the fusion's two sides (the largest, if FX node names repeat across graphs)."""
    out = {}
    for r in records:
        found = kernel_holding({op.split(":", 1)[0] for op in r["ops1"] + r["ops2"]}, profile.get("kernels", ()))
        if found:
            out[r["n"]] = found
    return out


def rank(command: list[str], top: int = 5, repeats: int = 6, timeout: float = 900, out=print,
         by: str = "score") -> dict:
    """Leave-one-out over the ``top`` fusions by memory score or (``by="time"``) by the time of
    the kernels they produced: see the module docstring."""
    from .switches import PROFILE_ENV

    with tempfile.TemporaryDirectory(prefix="ia-rank-") as workdir:
        profile_path = os.path.join(workdir, "profile.json")
        first = _run(command, "fuse", None, workdir, timeout, name="log",
                     extra_env={PROFILE_ENV: profile_path} if by == "time" else None)
        value = metric_value(first.proc.stdout)
        if first.failed or value is None:
            why = f"exit {first.proc.returncode}" if first.failed else "printed no number"
            raise UsageError(f"bisect --rank: the metric command {why} with every fusion allowed; its output ends:\n"
                             f"{tail(first.proc.stderr or first.proc.stdout)}")
        fusions = [r for r in first.records if r.get("result", "fused") == "fused"]
        if not fusions:
            raise UsageError("bisect --rank: the metric command made no fusion (is it compiling with torch.compile, "
                             "in this Python?)")
        times: dict = {}
        if by == "time":
            try:
                with open(profile_path) as f:
                    times = fusion_times(fusions, json.load(f))
            except (OSError, ValueError):
                raise UsageError("bisect --rank --by time: the metric command's run wrote no kernel profile (does "
                                 "it compile in a Python with inductor_ablate installed?)") from None
            if not times:
                raise UsageError("bisect --rank --by time: no fusion's kernel shows in the profile of the metric "
                                 "command's run (did its compiled code run?)")
            candidates = by_kernel_time(fusions, times)[:top]
            basis = "whose kernels took the most time"
        else:
            candidates = sorted(fusions, key=lambda r: (-(r["score"] or 0), r["n"]))[:top]
            basis = "with the highest memory score"
        out(f"run 1: every fusion, metric {value:g}, {len(fusions)} fusions; candidates: the {len(candidates)} "
            f"{basis} (#{', #'.join(str(r['n']) for r in candidates)})")
        variants = [None] + [r["n"] for r in candidates]
        samples: dict = {v: [] for v in variants}
        problems: dict = {v: [] for v in variants}
        runs = 1
        for round_ in range(repeats):
            shift = round_ % len(variants)
            for skip in variants[shift:] + variants[:shift]:
                run = _run(command, "fuse", None, workdir, timeout, skip=skip, name=f"r{round_}-{skip}")
                runs += 1
                value = metric_value(run.proc.stdout)
                vetoed = skip is None or any(r["n"] == skip and r["result"].startswith("vetoed") for r in run.records)
                ok = not run.failed and value is not None and vetoed
                if not ok:
                    problems[skip].append(f"exit {run.proc.returncode}" if run.failed else
                                          "no number printed" if value is None else f"decision #{skip} not made")
                samples[skip].append(value if ok else None)
            out(f"round {round_ + 1}/{repeats}: {len(variants)} runs")
        if problems[None]:
            raise UsageError(f"bisect --rank: the metric command failed with every fusion allowed: {problems[None][0]}")
        base = samples[None]
        rows = []
        for record in candidates:
            n = record["n"]
            diffs = [s - b for s, b in zip(samples[n], base) if s is not None]
            mean = sum(diffs) / len(diffs) if diffs else None
            ci = _interval(diffs, f"rank{n}")
            kernel_ms, kernel = times.get(n, (None, None))
            rows.append(dict(record=record, n=n, samples=samples[n], diffs=diffs, change=mean, kernel=kernel,
                             kernel_ms=kernel_ms,
                             change_lo=ci and ci[0], change_hi=ci and ci[1], problems=problems[n],
                             significant=bool(ci and (ci[0] > 0 or ci[1] < 0)) and len(diffs) >= MIN_PAIRS_FOR_A_CLAIM))
        rows.sort(key=lambda r: (r["change"] is None, -(r["change"] or 0)))
        return {"rows": rows, "base": base, "runs": runs, "fusions": len(fusions), "repeats": repeats, "top": top,
                "command": command, "by": by}


def print_ranking(result: dict) -> None:
    base = sorted(result["base"])
    median = statistics.median(base)
    print(f"\n{result['runs']} runs; metric with every fusion: median {median:g} over {len(base)} rounds "
          f"(min {base[0]:g}, max {base[-1]:g})")
    print("change = metric with the fusion vetoed minus with every fusion, paired by round (for a latency, "
          "+ = the fusion saves that much); [95% bootstrap interval]; * = interval excludes 0, on "
          f"{MIN_PAIRS_FOR_A_CLAIM}+ rounds (the study's rule)")
    timed = result.get("by") == "time"
    header = (f"{'rank':>4}  {'#':>5}  {'kind':<12} {'score':>10}  " + (f"{'kernel ms':>10}  " if timed else "") +
              f"{'change':>10}  {'interval':<24} {'%':>7}  fusion")
    print(header)
    for i, row in enumerate(result["rows"], 1):
        rec = row["record"]
        if row["change"] is None:
            change, interval, pct = "n/a", "; ".join(sorted(set(row["problems"]))), ""
        else:
            change = f"{row['change']:+.4g}" + ("*" if row["significant"] else "")
            interval = f"[{row['change_lo']:+.4g}, {row['change_hi']:+.4g}]" if row["change_lo"] is not None else "(1 round)"
            pct = f"{100 * row['change'] / median:+.1f}%" if median else ""
        kernel_ms = f"{row['kernel_ms']:>10.4g}  " if timed else ""
        print(f"{i:>4}  {row['n']:>5}  {rec['kind']:<12} {rec['score'] or 0:>10}  {kernel_ms}{change:>10}  {interval:<24} {pct:>7}  "
              f"{rec['node1']} ({_short_ops(rec['ops1'])}) + {rec['node2']} ({_short_ops(rec['ops2'])})")

