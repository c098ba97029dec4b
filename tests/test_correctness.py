"""No wrong answer under any switch: the programs that once computed one (inductor_ablate.regressions),
under every switch and every fusion kind taken out alone, against eager, gradients included."""
import pytest
import torch

import inductor_ablate
from inductor_ablate.regressions import REGRESSIONS, switch_configs

CONFIGS = switch_configs("cpu")


def run(fn, args, backward):
    """Outputs, and with ``backward`` the gradients of every floating input (loss: mean of squares)."""
    args = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    out = fn(*args)
    outs = out if isinstance(out, tuple) else (out,)
    if not backward:
        return [o.detach() for o in outs]
    grads = torch.autograd.grad(sum(o.float().pow(2).mean() for o in outs), [a for a in args if a.requires_grad])
    return [o.detach() for o in outs] + list(grads)


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("name", list(REGRESSIONS))
def test_regression_program_matches_eager(ablate, name, config):
    case = REGRESSIONS[name]
    fn, args = case.build("cpu")
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
