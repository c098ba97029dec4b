"""Tables, CSV, plot and merge for bench results (a results file is {"meta": ..., "cells": [...]})."""
from __future__ import annotations

import csv
import json
import math

from .configs import CONFIGS, GROUPS
from .runner import cell_key, read_results_file

CSV_FIELDS = ["suite", "model", "config", "device", "dtype", "mode", "status", "speedup", "baseline", "speedup_pooled",
              "speedup_in_cell", "speedup_p25", "speedup_p75", "eager_ms", "eager_ms_pooled", "compiled_ms", "compile_s", "kernels", "fused_nodes", "externs",
              "multi_op_kernels", "fx_ops", "graphs", "rel_error", "samples", "calls_per_sample", "setup_s", "timing_s", "cell_s", "wall_s", "message"]


BASELINES = ("pooled", "in-cell")


def apply_baseline(cells: list[dict], baseline: str = "pooled") -> list[dict]:
    """Copies of the cells with ``speedup`` against the chosen eager time; both estimates stay in
    each row, ``speedup_pooled`` (with ``eager_ms_pooled``) and ``speedup_in_cell`` (with quartiles
    ``speedup_p25`` / ``speedup_p75``).

    ``pooled`` (default): the model's median eager time over all its cells.  On the 2-core CPU machine
    eager time of one model varied up to 10x between fresh processes while compiled times stayed
    within ~10%: one slow process must not inflate one config.  ``in-cell``: the eager time measured
    in the cell's own process, interleaved with its compiled calls; better where both sides slow down
    together from one process to the next (seen on the H200 for sub-0.3 ms models; docs/bench.md)."""
    if baseline not in BASELINES:
        raise ValueError(f"baseline {baseline!r}: expected one of {', '.join(BASELINES)}")
    import statistics

    eager: dict[tuple, list[float]] = {}
    for c in cells:
        if c.get("status") == "ok":
            eager.setdefault((c["suite"], c["device"], c["dtype"], c["mode"], c["model"]), []).append(c["eager_ms"])
    out = []
    for c in cells:
        c = dict(c)
        if c.get("status") == "ok":
            pooled = statistics.median(eager[(c["suite"], c["device"], c["dtype"], c["mode"], c["model"])])
            c.setdefault("speedup_in_cell", c["speedup"])
            c["eager_ms_pooled"], c["speedup_pooled"] = pooled, pooled / c["compiled_ms"]
            c["baseline"] = baseline
            c["speedup"] = c["speedup_pooled"] if baseline == "pooled" else c["speedup_in_cell"]
        out.append(c)
    return out


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _ordered_configs(cells):
    present = {c["config"] for c in cells}
    return [name for name in CONFIGS if name in present]


def _groups(cells):
    """Cells split by (suite, device, dtype, mode): one table per setting."""
    out = {}
    for c in cells:
        out.setdefault((c["suite"], c["device"], c["dtype"], c["mode"]), []).append(c)
    return out


def summary_table(cells: list[dict], baseline: str = "pooled") -> str:
    """Shaped like the paper's Table 4: geomean speedup over eager per config, and the change from `all`."""
    cells = apply_baseline(cells, baseline)
    lines = []
    for (suite, device, dtype, mode), group in _groups(cells).items():
        models = sorted({c["model"] for c in group})
        by = {(c["model"], c["config"]): c for c in group}
        base_ok = {m for m in models if by.get((m, "all"), {}).get("status") == "ok"}
        base = geomean([by[(m, "all")]["speedup"] for m in base_ok])
        lines.append(f"\n{suite} suite, {device}, {dtype}, {mode}: geomean speedup over eager ({len(models)} models; "
                     f"eager time: {baseline})")
        lines.append(f"{'configuration':<32}{'speedup':>9}{'vs all':>9}{'ok':>7}{'kernels':>9}{'compile s':>11}  source")
        if len(base_ok) < len(models):
            lines.append(f"  (`all` ran on {len(base_ok)}/{len(models)} models; * = 'vs all' over those models only)")
        names = _ordered_configs(group)
        missing = len(models) * len(names) - len(group)
        if missing:
            lines.append(f"  ({missing} cells not run yet: the results file has no row for them; run the command again to resume)")
        for name in names:
            row = [by[(m, name)] for m in models if (m, name) in by]
            ok = [r for r in row if r["status"] == "ok"]
            na = [r for r in row if r["status"] == "n/a"]
            if na and len(na) == len(row):
                lines.append(f"{name:<32}{'n/a':>9}{'':>9}{'':>7}{'':>9}{'':>11}  {CONFIGS[name].source}: {na[0]['message']}")
                continue
            g = geomean([r["speedup"] for r in ok])
            # "vs all" is paired: both geomeans over the models where both rows ran
            paired = [r for r in ok if r["model"] in base_ok]
            pg, pb = geomean([r["speedup"] for r in paired]), geomean([by[(r["model"], "all")]["speedup"] for r in paired])
            diff = f"{pg - pb:+.2f}" if pg and pb and name != "all" else ""
            if diff and len(paired) < len(ok):
                diff += "*"
            kernels = sum(r.get("kernels", 0) for r in ok)
            comp = sum(r.get("compile_s", 0) for r in ok) / len(ok) if ok else 0
            bad = [f"{r['model']}: {r['status']}" for r in row if r["status"] not in ("ok", "n/a")]
            lines.append(f"{name:<32}{(f'{g:.2f}x' if g else '-'):>9}{diff:>9}{f'{len(ok)}/{len(models)}':>7}"
                         f"{kernels:>9}{comp:>11.1f}  {CONFIGS[name].source}" + (f"  FAILED: {'; '.join(bad)}" if bad else ""))
    return "\n".join(lines)


def per_model_table(cells: list[dict], baseline: str = "pooled") -> str:
    cells = apply_baseline(cells, baseline)
    lines = []
    for (suite, device, dtype, mode), group in _groups(cells).items():
        by = {(c["model"], c["config"]): c for c in group}
        models = sorted({c["model"] for c in group})
        configs = _ordered_configs(group)
        lines.append(f"\nper model ({suite}, {device}, {dtype}, {mode}): speedup over eager [kernels], eager time: "
                     f"{baseline}; median eager ms over the model's cells in the first column")
        header = f"{'model':<18}{'eager ms':>10}" + "".join(f"{c[:22]:>24}" for c in configs)
        lines.append(header)
        for m in models:
            eager = next((by[(m, c)]["eager_ms_pooled"] for c in configs if by.get((m, c), {}).get("status") == "ok"), None)
            cols = []
            for c in configs:
                r = by.get((m, c))
                if r is None:
                    cols.append("-")
                elif r["status"] == "ok":
                    cols.append(f"{r['speedup']:.2f}x [{r.get('kernels', '?')}]")
                else:
                    cols.append(r["status"].upper() if r["status"] != "n/a" else "n/a")
            lines.append(f"{m:<18}{(f'{eager:.3f}' if eager else '-'):>10}" + "".join(f"{c:>24}" for c in cols))
        failures = [r for r in group if r["status"] in ("accuracy", "error")]
        for r in failures:
            lines.append(f"  {r['status'].upper()} {r['model']} / {r['config']}: {r.get('message', '')}")
    return "\n".join(lines)


def write_csv(cells: list[dict], path: str, baseline: str = "pooled") -> None:
    cells = apply_baseline(cells, baseline)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for c in cells:
            writer.writerow(c)


def write_plot(cells: list[dict], path: str, baseline: str = "pooled") -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (pip install matplotlib); no plot written")
        return False
    groups = _groups(apply_baseline(cells, baseline))
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, 4.5 * len(groups)), squeeze=False)
    for ax, ((suite, device, dtype, mode), group) in zip(axes[:, 0], groups.items()):
        names = _ordered_configs(group)
        values = []
        for name in names:
            ok = [c["speedup"] for c in group if c["config"] == name and c["status"] == "ok"]
            values.append(geomean(ok) or 0)
        colors = ["#4c72b0" if CONFIGS[n].source == "paper" else "#dd8452" for n in names]
        ax.bar(range(len(names)), values, color=colors)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
        ax.set_ylabel("geomean speedup over eager")
        ax.set_title(f"{suite} suite, {device}, {dtype}, {mode}, eager time {baseline} "
                     f"(blue: paper's rows, orange: ours; 0 = n/a)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def merge(paths: list[str]) -> dict:
    """Join results files (e.g. shards); a cell present twice keeps the one that ran ok."""
    cells, metas = {}, []
    for path in paths:
        data = read_results_file(path)
        metas.append(data.get("meta", {}))
        for c in data.get("cells", []):
            key = cell_key(c)
            if key not in cells or cells[key]["status"] != "ok":
                cells[key] = c
    return {"meta": {"merged_from": paths, "parts": metas}, "cells": list(cells.values())}


__all__ = ["apply_baseline", "summary_table", "per_model_table", "write_csv", "write_plot", "merge", "geomean", "GROUPS"]
