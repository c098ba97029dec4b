"""The committed H200 study's page and Markdown, byte for byte (issue 65): a refactoring of the
measuring or the reading side must not change a figure, a word or a tag of what readers see.

A change to the page on purpose updates the golden files in the same commit:

    GOLDEN_UPDATE=1 python -m pytest -q tests/test_golden.py

The page's two charts are SVG drawn by matplotlib, whose output differs between its releases; on a
matplotlib other than the one the golden page was written with, the page is compared with its SVG
elements cut out (and the test says so), so the text, tables and markup still count byte for byte.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).with_name("golden")
STUDY = "docs/results/h200-real-bf16-inference.json"  # relative: the page names it
SVG = re.compile(r"<svg\b.*?</svg>", re.S)


def _report(*args) -> str:
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "report", *args], env=clean_env(),
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _matplotlib() -> str:
    import matplotlib

    return matplotlib.__version__


def _check(name: str, got: str, *, svg_ok: bool = True):
    path = GOLDEN / name
    if os.environ.get("GOLDEN_UPDATE") == "1":
        path.write_text(got)
        (GOLDEN / "matplotlib.txt").write_text(_matplotlib() + "\n")
        return
    want = path.read_text()
    if not svg_ok:
        got, want = SVG.sub("<svg/>", got), SVG.sub("<svg/>", want)
    if got != want:
        at = next(i for i, (a, b) in enumerate(zip(got + "\0", want + "\0")) if a != b)
        pytest.fail(f"{name} differs from tests/golden/{name} at character {at}: "
                    f"got {got[max(0, at - 80):at + 80]!r}, golden {want[max(0, at - 80):at + 80]!r}")


def test_the_studys_markdown_is_unchanged():
    _check("h200-real-bf16-inference.md", _report("--markdown", STUDY))


def test_the_studys_page_is_unchanged(tmp_path):
    page = tmp_path / "page.html"
    _report(STUDY, "-o", str(page))
    same_matplotlib = (GOLDEN / "matplotlib.txt").read_text().strip() == _matplotlib()
    _check("h200-real-bf16-inference.html", page.read_text(), svg_ok=same_matplotlib)
    if not same_matplotlib:
        print(f"matplotlib {_matplotlib()} is not the golden page's: compared without its SVG charts")
