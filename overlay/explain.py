"""``python -m inductor_ablate explain RESULTS [--row ROW] [--model M] [--top N] [--json F]``: why each
row costs what it costs, from the kernel profiles ``bench --profile`` records.  A reader of the
results file only: it measures nothing.

For each row against ``all``, per model: the timed change in step time (``measured_ms``) and its
parts from the profiles: generated kernels, library kernels and gaps (step time with no kernel
running: launches, Python, waiting), with the change in bytes moved and in launches per step.

Generated kernels are matched by what they compute, not by name or ops: each profiled kernel names
the FX nodes whose buffers it writes, and a *group* is the smallest set of ``all``'s kernels and
the row's kernels that compute the same nodes (the connected parts of kernels joined by shared
nodes).  Every kernel is in one group, so the groups' changes add up to the generated change.

Closure: the parts come from a profiled pass, the measured change from the timing.  A side whose
profiled step is more than 2% off its timed step (the profiler's own cost: CUPTI adds a few percent
under CUDA graphs) is *scaled* (``_side``: its gaps taken from the timed step, the factor printed;
``raw_parts_ms`` keeps the split as profiled); a split whose parts still miss the timed change by
more than 10% (and 0.02 ms) is marked ``!``.  Bandwidths are held against the copy bandwidth the
profiled cells measured (``mark``): above it, a kernel is cache-resident when the bytes beyond the
last-level cache still fit it, else an estimate error.
"""
from __future__ import annotations

from collections import defaultdict

from .errors import UsageError
from .profile import measured_bandwidth
from .records import Profile
from .stats import mean as _mean, mean_interval

PARTS = ("measured_ms", "generated_ms", "library_ms", "gaps_ms")
EXTRA = ("bytes_mb", "launches")
CLOSE_SHARE, CLOSE_MS = 0.10, 0.02  # parts within this share (or this many ms) of the timed change
SCALE_OFF = 0.02  # a side's profiled step this far off its timed step is scaled (the profiler's own cost)


def _profiled(cells: list[dict]) -> dict:
    """{(model, config): [ok cells with a profile]} (several with --cell-repeats)."""
    out = defaultdict(list)
    for c in cells:
        if c.get("status") == "ok" and c.get("profile"):
            out[(c["model"], c["config"])].append(c)
    return out


def rate(nbytes: float | None, ms: float) -> float | None:
    """GB/s of ``nbytes`` moved in ``ms``."""
    return nbytes / (ms * 1e6) if nbytes and ms > 0 else None


def _profile(cell: dict) -> Profile:
    return Profile.from_dict(cell["profile"], f"{cell['model']}/{cell['config']}'s profile")


def _kernels(cells: list[dict]) -> dict:
    """{(kind, name): kernel} per step, averaged over the cells: each kernel its own line (a
    kernel's name is unique in its graph; the profile already sums its calls)."""
    out: dict = {}
    for c in cells:
        for k in _profile(c).kernels:
            row = out.setdefault((k.kind, k.name), {
                "name": k.name, "kind": k.kind, "ops": k.ops, "ms": 0.0, "calls": 0.0, "bytes": k.bytes,
                "nodes": k.nodes, "inlined": k.inlined or [], "module": k.module})
            row["ms"] += k.ms / len(cells)
            row["calls"] += k.calls / len(cells)
    for k in out.values():
        k["bytes_step"] = k["bytes"] * k["calls"] if k["bytes"] is not None else None
        k["gb_per_s"] = rate(k["bytes_step"], k["ms"])
    return out


def mark(kernel: dict, bandwidth: dict) -> str | None:
    """Where a kernel's GB/s passes the measured copy bandwidth: ``cache`` when the bytes beyond
    what the last-level cache can hold still fit that bandwidth (its inputs can sit in the cache
    from the kernel before, its writes in a write-back cache); ``estimate error`` when even they
    do not: no kernel moves more than DRAM can beyond its cache."""
    gbps, copy = kernel.get("gb_per_s"), bandwidth.get("copy_gb_per_s")
    if not gbps or not copy or gbps <= copy:
        return None
    per_call = kernel.get("bytes") or 0
    beyond = max(0, per_call - (bandwidth.get("llc_bytes") or 0))
    return "cache" if beyond * gbps / per_call <= copy else "estimate error"


def _owned(k: dict) -> set:
    return set(k["nodes"] or ()) - set(k["inlined"] or ())


def groups(mine: dict, base: dict, fusions: list[dict] | None = None) -> list[dict] | None:
    """The generated kernels of the row (``mine``) and of ``all`` (``base``) in groups that compute
    the same FX nodes (see the module docstring); None when a profile names no nodes (a results
    file from before nodes were recorded).  ``fusions``: ``all``'s fusion decisions, to name those
    whose nodes a group holds."""
    gen = [("all", k) for k in base.values() if k["kind"] == "generated"] + \
          [("row", k) for k in mine.values() if k["kind"] == "generated"]
    if any(k["nodes"] is None for _, k in gen):
        return None
    parent = list(range(len(gen)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    holder: dict = {}
    for side in ("all", "row"):
        owners: dict = defaultdict(list)  # node -> this side's kernels writing its buffer
        inliners: dict = defaultdict(list)  # node -> this side's kernels recomputing it inline
        for i, (s, k) in enumerate(gen):
            if s == side:
                owned = _owned(k)
                for node in k["nodes"]:
                    (owners if node in owned else inliners)[node].append(i)
        for node in set(owners) | set(inliners):
            for i in owners.get(node) or inliners[node]:  # a node no kernel owns is held where it is inlined
                if node in holder:
                    parent[find(i)] = find(holder[node])
                else:
                    holder[node] = i
    parts: dict = defaultdict(list)
    for i in range(len(gen)):
        parts[find(i)].append(gen[i])
    out = []
    for members in parts.values():
        sides = {s: [k for side, k in members if side == s] for s in ("all", "row")}
        nodes = sorted(set().union(*(set(k["nodes"]) for _, k in members)))
        g = {"all": [k["name"] for k in sides["all"]], "row": [k["name"] for k in sides["row"]], "nodes": nodes,
             "module": _common([k["module"] for _, k in members]),
             "inlined_in_all": len(set().union(*(set(k["inlined"] or ()) for k in sides["all"])))}
        for s in ("all", "row"):
            g[f"{s}_ms"] = sum(k["ms"] for k in sides[s])
            g[f"{s}_calls"] = sum(k["calls"] for k in sides[s])
            known = [k["bytes_step"] for k in sides[s] if k["bytes_step"] is not None]
            g[f"{s}_bytes"] = sum(known) if known else None
        g["delta_ms"] = g["row_ms"] - g["all_ms"]
        g["delta_bytes"] = (g["row_bytes"] or 0) - (g["all_bytes"] or 0)
        held = set(nodes)
        g["fusions"] = [f["n"] for f in fusions or () if f.get("result", "fused") == "fused" and f["nodes"]
                        and set(f["nodes"]) <= held]
        g["kinds"] = sorted({f["kind"] for f in fusions or () if f["n"] in g["fusions"]})
        out.append(g)
    out.sort(key=lambda g: -abs(g["delta_ms"]))
    return out


def _common(paths):
    from .scope import common_module

    return common_module([p for p in paths if p is not None])


def _line(kind: str, how: str, now: list[dict], was: list[dict], bandwidth: dict, group: dict | None = None) -> dict:
    """One line of the kernels that moved: its own kernels' ms, bytes and GB/s, never another's."""
    side = now or was
    ms = sum(k["ms"] for k in side)
    known = [k["bytes_step"] for k in side if k.get("bytes_step") is not None]
    line = {"kind": kind, "how": how, "delta_ms": sum(k["ms"] for k in now) - sum(k["ms"] for k in was),
            "name": " + ".join(k["name"] for k in side), "ops": sorted({op for k in side for op in k["ops"]}),
            "ms": ms, "gb_per_s": rate(sum(known), ms) if known else None,
            "was": [k["name"] for k in was], "now": [k["name"] for k in now]}
    if len(side) > 1:
        line["kernels"] = [{"name": k["name"], "ms": k["ms"], "calls": k["calls"], "bytes": k.get("bytes"),
                            "gb_per_s": k.get("gb_per_s"), "mark": mark(k, bandwidth)} for k in side]
    marks = {mark(k, bandwidth) for k in side}
    line["mark"] = next((m for m in ("estimate error", "cache") if m in marks), None)  # the worse first
    if group is not None:
        line.update(module=group["module"], fusions=group["fusions"], nodes=len(group["nodes"]))
    return line


def _movers(mine: dict, base: dict, grouped: list[dict] | None, bandwidth: dict) -> list[dict]:
    """A line per group of generated kernels (or, without nodes, per kernel) and per library kernel."""
    lines = []
    if grouped is not None:
        for g in grouped:
            now = [mine[("generated", n)] for n in g["row"]]
            was = [base[("generated", n)] for n in g["all"]]
            how = "added" if not was else "removed" if not now else "changed" if len(now) == len(was) else \
                "split" if len(now) > len(was) else "merged"
            lines.append(_line("generated", how, now, was, bandwidth, g))
    else:
        for k in mine.values():
            if k["kind"] == "generated":
                lines.append(_line("generated", "row", [k], [], bandwidth))
        for k in base.values():
            if k["kind"] == "generated":
                lines.append(_line("generated", "all", [], [k], bandwidth))
    for key in sorted({k for k in (*mine, *base) if k[0] == "library"}):
        now, was = mine.get(key), base.get(key)
        how = "added" if was is None else "removed" if now is None else "changed"
        lines.append(_line("library", how, [now] if now else [], [was] if was else [], bandwidth))
    lines.sort(key=lambda m: -abs(m["delta_ms"]))
    return lines


def _side(cells: list[dict]) -> dict:
    """One config's profiled parts per step, averaged over its cells.  A side whose profiled step is
    more than SCALE_OFF off its timed step is *scaled*: its kernels keep their profiled times (the
    device's own clock) and its gaps become the timed step less the busy time, since a profiler's
    cost lands between kernels; where the kernels alone outlast the timed step, every part is scaled
    by timed / profiled instead.  ``scale``: the factor applied to the gaps (or to every part)."""
    profiles = [(_profile(c), c) for c in cells]
    parts = {name: _mean([p.totals()[name] for p, _ in profiles]) for name in ("generated_ms", "library_ms", "gaps_ms")}
    timed = _mean([p.timed_ms if p.timed_ms is not None else c["compiled_ms"] for p, c in profiles])
    profiled = _mean([p.step_ms for p, _ in profiles])
    busy = _mean([p.busy_ms for p, _ in profiles])
    out = {**parts, **{f"raw_{n}": v for n, v in parts.items()}, "timed_ms": timed, "profiled_ms": profiled, "scale": None}
    if profiled <= 0 or abs(profiled - timed) <= SCALE_OFF * timed:
        return out
    if timed >= busy and parts["gaps_ms"] > 0:
        out["scale"] = {"what": "gaps", "factor": round((timed - busy) / parts["gaps_ms"], 3)}
        out["gaps_ms"] = timed - busy
    else:
        factor = timed / profiled
        out["scale"] = {"what": "all parts", "factor": round(factor, 3)}
        out.update({name: parts[name] * factor for name in parts})
    return out


def _close(parts: float, measured: float) -> bool:
    return abs(parts - measured) <= max(CLOSE_SHARE * abs(measured), CLOSE_MS)


def split(row_cells: list[dict], all_cells: list[dict]) -> dict:
    """One model's change from ``all``: measured, its parts, bytes and launches, groups and movers."""
    mine_side, base_side = _side(row_cells), _side(all_cells)
    out = {"measured_ms": _mean([c["compiled_ms"] for c in row_cells]) - _mean([c["compiled_ms"] for c in all_cells])}
    for name in ("generated_ms", "library_ms", "gaps_ms"):
        out[name] = mine_side[name] - base_side[name]
    scaled = {side: s["scale"] for side, s in (("row", mine_side), ("all", base_side)) if s["scale"]}
    out["scaled"] = scaled or None
    out["profiled_ms"] = {"row": mine_side["profiled_ms"], "all": base_side["profiled_ms"],
                          "row_timed": mine_side["timed_ms"], "all_timed": base_side["timed_ms"]}
    mine, base = _kernels(row_cells), _kernels(all_cells)
    bandwidth = measured_bandwidth(row_cells + all_cells)
    step_bytes = lambda ks: sum(k["bytes_step"] or 0 for k in ks.values() if k["kind"] == "generated")  # noqa: E731
    out["bytes_mb"] = (step_bytes(mine) - step_bytes(base)) / 1e6
    out["launches"] = sum(k["calls"] for k in mine.values()) - sum(k["calls"] for k in base.values())
    grouped = groups(mine, base, _profile(all_cells[0]).fusions)
    out["groups"] = grouped
    out["movers"] = _movers(mine, base, grouped, bandwidth)
    out["bandwidth"] = bandwidth
    out["parts_ms"] = out["generated_ms"] + out["library_ms"] + out["gaps_ms"]
    # as profiled, before any side was scaled: what the profile alone says
    out["raw_parts_ms"] = sum(mine_side[f"raw_{n}"] - base_side[f"raw_{n}"] for n in ("generated_ms", "library_ms", "gaps_ms"))
    out["raw_close"] = _close(out["raw_parts_ms"], out["measured_ms"])
    miss = abs(out["parts_ms"] - out["measured_ms"])
    out["close"] = miss <= max(CLOSE_SHARE * abs(out["measured_ms"]), CLOSE_MS)
    out["mismatch"] = not out["close"]
    return out


def explain(cells: list[dict], rows: list[str] | None = None, models: list[str] | None = None) -> dict:
    """{"rows": {ROW: {"models": {MODEL: split}, "over_models": {part: {mean, lo, hi, models}}}}}."""
    profiled = _profiled(cells)
    if not profiled:
        raise UsageError("the results file holds no kernel profiles: run bench with --profile")
    have_models = sorted({m for m, _ in profiled})
    have_rows = sorted({c for _, c in profiled if c != "all"})
    for m in models or ():
        if m not in have_models:
            raise UsageError(f"--model {m!r}: no profiled cells of it; profiled models: {', '.join(have_models)}")
    for r in rows or ():
        if r not in have_rows:
            raise UsageError(f"--row {r!r}: no profiled cells of it; profiled rows: {', '.join(have_rows) or 'none'}")
    if not any(c == "all" for _, c in profiled):
        raise UsageError("the results file holds no profiled `all` cells: explain splits each row's change from "
                         "`all`; run bench with --configs all,... --profile")
    out: dict = {"rows": {}}
    for row in rows or have_rows:
        per_model = {m: split(profiled[(m, row)], profiled[(m, "all")]) for m in models or have_models
                     if (m, row) in profiled and (m, "all") in profiled}
        if not per_model:
            continue
        over = {}
        for name in (*PARTS, *EXTRA):
            values = [s[name] for s in per_model.values()]
            ci = mean_interval(values, f"explain-{row}-{name}")
            over[name] = {"mean": _mean(values), "lo": ci and ci[0], "hi": ci and ci[1], "models": len(values)}
        closed = sum(s["close"] for s in per_model.values())
        raw = sum(s["raw_close"] for s in per_model.values())
        out["rows"][row] = {"models": per_model, "over_models": over, "closed": closed, "raw_closed": raw}
    out["ranking"] = rank_fusions([c for (m, _), group in profiled.items() if m in (models or have_models) for c in group])
    return out


def kernel_holding(nodes, kernels) -> tuple[float, str] | None:
    """(ms, name) of the generated kernel a fusion of ``nodes`` (FX node keys of both sides) ended
    in: the one holding most of them (a view computes nothing and is in no kernel), the longer on a
    tie (FX node names repeat across graphs); None if no kernel holds any."""
    held = set(nodes)
    found = [(len(held & set(k.get("nodes") or ())), k["ms"], k["name"]) for k in kernels if k.get("kind") == "generated"]
    best = max(found, default=(0, 0.0, None))
    return (best[1], best[2]) if best[0] else None


def by_kernel_time(fusions: list[dict], times: dict) -> list[dict]:
    """The fusions with a kernel in ``times`` ({n: (ms, name)}), longest kernel first, then by
    memory score and number: ``bisect --rank --by time``'s order, and explain's ranking's."""
    return sorted((f for f in fusions if times.get(f["n"])),
                  key=lambda f: (-times[f["n"]][0], -(f.get("score") or 0), f["n"]))


def rank_fusions(cells: list[dict], top: int = 3) -> dict:
    """Per model, `all`'s fusions ranked two ways, from its first profiled cell: by the time of the
    kernel holding both sides' nodes (``bisect --rank --by time``'s candidates) and by Inductor's
    memory score (``--by score``), each with its rank the other way: whether the score finds the
    fusions whose kernels take the time.  Profiles from before scores were recorded rank by time only."""
    out = {}
    for (model, config), group in sorted(_profiled(cells).items()):
        if config != "all":
            continue
        profile = group[0]["profile"]
        fusions = [f for f in profile.get("fusions") or () if f.get("result", "fused") == "fused" and f.get("nodes")]
        timed = {f["n"]: kernel_holding(f["nodes"], profile["kernels"]) for f in fusions}
        by_time = by_kernel_time(fusions, timed)
        scored = all(f.get("score") is not None for f in fusions)
        by_score = sorted(fusions, key=lambda f: (-f["score"], f["n"])) if scored else []
        time_rank = {f["n"]: i for i, f in enumerate(by_time, 1)}
        score_rank = {f["n"]: i for i, f in enumerate(by_score, 1)}

        def entry(f):
            ms, name = timed[f["n"]] or (None, None)
            return {"n": f["n"], "kind": f["kind"], "score": f.get("score"), "ms": ms, "kernel": name,
                    "time_rank": time_rank.get(f["n"]), "score_rank": score_rank.get(f["n"])}
        out[model] = {"fusions": len(fusions), "timed": len(by_time), "scored": scored,
                      "by_time": [entry(f) for f in by_time[:top]], "by_score": [entry(f) for f in by_score[:top]]}
    return out


def by_fusion(result: dict, top: int) -> list[dict]:
    """The top groups by |change| over every row and model: what a fusion (or its absence) was worth."""
    found = []
    for row, data in result["rows"].items():
        for model, s in data["models"].items():
            for g in s["groups"] or ():
                if g["all"] != g["row"] and (g["all"] or g["row"]):
                    found.append(dict(g, config=row, model=model, what=group_what(g)))
    found.sort(key=lambda g: -abs(g["delta_ms"]))
    return found[:top]


def _ms(value) -> str:
    return f"{value:+.3f}"


def _with_interval(stat: dict, fmt=_ms) -> str:
    if stat["lo"] is None:
        return f"{fmt(stat['mean'])} (no interval: {stat['models']} model)"
    return f"{fmt(stat['mean'])} [{fmt(stat['lo'])}, {fmt(stat['hi'])}]"


def fusion_numbers(numbers: list[int]) -> str:
    """#3, #7-#9: decision numbers, runs joined."""
    runs, out = [], []
    for n in sorted(numbers):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    for a, b in runs:
        out.append(f"#{a}" if a == b else f"#{a}-#{b}")
    return ", ".join(out)


def group_what(g: dict) -> str:
    """What a group holds: the fusions of `all` inside it, else its FX nodes' count."""
    inlined = f", {g['inlined_in_all']} inlined by all" if g.get("inlined_in_all") else ""
    return (f"fusions {fusion_numbers(g['fusions'])} ({', '.join(g['kinds'])}){inlined}" if g["fusions"] else
            f"{len(g['nodes'])} FX node(s){inlined}" if g["nodes"] else "no FX node (a layout copy)")


def group_text(g: dict) -> str:
    """``fusions #17-#19 (vertical) in encoder.layer.3: 1 kernel of all -> 3, +0.041 ms, +24.1 MB per step``."""
    what = group_what(g)
    where = f" in {g['module']}" if g.get("module") else ""
    mb = f", {g['delta_bytes'] / 1e6:+.1f} MB" if g.get("all_bytes") is not None or g.get("row_bytes") is not None else ""
    return (f"{what}{where}: {len(g['all'])} kernel(s) of all -> {len(g['row'])}, "
            f"{_ms(g['delta_ms'])} ms{mb} per step")


def scaled_text(scaled: dict) -> str:
    """``row: gaps x0.41; all: all parts x0.95``: which side was scaled, what and by how much."""
    return "; ".join(f"{side}: {s['what']} x{s['factor']:.2f}" for side, s in scaled.items())


def names_text(names: list[str], most: int = 3) -> str:
    """Kernel names joined, the first ``most`` of them and a count of the rest."""
    shown = " + ".join(names[:most])
    return shown + (f" + {len(names) - most} more" if len(names) > most else "")


def _rate_text(m: dict) -> str:
    if not m["gb_per_s"]:
        return "-"
    return f"{m['gb_per_s']:.0f} GB/s" + {"cache": " (cache)", "estimate error": " (!est)"}.get(m.get("mark"), "")


def print_explanation(result: dict, top: int) -> None:
    print("change from `all` in ms per step: measured = timed; its parts from the profile: generated kernels, "
          "library kernels, gaps (no kernel running); MB and launches per step")
    for row, data in result["rows"].items():
        n = len(data["models"])
        print(f"\n{row}: parts within 10% (or 0.02 ms) of the timed change on {data['closed']} of {n} models "
              f"({data['raw_closed']} before scaling)")
        print(f"  {'model':<24} {'measured':>9} {'generated':>10} {'library':>8} {'gaps':>8} {'parts':>8} "
              f"{'MB':>9} {'launches':>9}")
        notes = []
        for model, s in data["models"].items():
            flag = "" if s["close"] else "  !"
            print(f"  {model:<24} {_ms(s['measured_ms']):>9} {_ms(s['generated_ms']):>10} {_ms(s['library_ms']):>8} "
                  f"{_ms(s['gaps_ms']):>8} {_ms(s['parts_ms']):>8} {s['bytes_mb']:>+9.1f} {s['launches']:>+9.1f}{flag}")
            if s["scaled"]:
                notes.append(f"{model}: scaled (profiled step off the timed one by more than {SCALE_OFF:.0%}): "
                             f"{scaled_text(s['scaled'])}")
            if not s["close"]:
                notes.append(f"{model}: ! parts {_ms(s['parts_ms'])} against a timed {_ms(s['measured_ms'])}: "
                             f"read this split as shares, not milliseconds")
        over = data["over_models"]
        print("  over models: " + "; ".join(f"{name[:-3]} {_with_interval(over[name])}" for name in PARTS) +
              f"; MB {_with_interval(over['bytes_mb'], lambda v: f'{v:+.1f}')}"
              f"; launches {_with_interval(over['launches'], lambda v: f'{v:+.1f}')}")
        for note in notes:
            print(f"  {note}")
        movers = sorted((dict(m, model=model) for model, s in data["models"].items() for m in s["movers"]),
                        key=lambda m: -abs(m["delta_ms"]))[:top]
        if movers:
            print(f"  kernels that moved most (of {sum(len(s['movers']) for s in data['models'].values())} lines; "
                  f"a line is a group computing the same FX nodes):")
        for m in movers:
            ops = ", ".join(m["ops"][:6]) + (f", +{len(m['ops']) - 6}" if len(m["ops"]) > 6 else "")
            was = f"{names_text(m['was'])} -> " if m["was"] and m["now"] and m["was"] != m["now"] else ""
            print(f"    {_ms(m['delta_ms'])} ms  {m['model']:<16} {m['kind']:<9} {m['how']:<7} {_rate_text(m):>16}  "
                  f"{was}{names_text(m['now'] or m['was'])} [{ops}]")
    found = by_fusion(result, top)
    if found:
        print("\nBy fusion: the groups that moved most (all's kernels -> the row's, computing the same FX nodes)")
        for g in found:
            print(f"  {g['config']:<22} {g['model']:<16} {group_text(g)}")
