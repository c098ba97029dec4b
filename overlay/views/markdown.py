"""The report's tables as Markdown (``report --markdown``): what docs/findings.md's tables are
made of, so that no figure there is typed by hand."""
from __future__ import annotations

import os
from collections import Counter

from ..stats import THIN_NOISE_PAIRS


def interval(point, lo, hi, digits: int = 2, suffix: str = "") -> str:
    """"1.23x [1.20, 1.26]", or the point and "(no interval)" where there is none to give."""
    if point is None:
        return "-"
    text = f"{point:.{digits}f}{suffix}"
    return f"{text} [{lo:.{digits}f}, {hi:.{digits}f}]" if lo is not None else f"{text} (no interval)"


def noise_line(sec: dict) -> str:
    busy = (f"Busy machine: {sec['busy']} of {sec['cells']} cells were timed while other work took their "
            f"cores; no row resting on them gets a star. " if sec.get("busy") else "")
    noise = sec["noise"]
    if noise is None:
        return busy + ("Noise floor: not measured (no two processes of a model generated identical code; "
                       "`--cell-repeats 2` gives one).")
    within = [r["config"] for r in sec["rows"] if r["within_noise"]]
    pairs = noise["pairs"]
    text = (f"Noise floor: {pairs} pair{'s' if pairs != 1 else ''} of processes that ran identical code differ "
            f"in compiled time by a median of {100 * noise['median']:.1f}% (at most {100 * noise['max']:.1f}%).")
    if pairs < THIN_NOISE_PAIRS:
        text += " Too few pairs to trust: `--cell-repeats 2` measures more."
    if within:
        text += f" Rows whose share of `all` is within that median of 1: {', '.join(within)}."
    return busy + text


def kept_text(r: dict) -> str:
    """A row's share of `all` kept, as every view prints it: ``same code`` where every model generated
    `all`'s very code (its figure is noise between processes, not the row: the terminal's rule)."""
    kept = r["kept"]
    if r["config"] == "all":
        return "1"
    if r["all_same_code"]:
        return "same code"
    return "-" if kept is None else interval(kept["point"], kept["lo"], kept["hi"]) + ("*" if r["significant"] else "")


def same_text(r: dict) -> str:
    return "" if r["config"] == "all" else "?" if r["same_code"] is None else f"{r['same_code']}/{r['paired']}"


def headline(sec: dict) -> str:
    paper = sec["has_paper"]
    head = ["row", "source", "speedup [95% CI]", "share of `all` kept [95% CI]", "same code", "models"]
    head += ["paper (Table 4)", "paper: share kept"] if paper else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sec["rows"]:
        if r["na"]:
            cols = [r["config"], r["source"], f"n/a: {r['na_message']}", "", "", "0"]
        else:
            cols = [r["config"], r["source"], interval(r["speedup"], r["speedup_lo"], r["speedup_hi"], suffix="x"),
                    kept_text(r), same_text(r), f"{r['ok']}/{r['models']}"]
        if paper:
            cols += [f"{r['paper']:.2f}x" if r["paper"] else "", f"{r['paper_kept']:.2f}" if r["paper_kept"] else ""]
        lines.append("| " + " | ".join(cols) + " |")
    lines.append("\n`*`: the share kept excludes 1 at 95%, on 6+ paired processes, outside the noise floor, none "
                 "timed on a busy machine; same code: models that generated `all`'s own code (noise, not the row).")
    return "\n".join(lines)


def kinds(sec: dict) -> str:
    """The fusion kinds taken out one at a time (and together): the share kept, and the part of
    fusion's worth each carries."""
    lines = ["| row | share of `all` kept [95% CI] | part of fusion's worth [95% CI] | models | same code |",
             "|---|---|---|---|---|"]
    for r in sec["rows"]:
        if r["fusion_part"] is None or r["kept"] is None:
            continue
        part, kept = r["fusion_part"], r["kept"]
        lines.append(f"| {r['config']} | {interval(kept['point'], kept['lo'], kept['hi'])} | "
                     f"{interval(part['point'], part['lo'], part['hi'])} | {part['models']} | "
                     f"{r['same_code']}/{r['paired']} |")
    lines.append("\nPart of fusion's worth: log(share kept without the kind) / log(share kept without any fusion); "
                 "1: the kind is all of it, 0: none.")
    return "\n".join(lines)


def per_model(sec: dict) -> str:
    models = sec["models"]
    lines = ["| row | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for config, by_model in sec["per_model"].items():
        cols = [f"{by_model[m]['share']:.2f}{'=' if by_model[m]['same_code'] else ''}" if m in by_model else "-"
                for m in models]
        lines.append(f"| {config} | " + " | ".join(cols) + " |")
    lines.append("\n`=`: the row generated `all`'s very code on that model.")
    return "\n".join(lines)


def kernels(sec: dict) -> str:
    models = sec["models"]
    lines = ["| row | " + " | ".join(models) + " | total |", "|---|" + "---|" * (len(models) + 1)]
    for config, by_model in sec["kernels"].items():
        cols = [str(by_model.get(m, "-")) for m in models]
        lines.append(f"| {config} | " + " | ".join(cols) + f" | {sum(by_model.values())} |")
    return "\n".join(lines)


def split(result: dict) -> str:
    """Each row's change from `all`, per model, split (``explain``)."""
    from ..explain import scaled_text

    lines = ["| row | model | measured ms | generated | library | gaps | parts | MB per step | launches per step |",
             "|---|---|---|---|---|---|---|---|---|"]
    scaled = []
    for row, data in result["rows"].items():
        for model, s in data["models"].items():
            lines.append(f"| {row} | {model} | {s['measured_ms']:+.3f} | {s['generated_ms']:+.3f} | "
                         f"{s['library_ms']:+.3f} | {s['gaps_ms']:+.3f} | {s['parts_ms']:+.3f}"
                         f"{' !' if s['mismatch'] else ''} | {s.get('bytes_mb', 0):+.1f} | {s.get('launches', 0):+.1f} |")
            if s.get("scaled"):
                scaled.append(f"{row}/{model} ({scaled_text(s['scaled'])})")
    lines.append("\n`!`: the parts differ from the timed change by more than 10% (and 0.02 ms).")
    if scaled:
        lines.append(f"Scaled to the timed step (a profiled step more than 2% off it): {', '.join(scaled)}.")
    return "\n".join(lines)


def over_models(result: dict) -> str:
    """Per row: the mean change over models, its parts, bytes and launches, with 95% intervals, and
    on how many models the parts met the timed change."""
    def cell(stat, fmt):
        if stat["lo"] is None:
            return fmt(stat["mean"])
        return f"{fmt(stat['mean'])} [{fmt(stat['lo'])}, {fmt(stat['hi'])}]"

    ms, one = (lambda v: f"{v:+.3f}"), (lambda v: f"{v:+.1f}")
    lines = ["| row | measured ms | generated | library | gaps | MB per step | launches per step | parts meet timed "
             "(as profiled) |", "|---|---|---|---|---|---|---|---|"]
    for row, data in result["rows"].items():
        o = data["over_models"]
        lines.append(f"| {row} | {cell(o['measured_ms'], ms)} | {cell(o['generated_ms'], ms)} | {cell(o['library_ms'], ms)} | "
                     f"{cell(o['gaps_ms'], ms)} | {cell(o['bytes_mb'], one)} | {cell(o['launches'], one)} | "
                     f"{data['closed']}/{len(data['models'])} ({data.get('raw_closed', data['closed'])}) |")
    lines.append("\nMean over models, 95% bootstrap interval over models; parts meet timed: models whose generated + "
                 "library + gaps came within 10% (or 0.02 ms) of the timed change, once a side whose profiled step was "
                 "more than 2% off its timed step took its gaps from the timed step (as profiled: before that).")
    return "\n".join(lines)


def fusions(result: dict, top: int = 10) -> str:
    """The groups of kernels that moved most: `all`'s kernels against the row's computing the same FX nodes."""
    from ..explain import by_fusion, group_what

    lines = ["| row | model | what | module | kernels (all -> row) | ms per step | MB per step |", "|---|---|---|---|---|---|---|"]
    for g in by_fusion(result, top):
        lines.append(f"| {g['config']} | {g['model']} | {group_what(g)} | {g['module'] or '-'} | "
                     f"{len(g['all'])} -> {len(g['row'])} | {g['delta_ms']:+.3f} | {g['delta_bytes'] / 1e6:+.1f} |")
    return "\n".join(lines)


def ranking(result: dict) -> str:
    """`all`'s fusions ranked by their kernel's time beside by Inductor's memory score (``explain``)."""
    def shown(entries, other):
        return "; ".join(f"#{e['n']} {e['kind']} " + (f"{e['ms']:.3f} ms" if other == "score" else f"score {e['score']:,}")
                         + f" ({other} rank {e[other + '_rank'] or '-'})" for e in entries) or "-"
    lines = ["| model | fusions (with a kernel) | top by kernel time: ms per step (score rank) | "
             "top by memory score (time rank) |", "|---|---|---|---|"]
    for model, r in result.get("ranking", {}).items():
        by_score = shown(r["by_score"], "time") if r["scored"] else "not recorded (profiled before scores were)"
        lines.append(f"| {model} | {r['fusions']} ({r['timed']}) | {shown(r['by_time'], 'score')} | {by_score} |")
    return "\n".join(lines)


def cost(sections: list[dict]) -> str:
    """What each run cost (sections.cost): a row per run, seconds summed over its cells; with several
    runs, a first column names each one's results file, so runs sit side by side in one table."""
    head = ["device", "jobs", "cells", "run wall s", "cell processes s", "autotune (templates + configs)",
            "compile (rest)", "timing", "waiting for the device", "set-up + eager reference", "accuracy check, other",
            "process start", "cut by a piece's end", "device held", "start + set-up per cell s (median / max)",
            "shortest eager step", "same code: pairs, move median / max"]
    named = len(sections) > 1
    per_file = Counter(sec.get("path") for sec in sections)
    label = lambda sec: os.path.basename(sec.get("path") or "-") + (  # noqa: E731
        f" ({sec['title']})" if per_file[sec.get("path")] > 1 else "")
    lines = ["| " + " | ".join((["results"] if named else []) + head) + " |", "|" + "---|" * (len(head) + named)]
    secs = lambda v: "-" if v is None else f"{v:.0f}"  # noqa: E731
    for sec in sections:
        c = sec["cost"]
        eager = "-" if c["shortest_eager"] is None else f"{c['shortest_eager'][0]:.2f} ms ({c['shortest_eager'][1]})"
        over = "-" if c["overhead_median_s"] is None else f"{c['overhead_median_s']:.1f} / {c['overhead_max_s']:.1f}"
        tune = secs(c["autotune_s"]) + ("" if c["autotune_split"] is None else
                                         " ({:.0f} + {:.0f})".format(*c["autotune_split"]))
        cut = f"{c['cut_s']:.0f} ({c['cuts']} cells)" if c["cuts"] else "0"
        same = "-" if c["same_code"] is None else "{}, {:.1%} / {:.1%}".format(*c["same_code"])
        cols = [c["device"] or "-", str(c["jobs"]), str(c["cells"]), secs(c["wall_s"]), secs(c["busy_s"]),
                tune, secs(c["compile_s"]), secs(c["timing_s"]), secs(c["wait_s"]),
                secs(c["setup_s"]), secs(c["other_s"]), secs(c["start_s"]), cut, secs(c["held_s"]), over, eager, same]
        lines.append("| " + " | ".join(([label(sec)] if named else []) + cols) + " |")
    return "\n".join(lines)


TABLES = ("noise", "headline", "kinds", "per-model", "kernels", "split", "explain", "fusions", "cost", "regions",
          "ranking")


def regions(sec: dict) -> str:
    """Each region's part of a row's loss (``bench --regions``)."""
    if not sec.get("regions"):
        return "(no row was run by region: bench --regions GLOB,GLOB)"
    lines = ["| row | region | share of `all` kept [95% CI] | loss | part of the row's loss |", "|---|---|---|---|---|"]
    notes = []
    for g in sec["regions"]:
        lines.append(f"| {g['row']} | (whole model) | {interval(g['kept'], g['kept_lo'], g['kept_hi'])}"
                     f"{'*' if g['significant'] else ''} | "
                     f"{g['loss']:+.3f} | 1 |")
        for p in g["regions"]:
            part = "-" if p["part"] is None else f"{p['part']:.2f}"
            lines.append(f"| | {p['region']} | {interval(p['kept'], p['kept_lo'], p['kept_hi'])}"
                         f"{'*' if p['significant'] else ''} | {p['loss']:+.3f} | {part} |")
        notes.append(f"{g['row']}: the regions' losses sum to {g['sum_loss']:+.3f} against the whole model's "
                     f"{g['loss']:+.3f}: " + ("they add up (within 10%)." if g["adds_up"] else
                                              "they do not add up (fusions across a region's edge, interactions)."))
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def table(name: str, sections: list[dict], splits: list) -> str:
    """``report --markdown --table NAME``: one table per setting, but ``cost``, whose runs share one."""
    if name == "cost":
        return cost(sections)
    if name in ("split", "explain", "fusions", "ranking"):
        view = {"split": split, "explain": over_models, "fusions": fusions, "ranking": ranking}[name]
        return "\n\n".join(view(r) if r else "(no kernel profiles in this file)" for r in splits)
    one = {"noise": noise_line, "headline": headline, "kinds": kinds, "per-model": per_model, "kernels": kernels,
           "regions": regions}[name]
    return "\n\n".join(one(sec) for sec in sections)


def document(sections: list[dict], splits: list) -> str:
    out = []
    for sec, result in zip(sections, splits):
        out.append(f"## {sec['title']}\n\n{noise_line(sec)}\n\n{headline(sec)}\n\n### Share of `all` kept, per model\n\n"
                   f"{per_model(sec)}\n\n### Kernels per model\n\n{kernels(sec)}")
        if sec.get("regions"):
            out.append(f"### Where each row's loss sits, by region\n\n{regions(sec)}")
        if result:
            out.append(f"### Where the time went (kernel profiles)\n\n{split(result)}")
    return "\n\n".join(out) + "\n"
