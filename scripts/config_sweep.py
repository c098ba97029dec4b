"""Run one graph's generated code with each Triton config of each kernel forced, to find a config
that gives another answer, or answers that vary from run to run.

    python scripts/config_sweep.py CODE.py [--runs 4] [--kernel SUBSTRING] [--seed 0] [--all]

CODE.py is a graph's output code as ``model_latency.py --save-code`` writes it (``graph-2.py``: a
training step's backward).  A Triton kernel that Inductor generates with several configs (block
sizes, warps) is benchmarked once per process, at its first run, and the fastest kept: a config
that is wrong makes a wrong answer in some processes only, as timing noise picks it or not.  This
script loads the code in a fresh Inductor cache (no ``.best_config`` to reuse), builds every
config of every kernel, pins each kernel to its first config, and runs the graph ``--runs`` times
on the code's own random inputs (``get_args``, seeded; each run on a fresh copy, since the code
reuses its inputs' memory) to check the pinned answers are alike bit for bit.  Then, one kernel
and one config at a time, it runs the graph again: a config whose runs differ from one another
races; one whose answer moves far from the first config's (more than ``--tolerance``, relative to
the output's largest value) computes something else.  One line per config that does either
(``--all``: per config), then a summary; exit 1 if any config races or moves, 0 if none.

Needs CUDA and the torch the code was generated with.  The inputs are random: code that indexes
with its inputs (embeddings, gathers) can fault on them.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile


def _fail(msg: str) -> None:
    print(f"config_sweep.py: {msg}", file=sys.stderr)
    raise SystemExit(2)


def _copy(arg):
    """A copy of an input with the same storage layout (strides, offset, the bytes between)."""
    import torch

    if not isinstance(arg, torch.Tensor):
        return arg
    out = torch.empty(0, dtype=arg.dtype, device=arg.device)
    return out.set_(arg.untyped_storage().clone(), arg.storage_offset(), arg.size(), arg.stride())


def _pin(kernel, launcher) -> None:
    kernel.launchers = [launcher]
    if hasattr(kernel, "_cached_launcher"):  # torch >= 2.13 caches the launcher it ran last
        kernel._cached_launcher = None


def _describe(launcher) -> str:
    config = launcher.config
    sizes = " ".join(f"{k}={v}" for k, v in sorted(config.kwargs.items()))
    return f"{sizes} num_warps={config.num_warps} num_stages={config.num_stages}"


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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("code", help="a graph's output code (model_latency.py --save-code DIR writes DIR/graph-N.py)")
    p.add_argument("--runs", type=int, default=4, help="runs per config (default 4)")
    p.add_argument("--kernel", default="", help="only kernels whose name holds this")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=0.05,
                   help="a change from the first config's answer above this, relative to the output's largest value, is reported")
    p.add_argument("--all", action="store_true", help="print every config's line, not only those that race or move")
    args = p.parse_args(argv)
    if args.runs < 2:
        _fail(f"--runs {args.runs}: at least 2, to tell a race")
    if not os.path.isfile(args.code):
        _fail(f"{args.code}: no such file")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="config-sweep-")  # no saved best configs
    import torch

    if not torch.cuda.is_available():
        _fail("needs CUDA: the configs swept are Triton's")
    spec = importlib.util.spec_from_file_location("config_sweep_code", args.code)
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    if not hasattr(code, "call") or not hasattr(code, "get_args"):
        _fail(f"{args.code}: not Inductor output code (no call and get_args)")
    kernels = {name: k for name, k in vars(code).items()
               if hasattr(k, "launchers") and hasattr(k, "fn") and args.kernel in name}
    if not kernels:
        _fail(f"{args.code}: no Triton kernel{' named *' + args.kernel + '*' if args.kernel else ''}")
    for k in kernels.values():
        if not k.launchers:
            k.precompile()
    every = {name: list(k.launchers) for name, k in kernels.items()}
    for name, k in kernels.items():
        _pin(k, every[name][0])

    torch.manual_seed(args.seed)
    inputs = code.get_args()

    def run():
        out = code.call([_copy(a) for a in inputs])
        torch.cuda.synchronize()
        return [o.clone() if isinstance(o, torch.Tensor) else o for o in out]

    def runs():
        results = [run() for _ in range(args.runs)]
        varying = [i for i, o in enumerate(results[0]) if not all(_alike(r[i], o) for r in results[1:])]
        return results[0], varying

    base, varying = runs()
    several = sum(len(v) > 1 for v in every.values())
    print(f"{args.code}: {len(kernels)} Triton kernels, {several} with several configs, "
          f"{sum(len(v) for v in every.values())} configs; {len(base)} outputs")
    print(f"first config of every kernel: {args.runs} runs "
          + (f"differ in outputs {varying}" if varying else "alike bit for bit"))
    flagged = len(varying) > 0
    for name, launchers in every.items():
        for i, launcher in enumerate(launchers):
            if i == 0 and not args.all:
                continue
            _pin(kernels[name], launcher)
            out, varying = runs()
            changes = [(_relative_change(o, b), j) for j, (o, b) in enumerate(zip(out, base))
                       if isinstance(o, torch.Tensor)]
            worst, where = max(changes) if changes else (0.0, None)
            moved = worst > args.tolerance
            if varying or moved or args.all:
                what = [f"runs differ in outputs {varying}" if varying else "runs alike",
                        f"change from the first config {worst:.3g} (output {where})" + (" MOVED" if moved else "")]
                print(f"{name} config {i} ({_describe(launcher)}): " + "; ".join(what))
            flagged |= bool(varying) or moved
        _pin(kernels[name], launchers[0])
    print("config sweep: " + ("a config races or moves the answer" if flagged else "no config races or moves the answer"))
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
