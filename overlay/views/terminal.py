"""The study's tables as terminal text: the summary shaped like the paper's Table 4, the per-model
table, the noise line above them, and the lines a run ends with (where its time went, how far
repeats and eager times moved).  Computed by stats and views; formatted here."""
from __future__ import annotations

import statistics

from ..results import cell_key
from ..rows import by_name
from ..stats import (MIN_PAIRS_FOR_A_CLAIM, THIN_NOISE_PAIRS, apply_baseline, eager_by_model, mean_or_zero, noise_floor,
                     ordered_rows, same_code_as_all, same_code_moves, settings, summary_rows)
from .sections import cost


#: why a row whose interval excludes 1 got no star (``stats.claim``), as the table says it
_NO_STAR = {"few pairs": f"fewer than {MIN_PAIRS_FOR_A_CLAIM} paired processes", "noise": "within the noise floor",
            "busy": "rests on a busy process (the machine took its cores)"}


def summary_table(cells: list[dict], baseline: str = "pooled", rows: list[dict] | None = None) -> str:
    """Shaped like the paper's Table 4: geomean speedup over eager per config and the share of
    `all`'s speedup each row keeps, each with its bootstrap 95% interval; `*` marks a claim
    (``stats.claim``), and a row that could not be one says why in the last column.
    ``rows``: ``summary_rows(cells, baseline)`` if the caller already has them (the bootstrap is not free)."""
    rows = summary_rows(cells, baseline) if rows is None else rows
    baseline = rows[0]["baseline"] if rows else baseline
    lines = []
    for (suite, device, dtype, mode), group in settings(rows).items():
        n = group[0]["models"]
        reps = max(r["repeats"] for r in group)
        lines.append(f"\n{suite} suite, {device}, {dtype}, {mode}: geomean speedup over eager ({n} models, "
                     f"{reps} process(es) per cell; eager time: {baseline}); [95% bootstrap interval]; "
                     f"kept = the share of `all`'s speedup the row keeps; * = its interval excludes 1, on "
                     f"{MIN_PAIRS_FOR_A_CLAIM}+ paired processes, outside the noise floor, on a machine that "
                     f"did not take the cores away (else 'no star:' says which)")
        for name in sorted({c["base"] for c in cells if c.get("base")}):  # one: files of two are refused
            lines.append(f"(every row, `all` included, ran with --base {name}: {by_name(name).doc})")
        lines.append(f"{'configuration':<32}{'speedup':>8} {'[95% CI]':<14}{'kept':>8} {'[95% CI]':<16}"
                     f"{'same code':>10}{'ok':>7}{'kernels':>9}{'compile s':>11}  source")
        base = next((r for r in group if r["config"] == "all"), None)
        if base and base["ok"] < n:
            lines.append(f"  (`all` ran on {base['ok']}/{n} models; 'kept' is over the models where both ran)")
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
                diff = f"{r['kept']:.2f}{'*' if r['significant'] else ''}" if r.get("kept") is not None else ""
                ci_diff = f"[{r['kept_lo']:.2f}, {r['kept_hi']:.2f}]" if r.get("kept_lo") is not None else ""
            speed = f"{r['speedup']:.2f}x" if r["speedup"] else "-"
            same = "" if r["config"] == "all" else "?" if r["same_code"] is None else f"{r['same_code']}/{r['paired']}"
            ok = f"{r['ok']}/{n}"
            lines.append(f"{r['config']:<32}{speed:>8} {ci:<14}{diff:>8} {ci_diff:<16}{same:>10}{ok:>7}"
                         f"{r['kernels']:>9}{r['compile_s']:>11.1f}  {r['source']}"
                         + (f"  FAILED: {'; '.join(r['failed'])}" if r["failed"] else "")
                         + (f"  no star: {_NO_STAR[r['claim']]}" if r.get("claim") in _NO_STAR else ""))
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
    for (suite, device, dtype, mode), group in settings(cells).items():
        by = {(c["model"], c["config"]): c for c in group if c.get("cell_repeat", 0) == 0}
        alls: dict[str, list[dict]] = {}  # every process of `all`, per model
        for c in group:
            if c["config"] == "all":
                alls.setdefault(c["model"], []).append(c)
        models = sorted({c["model"] for c in group})
        configs = ordered_rows(group)
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


def time_split(cells: list[dict], wall_s: float | None = None, meta: dict | None = None) -> str:
    """``cost`` as the lines a run ends with; then cold (a model's first cell, empty cache) against
    warm compiles."""
    ran = [c for c in cells if "cell_s" in c]
    if not ran:
        return "time split: no cell ran"
    k = cost(cells, meta)
    parts = [("autotune", k["autotune_s"]), ("compile (rest)", k["compile_s"]), ("timing", k["timing_s"]),
             ("model set-up + eager reference", k["setup_s"]), ("accuracy check, census, other", k["other_s"]),
             ("process start", k["start_s"])]
    if k["wait_s"]:  # bench --jobs: cells waiting while another had the device
        parts.insert(3, ("waiting for the device", k["wait_s"]))
    if k["died_s"]:
        parts.append(("cells that died or timed out", k["died_s"]))
    if k["cut_s"]:
        parts.append((f"{k['cuts']} cells a piece's end cut", k["cut_s"]))
    busy = k["busy_s"]
    line = "time split over {} cells ({:.0f} s of cell processes{}): ".format(
        len(ran), busy, f"; run wall {wall_s:.0f} s" if wall_s else "")
    line += ", ".join(f"{name} {secs:.0f} s ({100 * secs / busy:.0f}%)" for name, secs in parts)
    if k["autotune_split"]:
        line += "\nautotune: templates {:.0f} s, Triton configs {:.0f} s".format(*k["autotune_split"])
    if k["held_s"] is not None and wall_s:
        line += (f"\nthe cells that finished had the device {k['held_s']:.0f} s of the {wall_s:.0f} s wall "
                 f"({100 * k['held_s'] / wall_s:.0f}%; near 100%, the device lock set the pace, not compiling)")
    line += (f"\nper cell beyond compiling and timing: process start + model set-up median "
             f"{k['overhead_median_s']:.1f} s, at most {k['overhead_max_s']:.1f} s")
    states = [(state, what, [c["compile_s"] for c in ran if c.get("cache") == state and c.get("compile_s") is not None])
              for state, what in (("cold", "a model's first, empty cache"),
                                  ("seeded", "a model's first, from --picks' autotuning picks"),
                                  ("warm", "autotuning and kernels reused"))]
    states = [s for s in states if s[2]]
    if len(states) > 1:
        line += "\ncompile: " + "; ".join(f"{len(secs)} {state} cells ({what}) mean {mean_or_zero(secs):.1f} s"
                                          for state, what, secs in states)
    return line


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


def noise_lead(cells: list[dict], rows: list[dict]) -> str:
    """The first lines of a summary: the noise floor this run measured (same-code processes), and
    which reported changes from `all` are within it, said plainly when all of them are; and, when
    the machine took the cores away from cells while they were timed, how many and what that did."""
    lines = []
    for setting, group in settings(cells).items():
        noise = noise_floor(group)
        mine = [r for r in rows if (r["suite"], r["device"], r["dtype"], r["mode"]) == setting]
        changed = [r for r in mine if r["config"] != "all" and r.get("kept") is not None
                   and not (r["paired"] and r["same_code"] == r["paired"])]
        busy = [c for c in group if c.get("busy")]
        dropped = sum(c.get("disturbed", 0) for c in group)
        if busy:
            lines.append(f"BUSY MACHINE ({setting[1]}, {setting[3]}): {len(busy)} of {len(group)} cells were timed while "
                         f"other work took their cores (most samples waited for a core even after retries); the rows "
                         f"they touch get no star; run again on a quiet machine to separate rows")
        elif dropped:
            lines.append(f"load ({setting[1]}, {setting[3]}): {dropped} sample pairs were taken while other work had the "
                         f"cores, dropped and taken again; every cell kept enough undisturbed ones")
        if noise is None:
            lines.append(f"noise floor ({setting[1]}, {setting[3]}): not measured: no two processes generated identical "
                         f"code; --cell-repeats 3 measures it and puts the noise between processes in the intervals")
            continue
        within = [r["config"] for r in changed if r.get("within_noise")]
        text = (f"noise floor ({setting[1]}, {setting[3]}): processes that ran identical code differ in compiled time "
                f"by a median of {100 * noise['median']:.1f}% (at most {100 * noise['max']:.1f}%, "
                f"{noise['pairs']} pair{'s' if noise['pairs'] != 1 else ''})")
        if noise["pairs"] < THIN_NOISE_PAIRS:
            text += "; too few pairs to trust: --cell-repeats 2 measures more"
        if changed and len(within) == len(changed):
            text += ("; every share of `all` kept below is within it of 1: read none of them as an effect (no "
                     "star is given to one)")
        elif within:
            text += f"; shares of `all` kept within it of 1 (no star): {', '.join(within)}"
        lines.append(text)
    return "\n".join(lines)


def same_code_spread(cells: list[dict]) -> str:
    """The noise floor the results themselves show (``stats.same_code_moves``)."""
    diffs = same_code_moves(cells)
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
    moved = {key: ms for key, ms in eager_by_model(cells).items() if len(ms) >= 2}
    if not moved:
        return "eager: no model timed eager in more than one process"
    above = sorted((statistics.median(ms) / min(ms) - 1, key[-1]) for key, ms in moved.items())
    (*_, model), ms = max(moved.items(), key=lambda kv: max(kv[1]) / min(kv[1]))
    return (f"eager: {len(moved)} models timed eager in 2+ processes; a model's median eager ms per call (the pooled "
            f"eager time) sits a median of {100 * statistics.median(v for v, _ in above):.1f}% above its fastest "
            f"process, at most {100 * above[-1][0]:.1f}% ({above[-1][1]}); slowest over fastest at most "
            f"{100 * (max(ms) / min(ms) - 1):.1f}% ({model}: {min(ms):.3g} to {max(ms):.3g} ms)")
