"""Tables, CSV, plot and merge for bench results (a results file is {"meta": ..., "cells": [...]})."""
from __future__ import annotations

import csv
import math
import random
import statistics

from ..errors import UsageError
from .configs import CONFIGS, GROUPS, by_name
from ..results import bases, cell_key, check_one_base, check_one_device, device_names, pieces, read_results_file

CSV_FIELDS = ["suite", "model", "config", "device", "dtype", "mode", "cell_repeat", "status", "speedup", "baseline", "speedup_pooled",
              "speedup_in_cell", "speedup_p25", "speedup_p75", "eager_ms", "eager_ms_pooled", "eager_ms_fastest", "compiled_ms", "compile_s", "autotune_s", "cache", "graph_cache_hits", "kernels", "fused_nodes", "fusions",
              "externs", "multi_op_kernels", "fx_ops", "graphs", "code_hash", "rel_error", "samples", "calls_per_sample", "setup_s", "timing_s", "cell_s", "wall_s", "message"]


BASELINES = ("pooled", "in-cell", "fastest")


def _model_key(c: dict) -> tuple:
    return (c["suite"], c["device"], c["dtype"], c["mode"], c["model"])


def eager_by_model(cells: list[dict]) -> dict[tuple, list[float]]:
    """Each model's eager times (ms per call), one per ok cell: every process timed eager afresh."""
    eager: dict[tuple, list[float]] = {}
    for c in cells:
        if c.get("status") == "ok":
            eager.setdefault(_model_key(c), []).append(c["eager_ms"])
    return eager


def apply_baseline(cells: list[dict], baseline: str = "pooled") -> list[dict]:
    """Copies of the cells with ``speedup`` against the chosen eager time; both estimates stay in
    each row, ``speedup_pooled`` (with ``eager_ms_pooled``) and ``speedup_in_cell`` (with quartiles
    ``speedup_p25`` / ``speedup_p75``).

    ``pooled`` (default): the model's median eager time over all its cells.  On the 2-core CPU machine
    eager time of one model varied up to 10x between fresh processes while compiled times stayed
    within ~10%: one slow process must not inflate one config.  ``in-cell``: the eager time measured
    in the cell's own process, interleaved with its compiled calls; better where both sides slow down
    together from one process to the next (seen on the H200 for sub-0.3 ms models; docs/bench.md).
    ``fastest``: the model's fastest eager process.  Load on the host only slows a launch-bound eager
    step while CUDA graphs keep the compiled one still, so the fastest process is the least disturbed
    eager time, and its speedups the low end (Python's ``timeit`` takes the minimum for that reason)."""
    if baseline not in BASELINES:
        raise ValueError(f"baseline {baseline!r}: expected one of {', '.join(BASELINES)}")
    import statistics

    eager = eager_by_model(cells)
    out = []
    for c in cells:
        c = dict(c)
        if c.get("status") == "ok":
            model_eager = eager[_model_key(c)]
            pooled = statistics.median(model_eager)
            c.setdefault("speedup_in_cell", c["speedup"])
            c["eager_ms_pooled"], c["speedup_pooled"] = pooled, pooled / c["compiled_ms"]
            c["eager_ms_fastest"] = min(model_eager)
            c["baseline"] = baseline
            c["speedup"] = {"pooled": c["speedup_pooled"], "in-cell": c["speedup_in_cell"],
                            "fastest": c["eager_ms_fastest"] / c["compiled_ms"]}[baseline]
        out.append(c)
    return out


def is_failure(cell: dict) -> bool:
    """A wrong answer or an error; n/a (a row that does not apply to the model) is not a failure."""
    return cell["status"] not in ("ok", "n/a")


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _ordered_configs(cells):
    """The named rows in their order, then rows of fusion kinds together (no-fusion-KIND+KIND)."""
    present = {c["config"] for c in cells}
    return [name for name in CONFIGS if name in present] + sorted(present - set(CONFIGS))


def _groups(cells):
    """Cells split by (suite, device, dtype, mode): one table per setting."""
    out = {}
    for c in cells:
        out.setdefault((c["suite"], c["device"], c["dtype"], c["mode"]), []).append(c)
    return out


from ..stats import BOOTSTRAP, percentiles as _percentiles  # noqa: E402,F401  (shared with the readers)

#: A change is marked (``significant``, ``*``) only when it rests on at least this many paired
#: measurements (row processes, each against its run's `all`, over all models).  With n of them all on
#: one side, a percentile bootstrap always excludes zero, and under no change that happens by chance
#: 2 x 0.5^n of the time: 25% at 3, 6.25% at 5, 3.1% at 6.  Fewer: the interval is shown, no claim.
MIN_PAIRS_FOR_A_CLAIM = 6


def generated_code(cells: list[dict]) -> set[str]:
    """The code hashes the ok processes among ``cells`` generated."""
    return {c.get("code_hash") for c in cells if c["status"] == "ok"} - {None}


def same_code_as_all(row_cells: list[dict], all_cells: list[dict]) -> bool:
    """A row's processes on a model generated `all`'s code: every one of them generated code that a
    process of `all` generated (pooled runs of other days may hold other `all` code, autotuned cold,
    so subset, not equality).  Such a row took nothing out: its time differs from `all`'s by noise."""
    row = generated_code(row_cells)
    return bool(row) and row <= generated_code(all_cells)


def run_of(cell: dict) -> str | None:
    """The run a cell's process belonged to: its file under ``merge --pool-repeats`` (a model's cells
    in one run share one cache directory, so its autotuning choices); None: cells of one run."""
    return cell.get("from_file")


def _compiled_from(cell: dict) -> str | None:
    """How a cell's compile started: cold (it benchmarked the autotuning choices as it went) or warm;
    a cell seeded by ``bench --picks`` reads its picks as a warm one does."""
    return "warm" if cell.get("cache") == "seeded" else cell.get("cache")


def paired_with_all(row_cells: list[dict], all_cells: list[dict]) -> list[tuple[float, float]]:
    """(the row's speedup, `all`'s speedup in the same run) for each ok process of a row of one model.

    A row is compared with the `all` of its own run, whose autotuning it reused: runs on other days
    autotune afresh and may pick other kernels (on the H200, one model's cold `all` generated up to 4
    different codes in 4 runs), so pooling every run's `all` would add that spread to the change.
    A run that holds no `all` of the model is compared with every run's.  Within a run, a warm row
    (compiled from the caches `all` filled) is compared with a warm `all` where the run has one
    (``--cell-repeats 2`` or more: `all`'s later processes compile warm, as the rows do): a cold
    compile autotunes as it goes, and on the H200 it sometimes generated other code than the warm
    compiles after it (DistilBERT: 83 kernels cold, 82 in every warm row that changed nothing)."""
    ok_all = [a for a in all_cells if a["status"] == "ok"]
    pairs = []
    for r in row_cells:
        if r["status"] == "ok" and ok_all:
            mates = [a for a in ok_all if run_of(a) == run_of(r)] or ok_all
            mates = [a for a in mates if _compiled_from(a) == _compiled_from(r)] or mates
            pairs.append((r["speedup"], geomean([a["speedup"] for a in mates])))
    return pairs


def draw_pairs(pairs: dict, models: list[str], rng: random.Random | None = None) -> tuple[float, float]:
    """(geomean over ``models`` of the row's speedup, the same of its paired `all`), each model's
    figures a geomean over its pairs; with ``rng``, each model's pairs drawn with replacement (the
    caller draws the models)."""
    row, base = [], []
    for m in models:
        picked = pairs[m] if rng is None else [rng.choice(pairs[m]) for _ in pairs[m]]
        row.append(geomean([p[0] for p in picked]))
        base.append(geomean([p[1] for p in picked]))
    return geomean(row), geomean(base)


def summary_rows(cells: list[dict], baseline: str = "pooled") -> list[dict]:
    """One row per (setting, config): the geomean speedup over eager, its change from `all`, each
    with a bootstrap 95% interval, and how many models' generated code equals `all`'s.

    A model's speedup is the geomean over its cell repeats (``--cell-repeats``, each its own process).
    The interval resamples models, and within each model its repeats, with replacement: it holds the
    spread between models and, with repeats, the noise between processes.  The change from `all` is
    paired by model (both rows over the models where both ran) and by run (``paired_with_all``).  A
    change whose interval excludes zero is marked ``significant``; a row whose code equals `all`'s on
    every model is ``same code``: no change to measure, whatever the timings say."""
    cells = apply_baseline(cells, baseline)
    out = []
    for (suite, device, dtype, mode), group in _groups(cells).items():
        models = sorted({c["model"] for c in group})
        reps: dict[tuple[str, str], list[dict]] = {}
        for c in group:
            reps.setdefault((c["model"], c["config"]), []).append(c)

        def speeds(model, config):
            return [r["speedup"] for r in reps.get((model, config), []) if r["status"] == "ok"]

        def code(model, config):
            return generated_code(reps.get((model, config), []))

        base_ok = [m for m in models if speeds(m, "all")]

        def kind_absent(model, kinds):
            """True if every logged `all` process of the model made no fusion of ``kinds`` (a comma list)."""
            logs = [r["fusions"] for r in reps.get((model, "all"), []) if r["status"] == "ok" and "fusions" in r]
            return bool(logs) and not any(f.get(k) for f in logs for k in kinds.split(","))
        for name in _ordered_configs(group):
            row_cells = [r for m in models for r in reps.get((m, name), [])]
            ok_models = [m for m in models if speeds(m, name)]
            paired = [m for m in ok_models if m in base_ok]
            same = [m for m in paired if same_code_as_all(reps.get((m, name), []), reps[(m, "all")])]
            hashed = [m for m in paired if code(m, name) and code(m, "all")]  # files before code hashes: none
            kind = by_name(name).switches.get("no_fuse")
            absent = [m for m in paired if isinstance(kind, str) and kind_absent(m, kind)]
            point = geomean([geomean(speeds(m, name)) for m in ok_models])
            pairs = {m: paired_with_all(reps[(m, name)], reps[(m, "all")]) for m in paired}
            pg, pb = draw_pairs(pairs, paired) if paired else (None, None)
            rng = random.Random(f"{suite}{device}{dtype}{mode}{name}")  # the same intervals every time
            boot, boot_diff = [], []
            for _ in range(BOOTSTRAP if ok_models else 0):
                pick = [rng.choice(ok_models) for _ in ok_models]
                boot.append(geomean([geomean([rng.choice(speeds(m, name)) for _ in speeds(m, name)]) for m in pick]))
                if paired and name != "all":
                    g, b = draw_pairs(pairs, [rng.choice(paired) for _ in paired], rng)
                    boot_diff.append(g - b)
            # one process of one model has nothing to resample: its "interval" would be the point itself
            ci = _percentiles(boot) if sum(len(speeds(m, name)) for m in ok_models) > 1 else None
            n_pairs = sum(map(len, pairs.values()))
            ci_diff = _percentiles(boot_diff) if n_pairs > 1 else None
            statuses = [r["status"] for r in row_cells]
            out.append(dict(
                suite=suite, device=device, dtype=dtype, mode=mode, config=name, source=by_name(name).source,
                baseline=baseline, models=len(models), ok=len(ok_models),
                repeats=max((len(reps.get((m, name), [])) for m in models), default=0),
                na=bool(statuses) and all(s == "n/a" for s in statuses),
                na_message=next((r.get("message", "") for r in row_cells if r["status"] == "n/a"), ""),
                failed=[f"{r['model']}: {r['status']}" for r in row_cells if is_failure(r)],
                speedup=point, speedup_lo=ci and ci[0], speedup_hi=ci and ci[1],
                vs_all=(pg - pb) if pg and pb and name != "all" else None, paired=len(paired),
                vs_all_lo=ci_diff and ci_diff[0], vs_all_hi=ci_diff and ci_diff[1],
                significant=bool(ci_diff and (ci_diff[0] > 0 or ci_diff[1] < 0)) and not (hashed and len(same) == len(paired))
                and n_pairs >= MIN_PAIRS_FOR_A_CLAIM,
                same_code=len(same) if hashed else None,
                nothing_to_take_out=len(absent),  # kind rows: models whose `all` made no fusion of the kind
                kernels=sum(r.get("kernels", 0) for r in row_cells if r["status"] == "ok" and r.get("cell_repeat", 0) == 0),
                compile_s=_mean([r.get("compile_s", 0) for r in row_cells if r["status"] == "ok"]),
            ))
    return out


def _mean(values):
    return sum(values) / len(values) if values else 0.0


def summary_table(cells: list[dict], baseline: str = "pooled", rows: list[dict] | None = None) -> str:
    """Shaped like the paper's Table 4: geomean speedup over eager per config and the change from
    `all`, each with its bootstrap 95% interval; `*` marks a change whose interval excludes zero.
    ``rows``: ``summary_rows(cells, baseline)`` if the caller already has them (the bootstrap is not free)."""
    rows = summary_rows(cells, baseline) if rows is None else rows
    baseline = rows[0]["baseline"] if rows else baseline
    lines = []
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["suite"], r["device"], r["dtype"], r["mode"]), []).append(r)
    for (suite, device, dtype, mode), group in groups.items():
        n = group[0]["models"]
        reps = max(r["repeats"] for r in group)
        lines.append(f"\n{suite} suite, {device}, {dtype}, {mode}: geomean speedup over eager ({n} models, "
                     f"{reps} process(es) per cell; eager time: {baseline}); [95% bootstrap interval]; "
                     f"* = the change from `all` is outside its interval's noise (and rests on "
                     f"{MIN_PAIRS_FOR_A_CLAIM}+ paired processes)")
        for name in sorted({c["base"] for c in cells if c.get("base")}):  # one: files of two are refused
            lines.append(f"(every row, `all` included, ran with --base {name}: {by_name(name).doc})")
        lines.append(f"{'configuration':<32}{'speedup':>8} {'[95% CI]':<14}{'vs all':>8} {'[95% CI]':<16}"
                     f"{'same code':>10}{'ok':>7}{'kernels':>9}{'compile s':>11}  source")
        base = next((r for r in group if r["config"] == "all"), None)
        if base and base["ok"] < n:
            lines.append(f"  (`all` ran on {base['ok']}/{n} models; 'vs all' is over the models where both ran)")
        missing = [r for r in group if not r["na"] and r["ok"] + len(r["failed"]) < n]
        if missing:
            lines.append(f"  ({', '.join(r['config'] for r in missing)}: cells missing on some models: a cut run resumes with the same command; "
                         f"lanes and shards join with `merge`)")
        for r in group:
            if r["na"]:
                lines.append(f"{r['config']:<32}{'n/a':>8}{'':<15}{'':>8}{'':<17}{'':>10}{'':>7}{'':>9}{'':>11}  "
                             f"{r['source']}: {r['na_message']}")
                continue
            ci = f"[{r['speedup_lo']:.2f}, {r['speedup_hi']:.2f}]" if r["speedup_lo"] is not None else "(no interval)"
            if r["config"] == "all":
                diff, ci_diff = "", ""
            elif r["paired"] and r["same_code"] == r["paired"]:  # nothing changed: no difference to report
                diff, ci_diff = "same", "code"
            else:
                diff = f"{r['vs_all']:+.2f}{'*' if r['significant'] else ''}" if r["vs_all"] is not None else ""
                ci_diff = f"[{r['vs_all_lo']:+.2f}, {r['vs_all_hi']:+.2f}]" if r["vs_all_lo"] is not None else ""
            speed = f"{r['speedup']:.2f}x" if r["speedup"] else "-"
            same = "" if r["config"] == "all" else "?" if r["same_code"] is None else f"{r['same_code']}/{r['paired']}"
            ok = f"{r['ok']}/{n}"
            lines.append(f"{r['config']:<32}{speed:>8} {ci:<14}{diff:>8} {ci_diff:<16}{same:>10}{ok:>7}"
                         f"{r['kernels']:>9}{r['compile_s']:>11.1f}  {r['source']}"
                         + (f"  FAILED: {'; '.join(r['failed'])}" if r["failed"] else ""))
        for r in group:
            if r.get("nothing_to_take_out"):
                kind = " or ".join(by_name(r["config"]).switches["no_fuse"].split(","))
                lines.append(f"  ({r['config']}: `all` made no {kind} fusion on {r['nothing_to_take_out']} of its "
                             f"{r['paired']} models (fusions logged by kind), so the row had nothing to take out there)")
    return "\n".join(lines)


def per_model_table(cells: list[dict], baseline: str = "pooled") -> str:
    """Configs down, models across (a suite has few models and many configs: every column fits)."""
    cells = apply_baseline(cells, baseline)
    lines = []
    for (suite, device, dtype, mode), group in _groups(cells).items():
        by = {(c["model"], c["config"]): c for c in group if c.get("cell_repeat", 0) == 0}
        alls: dict[str, list[dict]] = {}  # every process of `all`, per model
        for c in group:
            if c["config"] == "all":
                alls.setdefault(c["model"], []).append(c)
        models = sorted({c["model"] for c in group})
        configs = _ordered_configs(group)
        lines.append(f"\nper model ({suite}, {device}, {dtype}, {mode}): speedup over eager [kernels, or =all: the "
                     f"same generated code as `all`]; eager time: {baseline}; first process of each cell")
        width = max(16, max(len(m) for m in models) + 2)
        lines.append(f"{'configuration':<32}" + "".join(f"{m:>{width}}" for m in models))
        fastest = baseline == "fastest"
        eager = {m: next((by[(m, c)]["eager_ms_fastest" if fastest else "eager_ms_pooled"] for c in configs
                          if by.get((m, c), {}).get("status") == "ok"), None) for m in models}
        lines.append(f"{'(eager ms, fastest cell)' if fastest else '(eager ms, median of cells)':<32}" +
                     "".join(f"{(f'{eager[m]:.3f}' if eager[m] else '-'):>{width}}" for m in models))
        for c in configs:
            cols = []
            for m in models:
                r = by.get((m, c))
                if r is None:
                    cols.append("-")
                elif r["status"] == "ok":
                    same = c != "all" and same_code_as_all([r], alls.get(m, []))
                    cols.append(f"{r['speedup']:.2f}x [{'=all' if same else r.get('kernels', '?')}]")
                else:
                    cols.append(r["status"].upper() if r["status"] != "n/a" else "n/a")
            lines.append(f"{c:<32}" + "".join(f"{col:>{width}}" for col in cols))
        failures = [r for r in group if r["status"] in ("accuracy", "error")]
        for r in failures:
            lines.append(f"  {r['status'].upper()} {r['model']} / {r['config']}: {r.get('message', '')}")
    return "\n".join(lines)


def cost(cells: list[dict], meta: dict | None = None) -> dict:
    """What the cells cost, in seconds summed over them: autotuning, the rest of compiling, timing,
    waiting for the device (``--jobs``), model set-up (build, inputs, the eager reference), other
    in-cell work (accuracy check, census), process start and exit, cells that died; each cell's start
    + set-up; the shortest eager step of a model; the run's wall (an interrupted run's too, from its
    pieces) and jobs from ``meta``.  The one split that the end of a run prints (``time_split``) and
    ``report --table cost`` and the page show."""
    meta = meta or {}
    ran = [c for c in cells if "cell_s" in c]
    total = lambda key: sum(c.get(key) or 0 for c in ran)  # noqa: E731
    start = [(c.get("wall_s") or c["cell_s"]) - c["cell_s"] for c in ran]
    overhead = sorted(s + (c.get("setup_s") or 0) for s, c in zip(start, ran))
    eager: dict = {}
    for c in cells:
        if c.get("status") == "ok" and c.get("eager_ms"):
            eager.setdefault(c["model"], []).append(c["eager_ms"])
    died = sum(c.get("wall_s") or 0 for c in cells if "cell_s" not in c)
    wall = sum(p["wall_s"] for p in pieces(meta)) or None  # an interrupted run's file has no wall_s yet
    return {"device": ", ".join(sorted(device_names(meta))) or None, "jobs": meta.get("jobs", 1), "wall_s": wall,
            "cells": len(ran), "busy_s": total("cell_s") + sum(start) + died, "autotune_s": total("autotune_s"),
            "compile_s": total("compile_s") - total("autotune_s"), "timing_s": total("timing_s"),
            "wait_s": total("wait_s"), "setup_s": total("setup_s"),
            "other_s": total("cell_s") - total("compile_s") - total("timing_s") - total("setup_s") - total("wait_s"),
            "start_s": sum(start), "died_s": died,
            "overhead_median_s": statistics.median(overhead) if overhead else None,
            "overhead_max_s": overhead[-1] if overhead else None,
            "shortest_eager": min(((statistics.median(v), m) for m, v in eager.items()), default=None)}


def time_split(cells: list[dict], wall_s: float | None = None) -> str:
    """``cost`` as the lines a run ends with; then cold (a model's first cell, empty cache) against
    warm compiles."""
    ran = [c for c in cells if "cell_s" in c]
    if not ran:
        return "time split: no cell ran"
    k = cost(cells)
    parts = [("autotune", k["autotune_s"]), ("compile (rest)", k["compile_s"]), ("timing", k["timing_s"]),
             ("model set-up + eager reference", k["setup_s"]), ("accuracy check, census, other", k["other_s"]),
             ("process start", k["start_s"])]
    if k["wait_s"]:  # bench --jobs: cells waiting while another had the device
        parts.insert(3, ("waiting for the device", k["wait_s"]))
    if k["died_s"]:
        parts.append(("cells that died or timed out", k["died_s"]))
    busy = k["busy_s"]
    line = "time split over {} cells ({:.0f} s of cell processes{}): ".format(
        len(ran), busy, f"; run wall {wall_s:.0f} s" if wall_s else "")
    line += ", ".join(f"{name} {secs:.0f} s ({100 * secs / busy:.0f}%)" for name, secs in parts)
    line += (f"\nper cell beyond compiling and timing: process start + model set-up median "
             f"{k['overhead_median_s']:.1f} s, at most {k['overhead_max_s']:.1f} s")
    states = [(state, what, [c["compile_s"] for c in ran if c.get("cache") == state and c.get("compile_s") is not None])
              for state, what in (("cold", "a model's first, empty cache"),
                                  ("seeded", "a model's first, from --picks' autotuning picks"),
                                  ("warm", "autotuning and kernels reused"))]
    states = [s for s in states if s[2]]
    if len(states) > 1:
        line += "\ncompile: " + "; ".join(f"{len(secs)} {state} cells ({what}) mean {_mean(secs):.1f} s"
                                          for state, what, secs in states)
    return line


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
    groups = _groups(apply_baseline(cells, baseline))
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


def process_fingerprint(c: dict) -> tuple:
    """What one process measured: a cell copied into two files is one process, not two."""
    return (cell_key(c)[:-1], c.get("status"), c.get("compile_s"), c.get("eager_ms"), c.get("compiled_ms"), c.get("cell_s"))


def merge(paths: list[str], pool: bool = False, leave_out: list[tuple[str, str]] = ()) -> dict:
    """Join results files (e.g. shards); a cell present twice keeps the one that ran ok.  ``pool``:
    a cell that ran ok in several files (another day, another GPU) is kept as further repeats
    (``cell_repeat`` 1, 2, ...), pooled like ``--cell-repeats``; a copy of the same process (same
    measurements) is kept once.  ``leave_out``: (file, model) pairs whose cells are not merged, for
    a model whose cells in one file measured a program since fixed (the raw file stays as it ran);
    each pair must name one of ``paths`` and a model with cells in it."""
    datas = {path: read_results_file(path) for path in paths}
    check_one_device({path: device_names(data.get("meta", {})) for path, data in datas.items()}, "merging these files")
    check_one_base({path: bases(data) for path, data in datas.items()}, "merging these files")
    for path, model in leave_out:
        if path not in datas:
            raise UsageError(f"--leave-out {path}:{model}: {path} is not one of the files merged")
        if not any(c.get("model") == model for c in datas[path].get("cells", [])):
            raise UsageError(f"--leave-out {path}:{model}: {path} holds no cell of model {model!r}")
    cells, metas, seen = {}, [], set()
    for path in paths:
        data = datas[path]
        metas.append(data.get("meta", {}))
        for c in data.get("cells", []):
            if (path, c.get("model")) in leave_out:
                continue
            key = cell_key(c)
            if pool:
                if process_fingerprint(c) in seen:
                    continue
                seen.add(process_fingerprint(c))
                if key in cells and cells[key]["status"] == "ok" and c["status"] == "ok":
                    repeat = 1 + max(k[-1] for k in cells if k[:-1] == key[:-1])
                    c = {**c, "cell_repeat": repeat}
                    key = cell_key(c)
            if key not in cells or cells[key]["status"] != "ok":
                cells[key] = {**c, "from_file": path} if pool else c
    meta = {"merged_from": paths, "parts": metas}
    if any("gpus" in m for m in metas):  # one count per part: the GPUs its jobs held
        meta["gpus"] = sum(m.get("gpus", 0) for m in metas)
    if leave_out:
        meta["left_out"] = [f"{path}:{model}" for path, model in leave_out]
    return {"meta": meta, "cells": list(cells.values())}


def repeat_spread(cells: list[dict]) -> str:
    """How far repeats of one cell (separate processes: ``--cell-repeats``, or files pooled by
    ``merge --pool-repeats``) differ: the spread of speedup and of compiled time per call."""
    groups: dict = {}
    for c in cells:
        if c["status"] == "ok":
            groups.setdefault(cell_key(c)[:-1], []).append(c)
    spreads = []
    for key, reps in groups.items():
        if len(reps) >= 2:
            sp = [r["speedup"] for r in reps]
            ms = [r["compiled_ms"] for r in reps]
            spreads.append((max(sp) / min(sp) - 1, max(ms) / min(ms) - 1, key, len(reps),
                            len({r.get("code_hash") for r in reps}) == 1))
    if not spreads:
        return "repeats: no cell ran in more than one process"
    spreads.sort(key=lambda s: s[0])

    def med(values):
        values = sorted(values)
        return values[len(values) // 2]

    worst = spreads[-1]
    return (f"repeats: {len(spreads)} cells ran in 2+ processes; spread (max/min - 1) of the speedup: median "
            f"{100 * med([s[0] for s in spreads]):.1f}%, max {100 * worst[0]:.1f}% ({worst[2][0]} {worst[2][1]}); of the "
            f"compiled ms per call: median {100 * med([s[1] for s in spreads]):.1f}%, max "
            f"{100 * max(s[1] for s in spreads):.1f}%; same generated code in every repeat: "
            f"{sum(s[4] for s in spreads)}/{len(spreads)} cells")


def noise_floor(cells) -> dict | None:
    """How far two processes of one run and model that generated identical code differ in compiled
    time per call (max/min - 1): {median, max, pairs}, or None where no two did."""
    import statistics

    by: dict = {}
    for c in cells:
        if c.get("status") == "ok" and c.get("code_hash"):
            by.setdefault((c["model"], run_of(c), c["code_hash"]), []).append(c["compiled_ms"])
    diffs = sorted(max(a, b) / min(a, b) - 1 for ms in by.values() for i, a in enumerate(ms) for b in ms[i + 1:])
    if not diffs:
        return None
    return {"median": statistics.median(diffs), "max": diffs[-1], "pairs": len(diffs)}


THIN_NOISE_PAIRS = 3  # fewer same-code pairs than this: the floor is a guess, and the run says so


def noise_lead(cells: list[dict], rows: list[dict]) -> str:
    """The first lines of a summary: the noise floor this run measured (same-code processes), and
    which reported changes from `all` are within it, said plainly when all of them are."""
    lines = []
    for setting, group in _groups(cells).items():
        noise = noise_floor(group)
        mine = [r for r in rows if (r["suite"], r["device"], r["dtype"], r["mode"]) == setting]
        base = next((r["speedup"] for r in mine if r["config"] == "all" and r["speedup"]), None)
        changed = [r for r in mine if r["config"] != "all" and r["vs_all"] is not None and base
                   and not (r["paired"] and r["same_code"] == r["paired"])]
        if noise is None:
            lines.append(f"noise floor ({setting[1]}, {setting[3]}): not measured: no two processes generated identical "
                         f"code; --cell-repeats 3 measures it and puts the noise between processes in the intervals")
            continue
        within = [r["config"] for r in changed if abs(r["vs_all"]) / base <= noise["median"]]
        text = (f"noise floor ({setting[1]}, {setting[3]}): processes that ran identical code differ in compiled time "
                f"by a median of {100 * noise['median']:.1f}% (at most {100 * noise['max']:.1f}%, "
                f"{noise['pairs']} pair{'s' if noise['pairs'] != 1 else ''})")
        if noise["pairs"] < THIN_NOISE_PAIRS:
            text += "; too few pairs to trust: --cell-repeats 2 measures more"
        if changed and len(within) == len(changed):
            text += ("; every change from `all` below is within it: read none of them as an effect without "
                     "--cell-repeats 3 and an interval that excludes zero")
        elif within:
            text += f"; changes from `all` within it: {', '.join(within)}"
        lines.append(text)
    return "\n".join(lines)


def same_code_spread(cells: list[dict]) -> str:
    """The noise floor the results themselves show: within a run, two processes of one model that
    generated identical code (any two rows, `all` included) ran the same program, so how far their
    compiled times differ is measurement noise, not an effect."""
    groups: dict = {}
    for c in cells:
        if c["status"] == "ok" and c.get("code_hash"):
            key = (c["suite"], c["device"], c["dtype"], c["mode"], c["model"], run_of(c), c["code_hash"])
            groups.setdefault(key, []).append(c["compiled_ms"])
    diffs = sorted(max(a, b) / min(a, b) - 1 for ms in groups.values() for i, a in enumerate(ms) for b in ms[i + 1:])
    if not diffs:
        return "same code: no two processes of a run generated identical code"
    return (f"same code: {len(diffs)} pairs of processes of one run generated identical code; their compiled "
            f"ms per call differ (max/min - 1) by a median of {100 * diffs[len(diffs) // 2]:.1f}%, at most {100 * diffs[-1]:.1f}% "
            f"(the noise floor of one process)")


def eager_spread(cells: list[dict]) -> str:
    """How far one model's eager time moved between its processes.  Each process times eager afresh,
    and every speedup divides a model's eager time (its median over the processes, by default), so a
    drifting eager time moves the speedups while compiled times stay put (RegNetY-1.6GF's float32
    eager rose from 12.6 to 21.4 ms over four processes of one H200 box).  Where load only slows eager
    down, the median's height above the fastest process is how much the pooled speedups could be high
    (``--baseline fastest`` gives the low end)."""
    import statistics

    moved = {key: ms for key, ms in eager_by_model(cells).items() if len(ms) >= 2}
    if not moved:
        return "eager: no model timed eager in more than one process"
    above = sorted((statistics.median(ms) / min(ms) - 1, key[-1]) for key, ms in moved.items())
    (*_, model), ms = max(moved.items(), key=lambda kv: max(kv[1]) / min(kv[1]))
    return (f"eager: {len(moved)} models timed eager in 2+ processes; a model's median eager ms per call (the pooled "
            f"eager time) sits a median of {100 * statistics.median(v for v, _ in above):.1f}% above its fastest "
            f"process, at most {100 * above[-1][0]:.1f}% ({above[-1][1]}); slowest over fastest at most "
            f"{100 * (max(ms) / min(ms) - 1):.1f}% ({model}: {min(ms):.3g} to {max(ms):.3g} ms)")

__all__ = ["apply_baseline", "summary_rows", "paired_with_all", "draw_pairs", "summary_table", "per_model_table", "write_csv", "write_summary_csv",
           "write_plot", "merge", "repeat_spread", "same_code_spread", "eager_spread", "process_fingerprint", "same_code_as_all", "geomean", "GROUPS"]
