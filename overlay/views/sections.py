"""What the report shows, as plain data computed from results files: the headline beside the
paper's Table 4, each row's share of `all` kept (with intervals), per model, kernel counts, the
noise floor, the profiles' split, and a decision log's remarks.  No formatting here."""
from __future__ import annotations

import statistics

from ..results import all_cuts, device_names, pieces
from ..rows import by_name
from ..stats import fusion_part, noise_floor, pairs_with_all, regions, same_code, same_code_moves, share, summary_rows

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


def section(cells: list[dict], baseline: str = "pooled") -> dict:
    """One setting's views: {key, title, rows, models, per_model, kernels, noise}."""
    key = (cells[0]["suite"], cells[0]["device"], cells[0]["dtype"], cells[0]["mode"])
    summary = summary_rows(cells, baseline)
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
        elif r["kept"] is not None:
            kept = {"point": r["kept"], "lo": r["kept_lo"], "hi": r["kept_hi"], "models": r["paired"],
                    "processes": r["pairs"]}
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
        row["within_noise"], row["claim"], row["busy"] = r["within_noise"], r["claim"], r["busy"]
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
            "has_paper": bool(paper), "regions": regions(summary),
            "busy": sum(bool(c.get("busy")) for c in cells), "cells": len(cells),
            "disturbed": sum(c.get("disturbed", 0) for c in cells)}


#: What a run cost (``report --table cost``): the split its end printed.
def cost(cells: list[dict], meta: dict | None = None) -> dict:
    """What the cells cost, in seconds summed over them: autotuning, the rest of compiling, timing,
    waiting for the device (``--jobs``), model set-up (build, inputs, the eager reference), other
    in-cell work (accuracy check, census), process start and exit, cells that died; each cell's start
    + set-up; the shortest eager step of a model; the run's wall (an interrupted run's too, from its
    pieces), jobs and the cells a piece's end cut from ``meta``; the seconds the cells had the device
    (``held_s``, where every cell recorded it: near the wall, the device lock set the pace); how far
    processes that ran identical code moved (``same_code_moves``: what overlapping costs in noise).  The one
    split that the end of a run prints (``time_split``) and ``report --table cost`` and the page show."""
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
    cuts = all_cuts(meta)  # cells a piece's end stopped: no row, their seconds all lost
    cut = sum(c.get("cut_s") or 0 for c in cuts)
    wall = sum(p["wall_s"] for p in pieces(meta)) or None  # an interrupted run's file has no wall_s yet
    held = [c["held_s"] for c in ran if isinstance(c.get("held_s"), (int, float))]
    moves = same_code_moves(cells)
    return {"device": ", ".join(sorted(device_names(meta))) or None, "jobs": meta.get("jobs", 1), "wall_s": wall,
            "cells": len(ran), "busy_s": total("cell_s") + sum(start) + died + cut, "cut_s": cut, "cuts": len(cuts),
            "held_s": sum(held) if held and len(held) == len(ran) else None, "autotune_s": total("autotune_s"),
            "autotune_split": ((total("autotune_templates_s"), total("autotune_configs_s"))
                               if ran and all("autotune_templates_s" in c for c in ran) else None),
            "compile_s": total("compile_s") - total("autotune_s"), "timing_s": total("timing_s"),
            "wait_s": total("wait_s"), "setup_s": total("setup_s"),
            "other_s": total("cell_s") - total("compile_s") - total("timing_s") - total("setup_s") - total("wait_s"),
            "start_s": sum(start), "died_s": died,
            "overhead_median_s": statistics.median(overhead) if overhead else None,
            "overhead_max_s": overhead[-1] if overhead else None,
            "same_code": (len(moves), statistics.median(moves), moves[-1]) if moves else None,
            "shortest_eager": min(((statistics.median(v), m) for m, v in eager.items()), default=None)}


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
    """A decision log as opt-viewer-style remarks: every fusion (fused, vetoed) and refusal, every
    switch's veto, and every inlining decision, hottest first (memory score; the rest carry none)."""
    out = []
    for r in records:
        if r["decision"] in ("fusion", "refusal", "veto"):
            status = "fused" if r["result"] == "fused" else "vetoed" if r["result"].startswith("vetoed") else "refused"
            ops = r.get("ops1", []) + r.get("ops2", [])
            out.append({"status": status, "n": r.get("n"), "graph": r["graph"], "kind": r["kind"],
                        "what": f"{r['node1']} + {r['node2']}" if r["node1"] else f"every {r['kind']} grouping",
                        "ops": sorted({o.split(':', 1)[-1] for o in ops}),
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
