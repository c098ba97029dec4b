"""No wrong answer under any switch: the programs that once computed one (inductor_ablate.regressions),
under every switch and every fusion kind taken out alone, against eager, gradients included.
INDUCTOR_ABLATE_TEST_DEVICE=cuda runs them on a GPU (as on the H200, see docs/correctness.md)."""
import os

import pytest
import torch

import inductor_ablate
from inductor_ablate.random_programs import run
from inductor_ablate.regressions import REGRESSIONS, switch_configs

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
