"""A metric command for ``bisect --rank``: compile one bench model and print one number last.

    python scripts/model_latency.py MODEL [--suite embedded] [--device cpu] [--dtype float32]
                                          [--mode inference] [--config all] [--set KEY=VALUE ...]
                                          [--picks DIR] [--save-code DIR] [--save-inputs DIR] [--pin PICKS]
                                          [--poison]
                                          [--kernels | --bytes | --errors N | --patterns | --checks N]

Prints the compiled model's median milliseconds per call (``ms 1.234``), or with ``--kernels`` the
number of kernels Inductor generated, or with ``--bytes`` the bytes its generated kernels read and
write as Inductor itself estimates them (``kernel_census.counting_bytes``; also printed: the
extern calls' bytes). Both are deterministic metrics.  The model compiles under a bench
config, as the bench's cell does: its Inductor settings (default ``all``: on CUDA, max-autotune's
matmul templates and CUDA graphs, as the paper's row) and its switches (``--config no-fusion``:
INDUCTOR_NO_FUSE=1), on top of whatever INDUCTOR_* switches the environment sets, so ``bisect
--rank`` can veto one fusion per run.  ``--set KEY=VALUE`` (repeatable) sets one more
``torch._inductor.config`` option on top of the config's, to take a row apart: ``--set
layout_optimization=False`` is one of the three settings ``no-loop-reorder`` turns off.  ``--picks
DIR`` compiles in a fresh Inductor cache seeded with ``bench --picks``' autotuning picks of this model
and setting (the bench's folder: docs/results/picks), so a process on a fresh box does not benchmark
every matmul choice again; what it benchmarks is saved back there, and stderr says for how many
ops it benchmarked the choices afresh.  The output
is checked against eager first, as the bench checks a cell (a bfloat16 or float16 step that misses
eager passes if it is as close to the float64 step as eager is): a wrong answer exits 1 instead of
printing a time, and a right one says on stderr how far it was from eager (``accuracy ok: max
relative error against eager 0.0173; code hash 70443c5716c1b01f``: a cell's ``rel_error`` and
``code_hash``, so a process can be matched with a bench cell that generated the same code).

``--errors N`` prints instead where a step's error lies: the N outputs and gradients farthest from
eager, each against eager and against the same step in float64 (same weights and inputs), with
its scale.  A compiled step far from eager but as close to float64 as eager is rounds differently;
one far from both is wrong, or sums badly.  The column ``eager nudged`` is how far eager's own
leaf moves when every leaf module's output is nudged by its dtype's rounding (half an ulp, at
random; the largest of 4 draws): an error of that size is rounding the leaf amplifies (a ReLU-like
kink crossed, a sum that cancels); one far above it is not.
``--checks N`` runs the compiled step N more times in the same process, the same code, and checks each
as the first (one line a step: its error against eager, the leaves that fail the check, and those
not bit for bit the first step's), exiting 1 if any step fails: it tells a wrong answer fixed at
compile time (every step alike) from one at run time (steps that differ), and names the outputs or
gradients it lands in, without ``--errors``' extra steps.  On CUDA with CUDA graphs on (``all``)
the first step runs plain, the second records a graph and the rest replay it; ``--set
triton.cudagraphs=False`` keeps every step on the first one's path.  ``--save-code DIR`` writes
each graph's generated code there (``graph-1.py``, ...: what the code hash hashes), to read the
kernels that write a wrong leaf, and ``triton-picks.txt``: the config each Triton kernel settled on
at its first run in this process (``inductor_ablate.triton_picks``), which the same code can pick
otherwise in another process (``scripts/config_sweep.py --pin`` runs the code with them; ``--pin
PICKS`` compiles the model with them: each kernel the file names runs its config there, unbenchmarked,
and stderr counts those pinned).  ``--save-inputs DIR`` writes, at the first call of each compiled
graph, its code as ``called-K.py`` and the tensors it was called with as ``called-K-inputs.pt`` (K
in the order the graphs are first called: forward, then backward; inputs that share memory still
share it): ``scripts/config_sweep.py called-2.py --inputs called-2-inputs.pt`` runs the backward
on the step's own values instead of random ones.  ``--poison`` starts every buffer the generated code allocates as
NaN and reuses none (``inductor_ablate.poison``): a kernel that reads memory before it is written,
whose answer otherwise hangs on what the allocator hands out, then fails in every process alike.
``--dtype float64`` compiles the model in float64, where rounding all but vanishes: a step that is
wrong in its logic stays wrong there.

``--patterns`` prints which of Inductor's FX patterns the compile matched: per pattern, by Inductor's
own names for them, counted where Inductor applies each match (``kernel_census.counting_patterns``,
so also on a torch whose Inductor counts no match per pattern, as 2.11), then Inductor's own totals,
``patterns N matches, M nodes matched``.  Where Inductor counts per pattern too (2.13, while
TORCHINDUCTOR_PATTERN_MATCH_DEBUG is set), stderr says if the two counts differ.
It tells what ``no-pattern-matching`` (pattern_matcher=False) takes out of a model; a pass that
does not ask pattern_matcher (freezing's, in inference) can still match under it.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import os
import shutil
import statistics
import sys
import tempfile
from unittest import mock

import torch

import inductor_ablate  # noqa: F401 (installs the overlay before Inductor is imported)
import torch._inductor.config as inductor_config
from torch._dynamo.utils import counters
from inductor_ablate.bench.cell import (TOLERANCE, _float64_step, _rel_error, _step, _Timer, accuracy, build_model, code_hash,
                                        nudged_step, output_codes, step_leaf_names)
from inductor_ablate.rows import all_inductor, by_name
from inductor_ablate.bench.models import require_model
from inductor_ablate.bench.picks import cache_name, check_picks_folder, has_picks, save_picks, seed_picks
from inductor_ablate.results import device_name
from inductor_ablate.errors import OneLineParser, UsageError, device_option, exit_with
from inductor_ablate.kernel_census import counting_bytes, counting_patterns, recording, summarize
from inductor_ablate.poison import POISON_INDUCTOR, poisoned_buffers
from inductor_ablate.triton_picks import pinned_picks, read_picks, settled_picks, write_picks


def print_errors(model, inputs, loss_fn, mode, actual, expected, top: int) -> None:
    """The ``top`` leaves of the step (output; in training each gradient) farthest from eager."""
    reference = _float64_step(model, inputs, loss_fn, mode)
    expected = [t.clone() for t in torch.utils._pytree.tree_leaves(expected)]  # the nudged step reuses .grad
    names = step_leaf_names(model, inputs, mode, len(expected))
    draws = [nudged_step(model, inputs, loss_fn, mode, seed) for seed in range(4)]
    leaves = [torch.utils._pytree.tree_leaves(x) for x in (actual, expected, reference)]
    rows = []
    for i, (name, a, e, r) in enumerate(zip(names, *leaves)):
        moved = max(_rel_error(draw[i], e) for draw in draws)
        rows.append((_rel_error(a, e), name, _rel_error(e, r), _rel_error(a, r), moved, e.detach().abs().max().item()))
    print(f"{'output or gradient':<44} {'vs eager':>9} {'eager vs f64':>12} {'vs f64':>9} {'eager nudged':>12} {'max |eager|':>11}")
    for vs_eager, name, eager_vs_64, vs_64, moved, scale in sorted(rows, key=lambda row: -row[0])[:top]:
        print(f"{name:<44} {vs_eager:>9.2e} {eager_vs_64:>12.2e} {vs_64:>9.2e} {moved:>12.2e} {scale:>11.2e}")


def leaves_of(step) -> list[torch.Tensor]:
    """A step's floating tensors (output, gradients), detached and copied: the next step reuses
    ``.grad`` and a replayed CUDA graph overwrites its outputs."""
    return [t.detach().clone() for t in torch.utils._pytree.tree_leaves(step)
            if isinstance(t, torch.Tensor) and t.is_floating_point()]


def named(pairs, most: int = 4) -> str:
    """``name (2.03), name (0.41), ... and 3 more``: the largest first."""
    pairs = sorted(pairs, key=lambda pair: -pair[1])
    text = ", ".join(f"{name} ({value:.3g})" for name, value in pairs[:most])
    return text + (f" and {len(pairs) - most} more" if len(pairs) > most else "")


def repeat_checks(run, first: list, expected: list, names: list[str], check, count: int) -> int:
    """Check the first compiled step and ``count`` more of the same compiled code (``run``) against
    eager, one line each, leaves as ``leaves_of`` gives them; 1 if any fails.  A failing step names
    the leaves off eager most; a step whose leaves are not bit for bit the first's differs at run time."""
    failed = 0
    for number in range(1, count + 2):
        step = first if number == 1 else leaves_of(run())
        checked = check(step)
        line = f"check {number}: max relative error against eager {checked['rel_error']:.3g}"
        if "message" in checked:
            failed += 1
            wrong = [(name, _rel_error(a, e)) for name, a, e in zip(names, step, expected)]
            line += f", wrong: {checked['message']}; leaves off eager most: {named(w for w in wrong if w[1] > 0)}"
        else:
            line += ", ok"
        if number > 1:
            moved = [(name, _rel_error(a, b)) for name, a, b in zip(names, step, first) if not torch.equal(a, b)]
            line += (f"; differs from step 1 in {len(moved)} of {len(step)} leaves: {named(moved)}" if moved
                     else "; bit for bit step 1")
        print(line, flush=True)
    print(f"checks: {failed} of {count + 1} steps wrong")
    return 1 if failed else 0


def _read_pins(path: str, device: str) -> dict[str, str]:
    """``--pin``'s picks file, or a UsageError: no such file, a malformed line, or a device whose
    generated code has no Triton kernels."""
    if not device.startswith("cuda"):
        raise UsageError(f"--pin {path}: pins Triton kernels' configs, and --device {device} generates none")
    try:
        picks = read_picks(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--pin {path}: {exc}") from None
    if not picks:
        raise UsageError(f"--pin {path}: names no kernel")
    return picks


def save_code(codes: list[str], folder: str) -> None:
    """Each graph's generated code as ``folder/graph-N.py``, and the config each of its Triton kernels
    settled on in this process as ``folder/triton-picks.txt`` (``inductor_ablate.triton_picks``);
    stderr says where."""
    os.makedirs(folder, exist_ok=True)
    for number, code in enumerate(codes, 1):
        with open(os.path.join(folder, f"graph-{number}.py"), "w") as f:
            f.write(code)
    picks = settled_picks()
    write_picks(picks, os.path.join(folder, "triton-picks.txt"))
    print(f"code: {len(codes)} graph(s) and the picks of {len(picks)} Triton kernel(s) in {folder}", file=sys.stderr)


@contextlib.contextmanager
def saving_inputs(folder: str):
    """While on, the first call of each compiled graph writes its code to ``folder/called-K.py`` and
    its inputs to ``folder/called-K-inputs.pt``, K counting graphs in the order of their first call;
    yields the graphs seen.  Saved before the call, since the generated code frees its inputs as it
    goes; ``torch.save`` keeps inputs that are views of one storage views of one storage, so the
    code can be run again on the step's own values (``config_sweep.py --inputs``)."""
    from torch._inductor.output_code import CompiledFxGraph

    os.makedirs(folder, exist_ok=True)
    seen: dict[int, int] = {}
    original = CompiledFxGraph.__call__

    def call(graph, inputs):
        if id(graph) not in seen:
            seen[id(graph)] = number = len(seen) + 1
            with open(os.path.join(folder, f"called-{number}.py"), "w") as f:
                f.write(graph.source_code)
            saved = [a.detach() if isinstance(a, torch.Tensor) else a for a in inputs]
            torch.save(saved, os.path.join(folder, f"called-{number}-inputs.pt"))
        return original(graph, inputs)

    with mock.patch.object(CompiledFxGraph, "__call__", call):
        yield seen


def inductor_setting(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` -> (key, value) for ``torch._inductor.config``: the key must be one of its
    options, and the value is read as a Python literal (``False``, ``0``, ``'ATEN'``), else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UsageError(f"--set {text!r}: expected KEY=VALUE, e.g. layout_optimization=False")
    options = inductor_config.get_config_copy()  # dotted keys too: triton.cudagraphs
    if key not in options:
        raise UsageError(f"--set {text!r}: torch {torch.__version__} has no Inductor option {key!r}")
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        parsed = value
    current = options[key]
    if current is not None and type(parsed) is not type(current) and not (
            isinstance(current, float) and isinstance(parsed, int)):
        raise UsageError(f"--set {text!r}: {key} is a {type(current).__name__} (now {current!r})")
    return key, parsed


def main() -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--suite", default="embedded")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", type=device_option)
    p.add_argument("--dtype", default="float32", choices=sorted(TOLERANCE) + ["float64"],
                   help="float64 is held to float32's tolerance")
    p.add_argument("--mode", default="inference", choices=("inference", "training"))
    p.add_argument("--config", default="all", help="a bench config: its Inductor settings and switches (default all)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="one more torch._inductor.config option, on top of the config's (repeatable)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--kernels", action="store_true", help="print the kernel count instead of a time")
    what.add_argument("--bytes", action="store_true",
                      help="print Inductor's estimate of the bytes its generated kernels read and write")
    what.add_argument("--errors", type=int, metavar="N", help="print the N outputs and gradients farthest from eager")
    what.add_argument("--patterns", action="store_true",
                      help="print how often Inductor's FX patterns matched, per pattern where Inductor counts them")
    what.add_argument("--checks", type=int, metavar="N",
                      help="run the compiled step N more times and check each against eager, one line a step")
    p.add_argument("--save-code", metavar="DIR",
                   help="write each graph's generated code to DIR/graph-N.py, its Triton kernels' picks to DIR/triton-picks.txt")
    p.add_argument("--save-inputs", metavar="DIR",
                   help="write each compiled graph's code and the inputs of its first call to DIR/called-K.py, "
                        "DIR/called-K-inputs.pt")
    p.add_argument("--pin", metavar="PICKS",
                   help="on CUDA, each Triton kernel PICKS names (a --save-code triton-picks.txt) runs the config "
                        "named there instead of benchmarking its configs")
    p.add_argument("--poison", action="store_true",
                   help="every buffer the generated code allocates starts as NaN, none reused: reads before writes show")
    p.add_argument("--picks", metavar="DIR",
                   help="start from bench --picks' autotuning picks in DIR, and save this compile's there")
    p.add_argument("--census", metavar="FILE",
                   help="write each generated kernel's name, ops and estimated bytes per call to FILE (JSON), and "
                        "run one more step between cudaProfilerStart/Stop: under `ncu --profile-from-start off` "
                        "that step's kernels are the ones counted (scripts/check_bytes.py joins the two)")
    p.add_argument("--samples", type=int, default=30)
    args = p.parse_args()
    if args.samples < 1:
        p.error(f"--samples {args.samples}: expected 1 or more")
    for flag in ("errors", "checks"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            p.error(f"--{flag} {getattr(args, flag)}: expected 1 or more")
    for flag in ("save_code", "save_inputs"):
        folder = getattr(args, flag)
        if folder and os.path.exists(folder) and not os.path.isdir(folder):
            p.error(f"--{flag.replace('_', '-')} {folder}: not a folder")
    try:  # a bad model, suite or config name: one line, before any compile
        require_model(args.suite, args.model)
        by_name(args.config)
        extra = dict(inductor_setting(text) for text in args.set)
        if args.picks:
            check_picks_folder(args.picks)
        pins = _read_pins(args.pin, args.device) if args.pin else None
    except UsageError as exc:
        exit_with(exc)
    if args.poison:
        extra = {**extra, **POISON_INDUCTOR}
    # the output code binds the allocators when it loads: poisoned for the whole process
    with poisoned_buffers() if args.poison else contextlib.nullcontext() as counts:
        def said():  # after the first compiled step: how many buffers it allocated poisoned
            if args.poison:
                print(f"poison: {sum(counts.values())} buffer(s) the generated code allocated started as NaN, "
                      f"none reused (allow_buffer_reuse=False)", file=sys.stderr)
        if not args.picks:
            return measure(args, extra, said, pins)
        # the bench's naming, so that its folder of picks serves: one subfolder per model and setting
        setting = {"model": args.model, "dtype": args.dtype, "mode": args.mode, "device": args.device}
        cache = tempfile.mkdtemp(prefix=f"{cache_name(setting)}-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # before the first compile; compile workers inherit it
        try:
            seeded = has_picks(args.picks, setting, device_name(args.device))
            if seeded:
                seed_picks(args.picks, setting, cache, device_name(args.device))
            return measure(args, extra, lambda: (_picks_done(args.picks, setting, cache, seeded, device_name(args.device)),
                                                 said()), pins)
        finally:
            shutil.rmtree(cache, ignore_errors=True)


def _picks_done(picks: str, setting: dict, cache: str, seeded: bool, device: str | None) -> None:
    """After the compile: save its picks, and say on stderr for how many ops it benchmarked the choices."""
    save_picks(picks, setting, cache, device)
    afresh = counters["inductor"]["select_algorithm_autotune"]  # select_algorithm's benchmark(): a cache miss
    print(f"picks: {'seeded from' if seeded else 'none yet in'} {os.path.join(picks, cache_name(setting))}; "
          f"{afresh} op(s) whose choices were benchmarked afresh", file=sys.stderr)


def print_patterns(per_pattern: dict[str, int]) -> None:
    """The compile's pattern matches: per pattern (``counting_patterns``), most first, then Inductor's
    own totals.  Where Inductor keeps a per-pattern counter too (torch 2.13 does), the two must agree;
    stderr says so when they do not, and a sum that is not Inductor's total is said the same way."""
    for name, count in sorted(per_pattern.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {name} {count}")
    own, total = dict(counters["inductor_pattern_matcher_per_pattern"]), counters["inductor"]["pattern_matcher_count"]
    if own and own != dict(per_pattern):
        print(f"per-pattern counts differ from Inductor's own: {sorted(own.items())}", file=sys.stderr)
    if sum(per_pattern.values()) != total:
        print(f"per-pattern counts sum to {sum(per_pattern.values())}, not Inductor's total", file=sys.stderr)
    print(f"patterns {total} matches, {counters['inductor']['pattern_matcher_nodes']} nodes matched")


def write_census(census, path: str, run, device: str) -> None:
    """``--census``: the kernels and their byte estimates as JSON, then one step that a profiler
    started with ``--profile-from-start off`` (Nsight Compute) sees, warmed and autotuned already."""
    import json

    with open(path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name() if device.startswith("cuda") else "cpu",
                   "kernels": [{"name": k.name, "ops": k.ops, "bytes": k.bytes, "read_bytes": k.read_bytes}
                               for k in census.kernels]}, f, indent=1)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        run()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    print(f"census: {len(census.kernels)} kernels in {path}", file=sys.stderr)


def measure(args, extra: dict, compiled_hook=lambda: None, pins: dict[str, str] | None = None) -> int:
    """Compile the model under ``args``' config and ``extra`` Inductor settings, check it against eager,
    and print the metric; ``compiled_hook`` runs once the first compiled step is done; ``pins`` (``--pin``'s
    picks) choose the Triton kernels' configs at their first run."""

    config = by_name(args.config)
    inductor_ablate.config.update(**config.switches)  # as the cell does; the environment's switches stay
    os.environ.update(inductor_ablate.config.environ())  # compile workers inherit
    model, inputs, loss_fn = build_model(args.suite, args.model, args.device, args.dtype, args.mode)
    expected = _step(model, inputs, loss_fn, args.mode)
    if args.patterns:  # Inductor counts matches per pattern only while this is set ("__none__": no debug print)
        os.environ.setdefault("TORCHINDUCTOR_PATTERN_MATCH_DEBUG", "__none__")
        counters.clear()
    with inductor_config.patch({**all_inductor(args.device, args.mode), **config.inductor, **extra}):
        compiled = torch.compile(model)
        # only --bytes turns Inductor's metrics log on: a time or a kernel count compiles as it would alone
        with counting_bytes() if args.bytes else contextlib.nullcontext({}) as moved, \
                counting_patterns() if args.patterns else contextlib.nullcontext({}) as matched, \
                recording(reset_dynamo=True) as sink, output_codes() as codes, \
                pinned_picks(pins) if pins else contextlib.nullcontext() as pinned, \
                saving_inputs(args.save_inputs) if args.save_inputs else contextlib.nullcontext() as called:
            actual = _step(compiled, inputs, loss_fn, args.mode)
        if args.save_inputs:
            print(f"inputs: the first call of {len(called)} compiled graph(s) in {args.save_inputs} "
                  f"(called-K.py, called-K-inputs.pt)", file=sys.stderr)
        compiled_hook()
        if pins:
            print(f"pin: {len(pinned['pinned'])} Triton kernel(s) ran the config {args.pin} names, "
                  f"{len(pinned['missing'])} named there lacked it (benchmarked as usual)", file=sys.stderr)
        hashed = f"code hash {code_hash(codes, os.environ.get('TORCHINDUCTOR_CACHE_DIR', ''))}"  # as a cell's code_hash
        if args.save_code:
            save_code(codes, args.save_code)
        err, tolerance = _rel_error(actual, expected), TOLERANCE.get(args.dtype, TOLERANCE["float32"])
        if args.errors:
            print_errors(model, inputs, loss_fn, args.mode, actual, expected, args.errors)
            print(f"max relative error against eager {err:.3g} (tolerance {tolerance:g}); {hashed}")
            return 0 if err <= tolerance else 1
        # the bench's own check: a bfloat16 step off eager passes if it is as close to float64 as eager is
        dtype = args.dtype if args.dtype in TOLERANCE else "float32"
        reference = lambda: _float64_step(model, inputs, loss_fn, args.mode)  # noqa: E731 (asked only if needed)
        if args.checks:
            print(hashed, file=sys.stderr)
            first, expected_leaves = leaves_of(actual), leaves_of(expected)
            names = step_leaf_names(model, inputs, args.mode, len(first))
            float64_leaves = functools.cache(lambda: leaves_of(reference()))  # once, for every step
            check = lambda step: accuracy(step, expected_leaves, dtype, float64_leaves)  # noqa: E731
            return repeat_checks(lambda: _step(compiled, inputs, loss_fn, args.mode), first, expected_leaves,
                                 names, check, args.checks)
        checked = accuracy(actual, expected, dtype, reference)
        if "message" in checked:
            print(f"wrong answer: {checked['message']}; {hashed}", file=sys.stderr)
            return 1
        # on stderr, so a metric on stdout stays one line: how far a passing step was (a cell's rel_error)
        print(f"accuracy ok: max relative error against eager {checked['rel_error']:.3g}; {hashed}", file=sys.stderr)
        if args.kernels:
            print("kernels", summarize(sink).num_kernels)
            return 0
        if args.bytes:
            print(f"kernels {summarize(sink).num_kernels}, extern calls' bytes {moved['externs']}")
            print("bytes", moved["kernels"])
            return 0
        if args.patterns:
            print_patterns(matched)
            return 0
        timer = _Timer(args.device)
        run = lambda: _step(compiled, inputs, loss_fn, args.mode)  # noqa: E731
        for _ in range(3):
            run()
        if args.census:
            write_census(summarize(sink), args.census, run, args.device)
        number = timer.calls_per_sample(run)
        samples = [timer(run, number) for _ in range(args.samples)]
    print("ms", statistics.median(samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
