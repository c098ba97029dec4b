"""The report built from results files: each setting's views, and the self-contained page written."""
from __future__ import annotations

import os

from ..decisions import load_log
from ..errors import UsageError
from ..results import read_results_file
from ..stats import settings
from . import page
from .sections import cost, profile_split, remarks, section


def build(paths: list[str], baseline: str = "pooled") -> tuple[list[dict], list]:
    """(sections, profile splits) of every setting in every file, in the order given."""
    sections, splits = [], []
    for path in paths:
        data = read_results_file(path)
        cells = data["cells"]
        if not cells:
            raise UsageError(f"{path}: a results file with no cells: nothing to report")
        for group in settings(cells).values():
            sections.append({**section(group, baseline), "cost": cost(group, data.get("meta") or {}),
                             "path": path})
            splits.append(profile_split(group))
    return sections, splits


def page_path(results_path: str) -> str:
    """Where bench and merge put the page: beside the results file, ``.html`` for ``.json``."""
    root, ext = os.path.splitext(results_path)
    return (root if ext == ".json" else results_path) + ".html"


def write_page(paths: list[str], out: str, logs: list[str] = (), baseline: str = "pooled") -> str:
    sections, splits = build(paths, baseline)
    log_remarks = [(log, remarks(load_log(log))) for log in logs]
    html = page.render(list(paths), sections, splits, log_remarks)
    with open(out, "w") as f:
        f.write(html)
    return out
