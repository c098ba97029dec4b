"""`report`: one self-contained HTML page from results files, opened in a real Chromium (headless,
tests/browser.py), and its Markdown tables.  Reads committed results files: no compile."""
import io
import json
import os
import statistics
import subprocess
import sys

import pytest

import browser
from conftest import clean_env

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
H200 = os.path.join(ROOT, "docs", "results", "h200-real-bf16-inference.json")
PROFILED = os.path.join(ROOT, "docs", "results", "h100-explain-bf16-inference.json")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "inductor_ablate", *args], env=clean_env(), capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def h200_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    proc = _cli("report", H200, "-o", str(out))
    assert proc.returncode == 0 and proc.stdout.strip() == f"report: {out}", proc.stdout + proc.stderr
    return out


def test_the_page_opens_in_chromium_from_disk_with_no_error_and_no_network(h200_page):
    """No console error, no request but the page itself (data: URIs are inline), every model and row
    of the results file in the DOM, both pictures drawn, a screenshot that is not blank."""
    from PIL import Image

    seen = browser.load(h200_page.resolve().as_uri(), width=1400)
    assert seen["errors"] == [], seen["errors"]
    assert seen["overflow"] == [], seen["overflow"]  # no table or picture runs off a 1,400 px window
    assert [u for u in seen["requests"] if not u.startswith("data:")] == [h200_page.resolve().as_uri()], seen["requests"]
    cells = json.load(open(H200))["cells"]
    for name in {c["model"] for c in cells} | {c["config"] for c in cells}:
        assert name in seen["text"], name
    assert "Noise floor" in seen["text"] and "1.91x" in seen["text"]  # the paper's `all`, beside ours
    assert seen["svgs"] >= 2
    image = Image.open(io.BytesIO(seen["png"])).convert("RGB")
    colours = image.getcolors(1 << 24)
    inked = sum(n for n, rgb in colours if sum(rgb) < 600) / (image.width * image.height)
    assert image.height > 1500 and len(colours) > 200 and inked > 0.02, (image.size, len(colours), inked)


def test_the_page_is_self_contained(h200_page):
    html = h200_page.read_text()
    for fetched in ("<script src", "<link ", "@import", "url(http", "<img src=\"http"):
        assert fetched not in html, fetched
    assert html.count("<svg") >= 2 and 'class="headline"' in html and "pytorch2-2.pdf" in html


def test_markdown_holds_the_same_figures_as_the_page(h200_page):
    proc = _cli("report", H200, "--markdown")
    assert proc.returncode == 0, proc.stderr
    md, html = proc.stdout, h200_page.read_text()
    headline = [line for line in md.splitlines() if line.startswith("| no-fusion | paper |")]
    assert len(headline) == 1, md
    speedup, kept = (c.strip() for c in headline[0].split("|")[3:5])
    assert speedup.endswith("]") and speedup in html and kept.rstrip("*") in html
    assert md.startswith("## real suite, cuda, bfloat16, inference") and "| row | bert_base |" in md
    # what the run cost: the same seconds on the page as in the cost table
    cost = _cli("report", H200, "--markdown", "--table", "cost").stdout.strip().splitlines()[-1].split("|")
    cells, busy, autotune = cost[3].strip(), cost[5].strip(), cost[6].strip()
    assert f'<p class="cost">{cells} cells on NVIDIA H200' in html and f"; {busy} s of cell processes: autotune {autotune} s" in html


def test_profiles_and_a_decision_log_add_the_split_and_remarks(tmp_path):
    log = tmp_path / "decisions.jsonl"
    records = [{"decision": "fusion", "n": 1, "graph": 1, "graph_n": 1, "kind": "vertical", "node1": "op0",
                "node2": "op1", "ops1": ["sin:aten.sin.default"], "ops2": ["cos:aten.cos.default"], "score": 4096,
                "result": "fused"},
               {"decision": "refusal", "graph": 1, "kind": "horizontal", "node1": "op2", "node2": "op3",
                "ops1": ["a:aten.add.Tensor"], "ops2": ["b:aten.mul.Tensor"], "reason": "no shared data",
                "result": "refused (no shared data)"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "p.html"
    proc = _cli("report", PROFILED, "--log", str(log), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert 'class="split"' in html and "Kernels that moved most" in html and "no-fusion-no-inlining" in html
    assert 'class="refused">refused' in html and "no shared data" in html and 'class="fused">fused' in html
    # the explain part fits a 1,400 px window: long kernel names cut, the full name on hover; one
    # stacked bar per row and the bytes-vs-time plot drawn beside the study's two pictures
    assert "Bytes against time" in html and 'title="triton_' in html and "…" in html
    seen = browser.load(out.resolve().as_uri(), width=1400)
    assert seen["errors"] == [] and seen["overflow"] == [], (seen["errors"], seen["overflow"])
    assert seen["svgs"] >= 4


@pytest.mark.parametrize("case", ["missing", "malformed", "unwritable", "not_a_log", "a_directory"])
def test_bad_input_to_report_is_one_line(tmp_path, case):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    not_log = tmp_path / "x.jsonl"
    not_log.write_text('{"a": 1}\n')
    (tmp_path / "f").write_text("")
    args = {"missing": [str(tmp_path / "none.json")], "malformed": [str(bad)],
            "unwritable": [H200, "-o", str(tmp_path / "f" / "p.html")],
            "not_a_log": [H200, "--log", str(not_log), "-o", str(tmp_path / "p.html")],
            "a_directory": [H200, "-o", str(tmp_path)]}[case]
    proc = _cli("report", *args)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (proc.returncode, proc.stderr)
    assert not (tmp_path / "p.html").exists()


def test_a_noise_floor_of_one_pair_says_it_is_too_thin_to_trust():
    """README's main command on a GPU as it was, each cell in one process: one pair of same-code
    processes is all the floor it has, and both the run's summary and the Markdown view say so
    instead of leaning on it."""
    from inductor_ablate.views.terminal import noise_lead

    one_pair = os.path.join(ROOT, "archive", "results", "h100-main-command-one-process.json")
    proc = _cli("report", one_pair, "--markdown", "--table", "noise")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Noise floor: 1 pair of processes") and "Too few pairs to trust" in proc.stdout
    lead = noise_lead(json.load(open(one_pair))["cells"], [])
    assert "1 pair)" in lead and "too few pairs to trust" in lead, lead
    many = _cli("report", H200, "--markdown", "--table", "noise").stdout
    assert "pairs of processes" in many and "Too few" not in many


def test_the_cost_table_gives_a_row_per_run_named_by_its_file():
    """Several runs side by side in one cost table, each row named by its results file; where one
    name would stand for two rows, the setting is added, so no row is ambiguous."""
    from inductor_ablate.views import build, markdown

    main = os.path.join(ROOT, "docs", "results", "h100-main-command.json")
    rows = markdown.cost(build.build([H200, main])[0]).splitlines()
    assert rows[0].startswith("| results | device |") and len(rows) == 4, rows
    assert rows[2].startswith("| h200-real-bf16-inference.json | NVIDIA H200") and "h100-main-command.json" in rows[3]
    twice = markdown.cost(build.build([main, main])[0]).splitlines()[2]
    assert twice.startswith("| h100-main-command.json (embedded suite, cuda, float32, inference) |"), twice
    alone = markdown.cost(build.build([main])[0]).splitlines()
    assert alone[0].startswith("| device |") and len(alone) == 3


def test_the_cost_table_counts_the_cells_a_pieces_end_cut():
    """A study run in pieces: the cells a piece's end cut left no row, yet their processes ran; the
    cost table counts them (meta.cuts) among the cell processes, in a column of their own."""
    from inductor_ablate.results import all_cuts
    from inductor_ablate.views import build, markdown

    path = os.path.join(ROOT, "archive", "results", "h100-paper-13-pieces.json")
    cuts = all_cuts(json.load(open(path))["meta"])
    head, _, row = markdown.cost(build.build([path])[0]).splitlines()
    column = dict(zip(head.split(" | "), row.split(" | ")))
    assert column["cut by a piece's end"] == f"{sum(c['cut_s'] for c in cuts):.0f} ({len(cuts)} cells)", column
    assert len(cuts) >= 1


def test_the_cost_table_shows_how_far_processes_of_identical_code_moved():
    """What overlapping costs in noise, per run: processes of one model that generated identical code
    ran the same program, so the cost table gives how many such pairs the run holds and how far
    their compiled times moved (median / max, max/min - 1), counted here from the cells directly."""
    from inductor_ablate.views import build, markdown

    path = os.path.join(ROOT, "docs", "results", "h100-paper-13.json")
    cells = [c for c in json.load(open(path))["cells"] if c["status"] == "ok"]
    moves = sorted(max(a["compiled_ms"], b["compiled_ms"]) / min(a["compiled_ms"], b["compiled_ms"]) - 1
                   for i, a in enumerate(cells) for b in cells[i + 1:]
                   if a["model"] == b["model"] and a["code_hash"] == b["code_hash"])
    head, _, row = markdown.cost(build.build([path])[0]).splitlines()
    column = dict(zip(head.strip("| ").split(" | "), row.strip("| ").split(" | ")))
    assert len(moves) >= 2
    assert column["same code: pairs, move median / max"] == (
        f"{len(moves)}, {statistics.median(moves):.1%} / {moves[-1]:.1%}"), column
    serial = os.path.join(ROOT, "docs", "results", "h100-jobs-serial-a.json")
    head, _, row = markdown.cost(build.build([serial])[0]).splitlines()
    assert row.rstrip(" |").endswith("| -"), row  # no two processes there generated the same code


MAIN = os.path.join(ROOT, "docs", "results", "cpu-main-command.json")


def test_a_row_of_alls_very_code_reads_same_code_in_every_view(tmp_path):
    """Issue 79: a row whose models all generated `all`'s own code has no figure of its own (what it
    shows is noise between processes): the terminal said `same code`, the page and Markdown printed
    a share.  Now every view says `same code`; rows of other code keep their share."""
    from inductor_ablate.stats import same_code

    cells = json.load(open(MAIN))["cells"]
    same = same_code(cells)
    rows = {c["config"] for c in cells if c["config"] != "all" and c["status"] == "ok"}
    models = {c["model"] for c in cells}
    all_same = {r for r in rows if all((m, r) in same for m in models)}
    assert all_same and rows - all_same, (all_same, rows)
    md = _cli("report", "--markdown", "--table", "headline", MAIN)
    page = tmp_path / "page.html"
    html = (_cli("report", MAIN, "-o", str(page)), page.read_text())[1]
    for row in rows:
        line = next(l for l in md.stdout.splitlines() if l.startswith(f"| {row} |"))
        cell = line.split(" | ")[3]
        assert (cell == "same code") == (row in all_same), line
        html_row = html[html.index(f'data-row="{row}"'):].split("</tr>")[0]
        assert ("<td>same code</td>" in html_row) == (row in all_same), html_row


def test_compare_reads_a_move_between_files_of_the_same_code_as_noise(tmp_path):
    """Issue 79: compare printed a share moving while saying both files ran the same code.  A row
    whose cells and `all`'s ran the same code in both files is marked noise; change one model's code
    for one row, and that row is a change again."""
    data = json.load(open(MAIN))
    changed = tmp_path / "changed.json"
    row = "no-fusion"
    for c in data["cells"]:
        if c["config"] == row and c["model"] == "mlp_gelu":
            c["code_hash"] = "another"
    changed.write_text(json.dumps(data))
    proc = _cli("compare", "--table", "rows", MAIN, str(changed))
    assert proc.returncode == 0, proc.stderr
    lines = {l.split(" | ")[0][2:]: l for l in proc.stdout.splitlines() if l.startswith("| ") and " | " in l}
    assert "noise: same code" not in lines[row], lines[row]
    marked = [r for r, l in lines.items() if "noise: same code" in l]
    assert len(marked) == len(lines) - 2, proc.stdout  # every row but the header and the one changed
    assert f"{len(marked)} rows ran the same code" in proc.stdout
