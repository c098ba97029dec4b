"""``INDUCTOR_EXPECT_FUSED`` (issue 64, item 7): a check that a module compiles to one kernel, on
real CPU compiles.

- A module Inductor fuses into one kernel passes silently; with fusion vetoed the check names the
  kernels and the switch; where Inductor itself refuses, it gives Inductor's reason.
- Under ``INDUCTOR_ABLATE_STRICT=1`` it is an error, so a test can pin "this block is one kernel".
- It changes no decision: the generated code is stock's.
"""
import re
import warnings

import pytest
import torch

from inductor_ablate import decisions
from inductor_ablate.bench.cell import code_hash, output_codes

AOT_ID = re.compile(r"^# AOT ID: .*$", re.M)


class Norm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(64)
        self.act = torch.nn.GELU()

    def forward(self, x):
        return self.act(self.norm(x)) * 2.0


class TwoSums(torch.nn.Module):
    """Reductions over different dimensions that share no loop: Inductor refuses to fuse them."""

    def forward(self, x):
        return x.sum(0, keepdim=True) + x.sum(1, keepdim=True)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Norm()
        self.sums = TwoSums()

    def forward(self, x, y):
        return self.block(x), self.sums(y)


def _compile(ablate, **switches):
    """(code hash, the check's messages) of Model compiled under ``switches``."""
    torch._dynamo.reset()
    decisions.reset()
    x, y = torch.randn(48, 64), torch.randn(40, 24)
    model = Model()
    with warnings.catch_warnings(record=True) as caught, ablate.config.patch(**switches), \
            torch._inductor.config.patch(force_disable_caches=True), output_codes() as codes:
        warnings.simplefilter("always")
        torch.testing.assert_close(torch.compile(model)(x, y), model(x, y))
    messages = [str(w.message) for w in caught if "INDUCTOR_EXPECT_FUSED" in str(w.message)]
    return code_hash([AOT_ID.sub("", c) for c in codes]), messages


def test_a_fused_module_passes_and_the_code_is_stocks(ablate):
    stock, none = _compile(ablate)
    checked, messages = _compile(ablate, expect_fused="block")
    assert none == [] and messages == []
    assert checked == stock


def test_a_split_module_names_its_kernels_and_the_switch(ablate):
    _, messages = _compile(ablate, expect_fused="block", no_fuse=True)
    assert len(messages) == 1, messages
    kernels = int(re.search(r"computes it in (\d+) kernels", messages[0]).group(1))
    assert kernels >= 3 and "switches on: INDUCTOR_NO_FUSE" in messages[0]


def test_inductors_own_refusal_is_the_reason(ablate):
    _, messages = _compile(ablate, expect_fused="sums")
    assert len(messages) == 1 and "Inductor refused: " in messages[0], messages
    assert "switches on" not in messages[0]


def test_strict_makes_it_an_error(ablate, monkeypatch):
    monkeypatch.setenv("INDUCTOR_ABLATE_STRICT", "1")
    with pytest.raises(Exception, match=r"INDUCTOR_EXPECT_FUSED sums: graph \d+ computes it in \d+ kernels"):
        _compile(ablate, expect_fused="sums")
    _compile(ablate, expect_fused="block")  # a module in one kernel is no error
