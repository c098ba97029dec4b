"""The results file: what ``bench`` writes and resumes, ``merge`` joins, and ``report``, ``compare``
and ``explain`` read.  Here alone its format is read and written, so measurement (bench) and the
readers meet only in this module and import nothing of each other."""
from __future__ import annotations

import json
import os
import platform

from .errors import UsageError
from .records import Cell

KEY_FIELDS = ("suite", "model", "config", "device", "dtype", "mode")


def cell_key(row: dict) -> tuple:
    """A cell: the setting, and which of its repeats (``--cell-repeats``; files from before have 0)."""
    return (*(row[k] for k in KEY_FIELDS), row.get("cell_repeat", 0))


#: Written into every results file; a file from a newer format is refused, not misread.
RESULTS_FORMAT = 1


#: what to do about a bad results file given as --json (the file a run writes and resumes)
RESUME_HINT = "--fresh starts over, or choose another --json path"


def read_results_file(path: str, hint: str = "give a results file written by `bench` or `merge`") -> dict:
    """A results file's ``{"meta", "cells"}``, checked; a UsageError naming the file (and ``hint``,
    what to do about it) otherwise."""
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"results file {path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"results file {path}: cannot read it ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"results file {path} is not JSON ({exc}); {hint}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise UsageError(f"results file {path} is not an inductor_ablate results file (no 'cells' list); {hint}")
    if data.get("format", RESULTS_FORMAT) > RESULTS_FORMAT:
        raise UsageError(f"results file {path} was written by a newer inductor_ablate (format {data['format']}; "
                         f"this one reads {RESULTS_FORMAT}): upgrade, or {hint}")
    for i, cell in enumerate(data["cells"]):
        try:
            Cell.from_dict(cell, f"cell {i}")  # its fields of the types the readers take
        except UsageError as exc:
            raise UsageError(f"results file {path}: {exc} (written by an older or different tool?); {hint}") from None
    _check_cuts(data.get("meta"), path, hint)
    return data


def _check_cuts(meta, path: str, hint: str) -> None:
    """Each cut a results file's meta records (``all_cuts``) names a cell, its cache state
    and seconds, as ``estimate.Prices`` reads it."""
    for i, cut in enumerate(all_cuts(meta)):
        if not (isinstance(cut, dict) and all(k in cut for k in (*KEY_FIELDS, "cache"))
                and isinstance(cut.get("cut_s"), (int, float))
                and all(isinstance(cut.get(k, 0), (int, float)) for k in ("priced_s", "left_s"))):
            raise UsageError(f"results file {path}: meta's cut {i} is not a cut (the cell's fields, 'cache' and "
                             f"'cut_s' seconds, and 'priced_s' and 'left_s' seconds where given); {hint}")


def load_results(path: str | None) -> dict:
    if not path or not os.path.exists(path):
        return {}
    return {cell_key(r): r for r in read_results_file(path, RESUME_HINT)["cells"]}


def device_name(device: str) -> str:
    """The name a results file records for ``device`` (``bench``'s meta), and which picks files are
    matched against: the GPU's as torch gives it, or the processor's (often empty, so ``cpu``)."""
    import torch

    return torch.cuda.get_device_name(device) if device.startswith("cuda") else platform.processor() or "cpu"


def device_names(meta: dict) -> set[str]:
    """The devices a results file's cells ran on, by name (``bench`` records ``device_name``: the GPU's,
    or the CPU's), through the parts of a merged file; a file written before the name was recorded
    gives none."""
    names = {meta["device_name"]} if meta.get("device_name") else set()
    for part in meta.get("parts", []):
        names |= device_names(part)
    return names


def _refuse_mixing(named: dict[str, set], what: str, mixed: str, keep: str, shown=str) -> None:
    """``named``: {file or this run: the values it holds}; more than one value in all is one line:
    '{what} would mix {n} {mixed} (where); {keep} and set them side by side with `compare`'."""
    every = set().union(*named.values()) if named else set()
    if len(every) > 1:
        where = "; ".join(f"{k}: {', '.join(sorted(map(shown, v)))}" for k, v in named.items() if v)
        raise UsageError(f"{what} would mix {len(every)} {mixed} ({where}); {keep} and set them side by side "
                         f"with `python -m inductor_ablate compare --labels`")


def check_one_device(named: dict[str, set[str]], what: str) -> None:
    """``named``: {file or 'this machine': device names}.  Two GPUs' (or CPUs') cells in one file or
    one table would be read as one machine's; refuse, in one line, before any work."""
    _refuse_mixing(named, what, "devices", "keep each device's cells in files of their own")


def bases(data: dict) -> set:
    """The ``bench --base`` rows a results file's cells ran with (None: no base; a file from before
    ``--base`` counts as None); an empty file, its meta's."""
    found = {c.get("base") for c in data.get("cells", [])}
    return found or ({data["meta"].get("base")} if "base" in data.get("meta", {}) else set())


def check_one_base(named: dict[str, set], what: str) -> None:
    """``named``: {file or 'this command': bases}.  A row measured with another ``--base`` is another
    measurement under the same name: refuse to resume, skip or merge across bases, in one line."""
    _refuse_mixing(named, what, "bases", "keep each --base's cells in a results file of its own",
                   shown=lambda b: b or "no --base")


def check_one_setting(path: str, data: dict, setting: tuple[str, str, str]) -> None:
    """A results file that a run resumes holds that run's (suite, dtype, mode) only: a bfloat16 run
    appended to a float32 file would make one file of two studies."""
    held = {(c.get("suite"), c.get("dtype"), c.get("mode")) for c in data.get("cells", [])} - {setting}
    if held:
        other = ", ".join(" ".join(map(str, s)) for s in sorted(held, key=str))
        raise UsageError(f"--json {path} holds cells of {other}; this run is {' '.join(setting)}: one results file "
                         f"holds one setting; {RESUME_HINT}")


def kept_on_resume(path: str | None) -> dict:
    """The rows of ``path`` that a resumed run keeps: all but errors (a timeout, a crash), which it
    runs again."""
    return {k: r for k, r in load_results(path).items() if r.get("status") != "error"}


def earlier_meta(path: str | None) -> dict:
    """The meta of the results file a run resumes ({} when there is none yet)."""
    if not path or not os.path.exists(path):
        return {}
    return read_results_file(path, RESUME_HINT).get("meta") or {}


def earlier_cuts(path: str | None) -> list[dict]:
    """The cuts a results file records (``all_cuts``): cells a time limit stopped, and how far
    in. A cut leaves no cell (it runs again on resume), so this is what prices it next time."""
    return all_cuts(earlier_meta(path))


def pieces(meta: dict) -> list[dict]:
    """The runs (pieces) that filled a results file, from its meta: each one's start and wall
    seconds.  A study stopped by a job's time limit and resumed is one study; its wall is their sum."""
    if meta.get("pieces"):
        return list(meta["pieces"])
    return [{"started": meta.get("started"), "wall_s": meta["wall_s"]}] if meta.get("wall_s") else []


def save_results(path: str, rows: dict, meta: dict, summary: list | None = None) -> None:
    """Atomically; ``summary`` (the report's rows, with intervals) is added at the end of a run."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    data = {"format": RESULTS_FORMAT, "meta": meta, "cells": list(rows.values())}
    if summary is not None:
        data["summary"] = summary
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, default=str)
    os.replace(tmp, path)


def all_cuts(meta) -> list:
    """The cuts a results file's meta records (``run_matrix``: cells a time limit stopped, and how
    far in), a merged file's parts' included."""
    if not isinstance(meta, dict):
        return []
    return list(meta.get("cuts", [])) + [c for part in meta.get("parts", []) for c in all_cuts(part)]


def process_fingerprint(c: dict) -> tuple:
    """What one process measured: a cell copied into two files is one process, not two."""
    return (cell_key(c)[:-1], c.get("status"), c.get("compile_s"), c.get("eager_ms"), c.get("compiled_ms"), c.get("cell_s"))


def merge(paths: list[str], pool: bool = False, leave_out: list[tuple[str, str]] = ()) -> dict:
    """Join results files (e.g. shards); a cell present twice keeps the one that ran ok.  ``pool``:
    a cell that ran ok in several files (another day, another GPU) is kept as further repeats
    (``cell_repeat`` 1, 2, ...), pooled like ``--cell-repeats``; a copy of the same process (same
    measurements) is kept once.  ``leave_out``: (file, model) pairs whose cells are not merged, for
    a model whose cells in one file measured a program since fixed (the raw file stays as it ran);
    each pair must name one of ``paths`` and a model with cells in it."""
    datas = {path: read_results_file(path) for path in paths}
    check_one_device({path: device_names(data.get("meta", {})) for path, data in datas.items()}, "merging these files")
    check_one_base({path: bases(data) for path, data in datas.items()}, "merging these files")
    for path, model in leave_out:
        if path not in datas:
            raise UsageError(f"--leave-out {path}:{model}: {path} is not one of the files merged")
        if not any(c.get("model") == model for c in datas[path].get("cells", [])):
            raise UsageError(f"--leave-out {path}:{model}: {path} holds no cell of model {model!r}")
    cells, metas, seen = {}, [], set()
    for path in paths:
        data = datas[path]
        metas.append(data.get("meta", {}))
        for c in data.get("cells", []):
            if (path, c.get("model")) in leave_out:
                continue
            key = cell_key(c)
            if pool:
                if process_fingerprint(c) in seen:
                    continue
                seen.add(process_fingerprint(c))
                if key in cells and cells[key]["status"] == "ok" and c["status"] == "ok":
                    repeat = 1 + max(k[-1] for k in cells if k[:-1] == key[:-1])
                    c = {**c, "cell_repeat": repeat}
                    key = cell_key(c)
            if key not in cells or cells[key]["status"] != "ok":
                cells[key] = {**c, "from_file": path} if pool else c
    meta = {"merged_from": paths, "parts": metas}
    if any("gpus" in m for m in metas):  # one count per part: the GPUs its jobs held
        meta["gpus"] = sum(m.get("gpus", 0) for m in metas)
    if leave_out:
        meta["left_out"] = [f"{path}:{model}" for path, model in leave_out]
    return {"meta": meta, "cells": list(cells.values())}
