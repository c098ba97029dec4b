"""One self-contained HTML page (Jinja2): CSS and SVG inline, nothing fetched."""
from __future__ import annotations

import os

from . import charts, markdown
from .sections import PAPER_LINK

MAX_REMARKS = 500  # a log of a large model holds thousands; the hottest are what a reader opens


def _row_texts(sec: dict) -> None:
    for r in sec["rows"]:
        r["speedup_text"] = markdown.interval(r["speedup"], r["speedup_lo"], r["speedup_hi"], suffix="x")
        r["kept_text"], r["same_text"] = markdown.kept_text(r), markdown.same_text(r)


def short_name(name: str, most: int = 44) -> str:
    """A kernel name cut to ``most`` characters (its numbered tail kept, which tells kernels apart);
    the page puts the full name in a title."""
    if len(name) <= most:
        return name
    tail = name.rsplit("_", 1)[-1] if name.rsplit("_", 1)[-1].isdigit() else ""
    keep = most - len(tail) - 2
    return f"{name[:keep]}…{'_' + tail if tail else ''}"


def render(sources: list[str], sections: list[dict], splits: list, logs: list[tuple[str, dict]]) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.dirname(__file__)), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["short"] = short_name
    for sec, result in zip(sections, splits):
        _row_texts(sec)
        sec["noise_line"] = markdown.noise_line(sec)
        sec["forest"], sec["heatmap"], sec["split"] = charts.forest(sec), charts.heatmap(sec), result
        if result:
            result["bars"], result["scatter"] = charts.split_bars(result), charts.bytes_time(result)
    shown = [{"path": path, "counts": data["counts"], "total": len(data["remarks"]),
              "remarks": data["remarks"][:MAX_REMARKS], "shown": min(len(data["remarks"]), MAX_REMARKS)}
             for path, data in logs]
    title = "; ".join(sec["title"] for sec in sections)
    return env.get_template("page.html.j2").render(title=title, sources=sources, sections=sections, logs=shown,
                                                   paper_link=PAPER_LINK)
