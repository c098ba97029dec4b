"""Repeatability: the same rows measured in two results files (another day, a freshly started box),
compared on the models and rows both hold.

    python scripts/compare_runs.py docs/results/h200-real-bf16-inference.json \\
        docs/results/raw/h200-repeat-bf16-inference-target.json

- Per row: the share of `all`'s speedup kept (findings_table's: paired by model and by run) in each
  file with its bootstrap 95% interval, the change between the files with its own interval (models
  paired, resampled together), and whether the later point lies inside the earlier interval.
- Per cell: how far the later measurement moved from the earlier (later / earlier - 1, each a geomean
  over its processes) in compiled time per call, eager time, speedup over eager, and share of `all`.
  Shares are what the findings quote; this says whether they repeat where absolute times do not.
"""
from __future__ import annotations

import statistics
import sys

from findings_table import _bootstrap, _pairs, _share, kept_share
from inductor_ablate.bench import report
from inductor_ablate.bench.configs import CONFIGS
from inductor_ablate.bench.runner import read_results_file
from inductor_ablate.errors import UsageError


def _common(pairs_a, pairs_b) -> dict:
    """{config: [models]}: the rows and models both files paired with their `all`."""
    out = {}
    for config in sorted(pairs_a, key=lambda c: list(CONFIGS).index(c) if c in CONFIGS else len(CONFIGS)):
        models = sorted(set(pairs_a[config]) & set(pairs_b.get(config, {})))
        if models:
            out[config] = models
    return out


def _restricted(pairs, config, models) -> dict:
    return {config: {m: pairs[config][m] for m in models}}


def change_interval(pairs_a, pairs_b, config, models, seed="compare"):
    """95% interval of share(later) - share(earlier), resampling the models (paired: one draw
    serves both files) and, within each, its process pairs."""
    return _bootstrap(lambda pick, rng: _share(pairs_b[config], pick, rng) - _share(pairs_a[config], pick, rng),
                      models, f"{seed}{config}")


def all_line(cells_a, cells_b, models) -> None:
    """`all`'s geomean speedup over eager on the common models, in each file, with its interval."""
    texts = []
    for cells in (cells_a, cells_b):
        speeds = {m: [c["speedup"] for c in cs] for (m, cfg), cs in _by_cell(cells).items() if cfg == "all" and m in models}
        lo, hi = _bootstrap(lambda pick, rng: report.geomean(
            [report.geomean([rng.choice(speeds[m]) for _ in speeds[m]]) for m in pick]), models, "compare-all")
        texts.append(f"{report.geomean([report.geomean(speeds[m]) for m in models]):.2f}x [{lo:.2f}, {hi:.2f}]")
    print(f"`all` over eager on the {len(models)} models: earlier {texts[0]}, later {texts[1]}.\n")


def rows_table(pairs_a, pairs_b, common) -> None:
    print("| row | models | earlier: share kept [95% CI] | later: share kept [95% CI] | later - earlier [95% CI] | later inside earlier's interval |")
    print("|---|---|---|---|---|---|")
    inside = overlap = 0
    for config, models in common.items():
        a = kept_share(_restricted(pairs_a, config, models), config)
        b = kept_share(_restricted(pairs_b, config, models), config)
        lo, hi = change_interval(pairs_a, pairs_b, config, models)
        ok = a[1] <= b[0] <= a[2]
        inside += ok
        overlap += a[1] <= b[2] and b[1] <= a[2]
        print(f"| {config} | {len(models)} | {a[0]:.2f} [{a[1]:.2f}, {a[2]:.2f}] | {b[0]:.2f} [{b[1]:.2f}, {b[2]:.2f}] "
              f"| {b[0] - a[0]:+.2f} [{lo:+.2f}, {hi:+.2f}] | {'yes' if ok else 'no'} |")
    print(f"\nLater point inside the earlier interval: {inside} of {len(common)} rows; "
          f"the two intervals overlap: {overlap} of {len(common)}.")


def _by_cell(cells) -> dict:
    """{(model, config): [ok cells]} with the pooled-eager speedup (report.apply_baseline)."""
    out: dict = {}
    for c in report.apply_baseline(cells):
        if c["status"] == "ok":
            out.setdefault((c["model"], c["config"]), []).append(c)
    return out


def _spread(moves: list[tuple[float, str]]) -> str:
    sizes = sorted(abs(v) for v, _ in moves)
    worst = max(moves, key=lambda m: abs(m[0]))
    return (f"median |move| {100 * statistics.median(sizes):.1f}%, 90th percentile "
            f"{100 * sizes[int(0.9 * (len(sizes) - 1))]:.1f}%, largest {100 * worst[0]:+.1f}% ({worst[1]})")


def cells_spread(cells_a, cells_b, pairs_a, pairs_b, common) -> None:
    a, b = _by_cell(cells_a), _by_cell(cells_b)
    keys = sorted(set(a) & set(b))

    def moved(field):
        return [(report.geomean([c[field] for c in b[k]]) / report.geomean([c[field] for c in a[k]]) - 1, " ".join(k))
                for k in keys]

    print(f"Cells in both files: {len(keys)} ({len({m for m, _ in keys})} models); later / earlier - 1:")
    print(f"- compiled ms per call: {_spread(moved('compiled_ms'))}")
    print(f"- eager ms per call: {_spread(moved('eager_ms'))}")
    print(f"- speedup over eager: {_spread(moved('speedup'))}")
    shares = [(_share(pairs_b[cfg], [m]) / _share(pairs_a[cfg], [m]) - 1, f"{m} {cfg}") for cfg, ms in common.items() for m in ms]
    print(f"- share of `all` kept (rows other than `all`): {_spread(shares)}")
    same = sum(bool({c.get("code_hash") for c in a[k]} & {c.get("code_hash") for c in b[k]} - {None}) for k in keys)
    print(f"- the same generated code in both files: {same} of {len(keys)} cells")


def main(earlier: str, later: str) -> None:
    cells_a, cells_b = (read_results_file(p)["cells"] for p in (earlier, later))
    for path, cells in ((earlier, cells_a), (later, cells_b)):
        if not cells:
            raise UsageError(f"{path} holds no cells")
    settings = {(c["device"], c["dtype"], c["mode"]) for c in cells_a + cells_b}
    if len(settings) != 1:
        raise UsageError(f"the files hold {len(settings)} settings (device, dtype, mode); compare files of one setting")
    pairs_a, pairs_b = _pairs(cells_a), _pairs(cells_b)
    common = _common(pairs_a, pairs_b)
    if not common:
        raise UsageError(f"{earlier} and {later} share no row paired with `all` on a common model")
    print(f"## Rows: {earlier} (earlier) against {later} (later)\n")
    all_line(cells_a, cells_b, sorted({m for ms in common.values() for m in ms}))
    rows_table(pairs_a, pairs_b, common)
    print("\n## Cells\n")
    cells_spread(cells_a, cells_b, pairs_a, pairs_b, common)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python scripts/compare_runs.py EARLIER.json LATER.json", file=sys.stderr)
        sys.exit(2)
    try:
        main(sys.argv[1], sys.argv[2])
    except UsageError as exc:  # a bad file: one line, exit 2, as the CLI does
        print(f"compare_runs: {exc}", file=sys.stderr)
        sys.exit(2)
