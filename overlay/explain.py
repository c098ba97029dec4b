"""``python -m inductor_ablate explain RESULTS [--row ROW] [--model M] [--top N] [--json F]``: why each
row costs what it costs, from the kernel profiles ``bench --profile`` records.

For each row against ``all``, per model: the timed change in step time (``measured_ms``, from the
cells' timing) and its parts from the profiles: generated kernels (split into kernels added, removed
and changed, matched by the ops they compute, not by name), library kernels, and gaps (step time with
no kernel running: launches, Python, waiting).  Over models: the mean of each, with a bootstrap 95%
interval over models.  The parts come from a profiled pass, the measured change from the timing;
where their sums differ by more than 10% the output says so.  A reader of the results file only:
it measures nothing.
"""
from __future__ import annotations

import json
import random
from collections import defaultdict

from .bench.report import BOOTSTRAP, _percentiles
from .results import read_results_file
from .errors import OneLineParser, UsageError, check_writable
from .profile import totals

PARTS = ("measured_ms", "generated_ms", "library_ms", "gaps_ms")
MISMATCH = 0.10  # parts and measured change differ by more than this share of the measured change


def _mean(values):
    return sum(values) / len(values)


def _profiled(cells: list[dict]) -> dict:
    """{(model, config): [ok cells with a profile]} (several with --cell-repeats)."""
    out = defaultdict(list)
    for c in cells:
        if c.get("status") == "ok" and c.get("profile"):
            out[(c["model"], c["config"])].append(c)
    return out


def _kernels(cells: list[dict]) -> dict:
    """{(kind, ops): {ms, calls, bytes, name}} per step, averaged over the cells: kernels of two
    configs are matched by what they compute, since their names are numbered per graph."""
    out: dict = {}
    for c in cells:
        for k in c["profile"]["kernels"]:
            key = (k["kind"], tuple(k["ops"]))
            row = out.setdefault(key, {"ms": 0.0, "calls": 0.0, "bytes": k.get("bytes"), "name": k["name"]})
            row["ms"] += k["ms"] / len(cells)
            row["calls"] += k["calls"] / len(cells)
    return out


def split(row_cells: list[dict], all_cells: list[dict]) -> dict:
    """One model's change from ``all``: measured and its parts, in ms per step, and the kernels that moved."""
    def part(cells, name):
        return _mean([totals(c["profile"])[name] for c in cells])

    out = {"measured_ms": _mean([c["compiled_ms"] for c in row_cells]) - _mean([c["compiled_ms"] for c in all_cells])}
    for name in ("generated_ms", "library_ms", "gaps_ms"):
        out[name] = part(row_cells, name) - part(all_cells, name)
    mine, base = _kernels(row_cells), _kernels(all_cells)
    out.update(added_ms=0.0, removed_ms=0.0, changed_ms=0.0)
    movers = []
    for key in set(mine) | set(base):
        now, was = mine.get(key), base.get(key)
        how = "added" if was is None else "removed" if now is None else "changed"
        delta = (now["ms"] if now else 0.0) - (was["ms"] if was else 0.0)
        if key[0] == "generated":
            out[f"{how}_ms"] += delta
        k = now or was
        gbps = k["bytes"] * k["calls"] / (k["ms"] * 1e6) if k["bytes"] and k["ms"] > 0 else None
        movers.append({"kind": key[0], "how": how, "delta_ms": delta, "name": k["name"], "ops": list(key[1]),
                       "ms": k["ms"], "gb_per_s": gbps})
    movers.sort(key=lambda m: -abs(m["delta_ms"]))
    out["parts_ms"] = out["generated_ms"] + out["library_ms"] + out["gaps_ms"]
    out["mismatch"] = abs(out["parts_ms"] - out["measured_ms"]) > MISMATCH * abs(out["measured_ms"])
    out["movers"] = movers
    return out


def _interval(values: list[float], seed: str):
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    return _percentiles([_mean([rng.choice(values) for _ in values]) for _ in range(BOOTSTRAP)])


def explain(cells: list[dict], rows: list[str] | None = None, models: list[str] | None = None) -> dict:
    """{"rows": {ROW: {"models": {MODEL: split}, "over_models": {part: {mean, lo, hi}}}}}."""
    profiled = _profiled(cells)
    if not profiled:
        raise UsageError("the results file holds no kernel profiles: run bench with --profile")
    have_models = sorted({m for m, _ in profiled})
    have_rows = sorted({c for _, c in profiled if c != "all"})
    for m in models or ():
        if m not in have_models:
            raise UsageError(f"--model {m!r}: no profiled cells of it; profiled models: {', '.join(have_models)}")
    for r in rows or ():
        if r not in have_rows:
            raise UsageError(f"--row {r!r}: no profiled cells of it; profiled rows: {', '.join(have_rows) or 'none'}")
    out: dict = {"rows": {}}
    for row in rows or have_rows:
        per_model = {m: split(profiled[(m, row)], profiled[(m, "all")]) for m in models or have_models
                     if (m, row) in profiled and (m, "all") in profiled}
        if not per_model:
            continue
        over = {}
        for name in (*PARTS, "added_ms", "removed_ms", "changed_ms"):
            values = [s[name] for s in per_model.values()]
            ci = _interval(values, f"explain-{row}-{name}")
            over[name] = {"mean": _mean(values), "lo": ci and ci[0], "hi": ci and ci[1], "models": len(values)}
        out["rows"][row] = {"models": per_model, "over_models": over}
    return out


def _ms(value) -> str:
    return f"{value:+.3f}"


def _with_interval(stat: dict) -> str:
    if stat["lo"] is None:
        return f"{_ms(stat['mean'])} (no interval: {stat['models']} model)"
    return f"{_ms(stat['mean'])} [{_ms(stat['lo'])}, {_ms(stat['hi'])}]"


def print_explanation(result: dict, top: int) -> None:
    print("change from `all` in ms per step: measured = timed (median of samples); its parts from the profile: "
          "generated kernels (added/removed/changed, matched by ops), library kernels, gaps (no kernel running)")
    for row, data in result["rows"].items():
        print(f"\n{row}")
        print(f"  {'model':<24} {'measured':>9} {'generated':>10} {'(added':>8} {'removed':>8} {'changed)':>9} "
              f"{'library':>8} {'gaps':>8} {'parts':>8}")
        off = []
        for model, s in data["models"].items():
            print(f"  {model:<24} {_ms(s['measured_ms']):>9} {_ms(s['generated_ms']):>10} {_ms(s['added_ms']):>8} "
                  f"{_ms(s['removed_ms']):>8} {_ms(s['changed_ms']):>9} {_ms(s['library_ms']):>8} "
                  f"{_ms(s['gaps_ms']):>8} {_ms(s['parts_ms']):>8}{'  !' if s['mismatch'] else ''}")
            if s["mismatch"]:
                off.append(f"{model} (parts {_ms(s['parts_ms'])}, measured {_ms(s['measured_ms'])})")
        over = data["over_models"]
        print("  over models: " + "; ".join(f"{name[:-3]} {_with_interval(over[name])}" for name in PARTS))
        if off:
            print(f"  ! the parts differ from the measured change by more than {MISMATCH:.0%} on {len(off)} of "
                  f"{len(data['models'])} models: {', '.join(off)} (the profiled pass ran slower or faster "
                  f"than the timed samples; read those splits as shares, not as milliseconds)")
        movers = sorted((dict(m, model=model) for model, s in data["models"].items() for m in s["movers"]),
                        key=lambda m: -abs(m["delta_ms"]))[:top]
        if movers:
            print(f"  kernels that moved most (of {sum(len(s['movers']) for s in data['models'].values())}):")
        for m in movers:
            rate = f"{m['gb_per_s']:.1f} GB/s" if m["gb_per_s"] else "-"
            ops = ", ".join(m["ops"][:6]) + (f", +{len(m['ops']) - 6}" if len(m["ops"]) > 6 else "")
            print(f"    {_ms(m['delta_ms'])} ms  {m['model']:<16} {m['kind']:<9} {m['how']:<7} {rate:>12}  "
                  f"{m['name']} [{ops}]")


def main(argv: list[str]) -> int:
    p = OneLineParser(prog="python -m inductor_ablate explain",
                      description="why each row costs what it costs: the change from `all` split into generated "
                                  "kernels, library kernels and gaps, from the profiles of `bench --profile`")
    p.add_argument("results", metavar="RESULTS")
    p.add_argument("--row", action="append", default=None, help="a row to explain (repeatable; default every one)")
    p.add_argument("--model", action="append", default=None, help="a model (repeatable; default every one)")
    p.add_argument("--top", type=int, default=10, help="kernels that moved most, to list per row (default 10)")
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
