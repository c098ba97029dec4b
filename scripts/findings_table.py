"""The tables of docs/findings.md from a results file: ours beside the PyTorch 2 paper's Table 4,
the `ours` rows (each fusion kind taken out alone, one kernel per op), and the fusions `all` makes.

    python scripts/findings_table.py docs/results/h200-real-bf16-inference.json
    python scripts/findings_table.py docs/results/h200-real-bf16-training.json docs/results/h200-real-bf16-inference.json

- Paper rows: our geomean speedup over eager with its bootstrap 95% interval (``bench`` report's),
  and the share of `all`'s speedup the row keeps (geomean over models of row / all, paired by model
  and by run, bootstrap over models and their process repeats), beside the paper's float16 HuggingFace
  figures on an A100 (Table 4) for the file's mode, inference or training.
- Ours: the same share, how many models' code equals `all`'s, and for a fusion kind the part of
  fusion's worth it carries: log(share kept without the kind) / log(share kept without any fusion),
  over the models that ran both rows (1: the kind is all of fusion's worth; 0: none of it).
- Per model: each row's share of `all` kept on each model, against the `all` of its own run; `=`
  marks a row whose code on that model was `all`'s own (its figure is process noise, not the row's).
- Fusions: the scheduler fusions `all` made per model, by kind (from the cells' decision logs), and
  what `no-inlining` made instead; how many cells of a one-kind row with nothing to take out
  generated their run's `all` code; for a row of kinds taken out together, the fusions it still
  made and its kernels beside `no-fusion`'s.
- Cost: the paper rows' process wall time per model, and what 8 models take on 2 lanes; how many
  warm cells compiled in at most 1.5x their compile without autotuning (docs/bench.md's target).
- With a second file, of the other mode: per model, how much dearer a cell of the first file's mode
  is than one of the other's, cold and warm apart (``bench --estimate`` prices a model with cells of
  only the other mode by the median over models).
"""
from __future__ import annotations

import math
import random
import statistics
import sys

from inductor_ablate.bench import estimate, report
from inductor_ablate.bench.configs import FUSION_KINDS, GROUPS, by_name
from inductor_ablate.bench.runner import read_results_file
from inductor_ablate.report import views
from inductor_ablate.errors import UsageError

# The paper's Table 4 and the shares of `all` kept: the report's own views (one definition).
PAPER = views.PAPER
_processes, _pairs, _same_code = views.processes, views.pairs_with_all, views.same_code
_share, _bootstrap = views.share, views.bootstrap


def kept_share(pairs, config):
    """(point, lo, hi, models): geomean over models of speedup(config) / speedup(all)."""
    models = sorted(pairs[config])
    point = _share(pairs[config], models)
    lo, hi = _bootstrap(lambda pick, rng: _share(pairs[config], pick, rng), models, config)
    return point, lo, hi, len(models)


def fusion_part(pairs, kind_config):
    """(point, lo, hi, models): log(share kept without the kind) / log(share kept without fusion)."""
    models = sorted(set(pairs.get(kind_config, {})) & set(pairs.get("no-fusion", {})))
    if not models:
        return None

    def part(pick, rng=None):
        loss = math.log(_share(pairs["no-fusion"], pick, rng))
        return math.log(_share(pairs[kind_config], pick, rng)) / loss if loss < 0 else None

    lo_hi = _bootstrap(part, models, kind_config)
    return (part(models), *(lo_hi or (math.nan, math.nan)), len(models))


def paper_table(pairs, rows, mode) -> None:
    paper_all = PAPER[mode]["all"]
    print(f"| row | ours: speedup [95% CI] | ours: share of `all` kept [95% CI] | models | paper (Table 4, {mode}) | paper: share kept |")
    print("|---|---|---|---|---|---|")
    for config, paper in PAPER[mode].items():
        r = rows.get(config)
        if r is not None and r["na"]:
            print(f"| {config} | n/a: {r['na_message']} | | 0 | {paper:.2f}x | {paper / paper_all:.2f} |")
            continue
        if r is None or not r["ok"]:
            print(f"| {config} | not run | | 0 | {paper:.2f}x | {paper / paper_all:.2f} |")
            continue
        speed = f"{r['speedup']:.2f}x [{r['speedup_lo']:.2f}, {r['speedup_hi']:.2f}]"
        if config == "all":
            kept, n = "1", r["ok"]
        else:
            point, lo, hi, n = kept_share(pairs, config)
            kept = f"{point:.2f} [{lo:.2f}, {hi:.2f}]"
        print(f"| {config} | {speed} | {kept} | {n} | {paper:.2f}x | {paper / paper_all:.2f} |")


def ours_table(pairs, rows) -> None:
    print("| row | speedup [95% CI] | share of `all` kept [95% CI] | part of fusion's worth [95% CI] | models | same code as `all` |")
    print("|---|---|---|---|---|---|")
    for config, r in rows.items():  # the report's order: named rows, then kinds together (no-fusion-A+B)
        if r["source"] != "ours" or not r["ok"]:
            continue
        speed = f"{r['speedup']:.2f}x [{r['speedup_lo']:.2f}, {r['speedup_hi']:.2f}]"
        point, lo, hi, n = kept_share(pairs, config)
        part = fusion_part(pairs, config) if config.startswith("no-fusion-") else None
        part_text = f"{part[0]:.2f} [{part[1]:.2f}, {part[2]:.2f}] ({part[3]} models)" if part else ""
        same = "?" if r["same_code"] is None else f"{r['same_code']}/{r['paired']}"
        print(f"| {config} | {speed} | {point:.2f} [{lo:.2f}, {hi:.2f}] | {part_text} | {n} | {same} |")


def per_model_table(pairs, rows, same_code=frozenset()) -> None:
    """Each row's share of `all` kept, per model: speedup(row) / speedup(`all` of the same run), a
    geomean over the row's processes; "-" where the row did not run on the model; "=" after the
    share where the row generated `all`'s very code there (``same_code``: {(model, config)})."""
    models = sorted({m for by_model in pairs.values() for m in by_model})
    print("| row | " + " | ".join(models) + " |")
    print("|---|" + "---|" * len(models))
    for config in rows:
        if config in pairs:
            cells = [f"{_share(pairs[config], [m]):.2f}{'=' if (m, config) in same_code else ''}"
                     if m in pairs[config] else "-" for m in models]
            print(f"| {config} | " + " | ".join(cells) + " |")
    if same_code:
        print("\n`=`: the row generated the very code of `all` on that model, in every process: the share "
              "is process noise, not what the row takes out.")


def _each(cs, value) -> str:
    """``value`` of each process of a row: one figure where they agree, else each, "7 / 1"."""
    values = [str(value(c)) for c in cs]
    return values[0] if len(set(values)) == 1 else " / ".join(values)


def _fusions_made(c) -> str:
    """The scheduler fusions a cell logged, by kind, e.g. "epilogue 4", or "none"."""
    return ", ".join(f"{k} {n}" for k, n in sorted(c["fusions"].items()) if n) or "none"


def fusions_table(cells) -> None:
    """Fusions by kind of `all` and of `no-inlining`, per model.  A row that was logged in several
    processes (runs pooled by merge --pool-repeats) shows each process's figure, "7 / 1", where they
    differ: a cold compile's autotuning can pick other templates, and with them other fusions."""
    logged: dict = {}
    for c in cells:
        if c["status"] == "ok" and "fusions" in c:
            logged.setdefault((c["model"], c["config"]), []).append(c)
    models = sorted({m for m, cfg in logged if cfg == "all"})
    kinds = sorted({k for (m, cfg), cs in logged.items() if cfg in ("all", "no-inlining") for c in cs for k in c["fusions"]})
    print("| model | " + " | ".join(f"`all`: {k}" for k in kinds) + " | `all`: kernels | `no-inlining`: fusions | `no-inlining`: kernels |")
    print("|---|" + "---|" * (len(kinds) + 3))
    for m in models:
        a, ni = logged[(m, "all")], logged.get((m, "no-inlining"))
        ran = any(c["status"] == "ok" and (c["model"], c["config"]) == (m, "no-inlining") for c in cells)
        ni_text = (f"{_each(ni, lambda c: sum(c['fusions'].values()))} | {_each(ni, lambda c: c['kernels'])}" if ni else
                   "ran before fusions were logged | " if ran else "not run | ")
        print(f"| {m} | " + " | ".join(_each(a, lambda c, k=k: c["fusions"].get(k, 0)) for k in kinds)
              + f" | {_each(a, lambda c: c['kernels'])} | {ni_text} |")


def kinds_together_table(cells) -> None:
    """For each row of several fusion kinds vetoed together (``no-fusion-vertical+horizontal``), per
    model: the fusions `all` made, the fusions and kernels the row made, and `no-fusion`'s kernels:
    whether the row left any fusion, and whether it ended where taking out every fusion does."""
    reps = _processes(c for c in cells if c["status"] == "ok")
    for config in sorted({cfg for _, cfg in reps if "+" in cfg and cfg.startswith("no-fusion-")}):
        print(f"| model | `all`: fusions made | `{config}`: fusions made | `{config}`: kernels | `no-fusion`: kernels |")
        print("|---|---|---|---|---|")
        for m in sorted(m for m, cfg in reps if cfg == config):
            row, every = reps[(m, config)], reps.get((m, "no-fusion"), [])
            logged = [c for c in reps.get((m, "all"), []) if "fusions" in c]
            row_text = _each(row, _fusions_made) if all("fusions" in c for c in row) else "not logged"
            print(f"| {m} | {_each(logged, _fusions_made) if logged else 'not logged'} | {row_text} | "
                  f"{_each(row, lambda c: c['kernels'])} | {_each(every, lambda c: c['kernels']) if every else 'not run'} |")


def nothing_to_take_out(cells) -> None:
    """Cells of a one-kind row whose run's `all` made no fusion of that kind: how many generated
    that `all`'s very code (the rest are a warm compile differing from the cold one)."""
    by_run: dict = {}
    for c in cells:
        if c["status"] == "ok" and c["config"] == "all" and "fusions" in c:
            by_run.setdefault((c["model"], report.run_of(c)), []).append(c)
    total = same = 0
    for c in cells:
        kind = c["config"].removeprefix("no-fusion-")
        mates = by_run.get((c["model"], report.run_of(c)), [])
        if c["status"] != "ok" or kind not in FUSION_KINDS or not mates or any(a["fusions"].get(kind) for a in mates):
            continue
        total += 1
        same += any(a.get("code_hash") == c.get("code_hash") for a in mates)
    print(f"Cells of a one-kind row whose run's `all` made no fusion of that kind: {total}; "
          f"generated that `all`'s code: {same}.")


def cost_per_model(cells, lanes: int = 2, count: int = 8) -> None:
    """Process wall time of the paper's rows per model (the median over each row's processes, summed
    over the rows), for the models that ran them all, and what ``count`` of them take on ``lanes``
    lanes of equal load: the cost target of docs/bench.md."""
    walls: dict = {}
    for c in cells:
        if c["status"] == "ok" and c["config"] in GROUPS["paper"] and c.get("wall_s"):
            walls.setdefault(c["model"], {}).setdefault(c["config"], []).append(c["wall_s"])
    # rows that cannot run in the file's setting (no-freezing in training) cost nothing there
    paper = [r for r in GROUPS["paper"] if not by_name(r).not_applicable(cells[0]["device"], cells[0]["mode"])]
    cost = sorted((sum(statistics.median(w[r]) for r in paper), m) for m, w in walls.items() if set(paper) <= set(w))
    if len(cost) < count:
        print(f"Paper rows' cost: {len(cost)} models ran every paper row; {count} are needed for the projection.")
        return
    print("Paper rows' process wall time per model: " + ", ".join(f"{m} {t:.0f} s" for t, m in cost) + ".")
    for name, chosen in (("cheapest", cost[:count]), ("dearest", cost[-count:])):
        total = sum(t for t, _ in chosen)
        print(f"The {count} {name}: {total:,.0f} s, {total / lanes / 60:.1f} min on {lanes} lanes of equal load.")


def warm_autotuning(cells, bound: float = 1.5) -> None:
    """The target of docs/bench.md for warm cells (a model's cells after its first in a run): compile
    in at most ``bound`` x the time the same config takes with autotuning off.  Estimated per cell
    from Inductor's own timers: compile_s / (compile_s - autotune_s), the compile with the time it
    spent autotuning taken out (``autotune_s``: template choices compiled and benchmarked, Triton
    configs benchmarked)."""
    warm = [c for c in cells if c["status"] == "ok" and c.get("cache") == "warm" and c["config"] != "all"
            and c.get("autotune_s") is not None and c["compile_s"] > c["autotune_s"]]
    if not warm:
        print("Warm cells with an autotuning time: none.")
        return
    ratios = [(c["compile_s"] / (c["compile_s"] - c["autotune_s"]), c) for c in warm]
    over = sorted(((r, c) for r, c in ratios if r > bound), key=lambda rc: (rc[1]["config"], rc[1]["model"]))
    print(f"Warm cells compiling in at most {bound}x their compile without its autotuning: "
          f"{len(warm) - len(over)} of {len(warm)}; median {statistics.median(r for r, _ in ratios):.2f}x.")
    if over:
        print("Over: " + "; ".join(f"{c['config']} {c['model']} {r:.2f}x ({c['autotune_s']:.0f} s autotuning)"
                                   for r, c in over) + ".")


def other_mode_cells(path: str, other_path: str, cells: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the timed ``cells`` of ``path``, those of ``other_path`` in the other mode, on the same device);
    either file without any is a usage error, raised before anything is printed."""
    mode, device = cells[0]["mode"], cells[0]["device"]
    here = estimate.timed_cells(cells, device, mode)
    if not here:
        raise UsageError(f"{path} holds no timed cell (status ok, with wall_s) to set against {other_path}")
    _, there, _ = estimate.read_history([other_path], device, mode)
    if not there:
        raise UsageError(f"{other_path} holds no timed cell on {device} in the other mode than {path}'s ({mode}); "
                         f"give a results file of the other mode")
    return here, there


def mode_ratios(here: list[dict], there: list[dict]) -> None:
    """Per model, the median process wall of its cold (a model's first, empty cache) and of its warm
    cells in ``here`` over the same in ``there``: the ratios whose median ``bench --estimate`` scales
    a model by when it has cells of only the other mode."""
    ratios = {state: estimate.per_model_ratios(here, there, state) for state in ("cold", "warm")}
    print("| model | cold | warm |\n|---|---|---|")
    for model in sorted(set(ratios["cold"]) | set(ratios["warm"])):
        print(f"| {model} | " + " | ".join(f"{ratios[s][model]:.2f}" if model in ratios[s] else "-"
                                           for s in ("cold", "warm")) + " |")
    for state, per_model in ratios.items():
        if per_model:
            print(f"{state}: median {statistics.median(per_model.values()):.2f} over {len(per_model)} models, "
                  f"from {min(per_model.values()):.2f} to {max(per_model.values()):.2f}")


def main(path: str, other_path: str | None = None) -> None:
    cells = read_results_file(path)["cells"]
    modes = {c["mode"] for c in cells}
    if len(modes) != 1:
        raise UsageError(f"{path} holds {len(modes)} modes ({', '.join(sorted(modes)) or 'no cells'}); "
                         f"give a results file of one mode")
    timed = other_mode_cells(path, other_path, cells) if other_path else None
    rows = {r["config"]: r for r in report.summary_rows(cells)}
    pairs = _pairs(cells)
    print("## The paper's rows\n")
    paper_table(pairs, rows, modes.pop())
    print("\n## Ours\n")
    ours_table(pairs, rows)
    print("\n## Per model: share of `all` kept\n")
    per_model_table(pairs, rows, _same_code(cells))
    print("\n## Fusions made, by kind\n")
    fusions_table(cells)
    print()
    nothing_to_take_out(cells)
    print("\n## Fusion kinds taken out together\n")
    kinds_together_table(cells)
    print("\n## Cost\n")
    cost_per_model(cells)
    warm_autotuning(cells)
    if timed:
        print(f"\n## A {cells[0]['mode']} cell's process wall over the same model's {timed[1][0]['mode']} cell\n")
        mode_ratios(*timed)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print("usage: python scripts/findings_table.py RESULTS.json [OTHER_MODE_RESULTS.json]", file=sys.stderr)
        sys.exit(2)
    try:
        main(*sys.argv[1:])
    except UsageError as exc:  # a bad file: one line, exit 2, as the CLI does
        print(f"findings_table: {exc}", file=sys.stderr)
        sys.exit(2)
