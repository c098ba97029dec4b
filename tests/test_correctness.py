"""No wrong answer under any switch: the programs that once computed one (inductor_ablate.regressions),
under every switch and every fusion kind taken out alone, against eager, gradients included.
INDUCTOR_ABLATE_TEST_DEVICE=cuda runs them on a GPU (as on the H200, see docs/correctness.md)."""
import os

import pytest
import torch

import inductor_ablate
from inductor_ablate.random_programs import run
from inductor_ablate.regressions import REGRESSIONS, SCOPED_NO_INLINE_AMAX_OPS, switch_configs

DEVICE = os.environ.get("INDUCTOR_ABLATE_TEST_DEVICE", "cpu")
CONFIGS = switch_configs(DEVICE)


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("name", list(REGRESSIONS))
def test_regression_program_matches_eager(ablate, name, config):
    case = REGRESSIONS[name]
    fn, args = case.build(DEVICE)
    expected = run(fn, args, case.backward)
    torch._dynamo.reset()
    with ablate.config.patch(**CONFIGS[config]):
        got = run(torch.compile(fn), args, case.backward)
    for i, (g, e) in enumerate(zip(got, expected)):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5, msg=lambda m: f"{name} under {config}, value {i}: {m}")


def test_every_stock_bug_names_a_fix_that_applied(ablate):
    inductor_ablate.importhook.import_targets()
    state = {r["slug"]: r["state"] for r in inductor_ablate.report()}
    for name, case in REGRESSIONS.items():
        if case.stock_bug:
            assert state[case.stock_bug] == "applied", (name, case.stock_bug, state[case.stock_bug])


SCOPED_SWITCHES = {**CONFIGS, "inline-limit=3": dict(inline_limit=3), "fuse-limit=0": dict(fuse_limit=0),
                   "fuse-skip=1": dict(fuse_skip="1")}


def _ops_in_graph(fn, args) -> set[str]:
    """Every name the post-grad graph's nodes answer to in an op scope (inductor_ablate.scope)."""
    from inductor_ablate import scope

    names: set[str] = set()

    def collect(graph):
        names.update(n for node in graph.nodes if node.op == "call_function" for n in scope.op_names(node))
    torch._dynamo.reset()
    with torch._inductor.config.patch(post_grad_custom_post_pass=collect, force_disable_caches=True):
        torch.compile(fn)(*args)
    return names


@pytest.mark.skipif(DEVICE != "cpu", reason="issue 80 is the C++ backend's")
@pytest.mark.parametrize("op", SCOPED_NO_INLINE_AMAX_OPS)
def test_issue80_program_is_exact_under_every_switch_scoped_to_each_of_its_ops(ablate, op):
    """Issue 80: NO_INLINE scoped to amax gave an error of 3.58 (a one-row C++ local buffer under a
    tiled row loop).  Every switch, limit and skip set, scoped to each op of the program in turn."""
    fn, args = REGRESSIONS["scoped_no_inline_amax"].build(DEVICE)
    assert op in _ops_in_graph(fn, args), f"the scope {op!r} matches no node: the test would test nothing"
    expected = fn(*args)
    wrong = {}
    for label, switches in SCOPED_SWITCHES.items():
        torch._dynamo.reset()
        ablate.decisions.reset()
        with ablate.config.patch(**switches, ops=op):
            got = torch.compile(fn)(*args)
        if not torch.allclose(got, expected, atol=1e-5, rtol=1e-5):
            wrong[label] = (got - expected).abs().max().item()
    assert not wrong, f"INDUCTOR_ABLATE_OPS={op}: wrong under {wrong}"
