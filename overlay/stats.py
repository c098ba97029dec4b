"""The study's statistics, shared by the side that measures (bench) and the sides that read
(report, compare, explain, bisect): each model's eager baseline, a row's processes paired with its
run's `all`, the share of `all` kept, bootstrap intervals, the noise floor, and the summary rows.
Plain data in, plain data out; imports only the rows' definitions and the results file's keys."""
from __future__ import annotations

import math
import random
import statistics

from .rows import CONFIGS, by_name, region_label

BOOTSTRAP = 2000  # resamples for the 95% intervals


def percentiles(values: list[float]) -> tuple[float, float] | None:
    """The 2.5th and 97.5th percentiles of bootstrap resamples; None for fewer than 20 of them."""
    values = sorted(v for v in values if v is not None)
    if len(values) < 20:
        return None
    return values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def mean_interval(values: list[float], seed: str) -> tuple[float, float] | None:
    """A 95% bootstrap interval of the mean of ``values`` (seeded: the same figures every read);
    None for fewer than 2 values, which have nothing to resample."""
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    return percentiles([mean([rng.choice(values) for _ in values]) for _ in range(BOOTSTRAP)])


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


def ordered_rows(cells):
    """The named rows in their order, then rows of fusion kinds together (no-fusion-KIND+KIND)."""
    present = {c["config"] for c in cells}
    return [name for name in CONFIGS if name in present] + sorted(present - set(CONFIGS))


def settings(cells):
    """Cells split by (suite, device, dtype, mode): one table per setting."""
    out = {}
    for c in cells:
        out.setdefault((c["suite"], c["device"], c["dtype"], c["mode"]), []).append(c)
    return out


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


def same_code_moves(cells: list[dict]) -> list[float]:
    """The noise floor the results themselves show, sorted: within a run, two processes of one model
    that generated identical code (any two rows, `all` included) ran the same program, so how far
    their compiled times differ (max/min - 1, one per pair) is measurement noise, not an effect."""
    groups: dict = {}
    for c in cells:
        if c["status"] == "ok" and c.get("code_hash"):
            key = (c["suite"], c["device"], c["dtype"], c["mode"], c["model"], run_of(c), c["code_hash"])
            groups.setdefault(key, []).append(c["compiled_ms"])
    return sorted(max(a, b) / min(a, b) - 1 for ms in groups.values() for i, a in enumerate(ms) for b in ms[i + 1:])


def compiled_from(cell: dict) -> str | None:
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
            mates = [a for a in mates if compiled_from(a) == compiled_from(r)] or mates
            pairs.append((r["speedup"], geomean([a["speedup"] for a in mates])))
    return pairs


def draw_pairs(pairs: dict, models: list[str], rng: random.Random | None = None,
               noise: list[float] = ()) -> tuple[float, float]:
    """(geomean over ``models`` of the row's speedup, the same of its paired `all`), each model's
    figures a geomean over its pairs; with ``rng``, each model's pairs drawn with replacement (the
    caller draws the models), and a model that rests on one pair also draws the noise between two
    processes from ``noise`` (``noise_draws``): one pair has no spread of its own to resample."""
    row, base = [], []
    for m in models:
        picked = pairs[m] if rng is None else [rng.choice(pairs[m]) for _ in pairs[m]]
        jitter = math.exp(rng.choice(noise)) if rng is not None and noise and len(pairs[m]) == 1 else 1.0
        row.append(geomean([p[0] for p in picked]) * jitter)
        base.append(geomean([p[1] for p in picked]))
    return geomean(row), geomean(base)


def summary_rows(cells: list[dict], baseline: str = "pooled") -> list[dict]:
    """One row per (setting, config): the geomean speedup over eager and the share of `all`'s
    speedup the row keeps, each with a bootstrap 95% interval, how many models' generated code
    equals `all`'s, and whether the change is a claim (``significant``, the star; ``claim`` says
    why not otherwise).

    A model's speedup is the geomean over its cell repeats (``--cell-repeats``, each its own process).
    The interval resamples models, and within each model its repeats, with replacement: it holds the
    spread between models and, with repeats, the noise between processes; a model with one process
    of the row draws that noise from the run's same-code pairs instead (``draw_pairs``: on the CPU
    main command one process per cell starred no-fusion-vertical, and three did not).  The share
    kept is paired by model and by run (``paired_with_all``, ``kept_share``); ``vs_all`` (the
    difference of the two speedups) stays in the rows for the CSV."""
    cells = apply_baseline(cells, baseline)
    out = []
    for setting, group in settings(cells).items():
        table = _Setting(setting, group)
        noise, draws = noise_floor(group), noise_draws(group)
        out += [_summary_row(table, name, baseline, noise, draws) for name in ordered_rows(group)]
    return out


class _Setting:
    """One setting's cells by (model, row), and what the summary asks of them."""

    def __init__(self, setting: tuple, group: list[dict]):
        self.setting, self.models = setting, sorted({c["model"] for c in group})
        self.reps = processes(group)
        self.base_ok = [m for m in self.models if self.speeds(m, "all")]

    def cells(self, model: str, config: str) -> list[dict]:
        return self.reps.get((model, config), [])

    def speeds(self, model: str, config: str) -> list[float]:
        return [r["speedup"] for r in self.cells(model, config) if r["status"] == "ok"]

    def kind_absent(self, model: str, kinds: str) -> bool:
        """True if every logged `all` process of the model made no fusion of ``kinds`` (a comma list)."""
        logs = [r["fusions"] for r in self.cells(model, "all") if r["status"] == "ok" and "fusions" in r]
        return bool(logs) and not any(f.get(k) for f in logs for k in kinds.split(","))


def _summary_row(t: _Setting, name: str, baseline: str, noise: dict | None, draws: list[float]) -> dict:
    suite, device, dtype, mode = t.setting
    row_cells = [r for m in t.models for r in t.cells(m, name)]
    ok_models = [m for m in t.models if t.speeds(m, name)]
    paired = [m for m in ok_models if m in t.base_ok]
    same = [m for m in paired if same_code_as_all(t.cells(m, name), t.cells(m, "all"))]
    hashed = [m for m in paired if generated_code(t.cells(m, name)) and generated_code(t.cells(m, "all"))]
    kind = by_name(name).switches.get("no_fuse")
    pairs = {m: paired_with_all(t.cells(m, name), t.cells(m, "all")) for m in paired}
    pg, pb = draw_pairs(pairs, paired) if paired else (None, None)
    rng = random.Random(f"{suite}{device}{dtype}{mode}{name}")  # the same intervals every time
    boot, boot_diff = [], []
    for _ in range(BOOTSTRAP if ok_models else 0):
        pick = [rng.choice(ok_models) for _ in ok_models]
        boot.append(geomean([geomean([rng.choice(t.speeds(m, name)) for _ in t.speeds(m, name)]) for m in pick]))
        if paired and name != "all":
            g, b = draw_pairs(pairs, [rng.choice(paired) for _ in paired], rng, draws)
            boot_diff.append(g - b)
    # one process of one model has nothing to resample: its "interval" would be the point itself
    ci = percentiles(boot) if sum(len(t.speeds(m, name)) for m in ok_models) > 1 else None
    n_pairs = sum(map(len, pairs.values()))
    ci_diff = percentiles(boot_diff) if n_pairs > 1 else None
    kept = kept_share(pairs, name, draws) if paired and name != "all" else None
    busy = sum(bool(c.get("busy")) for m in paired for c in t.cells(m, name) + t.cells(m, "all"))
    within = bool(noise and kept and abs(kept["point"] - 1) <= noise["median"])
    statuses = [r["status"] for r in row_cells]
    return dict(
        suite=suite, device=device, dtype=dtype, mode=mode, config=name, source=by_name(name).source,
        baseline=baseline, models=len(t.models), ok=len(ok_models),
        repeats=max((len(t.cells(m, name)) for m in t.models), default=0),
        na=bool(statuses) and all(s == "n/a" for s in statuses),
        na_message=next((r.get("message", "") for r in row_cells if r["status"] == "n/a"), ""),
        failed=[f"{r['model']}: {r['status']}" for r in row_cells if is_failure(r)],
        speedup=geomean([geomean(t.speeds(m, name)) for m in ok_models]), speedup_lo=ci and ci[0], speedup_hi=ci and ci[1],
        vs_all=(pg - pb) if pg and pb and name != "all" else None, paired=len(paired),
        vs_all_lo=ci_diff and ci_diff[0], vs_all_hi=ci_diff and ci_diff[1],
        kept=kept and kept["point"], kept_lo=kept and kept["lo"], kept_hi=kept and kept["hi"], pairs=n_pairs,
        busy=busy, within_noise=within,
        **claim(kept, n_pairs, len(same) if hashed else None, len(paired), within, busy),
        same_code=len(same) if hashed else None,
        # kind rows: models whose `all` made no fusion of the kind
        nothing_to_take_out=sum(isinstance(kind, str) and t.kind_absent(m, kind) for m in paired),
        kernels=sum(r.get("kernels", 0) for r in row_cells if r["status"] == "ok" and r.get("cell_repeat", 0) == 0),
        compile_s=mean_or_zero([r.get("compile_s", 0) for r in row_cells if r["status"] == "ok"]),
    )


def claim(kept: dict | None, n_pairs: int, same: int | None, paired: int, within_noise: bool, busy: int) -> dict:
    """{significant, claim}: a row's change is starred only when its share of `all` kept has an
    interval that excludes 1 and nothing says it could be noise.  ``claim`` names what stopped a
    star: ``same code`` (most models generated `all`'s very code), ``interval`` (it holds 1), or,
    for an interval that excludes 1, ``few pairs`` (under ``MIN_PAIRS_FOR_A_CLAIM``), ``noise``
    (within the noise floor the run measured) or ``busy`` (a process it rests on ran while the
    machine took its cores away: ``bench/steady.py``)."""
    if kept is None:
        return {"significant": False, "claim": None}
    why = ("same code" if same is not None and 2 * same > paired else
           "interval" if kept["lo"] is None or kept["lo"] <= 1 <= kept["hi"] else
           "few pairs" if n_pairs < MIN_PAIRS_FOR_A_CLAIM else
           "noise" if within_noise else
           "busy" if busy else None)
    return {"significant": why is None, "claim": why or "star"}


def mean_or_zero(values):
    return sum(values) / len(values) if values else 0.0


def same_code_pairs(cells) -> list[tuple[float, float]]:
    """(compiled ms, compiled ms) of every two processes of one run and model that generated
    identical code: the noise between processes, with nothing else to tell them apart."""
    by: dict = {}
    for c in cells:
        if c.get("status") == "ok" and c.get("code_hash"):
            by.setdefault((c["model"], run_of(c), c["code_hash"]), []).append(c["compiled_ms"])
    return [(a, b) for ms in by.values() for i, a in enumerate(ms) for b in ms[i + 1:]]


def noise_draws(cells) -> list[float]:
    """log(a / b), both ways, of every same-code pair: what a share of `all` resting on one process
    of the row and one of `all` may be off by (``draw_pairs``)."""
    logs = [math.log(a / b) for a, b in same_code_pairs(cells) if a > 0 and b > 0]
    return logs + [-x for x in logs]


def noise_floor(cells) -> dict | None:
    """How far two processes of one run and model that generated identical code differ in compiled
    time per call (max/min - 1): {median, max, pairs}, or None where no two did."""
    diffs = sorted(max(a, b) / min(a, b) - 1 for a, b in same_code_pairs(cells))
    if not diffs:
        return None
    return {"median": statistics.median(diffs), "max": diffs[-1], "pairs": len(diffs)}


THIN_NOISE_PAIRS = 3  # fewer same-code pairs than this: the floor is a guess, and the run says so


def processes(cells) -> dict:
    """{(model, config): [cell, ...]}: each row's processes on each model."""
    reps: dict = {}
    for c in cells:
        reps.setdefault((c["model"], c["config"]), []).append(c)
    return reps


def pairs_with_all(cells) -> dict:
    """{config: {model: [(row speedup, same-run `all` speedup), ...]}} (``paired_with_all``)."""
    reps = processes(apply_baseline(cells))
    out: dict = {}
    for (m, config), cs in reps.items():
        pairs = paired_with_all(cs, reps.get((m, "all"), []))
        if pairs and config != "all":
            out.setdefault(config, {})[m] = pairs
    return out


def same_code(cells) -> set:
    """{(model, config)} whose processes generated `all`'s very code (the tables' "same code")."""
    reps = processes(cells)
    return {(m, config) for (m, config), cs in reps.items()
            if config != "all" and same_code_as_all(cs, reps.get((m, "all"), []))}


def share(pairs, models, rng=None, noise=()) -> float:
    """Geomean over ``models`` of speedup(row) / speedup(same-run `all`)."""
    row, base = draw_pairs(pairs, models, rng, noise)
    return row / base


def bootstrap(statistic, models, seed) -> tuple[float, float] | None:
    """95% interval of ``statistic(models, rng)``, resampling models (and, in the statistic, each
    model's process pairs); None where there is nothing to resample (one model, one process)."""
    rng = random.Random(seed)
    values = [statistic([rng.choice(models) for _ in models], rng) for _ in range(BOOTSTRAP)]
    return percentiles([v for v in values if v is not None and math.isfinite(v)])


def kept_share(pairs_of_row: dict, seed: str, noise: list[float] = ()) -> dict:
    """{point, lo, hi, models, processes}: the geomean over models of speedup(row) / speedup(all);
    lo and hi are None with a single pair (no interval to give).  ``noise``: ``draw_pairs``."""
    models = sorted(pairs_of_row)
    n = sum(len(p) for p in pairs_of_row.values())
    ci = bootstrap(lambda pick, rng: share(pairs_of_row, pick, rng, noise), models, seed) if n > 1 else None
    return {"point": share(pairs_of_row, models), "lo": ci and ci[0], "hi": ci and ci[1], "models": len(models),
            "processes": n}


def fusion_part(pairs: dict, kind_config: str) -> dict | None:
    """{point, lo, hi, models}: the part of fusion's worth a fusion kind carries, log(share kept
    without the kind) / log(share kept without any fusion), over the models that ran both rows
    (1: the kind is all of fusion's worth; 0: none of it)."""
    models = sorted(set(pairs.get(kind_config, {})) & set(pairs.get("no-fusion", {})))
    if not models:
        return None

    def part(pick, rng=None):
        loss = math.log(share(pairs["no-fusion"], pick, rng))
        return math.log(share(pairs[kind_config], pick, rng)) / loss if loss < 0 else None

    ci = bootstrap(part, models, kind_config)
    return {"point": part(models), "lo": ci and ci[0], "hi": ci and ci[1], "models": len(models)}


def regions(rows: list[dict]) -> list[dict]:
    """Where a row's loss sits (``bench --regions``): for each row also run scoped (``ROW@REGION``),
    its loss (1 - share of `all` kept) and each region's, the part of the row's loss each carries,
    and whether the regions' losses add up to the row's.  They need not: a fusion across a region's
    edge is vetoed unscoped and kept in both scoped runs, and effects interact."""
    out = []
    for r in rows:
        name = r["config"]
        parts = [s for s in rows if s["config"].startswith(name + "@") and s.get("kept") is not None
                 and (s["suite"], s["device"], s["dtype"], s["mode"]) == (r["suite"], r["device"], r["dtype"], r["mode"])]
        if "@" in name or not parts or r.get("kept") is None:
            continue
        loss = 1 - r["kept"]
        regions_ = [{"region": region_label(s["config"]), "kept": s["kept"], "kept_lo": s["kept_lo"],
                     "kept_hi": s["kept_hi"], "loss": 1 - s["kept"], "significant": s["significant"],
                     "part": (1 - s["kept"]) / loss if abs(loss) > 1e-9 else None} for s in parts]
        total = sum(p["loss"] for p in regions_)
        out.append({"setting": (r["suite"], r["device"], r["dtype"], r["mode"]), "row": name, "kept": r["kept"],
                    "kept_lo": r["kept_lo"], "kept_hi": r["kept_hi"], "significant": r["significant"], "loss": loss,
                    "regions": regions_,
                    "sum_loss": total, "adds_up": abs(total - loss) <= max(0.1 * abs(loss), 0.005)})
    return out
