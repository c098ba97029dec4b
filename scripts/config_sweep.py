"""Run one graph's generated code with each Triton config of each kernel forced, to find a config
that gives another answer, or answers that vary from run to run.

    python scripts/config_sweep.py CODE.py [--runs 4] [--kernel SUBSTRING] [--pin PICKS] [--inputs INPUTS.pt]
                                   [--seed 0] [--all] [--alone]

CODE.py is a graph's output code as ``model_latency.py --save-code`` writes it (``graph-2.py``: a
training step's backward).  A Triton kernel that Inductor generates with several configs (block
sizes, warps) is benchmarked once per process, at its first run, and the fastest kept: a config
that is wrong makes a wrong answer in some processes only, as timing noise picks it or not.  This
script loads the code in a fresh Inductor cache (no ``.best_config`` to reuse), builds every
config of every kernel, pins each kernel to its first config (``--pin PICKS``: to the config a
process settled on, from the ``triton-picks.txt`` that ``--save-code`` wrote beside the code, for
the kernels it names), and runs the graph ``--runs`` times
on the code's own random inputs (``get_args``, seeded), or on the inputs a process called it with
(``--inputs``: ``model_latency.py --save-inputs`` writes ``called-K-inputs.pt`` beside the code it
belongs to, ``called-K.py``), each run on a fresh copy, since the code reuses its inputs' memory
(inputs that share a storage share its copy), to check the pinned answers are alike bit for bit.  Then, one kernel
and one config at a time, it runs the graph again: a config whose runs differ from one another
races; one whose answer moves far from the pinned one's (more than ``--tolerance``, relative to
the output's largest value) computes something else.  One line per config that does either
(``--all``: per config), then a summary; exit 1 if any config races or moves, 0 if none.

``--alone`` (with ``--kernel``) runs the kernels it names by themselves instead: one run of the graph
copies the arguments of each of their calls just before it, then each config of the kernel runs
``--runs`` times on fresh copies of one call's arguments, its outputs (``out_ptrN``) filled with NaN
first, and again with its in/out arguments (``in_out_ptrN``) NaN too.  A NaN left in an output is
an element the kernel did not write, or wrote from memory nothing had written (a kernel that reads
an in/out argument before writing it, as an in-place update does, leaves NaN in the second pass by
right); runs that differ race.  It tells which of a kernel's reads or writes makes a wrong answer
that the whole graph's sweep shows.

Needs CUDA and the torch the code was generated with.  Random inputs can make code that indexes
with them (embeddings, gathers) fault, and make outputs overflow that the step's own values do not.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

from inductor_ablate.errors import OneLineParser
from inductor_ablate.poison import poison
from inductor_ablate.triton_picks import describe, is_kernel, is_settled, kernel_key, read_picks


def _fail(msg: str) -> None:
    print(f"config_sweep.py: {msg}", file=sys.stderr)
    raise SystemExit(2)


def _copies(args: list) -> list:
    """A copy of the inputs with the same storage layout (strides, offsets, the bytes between), where
    inputs that are views of one storage stay views of one copy of it."""
    import torch

    storages: dict[int, object] = {}
    out = []
    for arg in args:
        if not isinstance(arg, torch.Tensor):
            out.append(arg)
            continue
        key = arg.untyped_storage().data_ptr()
        if key not in storages:
            storages[key] = arg.untyped_storage().clone()
        view = torch.empty(0, dtype=arg.dtype, device=arg.device)
        out.append(view.set_(storages[key], arg.storage_offset(), arg.size(), arg.stride()))
    return out


def _pin(kernel, launcher) -> None:
    kernel.launchers = [launcher]
    if hasattr(kernel, "_cached_launcher"):  # torch >= 2.13 caches the launcher it ran last
        kernel._cached_launcher = None


def _pinned(path: str, kernels: dict, every: dict) -> dict:
    """{kernel: index of the config ``path`` (a triton-picks.txt) names for it}; 0 for a kernel it
    does not name.  A picks file that names none of the code's kernels, or a config a kernel does not
    have, is a one-line error: those picks are another code's."""
    try:
        picks = read_picks(path)
    except (OSError, ValueError) as exc:
        _fail(f"--pin {path}: {exc}")
    start, named = {}, 0
    for name, kernel in kernels.items():
        config = picks.get(kernel_key(kernel))
        if config is None or not is_settled(config):
            start[name] = 0
            continue
        found = [i for i, launcher in enumerate(every[name]) if describe(launcher.config) == config]
        if not found:
            _fail(f"--pin {path}: {name} has no config '{config}' (it has: "
                  f"{'; '.join(describe(launcher.config) for launcher in every[name])})")
        start[name], named = found[0], named + 1
    if not named:
        _fail(f"--pin {path}: names none of this code's kernels (picks of other code?)")
    print(f"pinned {named} kernel(s) to the configs in {path}")
    return start


def _saved_inputs(path: str) -> list:
    """The inputs ``model_latency.py --save-inputs`` saved: a list; anything else is a one-line error."""
    import torch

    try:
        inputs = torch.load(path, weights_only=True)
    except Exception as exc:  # a file torch cannot read as saved inputs: its reason, in one line
        _fail(f"--inputs {path}: not saved inputs ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
    if not isinstance(inputs, list):
        _fail(f"--inputs {path}: not saved inputs (a {type(inputs).__name__}, not a list)")
    return inputs


def _relative_change(new, old) -> float:
    """The largest change of one element, over the old output's largest finite magnitude; elements
    alike (an infinity the same, NaN and NaN) change by 0, one that turns non-finite by inf."""
    import torch

    a, b = new.float(), old.float()
    if not b.numel():
        return 0.0
    scale = b.abs().nan_to_num(0.0, 0.0, 0.0).max().item()
    same = (a == b) | (torch.isnan(a) & torch.isnan(b))
    diff = torch.where(same, torch.zeros_like(a), (a - b).abs().nan_to_num(float("inf"), float("inf")))
    worst = diff.max().item()
    return worst / scale if scale > 0 else worst


def _alike(a, b) -> bool:
    """Bit for bit (NaNs alike too), for tensors; equal, for anything else."""
    import torch

    if not isinstance(a, torch.Tensor):
        return a == b
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(
        a.contiguous().view(-1).view(torch.uint8), b.contiguous().view(-1).view(torch.uint8))


def _argument_roles(names: list[str]) -> tuple[list[int], list[int]]:
    """Positions of a kernel's outputs and of its in/out arguments, by Inductor's names for a
    generated kernel's parameters (``out_ptr0``, ``in_out_ptr0``; inputs are ``in_ptr0``)."""
    outs = [i for i, name in enumerate(names) if name.startswith("out_ptr")]
    in_outs = [i for i, name in enumerate(names) if name.startswith("in_out_ptr")]
    return outs, in_outs


def _run_alone(launch, snapshot: list, kwargs: dict, poisoned: list[int], watched: list[int], runs: int) -> list:
    """``launch`` run ``runs`` times, each on a fresh copy of ``snapshot`` (one call's arguments, copied
    before it ran) whose ``poisoned`` positions start as NaN; the ``watched`` arguments after each run."""
    import torch

    results = []
    for _ in range(runs):
        args = _copies(snapshot)
        for i in poisoned:
            poison(args[i])
        launch(*args, **kwargs)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        results.append([args[i].clone() for i in watched])
    return results


def _nan_left(results: list, j: int) -> int:
    """The most NaN elements the ``j``-th watched argument held after any run."""
    import torch

    return max(int(torch.isnan(r[j]).sum()) if r[j].is_floating_point() else 0 for r in results)


def _alone(code, kernels: dict, every: dict, start: dict, inputs: list, args) -> bool:
    """``--alone``: each kernel by itself on the arguments of each of its calls in one run of the graph;
    prints a line per call and config; True if a config leaves NaN in an output, races, or moves."""
    import torch

    calls = {name: [] for name in kernels}
    for name, kernel in kernels.items():
        def recorded(*a, _run=kernel.run, _calls=calls[name], **kw):
            _calls.append((_copies(list(a)), kw))  # before it runs: in/out arguments as the kernel finds them
            return _run(*a, **kw)
        kernel.run = recorded  # the generated code calls kernel.run(...): the instance's shadows the class's
    try:
        code.call(_copies(inputs))
        torch.cuda.synchronize()
    finally:
        for kernel in kernels.values():
            del kernel.run
    flagged = False
    for name, kernel in kernels.items():
        names = list(kernel.fn.arg_names)
        outs, in_outs = _argument_roles(names)
        watched = outs + in_outs
        print(f"{name}: {len(calls[name])} call(s) in one run of the graph; outputs "
              f"{', '.join(names[i] for i in outs) or 'none'}; in/out {', '.join(names[i] for i in in_outs) or 'none'}")
        order = [start[name]] + [i for i in range(len(every[name])) if i != start[name]]
        for number, (snapshot, kwargs) in enumerate(calls[name], 1):
            base = None
            for i in order:
                launcher = every[name][i]
                _pin(kernel, launcher)
                outputs_nan = _run_alone(kernel.run, snapshot, kwargs, outs, watched, args.runs)
                all_nan = _run_alone(kernel.run, snapshot, kwargs, outs + in_outs, watched, args.runs)
                varying = [names[w] for j, w in enumerate(watched)
                           if any(not all(_alike(r[j], runs[0][j]) for r in runs[1:]) for runs in (outputs_nan, all_nan))]
                left = {names[w]: _nan_left(outputs_nan, j) for j, w in enumerate(watched)}
                left_too = {names[w]: _nan_left(all_nan, j) for j, w in enumerate(watched)}
                base = base or outputs_nan[0]
                worst, where = max(((_relative_change(o, b), names[w]) for w, o, b in zip(watched, outputs_nan[0], base)),
                                   default=(0.0, "none"))
                moved = worst > args.tolerance
                sizes = {names[w]: snapshot[w].numel() for w in watched}

                def said(counts):
                    shown = [f"{k} {v} of {sizes[k]}" for k, v in counts.items() if v]
                    return ", ".join(shown) if shown else "none"

                print(f"  call {number}, config {i} ({describe(launcher.config)}"
                      + (", the pinned one" if i == start[name] else "") + "): "
                      + (f"runs differ in {', '.join(varying)}" if varying else "runs alike")
                      + f"; NaN left, outputs poisoned: {said(left)}; in/out poisoned too: {said(left_too)}"
                      + f"; change from the pinned config {worst:.3g} ({where})" + (" MOVED" if moved else ""))
                flagged |= bool(varying) or any(left.values()) or moved
            _pin(kernel, every[name][start[name]])
    return flagged


def main(argv=None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("code", help="a graph's output code (model_latency.py --save-code DIR writes DIR/graph-N.py)")
    p.add_argument("--runs", type=int, default=4, help="runs per config (default 4)")
    p.add_argument("--kernel", default="", help="only kernels whose name holds this")
    p.add_argument("--pin", metavar="PICKS",
                   help="start each kernel from the config a process picked (model_latency.py --save-code's triton-picks.txt)")
    p.add_argument("--inputs", metavar="INPUTS.pt",
                   help="run on the inputs a process called the code with (model_latency.py --save-inputs), not random ones")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=0.05,
                   help="a change from the pinned config's answer above this, relative to the output's largest value, is reported")
    p.add_argument("--all", action="store_true", help="print every config's line, not only those that race or move")
    p.add_argument("--alone", action="store_true",
                   help="run the --kernel kernels by themselves, on the arguments of each of their calls, outputs poisoned")
    args = p.parse_args(argv)
    if args.alone and not args.kernel:
        _fail("--alone needs --kernel: it copies the arguments of every call of the kernels it runs")
    if args.runs < 2:
        _fail(f"--runs {args.runs}: at least 2, to tell a race")
    if not os.path.isfile(args.code):
        _fail(f"{args.code}: no such file")
    if args.pin and not os.path.isfile(args.pin):
        _fail(f"--pin {args.pin}: no such file")
    if args.inputs and not os.path.isfile(args.inputs):
        _fail(f"--inputs {args.inputs}: no such file")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="config-sweep-")  # no saved best configs
    import torch

    if not torch.cuda.is_available():
        _fail("needs CUDA: the configs swept are Triton's")
    spec = importlib.util.spec_from_file_location("config_sweep_code", args.code)
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    if not hasattr(code, "call") or not hasattr(code, "get_args"):
        _fail(f"{args.code}: not Inductor output code (no call and get_args)")
    kernels = {name: k for name, k in vars(code).items() if is_kernel(k) and args.kernel in name}
    if not kernels:
        _fail(f"{args.code}: no Triton kernel{' named *' + args.kernel + '*' if args.kernel else ''}")
    for k in kernels.values():
        if not k.launchers:
            k.precompile()
    every = {name: list(k.launchers) for name, k in kernels.items()}
    start = {name: 0 for name in kernels}
    if args.pin:
        start = _pinned(args.pin, kernels, every)
    for name, k in kernels.items():
        _pin(k, every[name][start[name]])

    torch.manual_seed(args.seed)
    inputs = _saved_inputs(args.inputs) if args.inputs else code.get_args()

    def run():
        out = code.call(_copies(inputs))
        torch.cuda.synchronize()
        return [o.clone() if isinstance(o, torch.Tensor) else o for o in out]

    def runs():
        results = [run() for _ in range(args.runs)]
        varying = [i for i, o in enumerate(results[0]) if not all(_alike(r[i], o) for r in results[1:])]
        return results[0], varying

    try:
        if args.alone:
            flagged = _alone(code, kernels, every, start, inputs, args)
        else:
            base, varying = runs()
    except ValueError as exc:  # the code's call unpacks its inputs by name: a count that is not its own
        if not args.inputs or "unpack" not in str(exc):
            raise
        _fail(f"--inputs {args.inputs}: {len(inputs)} inputs, not what {args.code}'s call takes ({exc})")
    if args.alone:
        print("alone: " + ("a config leaves NaN in an output, races or moves the answer" if flagged
                           else "no config leaves NaN in an output, races or moves the answer"))
        return 1 if flagged else 0
    several = sum(len(v) > 1 for v in every.values())
    print(f"{args.code}: {len(kernels)} Triton kernels, {several} with several configs, "
          f"{sum(len(v) for v in every.values())} configs; {len(base)} outputs")
    print(f"{'the pinned config' if args.pin else 'the first config'} of every kernel: {args.runs} runs "
          + (f"differ in outputs {varying}" if varying else "alike bit for bit"))
    flagged = len(varying) > 0
    for name, launchers in every.items():
        for i, launcher in enumerate(launchers):
            if i == start[name] and not args.all:
                continue
            _pin(kernels[name], launcher)
            out, varying = runs()
            changes = [(_relative_change(o, b), j) for j, (o, b) in enumerate(zip(out, base))
                       if isinstance(o, torch.Tensor)]
            worst, where = max(changes) if changes else (0.0, None)
            moved = worst > args.tolerance
            if varying or moved or args.all:
                what = [f"runs differ in outputs {varying}" if varying else "runs alike",
                        f"change from the pinned config {worst:.3g} (output {where})" + (" MOVED" if moved else "")]
                print(f"{name} config {i} ({describe(launcher.config)}): " + "; ".join(what))
            flagged |= bool(varying) or moved
        _pin(kernels[name], launchers[start[name]])
    print("config sweep: " + ("a config races or moves the answer" if flagged else "no config races or moves the answer"))
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
