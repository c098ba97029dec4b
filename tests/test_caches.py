"""Inductor's FX-graph and AOTAutograd caches must key on the switches (caches ON, one directory).

torch hashes its files on disk, not our patches: without the cache-key patch an ablated compile
silently reuses a stock fused artifact.  Here every compile reports its cache outcome and what it
generated, so a wrong reuse shows as the wrong number of C++ functions.
"""
import re

from conftest import clean_env, run_py

REPORT = """
import re, torch
from torch._dynamo.utils import counters
from torch._inductor.utils import run_and_get_code
import inductor_ablate

def f(x, w):
    return (torch.relu(x @ w + 1.0) * 2.0).sum(1)

def compile_and_report(label, **switches):
    torch._dynamo.reset(); counters.clear()
    x = torch.randn(16, 32, requires_grad=True); w = torch.randn(32, 8, requires_grad=True)
    with inductor_ablate.config.patch(**switches):
        out, code = run_and_get_code(torch.compile(f), x, w)
    funcs = len(re.findall(r"^cpp_\\w+ = ", code[0], re.M))
    fx = "hit" if counters["inductor"]["fxgraph_cache_hit"] else "miss"
    aot = "hit" if counters["aot_autograd"]["autograd_cache_hit"] else "miss"
    print(f"{label} funcs={funcs} fx={fx} aot={aot}")
"""


def outcomes(stdout):
    return {m[0]: (int(m[1]), m[2], m[3]) for m in re.findall(r"^(\S+) funcs=(\d+) fx=(\w+) aot=(\w+)", stdout, re.M)}


def test_stock_and_ablated_never_share_an_artifact(tmp_path):
    env = clean_env(TORCHINDUCTOR_CACHE_DIR=str(tmp_path), TORCHINDUCTOR_FX_GRAPH_CACHE="1",
                    TORCHINDUCTOR_AUTOGRAD_CACHE="1")
    # one process: stock, then ablated, then both again
    first = outcomes(run_py(REPORT + """
compile_and_report("stock")
compile_and_report("ablated", one_kernel_per_op=True)
compile_and_report("stock_again")
compile_and_report("ablated_again", one_kernel_per_op=True)
""", env=env).stdout)
    stock_funcs = first["stock"][0]
    ablated_funcs = first["ablated"][0]
    assert ablated_funcs > stock_funcs  # the ablated compile did not get the stock artifact
    assert first["stock"][1:] == ("miss", "miss") and first["ablated"][1:] == ("miss", "miss")
    assert first["stock_again"][0] == stock_funcs and first["ablated_again"][0] == ablated_funcs
    assert "hit" in first["ablated_again"][1:]  # a repeated ablated run may hit its own entry

    # fresh processes, same cache directory, in both orders
    ablated = outcomes(run_py(REPORT + 'compile_and_report("ablated", one_kernel_per_op=True)', env=env).stdout)
    stock = outcomes(run_py(REPORT + 'compile_and_report("stock")', env=env).stdout)
    assert ablated["ablated"][0] == ablated_funcs and "hit" in ablated["ablated"][1:]
    assert stock["stock"][0] == stock_funcs and "hit" in stock["stock"][1:]

    # the environment-variable way in, a fresh process: gets its own (ablated) artifact
    env_run = outcomes(run_py(REPORT + 'compile_and_report("env")',
                              env={**env, "INDUCTOR_NO_FUSE": "1", "INDUCTOR_FLUSH_EVERY_NODE": "1",
                                   "INDUCTOR_NO_INLINE": "1"}).stdout)
    assert env_run["env"][0] == ablated_funcs


def test_partial_fusion_kinds_get_their_own_entries(tmp_path):
    env = clean_env(TORCHINDUCTOR_CACHE_DIR=str(tmp_path))
    out = outcomes(run_py(REPORT + """
compile_and_report("vertical", no_fuse="vertical", flush_every_node=True)
compile_and_report("horizontal", no_fuse="horizontal", flush_every_node=True)
""", env=env).stdout)
    assert out["horizontal"][1] == "miss"  # not served the vertical-only artifact
