"""``python -m inductor_ablate compare [--labels A,B] [--table T] EARLIER LATER``: the same rows
measured in two results files (another day, a freshly started box, another GPU, another dtype),
compared on the models and rows both hold.  A reader of results files: it measures nothing.

    python -m inductor_ablate compare docs/results/h200-real-bf16-inference.json \\
        docs/results/h200-repeat-bf16-inference-target.json
    python -m inductor_ablate compare --labels H200,H100 docs/results/h200-real-bf16-inference.json \\
        docs/results/h100-bf16-inference-paper.json

``--labels A,B`` names the two files in the tables (default: earlier, later). The two files hold one
device and mode; their dtypes may differ (``--labels bfloat16,float32``: what a row keeps in each).

- Per row: the share of `all`'s speedup kept (the report's: paired by model and by run) in each
  file with its bootstrap 95% interval, the change between the files with its own interval (models
  paired, resampled together), and whether the later point lies inside the earlier interval.
- Per model: each row's share of `all` kept in each file and the change, so that a row's move can
  be seen to come from every model or from one.
- Per cell: how far the later measurement moved from the earlier (later / earlier - 1, each a geomean
  over its processes) in compiled time per call, eager time, speedup over eager, and share of `all`.
  Shares are what the findings quote; this says whether they repeat where absolute times do not.
- The cells not ok in either file (a wrong answer, an error), with each file's status: a row's
  share leaves such a model out.
"""
from __future__ import annotations

import math
import statistics

from . import stats
from .errors import UsageError
from .results import read_results_file
from .rows import CONFIGS
from .stats import bootstrap as _bootstrap
from .stats import pairs_with_all as _pairs
from .stats import share as _share

TABLES = ("rows", "models", "cells")


def kept_share(pairs, config, noise=()):
    """(point, lo, hi, models): stats.kept_share of ``config``, the row's own table's figures; one
    pair's interval is its point."""
    kept = stats.kept_share(pairs[config], config, noise)
    point = kept["point"]
    return point, kept["lo"] if kept["lo"] is not None else point, kept["hi"] if kept["hi"] is not None else point, \
        kept["models"]


#: the two files' names in the tables, unless --labels gives others
LABELS = ("earlier", "later")


def _row_order(config: str) -> int:
    """Rows in the bench's order of configurations, unknown ones last."""
    return list(CONFIGS).index(config) if config in CONFIGS else len(CONFIGS)


def _common(pairs_a, pairs_b) -> dict:
    """{config: [models]}: the rows and models both files paired with their `all`."""
    out = {}
    for config in sorted(pairs_a, key=_row_order):
        models = sorted(set(pairs_a[config]) & set(pairs_b.get(config, {})))
        if models:
            out[config] = models
    return out


def _restricted(pairs, config, models) -> dict:
    return {config: {m: pairs[config][m] for m in models}}


def change_interval(pairs_a, pairs_b, config, models, seed="compare", noise=((), ())):
    """95% interval of share(later) - share(earlier), resampling the models (paired: one draw
    serves both files) and, within each, its process pairs (or each file's noise: stats.draw_pairs)."""
    return _bootstrap(lambda pick, rng: _share(pairs_b[config], pick, rng, noise[1]) -
                      _share(pairs_a[config], pick, rng, noise[0]), models, f"{seed}{config}")


def all_line(cells_a, cells_b, models, labels=LABELS) -> None:
    """`all`'s geomean speedup over eager on the common models, in each file, with its interval."""
    texts = []
    for cells in (cells_a, cells_b):
        speeds = {m: [c["speedup"] for c in cs] for (m, cfg), cs in _by_cell(cells).items() if cfg == "all" and m in models}
        lo, hi = _bootstrap(lambda pick, rng: stats.geomean(
            [stats.geomean([rng.choice(speeds[m]) for _ in speeds[m]]) for m in pick]), models, "compare-all")
        texts.append(f"{stats.geomean([stats.geomean(speeds[m]) for m in models]):.2f}x [{lo:.2f}, {hi:.2f}]")
    print(f"`all` over eager on the {len(models)} models: {labels[0]} {texts[0]}, {labels[1]} {texts[1]}.\n")


def same_code_in_both(cells_a, cells_b, common) -> set:
    """The rows whose cells, and `all`'s, generated the same code in both files on every common model:
    such a row's move between the files is noise between processes, not a change."""
    a, b = _by_cell(cells_a), _by_cell(cells_b)

    def same(model, config):
        return bool({c.get("code_hash") for c in a.get((model, config), ())} &
                    {c.get("code_hash") for c in b.get((model, config), ())} - {None})
    return {config for config, models in common.items() if all(same(m, k) for m in models for k in (config, "all"))}


def rows_table(pairs_a, pairs_b, common, labels=LABELS, noise=((), ()), same=frozenset()) -> None:
    """Each common row's share of `all` kept in either file, and the change between them; ``noise``:
    each file's stats.noise_draws, so a share's interval is the one its own file's table gives;
    ``same``: rows that ran the same code in both files (their change reads as noise)."""
    a_, b_ = labels
    print(f"| row | models | {a_}: share kept [95% CI] | {b_}: share kept [95% CI] | {b_} - {a_} [95% CI] | {b_} inside {a_}'s interval |")
    print("|---|---|---|---|---|---|")
    inside = overlap = 0
    for config, models in common.items():
        a = kept_share(_restricted(pairs_a, config, models), config, noise[0])
        b = kept_share(_restricted(pairs_b, config, models), config, noise[1])
        lo, hi = change_interval(pairs_a, pairs_b, config, models, noise=noise)
        ok = a[1] <= b[0] <= a[2]
        inside += ok
        overlap += a[1] <= b[2] and b[1] <= a[2]
        change = f"{b[0] - a[0]:+.2f} [{lo:+.2f}, {hi:+.2f}]" + (" noise: same code" if config in same else "")
        print(f"| {config} | {len(models)} | {a[0]:.2f} [{a[1]:.2f}, {a[2]:.2f}] | {b[0]:.2f} [{b[1]:.2f}, {b[2]:.2f}] "
              f"| {change} | {'yes' if ok else 'no'} |")
    print(f"\n{b_[:1].upper() + b_[1:]} point inside the {a_} interval: {inside} of {len(common)} rows; "
          f"the two intervals overlap: {overlap} of {len(common)}."
          + (f" {len(same)} rows ran the same code, theirs and `all`'s, in both files: their moves are noise "
             f"between processes, not changes." if same else ""))


def _by_cell(cells) -> dict:
    """{(model, config): [ok cells]} with the pooled-eager speedup (stats.apply_baseline)."""
    return stats.processes(c for c in stats.apply_baseline(cells) if c["status"] == "ok")


def nearest_rank(sorted_values: list[float], q: float) -> float:
    """The q-quantile by nearest rank: the smallest value with at least a share q of the values at or
    below it, so never below the median (at two values the 90th percentile is the larger)."""
    return sorted_values[max(math.ceil(q * len(sorted_values)), 1) - 1]


def _spread(moves: list[tuple[float, str]]) -> str:
    sizes = sorted(abs(v) for v, _ in moves)
    worst = max(moves, key=lambda m: abs(m[0]))
    return (f"median |move| {100 * statistics.median(sizes):.1f}%, 90th percentile "
            f"{100 * nearest_rank(sizes, 0.9):.1f}%, largest {100 * worst[0]:+.1f}% ({worst[1]})")


def _externs(cells, model) -> str:
    """The extern calls (ATen matmuls and convolutions, fallbacks) of each of ``model``'s ok `all`
    cells, in file order, or '' where the file does not count them."""
    return "/".join(str(c["externs"]) for c in cells if c["model"] == model and c["config"] == "all"
                    and c.get("status") == "ok" and isinstance(c.get("externs"), int))


def models_table(pairs_a, pairs_b, common, models, labels=LABELS, cells=None) -> None:
    """Each model's share of `all` kept in both files, per row: whether a row's move is every
    model's or one model's.  ``cells``: the two files' cells; where they count extern calls, a last
    column gives `all`'s in each file, since a cold autotuning that picked other matmul kernels
    changes that count and can move a model's rows with it."""
    rows = list(common)
    externs = cells is not None and any(_externs(cs, m) for cs in cells for m in models)
    print(f"| model | " + " | ".join(f"{r}: {labels[0]}, {labels[1]} (change)" for r in rows)
          + (f" | `all`'s extern calls: {labels[0]}; {labels[1]}" if externs else "") + " |")
    print("|---|" + "---|" * (len(rows) + externs))
    for m in models:
        texts = []
        for r in rows:
            if m in common[r]:
                a, b = _share(pairs_a[r], [m]), _share(pairs_b[r], [m])
                texts.append(f"{a:.2f}, {b:.2f} ({b - a:+.2f})")
            else:
                texts.append("-")
        if externs:
            texts.append("; ".join(_externs(cs, m) or "-" for cs in cells))
        print(f"| {m} | " + " | ".join(texts) + " |")


def cells_spread(cells_a, cells_b, pairs_a, pairs_b, common, labels=LABELS) -> None:
    a, b = _by_cell(cells_a), _by_cell(cells_b)
    keys = sorted(set(a) & set(b))

    def moved(field):
        return [(stats.geomean([c[field] for c in b[k]]) / stats.geomean([c[field] for c in a[k]]) - 1, " ".join(k))
                for k in keys]

    print(f"Cells in both files: {len(keys)} ({len({m for m, _ in keys})} models); {labels[1]} / {labels[0]} - 1:")
    compiled = moved("compiled_ms")
    print(f"- compiled ms per call: {_spread(compiled)}")
    by_row: dict = {}
    for (v, _), (_, config) in zip(compiled, keys):
        by_row.setdefault(config, []).append(v)
    print("  - its median move, signed, per row: " + ", ".join(
        f"{c} {100 * statistics.median(by_row[c]):+.1f}% ({len(by_row[c])} models)" for c in sorted(by_row, key=_row_order)))
    print(f"- eager ms per call: {_spread(moved('eager_ms'))}")
    print(f"- speedup over eager: {_spread(moved('speedup'))}")
    shares = [(_share(pairs_b[cfg], [m]) / _share(pairs_a[cfg], [m]) - 1, f"{m} {cfg}") for cfg, ms in common.items() for m in ms]
    print(f"- share of `all` kept (rows other than `all`): {_spread(shares)}")
    same = sum(bool({c.get("code_hash") for c in a[k]} & {c.get("code_hash") for c in b[k]} - {None}) for k in keys)
    print(f"- the same generated code in both files: {same} of {len(keys)} cells")


def failed_cells(cells_a, cells_b, labels=LABELS) -> None:
    """The cells that did not run ok (a wrong answer, an error; n/a aside) in either file, with each
    file's statuses: a row's share leaves such a model out, so its table would not show that a
    switch gave a wrong answer in one run and not in the other."""
    a, b = stats.processes(cells_a), stats.processes(cells_b)
    failed = sorted(k for k in set(a) | set(b) if any(map(stats.is_failure, a.get(k, []) + b.get(k, []))))
    print(f"- not ok (status other than ok and n/a) in either file: {len(failed)} cell(s)")
    for k in failed:
        texts = []
        for label, cells in zip(labels, (a.get(k, []), b.get(k, []))):
            bad = [c for c in cells if stats.is_failure(c)]
            text = "/".join(c["status"] for c in cells) or "not run"
            texts.append(f"{label} {text}" + (f" ({bad[0]['message']})" if bad and bad[0].get("message") else ""))
        print(f"  - {' '.join(k)}: " + "; ".join(texts))


def compare(earlier: str, later: str, labels=LABELS, table: str | None = None) -> None:
    cells_a, cells_b = (read_results_file(p)["cells"] for p in (earlier, later))
    settings = []
    for path, cells in ((earlier, cells_a), (later, cells_b)):
        if not cells:
            raise UsageError(f"{path} holds no cells")
        held = {(c["device"], c["dtype"], c["mode"]) for c in cells}
        if len(held) != 1:
            raise UsageError(f"{path} holds {len(held)} settings (device, dtype, mode); give files of one setting each")
        settings.append(held.pop())
    (device_a, dtype_a, mode_a), (device_b, dtype_b, mode_b) = settings
    if (device_a, mode_a) != (device_b, mode_b):
        raise UsageError(f"the files hold {device_a} {mode_a} and {device_b} {mode_b} cells; compare files of one device "
                         f"and mode (the dtype may differ)")
    pairs_a, pairs_b = _pairs(cells_a), _pairs(cells_b)
    common = _common(pairs_a, pairs_b)
    if not common:
        raise UsageError(f"{earlier} and {later} share no row paired with `all` on a common model")
    models = sorted({m for ms in common.values() for m in ms})
    if table in (None, "rows"):
        if table is None:
            print(f"## Rows: {earlier} ({labels[0]}) against {later} ({labels[1]})\n")
        if dtype_a != dtype_b:
            print(f"dtype: {dtype_a} ({labels[0]}) against {dtype_b} ({labels[1]}), paired by model\n")
        all_line(cells_a, cells_b, models, labels)
        rows_table(pairs_a, pairs_b, common, labels, (stats.noise_draws(cells_a), stats.noise_draws(cells_b)),
                   same_code_in_both(cells_a, cells_b, common))
    if table in (None, "models"):
        if table is None:
            print("\n## Per model: share of `all` kept\n")
        models_table(pairs_a, pairs_b, common, models, labels, cells=(cells_a, cells_b))
    if table in (None, "cells"):
        if table is None:
            print("\n## Cells\n")
        cells_spread(cells_a, cells_b, pairs_a, pairs_b, common, labels)
        failed_cells(cells_a, cells_b, labels)
