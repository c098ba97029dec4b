"""What the report shows, as plain data computed from results files: the headline beside the
paper's Table 4, each row's share of `all` kept (with intervals), per model, kernel counts, the
noise floor, the profiles' split, and a decision log's remarks.  No formatting here."""
from __future__ import annotations

import math
import random
import statistics

from ..bench import report
from ..bench.configs import by_name

#: The PyTorch 2 paper's Table 4 (float16 HuggingFace models on an A100): geomean speedup over eager.
PAPER = {
    "inference": {"all": 1.91, "no-loop-reorder": 1.91, "no-matmul-templates": 1.85, "no-freezing": 1.85,
                  "no-pattern-matching": 1.83, "no-cudagraphs": 1.81, "no-fusion": 1.68, "no-inlining": 1.58,
                  "no-fusion-no-inlining": 0.80},
    "training": {"all": 1.45, "no-loop-reorder": 1.28, "no-matmul-templates": 1.41, "no-freezing": 1.45,
                 "no-pattern-matching": 1.45, "no-cudagraphs": 1.37, "no-fusion": 1.27, "no-inlining": 1.31,
                 "no-fusion-no-inlining": 0.59},
}
PAPER_LINK = "https://pytorch.org/assets/pytorch2-2.pdf"


def groups(cells: list[dict]) -> dict[tuple, list[dict]]:
    """{(suite, device, dtype, mode): cells}: one section of the report each."""
    out: dict = {}
    for c in cells:
        out.setdefault((c["suite"], c["device"], c["dtype"], c["mode"]), []).append(c)
    return out


def processes(cells) -> dict:
    """{(model, config): [cell, ...]}: each row's processes on each model."""
    reps: dict = {}
    for c in cells:
        reps.setdefault((c["model"], c["config"]), []).append(c)
    return reps


def pairs_with_all(cells) -> dict:
    """{config: {model: [(row speedup, same-run `all` speedup), ...]}} (``report.paired_with_all``)."""
    reps = processes(report.apply_baseline(cells))
    out: dict = {}
    for (m, config), cs in reps.items():
        pairs = report.paired_with_all(cs, reps.get((m, "all"), []))
        if pairs and config != "all":
            out.setdefault(config, {})[m] = pairs
    return out


def same_code(cells) -> set:
    """{(model, config)} whose processes generated `all`'s very code (the bench report's "same code")."""
    reps = processes(cells)
    return {(m, config) for (m, config), cs in reps.items()
            if config != "all" and report.same_code_as_all(cs, reps.get((m, "all"), []))}


def share(pairs, models, rng=None) -> float:
    """Geomean over ``models`` of speedup(row) / speedup(same-run `all`)."""
    row, base = report.draw_pairs(pairs, models, rng)
    return row / base


def bootstrap(statistic, models, seed) -> tuple[float, float] | None:
    """95% interval of ``statistic(models, rng)``, resampling models (and, in the statistic, each
    model's process pairs); None where there is nothing to resample (one model, one process)."""
    rng = random.Random(seed)
    values = [statistic([rng.choice(models) for _ in models], rng) for _ in range(report.BOOTSTRAP)]
    return report._percentiles([v for v in values if v is not None and math.isfinite(v)])


def kept_share(pairs_of_row: dict, seed: str) -> dict:
    """{point, lo, hi, models, processes}: the geomean over models of speedup(row) / speedup(all);
    lo and hi are None with a single pair (no interval to give)."""
    models = sorted(pairs_of_row)
    n = sum(len(p) for p in pairs_of_row.values())
    ci = bootstrap(lambda pick, rng: share(pairs_of_row, pick, rng), models, seed) if n > 1 else None
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


noise_floor = report.noise_floor


def section(cells: list[dict], baseline: str = "pooled") -> dict:
    """One setting's views: {key, title, rows, models, per_model, kernels, noise}."""
    key = (cells[0]["suite"], cells[0]["device"], cells[0]["dtype"], cells[0]["mode"])
    summary = report.summary_rows(cells, baseline)
    pairs = pairs_with_all(cells)
    same = same_code(cells)
    paper = PAPER.get(key[3], {}) if key[1].startswith("cuda") else {}
    noise = noise_floor(cells)
    rows = []
    for r in summary:
        config = r["config"]
        kept = None
        if config == "all" and r["ok"]:
            kept = {"point": 1.0, "lo": None, "hi": None, "models": r["ok"], "processes": None}
        elif config in pairs:
            kept = kept_share(pairs[config], config)
        row = {"config": config, "source": r["source"], "doc": by_name(config).doc, "na": r["na"],
               "na_message": r["na_message"], "ok": r["ok"], "models": r["models"], "failed": r["failed"],
               "speedup": r["speedup"] if r["ok"] else None, "speedup_lo": r["speedup_lo"],
               "speedup_hi": r["speedup_hi"], "kept": kept, "significant": r["significant"],
               "same_code": r["same_code"], "paired": r["paired"],
               "all_same_code": bool(r["paired"]) and r["same_code"] == r["paired"],
               "paper": paper.get(config), "paper_kept": paper[config] / paper["all"] if config in paper else None,
               "kernels": r["kernels"]}
        row["fusion_part"] = fusion_part(pairs, config) if config.startswith("no-fusion-") and \
            config != "no-fusion-no-inlining" else None
        row["within_noise"] = bool(noise and kept and config != "all" and abs(kept["point"] - 1) <= noise["median"])
        rows.append(row)
    order = [r["config"] for r in rows]
    models = sorted({c["model"] for c in cells})
    per_model = {config: {m: {"share": share(pairs[config], [m]), "same_code": (m, config) in same}
                          for m in pairs[config]} for config in order if config in pairs}
    kernels: dict = {}
    for c in cells:
        if c.get("status") == "ok" and c.get("cell_repeat", 0) == 0 and c.get("kernels") is not None:
            kernels.setdefault(c["config"], {})[c["model"]] = c["kernels"]
    suite, device, dtype, mode = key
    return {"key": key, "title": f"{suite} suite, {device}, {dtype}, {mode}", "rows": rows, "models": models,
            "per_model": per_model, "kernels": {c: kernels[c] for c in order if c in kernels}, "noise": noise,
            "baseline": baseline, "repeats": max((r["repeats"] for r in summary), default=0),
            "has_paper": bool(paper)}


#: What a run cost (``report --table cost``): the split its end printed.
cost = report.cost


def profile_split(cells: list[dict], top: int = 8) -> dict | None:
    """``explain``'s split of each row's change, where the cells hold kernel profiles, else None;
    with each row's ``top`` lines, the groups that moved most (``by_fusion``) and every generated
    kernel's bytes and time per call (``points``, for the bytes-vs-time plot)."""
    from ..explain import by_fusion, explain
    from ..profile import measured_bandwidth

    if not any(c.get("status") == "ok" and c.get("profile") for c in cells):
        return None
    result = explain(cells)
    for data in result["rows"].values():
        data["top"] = sorted((dict(m, model=model) for model, s in data["models"].items() for m in s["movers"]),
                             key=lambda m: -abs(m["delta_ms"]))[:top]
    result["by_fusion"] = by_fusion(result, top)
    result["points"] = [{"config": c["config"], "ms": k["ms"] / k["calls"], "bytes": k["bytes"]}
                        for c in cells if c.get("status") == "ok" and c.get("profile")
                        for k in c["profile"]["kernels"] if k["kind"] == "generated" and k.get("bytes") and k["calls"]]
    result["copy_gb_per_s"] = measured_bandwidth(cells)["copy_gb_per_s"]
    return result


def remarks(records: list[dict]) -> dict:
    """A decision log as opt-viewer-style remarks: every fusion (fused, vetoed) and refusal, and every
    inlining decision, hottest first (memory score; refusals and inlinings carry none)."""
    out = []
    for r in records:
        if r["decision"] in ("fusion", "refusal"):
            status = "fused" if r["result"] == "fused" else "vetoed" if r["result"].startswith("vetoed") else "refused"
            out.append({"status": status, "n": r.get("n"), "graph": r["graph"], "kind": r["kind"],
                        "what": f"{r['node1']} + {r['node2']}", "ops": sorted({o.split(':', 1)[-1] for o in r["ops1"] + r["ops2"]}),
                        "reason": r.get("reason") or r["result"], "score": r.get("score")})
        elif r["decision"] == "inline":
            status = "vetoed" if r["result"].startswith("realized") else "left"
            out.append({"status": status, "n": r.get("n"), "graph": r["graph"], "kind": "inline",
                        "what": r["fx_node"], "ops": [r["op"]], "reason": r["result"], "score": None})
    out.sort(key=lambda m: (-(m["score"] or 0), m["n"] if m["n"] is not None else 1 << 30))
    counts: dict = {}
    for m in out:
        counts[m["status"]] = counts.get(m["status"], 0) + 1
    return {"remarks": out, "counts": counts}
