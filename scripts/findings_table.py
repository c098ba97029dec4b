"""The tables of docs/findings.md from a results file: ours beside the PyTorch 2 paper's Table 4,
the `ours` rows (each fusion kind taken out alone, one kernel per op), and the fusions `all` makes.

    python scripts/findings_table.py docs/results/h200-real-bf16-inference.json

- Paper rows: our geomean speedup over eager with its bootstrap 95% interval (``bench`` report's),
  and the share of `all`'s speedup the row keeps (geomean over models of row / all, paired by model,
  bootstrap over models and their process repeats), beside the paper's float16 HuggingFace
  inference figures on an A100 (Table 4).
- Ours: the same share, how many models' code equals `all`'s, and for a fusion kind the part of
  fusion's worth it carries: log(share kept without the kind) / log(share kept without any fusion),
  over the models that ran both rows (1: the kind is all of fusion's worth; 0: none of it).
- Fusions: the scheduler fusions `all` made per model, by kind (from the cells' decision logs), and
  what `no-inlining` made instead.
"""
from __future__ import annotations

import math
import random
import sys

from inductor_ablate.bench import report
from inductor_ablate.bench.runner import read_results_file

#: Table 4, inference column: every row of the paper's ablation (float16 HuggingFace, A100).
PAPER = {"all": 1.91, "no-loop-reorder": 1.91, "no-matmul-templates": 1.85, "no-freezing": 1.85,
         "no-pattern-matching": 1.83, "no-cudagraphs": 1.81, "no-fusion": 1.68, "no-inlining": 1.58,
         "no-fusion-no-inlining": 0.80}


def _speeds(cells) -> dict:
    speeds: dict = {}
    for c in report.apply_baseline(cells):
        if c["status"] == "ok":
            speeds.setdefault((c["model"], c["config"]), []).append(c["speedup"])
    return speeds


def _share(speeds, models, config, draw):
    """Geomean over ``models`` of speedup(config) / speedup(all), each a geomean of its (drawn) repeats."""
    return report.geomean([report.geomean(draw(speeds[(m, config)])) / report.geomean(draw(speeds[(m, "all")]))
                           for m in models])


def _bootstrap(statistic, models, seed):
    """(lo, hi): 95% interval of ``statistic(models, draw)``, resampling models and their repeats."""
    rng = random.Random(seed)
    values = [statistic([rng.choice(models) for _ in models], lambda xs: [rng.choice(xs) for _ in xs])
              for _ in range(report.BOOTSTRAP)]
    return report._percentiles([v for v in values if v is not None and math.isfinite(v)])


def kept_share(speeds, config):
    """(point, lo, hi, models): geomean over models of speedup(config) / speedup(all)."""
    models = sorted(m for m, cfg in speeds if cfg == config and (m, "all") in speeds)
    point = _share(speeds, models, config, lambda xs: xs)
    lo, hi = _bootstrap(lambda pick, draw: _share(speeds, pick, config, draw), models, config)
    return point, lo, hi, len(models)


def fusion_part(speeds, kind_config):
    """(point, lo, hi, models): log(share kept without the kind) / log(share kept without fusion)."""
    models = sorted(m for m, cfg in speeds if cfg == kind_config and (m, "all") in speeds
                    and (m, "no-fusion") in speeds)
    if not models:
        return None

    def part(pick, draw):
        loss = math.log(_share(speeds, pick, "no-fusion", draw))
        return math.log(_share(speeds, pick, kind_config, draw)) / loss if loss < 0 else None

    lo_hi = _bootstrap(part, models, kind_config)
    return (part(models, lambda xs: xs), *(lo_hi or (math.nan, math.nan)), len(models))


def paper_table(speeds, rows) -> None:
    paper_all = PAPER["all"]
    print("| row | ours: speedup [95% CI] | ours: share of `all` kept [95% CI] | models | paper (Table 4) | paper: share kept |")
    print("|---|---|---|---|---|---|")
    for config, paper in PAPER.items():
        r = rows.get(config)
        if r is None or not r["ok"]:
            print(f"| {config} | not run | | 0 | {paper:.2f}x | {paper / paper_all:.2f} |")
            continue
        speed = f"{r['speedup']:.2f}x [{r['speedup_lo']:.2f}, {r['speedup_hi']:.2f}]"
        if config == "all":
            kept, n = "1", r["ok"]
        else:
            point, lo, hi, n = kept_share(speeds, config)
            kept = f"{point:.2f} [{lo:.2f}, {hi:.2f}]"
        print(f"| {config} | {speed} | {kept} | {n} | {paper:.2f}x | {paper / paper_all:.2f} |")


def ours_table(speeds, rows) -> None:
    print("| row | speedup [95% CI] | share of `all` kept [95% CI] | part of fusion's worth [95% CI] | models | same code as `all` |")
    print("|---|---|---|---|---|---|")
    for config, r in rows.items():  # the report's order: named rows, then kinds together (no-fusion-A+B)
        if r["source"] != "ours" or not r["ok"]:
            continue
        speed = f"{r['speedup']:.2f}x [{r['speedup_lo']:.2f}, {r['speedup_hi']:.2f}]"
        point, lo, hi, n = kept_share(speeds, config)
        part = fusion_part(speeds, config) if config.startswith("no-fusion-") else None
        part_text = f"{part[0]:.2f} [{part[1]:.2f}, {part[2]:.2f}] ({part[3]} models)" if part else ""
        same = "?" if r["same_code"] is None else f"{r['same_code']}/{r['paired']}"
        print(f"| {config} | {speed} | {point:.2f} [{lo:.2f}, {hi:.2f}] | {part_text} | {n} | {same} |")


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

    def each(cs, value) -> str:
        values = [str(value(c)) for c in cs]
        return values[0] if len(set(values)) == 1 else " / ".join(values)

    print("| model | " + " | ".join(f"`all`: {k}" for k in kinds) + " | `all`: kernels | `no-inlining`: fusions | `no-inlining`: kernels |")
    print("|---|" + "---|" * (len(kinds) + 3))
    for m in models:
        a, ni = logged[(m, "all")], logged.get((m, "no-inlining"))
        ran = any(c["status"] == "ok" and (c["model"], c["config"]) == (m, "no-inlining") for c in cells)
        ni_text = (f"{each(ni, lambda c: sum(c['fusions'].values()))} | {each(ni, lambda c: c['kernels'])}" if ni else
                   "ran before fusions were logged | " if ran else "not run | ")
        print(f"| {m} | " + " | ".join(each(a, lambda c, k=k: c["fusions"].get(k, 0)) for k in kinds)
              + f" | {each(a, lambda c: c['kernels'])} | {ni_text} |")


def main(path: str) -> None:
    cells = read_results_file(path)["cells"]
    rows = {r["config"]: r for r in report.summary_rows(cells)}
    speeds = _speeds(cells)
    print("## The paper's rows\n")
    paper_table(speeds, rows)
    print("\n## Ours\n")
    ours_table(speeds, rows)
    print("\n## Fusions made, by kind\n")
    fusions_table(cells)


if __name__ == "__main__":
    main(sys.argv[1])
