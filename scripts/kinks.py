"""Where a step's gradient can jump under rounding: the inputs of ReLU-like activations nearest a kink.

    python scripts/kinks.py MODEL [--suite embedded] [--device cpu] [--dtype float32]
                                  [--mode training] [--top 5] [--draws 8] [--flip K]

A ReLU-like activation (ReLU, LeakyReLU, Hardtanh and ReLU6, Hardswish, Hardsigmoid) has a
derivative that jumps at its kinks. An input within rounding of a kink can land on either side in
two computations that differ only in rounding (eager against compiled, fused against unfused), and
the gradients it feeds then differ by that element's whole share, not by rounding. The script runs
eager only. It lists the ``--top`` activation inputs nearest a kink (the distance, and the distance
over the tensor's largest value), then nudges every leaf module's output by half an ulp of its
dtype ``--draws`` times (as ``model_latency.py --errors`` does) and prints, per draw, the kinks
crossed (an input that changed side, or moved onto or off a kink) and the leaf of the step that
moved most. ``--flip K`` mirrors the K-th nearest input (1: the nearest) across its kink and prints
the leaves that move most: the error a computation that rounds it to the other side would show. Activations called as functions (``F.relu``) are not
modules, so they are not seen.
"""
from __future__ import annotations

import sys

import torch
import torch.nn as nn

import inductor_ablate  # noqa: F401 (the same process a compiled run would be)
from inductor_ablate.bench.cell import _rel_error, _step, build_model, nudged_step, step_leaf_names
from inductor_ablate.bench.models import require_model
from inductor_ablate.errors import OneLineParser, UsageError, device_option, exit_with


def kinks_of(module: nn.Module) -> tuple[float, ...]:
    """The inputs where ``module``'s derivative jumps; () for a smooth or unknown module."""
    if isinstance(module, (nn.ReLU, nn.LeakyReLU)):
        return (0.0,)
    if isinstance(module, nn.Hardtanh):  # ReLU6 too
        return (float(module.min_val), float(module.max_val))
    if isinstance(module, (nn.Hardswish, nn.Hardsigmoid)):
        return (-3.0, 3.0)
    return ()


def activation_inputs(model, inputs, loss_fn, mode, seed=None) -> tuple[dict[str, list[torch.Tensor]], list[torch.Tensor]]:
    """Each kinked module's inputs over one eager step (nudged with ``seed``, unless None), and the
    step's leaves."""
    seen: dict[str, list[torch.Tensor]] = {}
    hooks = [m.register_forward_pre_hook(lambda m, args, name=name: seen.setdefault(name, []).append(args[0].detach().clone()))
             for name, m in model.named_modules() if kinks_of(m)]
    try:  # both give leaves of their own (nudged_step clones; _step's are cloned here)
        step = [t.clone() for t in _step(model, inputs, loss_fn, mode)] if seed is None else nudged_step(model, inputs, loss_fn, mode, seed)
    finally:
        for hook in hooks:
            hook.remove()
    return seen, step


def _off_kink_distance(x: torch.Tensor, kink: float) -> torch.Tensor:
    """|x - kink| in float32, with inputs exactly on the kink set to inf: mirroring one of those
    changes nothing."""
    d = (x.detach().float() - kink).abs()
    return torch.where(d == 0, torch.full_like(d, float("inf")), d)


def print_flip(model, inputs, loss_fn, mode, module, name, kink, call, base_step, names) -> None:
    """The step with one activation input, the nearest to ``kink`` in call ``call`` of ``module``,
    mirrored across the kink: the leaves that move most."""
    calls = [0]

    def mirror(m, args):
        calls[0] += 1
        if calls[0] != call + 1:
            return None
        x = args[0]
        flat = x.detach().reshape(-1)
        i = int(_off_kink_distance(flat, kink).argmin())
        shift = torch.zeros_like(flat)
        shift[i] = 2 * (kink - flat[i])  # a constant: the element's derivative stays 1
        mirrored = x + shift.view(x.shape)
        print(f"\n--flip: {name} input element {i}, {flat[i].item():.3e} -> {mirrored.detach().reshape(-1)[i].item():.3e}; "
              f"the leaves that move most:")
        return (mirrored, *args[1:])

    hook = module.register_forward_pre_hook(mirror)
    try:
        step = [t.clone() for t in _step(model, inputs, loss_fn, mode)]
    finally:
        hook.remove()
    moved = sorted(((_rel_error(a, b), leaf) for leaf, a, b in zip(names, step, base_step)), reverse=True)
    for error, leaf in moved[:5]:
        print(f"  {leaf:<40} {error:>9.2e}")


def main() -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--suite", default="embedded")
    p.add_argument("--device", default="cpu", type=device_option)
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16", "float64"))
    p.add_argument("--mode", default="training", choices=("inference", "training"))
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--draws", type=int, default=8)
    p.add_argument("--flip", type=int, metavar="K", help="mirror the K-th nearest input across its kink")
    args = p.parse_args()
    if args.top < 1:
        p.error(f"--top {args.top}: expected 1 or more")
    if args.draws < 0:
        p.error(f"--draws {args.draws}: expected 0 or more")
    if args.flip is not None and not 1 <= args.flip <= args.top:
        p.error(f"--flip {args.flip}: expected 1 to --top ({args.top})")
    try:
        require_model(args.suite, args.model)
    except UsageError as exc:
        exit_with(exc)

    model, inputs, loss_fn = build_model(args.suite, args.model, args.device, args.dtype, args.mode)
    modules = dict(model.named_modules())
    base, base_step = activation_inputs(model, inputs, loss_fn, args.mode)
    if not base:
        print(f"{args.model}: no ReLU-like activation module (functional activations are not seen)")
        return 0
    near, exact = [], 0
    for name, calls in base.items():
        for call, x in enumerate(calls):
            for kink in kinks_of(modules[name]):
                d = _off_kink_distance(x, kink)
                if bool(torch.isfinite(d).any()):
                    distance = float(d.min())
                    near.append((distance / max(float(x.float().abs().max()), 1e-30), distance, name, kink, call))
                exact += int((x == kink).sum())
    print(f"activation inputs nearest a kink (eager, {args.dtype}, {args.mode}):")
    if exact:
        print(f"({exact} inputs sit exactly on a kink; mirroring one changes nothing, so they are left out below)")
    print(f"{'module':<40} {'type':<12} {'kink':>5} {'|x - kink|':>11} {'relative':>9}")
    for relative, distance, name, kink, call in sorted(near)[:args.top]:
        label = name + (f" (call {call + 1})" if len(base[name]) > 1 else "")
        print(f"{label:<40} {type(modules[name]).__name__:<12} {kink:>5g} {distance:>11.2e} {relative:>9.2e}")

    names = step_leaf_names(model, inputs, args.mode, len(base_step))
    if args.flip:
        _, _, name, kink, call = sorted(near)[args.flip - 1]
        print_flip(model, inputs, loss_fn, args.mode, modules[name], name, kink, call, base_step, names)
    for seed in range(args.draws):
        seen, step = activation_inputs(model, inputs, loss_fn, args.mode, seed)
        crossed = []
        for name, calls in base.items():
            for x0, x1 in zip(calls, seen[name]):
                for kink in kinks_of(modules[name]):
                    n = int((torch.sign(x0 - kink) != torch.sign(x1 - kink)).sum())  # onto or off the kink too:
                    # ops differ on which side owns it (Hardswish's derivative is 0 below -3, -0.5 at -3)
                    if n:
                        crossed.append(f"{name} at {kink:g} ({n} element{'s' * (n > 1)})")
        worst, leaf = max((_rel_error(a, b), leaf) for leaf, a, b in zip(names, step, base_step))
        if seed == 0:
            print(f"\nevery leaf module's output nudged by half an ulp, {args.draws} draws:")
            print(f"{'draw':<5} {'leaf moved most':<40} {'by':>9}  kinks crossed")
        print(f"{seed:<5} {leaf:<40} {worst:>9.2e}  {'; '.join(crossed) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
