"""The decision limits against the whole switches (issue 54), and the fusion veto against choices
classes that do not call the base class.

- INDUCTOR_INLINE_LIMIT=N compiles what INDUCTOR_NO_INLINE=1 compiles (the program from issue 54 is
  the regression), and a limit of 0 generates NO_INLINE's very code, with and without the backward.
- A user's ``config.inductor_choices_class`` whose ``can_fuse`` never calls InductorChoices', and a
  choices contributor registered with torch 2.15's ``register_inductor_choices``, cannot get around
  INDUCTOR_NO_FUSE or INDUCTOR_FUSE_LIMIT.
"""
import re

import pytest
import torch
from torch._inductor.choices import InductorChoices

from inductor_ablate import decisions
from inductor_ablate.bench.cell import code_hash, output_codes
from inductor_ablate.kernel_census import recording, summarize
from inductor_ablate.random_programs import Spec, run
from inductor_ablate.regressions import REGRESSIONS

NO_CACHES = dict(force_disable_caches=True)
AOT_ID = re.compile(r"^# AOT ID: .*$", re.M)  # a counter of the process's graphs, not code


def _compiled(ablate, fn, args, backward, **switches):
    """(values, code hash) of ``fn`` compiled under ``switches``, numbering decisions from 1."""
    torch._dynamo.reset()
    decisions.reset()
    with ablate.config.patch(**switches), torch._inductor.config.patch(NO_CACHES), output_codes() as codes:
        values = run(torch.compile(fn), args, backward)
    return values, code_hash([AOT_ID.sub("", c) for c in codes])


@pytest.mark.parametrize("limit", [0, 3])
def test_inline_limit_compiles_the_program_of_issue_54(ablate, limit):
    fn, args = REGRESSIONS["inline_limit_int_index"].build("cpu")
    expected = run(fn, args, True)
    got, _ = _compiled(ablate, fn, args, True, inline_limit=limit)
    for i, (g, e) in enumerate(zip(got, expected)):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5, msg=lambda m: f"limit {limit}, value {i}: {m}")


#: Programs with zero-read buffers (iota, full, zeros) read by index, reductions and scatters.
SPECS = [
    Spec(rows=8, cols=17, dtype="float32", n_inputs=2, backward=True, outputs=(5,),
         steps=(("roll", (0,), 1), ("index_select", (2,), 0), ("scatter_add", (3, 1), 0), ("softmax", (4,), 1))),
    Spec(rows=5, cols=16, dtype="bfloat16", n_inputs=1, backward=True, outputs=(4, 2),
         steps=(("rotate_cat", (0,), 3), ("index_put_acc", (1, 0), 0), ("layer_norm", (2,), 0),
                ("gather", (3,), 0))),
]


def _programs():
    """(name, build, backward, stock_bug): a program with a stock bug is not run stock (one writes
    out of bounds there, and a process it corrupts fails later tests)."""
    for name, case in REGRESSIONS.items():
        yield name, lambda case=case: case.build("cpu"), case.backward, bool(case.stock_bug)
    for i, spec in enumerate(SPECS):
        yield f"spec{i}", spec.build, spec.backward, False


@pytest.mark.parametrize("name,build,backward,stock_bug", list(_programs()), ids=[p[0] for p in _programs()])
def test_inline_limit_zero_generates_no_inlines_code(ablate, name, build, backward, stock_bug):
    fn, args = build()
    for with_backward in sorted({False, backward}):
        _, no_inline = _compiled(ablate, fn, args, with_backward, no_inline=True)
        _, limit0 = _compiled(ablate, fn, args, with_backward, inline_limit=0)
        assert limit0 == no_inline, f"{name} (backward={with_backward}): INDUCTOR_INLINE_LIMIT=0 != NO_INLINE"
        if not stock_bug:
            _, stock = _compiled(ablate, fn, args, with_backward)
            assert no_inline != stock, f"{name}: the switch changed nothing"


class AlwaysFuse(InductorChoices):
    """A user's choices class: its can_fuse decides alone and never calls the base class."""

    @staticmethod
    def can_fuse(scheduler, node1, node2, shared_data_score):
        return True

    def uuid(self):  # torch 2.15 keys its caches on a registered contributor's uuid
        return "inductor_ablate-always-fuse"


def _pointwise_chain(x):
    return (x.sin() + 1).relu() * 2 - x.cos()


def _nodes(ablate, **switches) -> int:
    """Scheduler nodes after fusion; NO_INLINE leaves one node per op to fuse."""
    with ablate.config.patch(no_inline=True, **switches), recording() as sink:
        torch.compile(_pointwise_chain)(torch.randn(100))
    return summarize(sink).fused_nodes  # scheduler nodes after fusion (the C++ backend groups them)


def _assert_veto_holds(ablate):
    decisions.reset()
    assert _nodes(ablate) == 1
    assert _nodes(ablate, no_fuse=True) == 6  # sin, add, relu, mul, cos, sub: nothing fused
    decisions.reset()
    assert _nodes(ablate, fuse_limit=2) == 4  # two fusions allowed, the rest vetoed
    assert decisions.counts()[0] == 2


def test_no_fuse_holds_under_a_users_choices_class(ablate):
    if not hasattr(torch._inductor.config, "inductor_choices_class"):
        pytest.skip(f"torch {torch.__version__} has no config.inductor_choices_class")
    with torch._inductor.config.patch(inductor_choices_class=AlwaysFuse):
        from torch._inductor.virtualized import V

        V.set_choices_handler(AlwaysFuse())
        try:
            _assert_veto_holds(ablate)
        finally:
            V.set_choices_handler(InductorChoices())


def test_no_fuse_holds_under_a_registered_choices_contributor(ablate):
    choices = torch._inductor.choices
    if not hasattr(choices, "register_inductor_choices"):
        pytest.skip(f"torch {torch.__version__} has no register_inductor_choices (torch 2.15 adds it)")
    choices.register_inductor_choices("inductor_ablate_test", AlwaysFuse)
    try:
        _assert_veto_holds(ablate)
    finally:
        choices.unregister_inductor_choices("inductor_ablate_test")
