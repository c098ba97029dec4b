"""The headline of docs/findings.md from a results file: ours beside the PyTorch 2 paper's Table 4.

    python scripts/findings_table.py docs/results/h200-real-bf16-inference-paper.json

For each of the paper's rows: our geomean speedup over eager with its bootstrap 95%
interval (``bench`` report's), and the share of `all`'s speedup the row keeps (geomean over models of
row / all, paired by model, bootstrap over models and their process repeats), beside the paper's
float16 HuggingFace inference figures on an A100 (Table 4).
"""
from __future__ import annotations

import random
import sys

from inductor_ablate.bench import report
from inductor_ablate.bench.runner import read_results_file

#: Table 4, inference column: every row of the paper's ablation (float16 HuggingFace, A100).
PAPER = {"all": 1.91, "no-loop-reorder": 1.91, "no-matmul-templates": 1.85, "no-freezing": 1.85,
         "no-pattern-matching": 1.83, "no-cudagraphs": 1.81, "no-fusion": 1.68, "no-inlining": 1.58,
         "no-fusion-no-inlining": 0.80}


def kept_share(cells, config):
    """(point, lo, hi, models): geomean over models of speedup(config) / speedup(all)."""
    speeds: dict = {}
    for c in report.apply_baseline(cells):
        if c["status"] == "ok":
            speeds.setdefault((c["model"], c["config"]), []).append(c["speedup"])
    models = sorted(m for m, cfg in speeds if cfg == config and (m, "all") in speeds)

    def share(pick, draw):
        return report.geomean([report.geomean(draw(speeds[(m, config)])) / report.geomean(draw(speeds[(m, "all")]))
                               for m in pick])

    point = share(models, lambda xs: xs)
    rng = random.Random(config)
    lo, hi = report._percentiles([share([rng.choice(models) for _ in models], lambda xs: [rng.choice(xs) for _ in xs])
                                  for _ in range(report.BOOTSTRAP)])
    return point, lo, hi, len(models)


def main(path: str) -> None:
    cells = read_results_file(path)["cells"]
    rows = {r["config"]: r for r in report.summary_rows(cells)}
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
            point, lo, hi, n = kept_share(cells, config)
            kept = f"{point:.2f} [{lo:.2f}, {hi:.2f}]"
        print(f"| {config} | {speed} | {kept} | {n} | {paper:.2f}x | {paper / paper_all:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
