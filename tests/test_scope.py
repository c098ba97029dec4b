"""Switches scoped to part of a model or to certain ops (issue 64), on real CPU compiles.

- A scope the model lacks generates stock's very code; a scope over the whole model, the unscoped
  switch's code; a scope over one submodule changes that submodule's kernels only.
- ``INDUCTOR_ABLATE_OPS`` narrows by op, ``INDUCTOR_NO_FUSE_PAIRS`` vetoes only the pairs it names.
- The decision log says where each fusion happened; ``diff --modules`` filters by it and names the
  decisions; the scope is part of the compile cache key; bad values are one line.
"""
import json
import re

import pytest
import torch

from conftest import clean_env, run_py
from inductor_ablate import decisions
from inductor_ablate.bench.cell import code_hash, output_codes
from inductor_ablate.kernel_census import recording, summarize

AOT_ID = re.compile(r"^# AOT ID: .*$", re.M)


class Block(torch.nn.Module):
    """Two submodules of pointwise work each, fused into one kernel apiece by stock Inductor."""

    def __init__(self):
        super().__init__()
        self.attn = torch.nn.Sequential(torch.nn.GELU(), torch.nn.Tanh())
        self.mlp = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Sigmoid())

    def forward(self, x):
        a = self.attn(x * 2.0) + 1.0
        return self.mlp(a.sin()) * 3.0


def _compile(ablate, **switches):
    """(code hash, census) of Block compiled under ``switches``."""
    torch._dynamo.reset()
    decisions.reset()
    x = torch.randn(64, 33)
    model = Block()
    with ablate.config.patch(**switches), torch._inductor.config.patch(force_disable_caches=True), \
            output_codes() as codes, recording() as sink:
        got = torch.compile(model)(x)
    torch.testing.assert_close(got, model(x))
    return code_hash([AOT_ID.sub("", c) for c in codes]), summarize(sink)


def test_a_scope_the_model_lacks_generates_stock_code_and_the_whole_model_the_switchs(ablate):
    stock, _ = _compile(ablate)
    unscoped, _ = _compile(ablate, no_fuse=True, no_inline=True)
    assert unscoped != stock
    assert _compile(ablate, no_fuse=True, no_inline=True, modules="decoder.*")[0] == stock
    assert _compile(ablate, no_fuse=True, no_inline=True, ops="convolution")[0] == stock
    assert _compile(ablate, no_fuse=True, no_inline=True, modules="attn,mlp,")[0] != stock


def test_a_scope_over_one_submodule_changes_its_nodes_only(ablate):
    """The C++ backend groups a graph's loops into one function, so count scheduler nodes (one loop
    nest each): stock fuses the block into 1; the switches scoped to ``attn`` split attn's nodes
    (and what reads them) while the rest stays fused; unscoped, every node is its own."""
    _, stock = _compile(ablate)
    _, scoped = _compile(ablate, no_fuse=True, no_inline=True, modules="attn")
    _, unscoped = _compile(ablate, no_fuse=True, no_inline=True)
    assert stock.fused_nodes < scoped.fused_nodes < unscoped.fused_nodes, \
        (stock.fused_nodes, scoped.fused_nodes, unscoped.fused_nodes)


def test_the_cpp_flush_under_a_scope_splits_in_scope_nodes_only(ablate):
    """INDUCTOR_ONE_KERNEL_PER_OP scoped to ``mlp``: its C++ flush gives each in-scope node a function
    of its own, where the same scoped no-fusion and no-inlining without the flush group every node
    into one; out of scope, nodes still share a function.  A scope the model lacks: stock's code."""
    stock, _ = _compile(ablate)
    assert _compile(ablate, one_kernel_per_op=True, modules="decoder.*")[0] == stock
    _, grouped = _compile(ablate, no_fuse=True, no_inline=True, modules="mlp")
    _, scoped = _compile(ablate, one_kernel_per_op=True, modules="mlp")
    _, unscoped = _compile(ablate, one_kernel_per_op=True)
    assert len(grouped.kernels) == 1 and scoped.fused_nodes == grouped.fused_nodes  # the flush alone differs
    assert len(scoped.kernels) == scoped.fused_nodes < unscoped.fused_nodes
    assert [k.nodes for k in scoped.kernels if any(m.startswith("mlp") for m in k.modules.values())] == \
        [["relu"], ["sigmoid"]]
    assert any(len(k.nodes) > 1 for k in scoped.kernels)  # attn's nodes, out of scope, stay together


def test_a_module_scope_holds_the_backward_of_its_forward_ops(ablate):
    """A backward node belongs to the module of the forward op it differentiates (AOT autograd's
    ``fwd_nn_module_stack``): a module scope on a training step reaches its backward kernels too."""
    from inductor_ablate import scope

    seen = []

    def collect(graph):
        seen.append({n.name: scope.module_path(n) for n in graph.nodes if n.op == "call_function"})
    torch._dynamo.reset()
    x = torch.randn(8, 33, requires_grad=True)
    with torch._inductor.config.patch(post_grad_custom_post_pass=collect, force_disable_caches=True):
        torch.compile(Block())(x).sum().backward()
    assert len(seen) == 2, "a forward and a backward graph"
    backward = seen[1]
    assert {p for p in backward.values() if p} >= {"attn.0", "attn.1", "mlp.0", "mlp.1"}, backward


def test_a_scope_by_op_and_a_veto_by_op_pair(ablate):
    _, stock = _compile(ablate)
    _, by_op = _compile(ablate, no_fuse=True, no_inline=True, ops="sin")
    _, unscoped = _compile(ablate, no_fuse=True, no_inline=True)
    assert stock.fused_nodes < by_op.fused_nodes < unscoped.fused_nodes
    _, no_inline = _compile(ablate, no_inline=True)
    _, pairs = _compile(ablate, no_inline=True, no_fuse_pairs="sin+relu")
    assert pairs.fused_nodes == no_inline.fused_nodes + 1, (pairs.fused_nodes, no_inline.fused_nodes)


def test_the_log_says_where_each_fusion_happened_and_diff_filters_by_module(tmp_path):
    script = tmp_path / "block.py"
    script.write_text("import torch, sys\nsys.path.insert(0, %r)\nfrom test_scope import Block\n"
                      "torch.compile(Block())(torch.randn(64, 33))\n" % str(__import__("pathlib").Path(__file__).parent))
    logs = {}
    for name, env in (("stock", {}), ("scoped", {"INDUCTOR_NO_INLINE": "1", "INDUCTOR_ABLATE_MODULES": "mlp"})):
        logs[name] = tmp_path / f"{name}.jsonl"
        run_py(f"import runpy; runpy.run_path({str(script)!r})",
               env=clean_env(INDUCTOR_ABLATE_LOG=logs[name], TORCHINDUCTOR_FORCE_DISABLE_CACHES="1", **env))
    records = [json.loads(line) for line in logs["scoped"].read_text().splitlines()]
    fusions = [r for r in records if r["decision"] == "fusion"]
    assert fusions and all("module1" in r and "in_scope" in r for r in fusions)
    assert any((r["module2"] or "").startswith("mlp") for r in fusions), fusions
    proc = run_py("import sys; from inductor_ablate.__main__ import main; sys.exit(main(sys.argv[1:]))",
                  args=["diff", str(logs["stock"]), str(logs["scoped"]), "--modules", "mlp"], check=False)
    assert proc.returncode == 0, proc.stderr
    lines = [l for l in proc.stdout.splitlines() if l[:2] in ("- ", "+ ")]
    assert lines and all(re.search(r"\[#\d+", l) for l in lines), proc.stdout
    assert all("mlp" in l.split("[", 1)[1] for l in lines), proc.stdout


def test_the_scope_is_part_of_the_cache_key(ablate):
    from inductor_ablate import runtime

    with ablate.config.patch(no_fuse=True):
        whole = runtime.cache_tag()
    with ablate.config.patch(no_fuse=True, modules="attn"):
        scoped = runtime.cache_tag()
    assert whole != scoped and "attn" in str(scoped)


@pytest.mark.parametrize("env,piece", [
    ({"INDUCTOR_NO_FUSE": "1", "INDUCTOR_ABLATE_MODULES": "a b"}, "INDUCTOR_ABLATE_MODULES='a b' is not valid"),
    ({"INDUCTOR_NO_FUSE_PAIRS": "mm"}, "INDUCTOR_NO_FUSE_PAIRS='mm' is not valid"),
])
def test_a_bad_scope_is_one_line(env, piece):
    proc = run_py("import torch._inductor.scheduler", env=clean_env(**env), check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and piece in lines[0], proc.stderr


def test_rows_scoped_by_region_and_where_the_loss_sits():
    from inductor_ablate import rows, stats
    from inductor_ablate.errors import UsageError

    row = rows.by_name("no-fusion@encoder.layer.*.attention|pooler")
    assert row.switches == {"no_fuse": True, "modules": "encoder.layer.*.attention,pooler"}
    assert rows.by_name("no-inlining@op:softmax").switches == {"no_inline": True, "ops": "softmax"}
    with pytest.raises(UsageError, match="scopable rows"):
        rows.by_name("no-cudagraphs@attn")
    assert rows.by_region(["all", "no-fusion", "no-cudagraphs"], ["attn", "mlp"]) == ["no-fusion@attn", "no-fusion@mlp"]

    def row(config, kept):
        return dict(suite="s", device="cpu", dtype="float32", mode="inference", config=config, kept=kept,
                    kept_lo=kept - 0.01, kept_hi=kept + 0.01, significant=True)
    got = stats.regions([row("no-fusion", 0.90), row("no-fusion@attn", 0.94), row("no-fusion@mlp", 0.97)])
    assert len(got) == 1 and got[0]["loss"] == pytest.approx(0.10)
    assert [round(p["part"], 2) for p in got[0]["regions"]] == [0.6, 0.3] and got[0]["adds_up"]  # 0.09 of 0.10
    got = stats.regions([row("no-fusion", 0.90), row("no-fusion@attn", 0.94), row("no-fusion@mlp", 0.99)])
    assert not got[0]["adds_up"] and got[0]["sum_loss"] == pytest.approx(0.07)
    # the whole model's row carries its own star, as the headline does
    from inductor_ablate.views import markdown
    unstarred = dict(row("no-fusion@mlp", 0.99), significant=False)
    table = markdown.regions({"regions": stats.regions([row("no-fusion", 0.90), unstarred])})
    assert "| no-fusion | (whole model) | 0.90 [0.89, 0.91]* |" in table and "| | mlp | 0.99 [0.98, 1.00] |" in table


def test_bench_by_region_end_to_end(tmp_path):
    """``bench --regions``: tiny_lm's no-fusion-no-inlining run once whole and once per region
    (attention, MLP), each cell carrying its region; the regions table says where the loss sits."""
    import subprocess
    import sys

    out = tmp_path / "regions.json"
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "bench", "--device", "cpu", "--models", "tiny_lm",
                           "--configs", "no-fusion-no-inlining", "--regions", "blocks.*.1,blocks.*.2", "--repeat", "3",
                           "--json", str(out), "--no-progress"], env=clean_env(), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    cells = {c["config"]: c for c in json.loads(out.read_text())["cells"]}
    assert set(cells) == {"all", "no-fusion-no-inlining", "no-fusion-no-inlining@blocks.*.1",
                          "no-fusion-no-inlining@blocks.*.2"}
    assert cells["no-fusion-no-inlining@blocks.*.1"]["region"] == "blocks.*.1"
    # the scoped rows split the model's nodes between them: each has fewer nodes than the whole row
    whole = cells["no-fusion-no-inlining"]["fused_nodes"]
    assert all(cells["all"]["fused_nodes"] < cells[f"no-fusion-no-inlining@blocks.*.{i}"]["fused_nodes"] < whole
               for i in (1, 2)), {k: c["fused_nodes"] for k, c in cells.items()}
    table = subprocess.run([sys.executable, "-m", "inductor_ablate", "report", "--markdown", "--table", "regions",
                            str(out)], env=clean_env(), capture_output=True, text=True, timeout=300)
    assert table.returncode == 0, table.stderr
    assert "| no-fusion-no-inlining | (whole model) |" in table.stdout and "| | blocks.*.1 |" in table.stdout
    assert "the regions' losses sum to" in table.stdout
    page = tmp_path / "regions.html"
    proc = subprocess.run([sys.executable, "-m", "inductor_ablate", "report", str(out), "-o", str(page)], env=clean_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    assert "Where each row's loss sits, by region" in html and "<td>blocks.*.2</td>" in html


class Norms(torch.nn.Module):
    """Two layer norms (reductions, so the scheduler makes fusions), one per submodule."""

    def __init__(self):
        super().__init__()
        self.first = torch.nn.Sequential(torch.nn.LayerNorm(33), torch.nn.GELU())
        self.second = torch.nn.Sequential(torch.nn.LayerNorm(33), torch.nn.Tanh())

    def forward(self, x):
        return self.second(self.first(x) * 2.0)


def _compile_norms(ablate, log=None, **switches):
    torch._dynamo.reset()
    decisions.reset()
    x, model = torch.randn(64, 33), Norms()
    with ablate.config.patch(**switches), torch._inductor.config.patch(force_disable_caches=True), \
            output_codes() as codes:
        torch.testing.assert_close(torch.compile(model)(x), model(x))
    decisions.reset()  # closes the log
    records = decisions.load_log(str(log)) if log else []
    return code_hash([AOT_ID.sub("", c) for c in codes]), [r for r in records if r["decision"] == "fusion"]


def test_limits_and_skips_number_in_scope_fusions_under_a_scope(ablate, tmp_path, monkeypatch):
    """Under a scope, INDUCTOR_FUSE_LIMIT counts and INDUCTOR_FUSE_SKIP names the fusions in scope
    (the log's ``scope_n``): a limit of 0 there is no-fusion there, and skip 1 vetoes the scope's
    first fusion, whatever its number in the whole program."""
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("INDUCTOR_ABLATE_LOG", str(log))
    _, fusions = _compile_norms(ablate, log, modules="second")
    inside = [r for r in fusions if r["in_scope"]]
    assert inside and [r["scope_n"] for r in inside] == list(range(1, len(inside) + 1)), fusions
    assert all(r["scope_n"] is None for r in fusions if not r["in_scope"])
    assert any(r["scope_n"] != r["n"] for r in inside)  # out-of-scope fusions between: its own numbering
    log.unlink()
    _, fusions = _compile_norms(ablate, log, fuse_skip="1", modules="second")
    assert [(r["scope_n"], r["in_scope"]) for r in fusions if r["result"].startswith("vetoed")] == [(1, True)]
    monkeypatch.delenv("INDUCTOR_ABLATE_LOG")
    limited = _compile_norms(ablate, fuse_limit=0, modules="second")[0]
    assert limited == _compile_norms(ablate, no_fuse=True, modules="second")[0] != _compile_norms(ablate)[0]


def test_bisect_numbers_fusions_as_the_limit_does_under_a_scope():
    """With the user's scope passed on to every run, bisect and rank count in-scope fusions, as
    INDUCTOR_FUSE_LIMIT and INDUCTOR_FUSE_SKIP then do; the record keeps its program-wide number."""
    from inductor_ablate.bisector import describe_decision, in_scope_numbering

    log = [dict(decision="fusion", n=1, graph=1, graph_n=1, in_scope=False, scope_n=None),
           dict(decision="fusion", n=2, graph=1, graph_n=2, in_scope=True, scope_n=1),
           dict(decision="fusion", n=3, graph=1, graph_n=3, in_scope=True, scope_n=2)]
    got = in_scope_numbering(log)
    assert [(r["n"], r["n_all"]) for r in got] == [(1, 2), (2, 3)]
    unscoped = [{k: v for k, v in r.items() if k not in ("in_scope", "scope_n")} for r in log]
    assert in_scope_numbering(unscoped) == unscoped
    record = dict(got[1], kind="vertical", node1="op1", node2="op2", score=8, ops1=["a:x"], ops2=["b:y"])
    assert describe_decision(record).startswith("in-scope decision #2 (#3 of the program; graph 1)")
