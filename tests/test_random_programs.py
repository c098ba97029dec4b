"""Property: on random small programs (inductor_ablate.random_programs), every switch and every fusion
kind taken out alone leaves results and gradients equal to eager within the dtype's tolerance, and
under ONE_KERNEL_PER_OP no kernel holds two ops.  A program that stock Inductor (every switch off)
gets wrong as well is not the switch's doing: it is counted as a hypothesis event ("stock Inductor
wrong too", shown by --hypothesis-show-statistics) and, with INDUCTOR_ABLATE_FUZZ_LOG=FILE, its source
is appended there (docs/correctness.md lists what such runs found).

CI runs a few examples per configuration (about 50 in all), and four times as many under random
decision limits and skip sets (test_random_program_matches_eager_under_random_limits).  A long run:
    INDUCTOR_ABLATE_FUZZ_EXAMPLES=120 python -m pytest -q tests/test_random_programs.py   # per config
and on a GPU:  INDUCTOR_ABLATE_TEST_DEVICE=cuda ...  (results in docs/correctness.md).
Scoped switches (issue 80): test_random_program_matches_eager_under_a_scope, FUZZ_EXAMPLES per family.
INDUCTOR_ABLATE_FUZZ_POISON=1 compiles every program (switched and stock) with poisoned buffers
(inductor_ablate.poison): a kernel that reads memory before it is written then fails every time.
"""
import contextlib
import os
import re

import pytest
import torch
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import inductor_ablate
from inductor_ablate import decisions
from inductor_ablate import scope as scope_of
from inductor_ablate.kernel_census import recording, summarize
from inductor_ablate.poison import POISON_INDUCTOR, poisoned_buffers
from inductor_ablate.random_programs import TOLERANCE, max_error, run, specs
from inductor_ablate.regressions import switch_configs
from inductor_ablate.switches import FUSION_KINDS, KIND_DEVICE

DEVICE = os.environ.get("INDUCTOR_ABLATE_TEST_DEVICE", "cpu")
EXAMPLES = int(os.environ.get("INDUCTOR_ABLATE_FUZZ_EXAMPLES", "3"))
LONG_RUN = "INDUCTOR_ABLATE_FUZZ_EXAMPLES" in os.environ  # CI: the same examples every run (derandomized)
CONFIGS = switch_configs(DEVICE)
POISON = os.environ.get("INDUCTOR_ABLATE_FUZZ_POISON", "0")
if POISON not in ("0", "1"):
    raise pytest.UsageError(f"INDUCTOR_ABLATE_FUZZ_POISON={POISON!r}: expected 0 or 1")


def compiling():
    """Where programs compile and run: poisoned buffers under INDUCTOR_ABLATE_FUZZ_POISON=1."""
    stack = contextlib.ExitStack()
    if POISON == "1":
        stack.enter_context(torch._inductor.config.patch(POISON_INDUCTOR))
        stack.enter_context(poisoned_buffers())
    return stack


@pytest.mark.parametrize("config", list(CONFIGS))
@settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True, derandomize=not LONG_RUN,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(spec=specs())
def test_random_program_matches_eager(ablate, config, spec):
    fn, args = spec.build()
    args = [a.to(DEVICE) for a in args]
    expected = run(fn, args, spec.backward)
    torch._dynamo.reset()
    with ablate.config.patch(**CONFIGS[config]), recording() as sink, compiling():
        got = run(torch.compile(fn), args, spec.backward)
    error = max_error(got, expected)
    if error > TOLERANCE[spec.dtype] and stock_error(fn, args, spec, expected) > TOLERANCE[spec.dtype]:
        stock_wrong_too(config, spec, error)
        return
    assert error <= TOLERANCE[spec.dtype], f"{config}: error {error:.3g} > {TOLERANCE[spec.dtype]}\n{spec.source()}"
    census = summarize(sink)
    if config == "one-kernel-per-op" and (census.kernels or census.externs):  # views only: nothing to check
        inductor_ablate.assert_one_op_per_kernel(census)


@st.composite
def decision_limits(draw):
    """Random decision limits and skip sets (issue 54: whole switches alone missed a crash that only
    a limit reached): an inlining limit, a fusion limit, a skip set, or an inlining limit with one of
    the other two, each number small enough to fall inside a small program's decisions."""
    inline = {"inline_limit": draw(st.integers(0, 12))}
    fuse = draw(st.sampled_from([
        {"fuse_limit": draw(st.integers(0, 8))},
        {"fuse_skip": ",".join(map(str, sorted(draw(st.sets(st.integers(1, 8), min_size=1, max_size=3)))))}]))
    return draw(st.sampled_from([inline, fuse, {**inline, **fuse}]))


@settings(max_examples=4 * EXAMPLES, deadline=None, database=None, print_blob=True, derandomize=not LONG_RUN,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(spec=specs(), limits=decision_limits())
def test_random_program_matches_eager_under_random_limits(ablate, spec, limits):
    fn, args = spec.build()
    args = [a.to(DEVICE) for a in args]
    expected = run(fn, args, spec.backward)
    torch._dynamo.reset()
    decisions.reset()  # numbered from 1 in each example, as in a fresh process
    with ablate.config.patch(**limits), compiling():
        got = run(torch.compile(fn), args, spec.backward)
    error = max_error(got, expected)
    event(f"limits: {'+'.join(sorted(limits))}")
    if error > TOLERANCE[spec.dtype] and stock_error(fn, args, spec, expected) > TOLERANCE[spec.dtype]:
        stock_wrong_too(limits, spec, error)
        return
    assert error <= TOLERANCE[spec.dtype], f"{limits}: error {error:.3g} > {TOLERANCE[spec.dtype]}\n{spec.source()}"


def graph_names(fn, args, backward: bool) -> tuple[list[str], list[str]]:
    """The op names and module paths a scope can name in the program's graphs, forward and backward,
    traced as Inductor traces them (its decompositions) but not compiled: what to draw scopes from."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    from torch._inductor.decomposition import select_decomp_table

    from inductor_ablate import scope

    held = set()  # (module path or "", op name)

    def record(graph, example_inputs):
        for node in graph.graph.nodes:
            if node.op == "call_function":
                path = scope.module_path(node) or ""
                held.update((path, n) for n in scope.op_names(node) if NAME.fullmatch(n))
        return make_boxed_func(graph.forward)
    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=record, bw_compiler=record, decompositions=select_decomp_table())
    run(torch.compile(fn, backend=backend), args, backward)
    torch._dynamo.reset()
    return sorted(held)


NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@st.composite
def scopes(draw, held):
    """A module scope (one step, a range of steps as one glob, or two globs), an op scope (one or two
    of the graph's ops, or a glob), or both (an op the module holds), drawn from ``held``."""
    steps = sorted({int(path.split(".")[1]) for path, _ in held if path})
    kind = draw(st.sampled_from(["modules", "ops", "both"] if steps else ["ops"]))
    scope = {}
    if kind != "ops":
        one = draw(st.sampled_from(steps))
        shape = draw(st.sampled_from(["one", "range", "two"] if len(steps) > 1 else ["one"]))
        scope["modules"] = {"one": f"steps.{one}", "range": f"steps.[{min(steps)}-{max(one, min(steps))}]",
                            "two": f"steps.{one},steps.{steps[0]}"}[shape]
    if kind != "modules":
        where = {f"steps.{one}"} if kind == "both" else None
        ops = sorted({op for path, op in held if where is None or path in where})
        picked = draw(st.lists(st.sampled_from(ops), min_size=1, max_size=2, unique=True))
        scope["ops"] = picked[0][:2] + "*" if draw(st.integers(0, 4)) == 0 else ",".join(picked)
    return scope


@st.composite
def scoped_switches(draw, family, ops):
    """The switches a scope narrows, by family (one test item each, so that xdist spreads them)."""
    kinds = [k for k in FUSION_KINDS if KIND_DEVICE.get(k, DEVICE) == DEVICE]
    if family == "no-fuse":
        return {"no_fuse": draw(st.sampled_from([True, *kinds]))}
    if family == "no-inline":
        return {"no_inline": True, **draw(st.sampled_from([{}, {"no_fuse": draw(st.sampled_from(kinds))}]))}
    if family == "one-kernel-per-op":
        return draw(st.sampled_from([{"one_kernel_per_op": True}, {"flush_every_node": True}]))
    if family == "limits":
        return draw(decision_limits())
    pair = f"{draw(st.sampled_from([*ops, '*']))}+{draw(st.sampled_from(ops))}"  # no-fuse-pairs
    return {"no_fuse_pairs": pair, **draw(st.sampled_from([{}, {"no_inline": True}]))}


SCOPED_FAMILIES = ("no-fuse", "no-inline", "one-kernel-per-op", "limits", "no-fuse-pairs")


@pytest.mark.parametrize("family", SCOPED_FAMILIES)
@settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True, derandomize=not LONG_RUN,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(spec=specs(), data=st.data())
def test_random_program_matches_eager_under_a_scope(ablate, family, spec, data):
    """Issue 80: scoped switches, drawn over the program's own ops and modules (each step is the
    submodule ``steps.i``), forward and backward, against eager."""
    fn, args = spec.build(modules=True)
    args = [a.to(DEVICE) for a in args]
    expected = run(fn, args, spec.backward)
    held = graph_names(fn, args, spec.backward)
    assume(held)  # a program of views only (batch_norm of one row is its input): nothing to scope
    switches = data.draw(scoped_switches(family, sorted({op for _, op in held})), label="switches")
    scope = data.draw(scopes(held), label="scope") if family != "no-fuse-pairs" or data.draw(
        st.booleans(), label="scoped pairs") else {}
    decisions.reset()
    in_scope = []

    def count(graph):  # a pass that changes nothing: how many nodes the scope holds
        in_scope.extend(n for n in graph.nodes if n.op == "call_function" and scope_of.fx_in_scope(n))
    with ablate.config.patch(**switches, **scope), compiling(), \
            torch._inductor.config.patch(post_grad_custom_post_pass=count):
        got = run(torch.compile(fn), args, spec.backward)
    event(f"scope: {'+'.join(sorted(scope)) or 'none'}, {'held nodes' if in_scope else 'held no node'}")
    error = max_error(got, expected)
    config = {**switches, **scope}
    if error > TOLERANCE[spec.dtype] and stock_error(fn, args, spec, expected) > TOLERANCE[spec.dtype]:
        stock_wrong_too(config, spec, error)
        return
    assert error <= TOLERANCE[spec.dtype], \
        f"{config}: error {error:.3g} > {TOLERANCE[spec.dtype]}\n{spec.source(modules=True)}"


def stock_wrong_too(config, spec, error) -> None:
    """Count the program as stock's bug, not the switch's, and keep its source (INDUCTOR_ABLATE_FUZZ_LOG)."""
    event("stock Inductor wrong too")
    if os.environ.get("INDUCTOR_ABLATE_FUZZ_LOG"):
        with open(os.environ["INDUCTOR_ABLATE_FUZZ_LOG"], "a") as f:
            f.write(f"# {DEVICE} {spec.dtype} {spec.rows}x{spec.cols} backward={spec.backward} {config}: "
                    f"error {error:.3g}\n{spec.source()}\n")


def stock_error(fn, args, spec, expected) -> float:
    """The same program with every switch off."""
    torch._dynamo.reset()
    with compiling():
        return max_error(run(torch.compile(fn), args, spec.backward), expected)
