"""The report's pictures, drawn by matplotlib as inline SVG (text kept as text, so the page needs
no font and no network): a forest plot of every row's share of `all` kept, and a per-model heatmap."""
from __future__ import annotations

import io
import math


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "inductor_ablate", "font.size": 9})
    import matplotlib.pyplot as plt

    return plt


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def forest(sec: dict) -> str | None:
    """Each row's share of `all` kept with its 95% interval; hollow where the interval holds 1,
    grey where the row generated `all`'s code on every model, a cross for the paper's share."""
    rows = [r for r in sec["rows"] if r["kept"] and r["config"] != "all"]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(rows) + 1.1))
    for y, r in enumerate(reversed(rows)):
        k = r["kept"]
        colour = "#999999" if r["all_same_code"] else "#1f77b4" if r["source"] == "paper" else "#d62728"
        if k["lo"] is not None:
            ax.plot([k["lo"], k["hi"]], [y, y], color=colour, lw=2, solid_capstyle="butt")
        ax.plot([k["point"]], [y], "o", ms=6, color=colour, mfc=colour if r["significant"] else "white", mew=1.5)
        note = " same code" if r["all_same_code"] else " no interval" if k["lo"] is None else ""
        if note:
            ax.annotate(note, (k["hi"] if k["hi"] is not None else k["point"], y), fontsize=7, color="#666666",
                        xytext=(4, -3), textcoords="offset points")
        if r["paper_kept"]:
            ax.plot([r["paper_kept"]], [y], "x", ms=6, color="black")
    ax.axvline(1.0, color="#444444", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)), [r["config"] for r in reversed(rows)])
    ax.set_xlabel("share of all's speedup kept (geomean over models), 95% bootstrap interval")
    ax.set_title("filled: interval excludes 1 · blue: paper row · red: ours · grey: all's very code · x: the paper's share",
                 fontsize=8)
    ax.grid(axis="x", lw=0.3)
    return _svg(fig)


def heatmap(sec: dict) -> str | None:
    """Share of `all` kept per model (columns) and row (lines), coloured on a log scale around 1."""
    configs = list(sec["per_model"])
    models = sec["models"]
    if not configs:
        return None
    plt = _pyplot()
    grid = [[math.log(sec["per_model"][c][m]["share"]) if m in sec["per_model"][c] else math.nan for m in models]
            for c in configs]
    bound = max([abs(v) for line in grid for v in line if not math.isnan(v)] + [0.05])
    fig, ax = plt.subplots(figsize=(0.55 * len(models) + 2.8, 0.3 * len(configs) + 1.6))
    ax.imshow(grid, cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
    for i, c in enumerate(configs):
        for j, m in enumerate(models):
            cell = sec["per_model"][c].get(m)
            if cell:
                dark = abs(grid[i][j]) > 0.6 * bound
                ax.text(j, i, f"{cell['share']:.2f}{'=' if cell['same_code'] else ''}", ha="center", va="center",
                        fontsize=6.5, color="white" if dark else "black")
    ax.set_xticks(range(len(models)), models, rotation=60, ha="right")
    ax.set_yticks(range(len(configs)), configs)
    ax.set_title("share of all's speedup kept, per model (blue: kept more, red: lost; =: all's very code)", fontsize=8)
    return _svg(fig)


_PART_COLOURS = {"generated_ms": "#1f77b4", "library_ms": "#ff7f0e", "gaps_ms": "#7f7f7f"}


def split_bars(result: dict) -> str | None:
    """One stacked bar per row: the mean over models of its change from `all` in generated kernels,
    library kernels and gaps (ms per step; parts below zero stack leftwards), the timed change
    marked by a black bar."""
    rows = list(result["rows"])
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(rows) + 1.2))
    for y, row in enumerate(reversed(rows)):
        over = result["rows"][row]["over_models"]
        right = left = 0.0
        for part, colour in _PART_COLOURS.items():
            value = over[part]["mean"]
            start = right if value >= 0 else left
            ax.barh(y, value, left=start, height=0.55, color=colour, label=part[:-3] if y == 0 else None)
            if value >= 0:
                right += value
            else:
                left += value
        ax.plot([over["measured_ms"]["mean"]] * 2, [y - 0.38, y + 0.38], color="black", lw=2.2,
                label="timed change" if y == 0 else None)
    ax.axvline(0, color="#444444", lw=0.8)
    ax.set_yticks(range(len(rows)), list(reversed(rows)))
    ax.set_xlabel("change from all, ms per step (mean over models)")
    ax.legend(fontsize=7, loc="lower right", frameon=False)
    ax.grid(axis="x", lw=0.3)
    return _svg(fig)


def bytes_time(result: dict) -> str | None:
    """Every generated kernel as a point, bytes per call against time per call (log-log), with the
    line of the copy bandwidth the run measured: a point above it moved more than DRAM can, so its
    bytes sat in the cache or its estimate is wrong."""
    points = result.get("points") or []
    if not points:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    configs = sorted({p["config"] for p in points})
    cmap = plt.get_cmap("tab10")
    for i, config in enumerate(configs):
        mine = [p for p in points if p["config"] == config]
        ax.scatter([p["ms"] * 1e3 for p in mine], [p["bytes"] / 1e6 for p in mine], s=7, alpha=0.6,
                   color=cmap(i % 10), label=config)
    copy = result.get("copy_gb_per_s")
    if copy:
        lo = min(p["ms"] for p in points) * 1e3
        hi = max(p["ms"] for p in points) * 1e3
        ax.plot([lo, hi], [copy * lo / 1e3, copy * hi / 1e3], color="black", lw=1, ls="--",
                label=f"copy bandwidth {copy:,.0f} GB/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("time per call, us")
    ax.set_ylabel("bytes per call (estimate), MB")
    ax.legend(fontsize=7, frameon=False)
    ax.grid(lw=0.3)
    return _svg(fig)
