"""The study as files for other tools: the cells and the summary rows as CSV, the bar chart as PNG."""
from __future__ import annotations

import csv

from ..stats import apply_baseline, settings, summary_rows


CSV_FIELDS = ["suite", "model", "config", "device", "dtype", "mode", "cell_repeat", "status", "speedup", "baseline", "speedup_pooled",
              "speedup_in_cell", "speedup_p25", "speedup_p75", "eager_ms", "eager_ms_pooled", "eager_ms_fastest", "compiled_ms", "compile_s", "autotune_s", "cache", "graph_cache_hits", "kernels", "fused_nodes", "fusions",
              "externs", "multi_op_kernels", "fx_ops", "graphs", "code_hash", "rel_error", "samples", "calls_per_sample", "setup_s", "timing_s", "cell_s", "wall_s", "message"]


def write_csv(cells: list[dict], path: str, baseline: str = "pooled") -> None:
    cells = apply_baseline(cells, baseline)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for c in cells:
            writer.writerow({**c, "fusions": " ".join(f"{k}:{n}" for k, n in c.get("fusions", {}).items())})


SUMMARY_FIELDS = ["suite", "device", "dtype", "mode", "config", "source", "baseline", "speedup", "speedup_lo",
                  "speedup_hi", "vs_all", "vs_all_lo", "vs_all_hi", "significant", "same_code", "nothing_to_take_out",
                  "paired", "ok",
                  "models", "repeats", "kernels", "compile_s"]


def write_summary_csv(rows: list[dict], path: str) -> None:
    """The summary rows (``summary_rows``, intervals included), one per (setting, config)."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SUMMARY_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def write_plot(cells: list[dict], path: str, baseline: str = "pooled") -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (pip install matplotlib); no plot written")
        return False
    groups = settings(apply_baseline(cells, baseline))
    summary = summary_rows(cells, baseline)
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, 4.5 * len(groups)), squeeze=False)
    for ax, (setting, group) in zip(axes[:, 0], groups.items()):
        suite, device, dtype, mode = setting
        rows = [r for r in summary if (r["suite"], r["device"], r["dtype"], r["mode"]) == setting]
        values = [r["speedup"] or 0 for r in rows]
        colors = ["#4c72b0" if r["source"] == "paper" else "#dd8452" for r in rows]
        ax.bar(range(len(rows)), values, color=colors)
        for i, (v, r) in enumerate(zip(values, rows)):  # a row with no interval gets no bar, but says so
            if r["speedup_lo"] is not None:
                ax.errorbar([i], [v], yerr=[[max(0.0, v - r["speedup_lo"])], [max(0.0, r["speedup_hi"] - v)]],
                            capsize=3, ecolor="#333333", fmt="none")
            elif v:
                ax.annotate("no interval", (i, v), xytext=(0, 3), textcoords="offset points", ha="center",
                            fontsize=6, rotation=90, va="bottom")
        for i, r in enumerate(rows):  # a row's geomean is over its own models: say how many
            ax.annotate(f"{r['ok']}/{r['models']}", (i, 0), xytext=(0, 3), textcoords="offset points",
                        ha="center", fontsize=7, color="white" if values[i] else "black")
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(len(rows)), [r["config"] for r in rows], rotation=45, ha="right", fontsize=8)
        ax.set_ylabel("geomean speedup over eager [95% CI]")
        ax.set_title(f"{suite} suite, {device}, {dtype}, {mode}, eager time {baseline}\n(blue: paper's rows, "
                     f"orange: ours; at the foot: models run / models; 0 = n/a)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True
