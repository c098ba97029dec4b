"""How many bytes each model's generated kernels read and write, with fusion, inlining or both off.

    python scripts/bytes_by_switch.py MODEL [MODEL ...] [--suite embedded] [--device cpu]
                                      [--dtype float32] [--mode training]

For each model, runs ``scripts/model_latency.py MODEL --bytes --config ROW`` for four bench rows,
each in its own process (the shell's own INDUCTOR_* variables are dropped, so each row has its
switches alone): ``all`` (every switch off), ``no-inlining``, ``no-fusion`` and both.  Prints one markdown table:
the kernels generated, the bytes those kernels read and write as Inductor estimates them (its
``count_bytes``: a buffer a fused kernel keeps inside itself is not counted), that figure over
``all``'s, and the bytes of the library calls (convolutions, matmuls), which no switch changes.

Why: without inlining, a model can keep ``all``'s kernel count and still run slower on the GPU; this
says whether its kernels then move more memory.  The figures are estimates from the scheduler's
buffer sizes, for the device the model compiles for (CPU by default; on CUDA, for its Triton
kernels), not bytes measured by a profiler.
A step that misses eager's answer fails the run (exit 1): ``--dtype float64`` keeps rounding from
crossing a ReLU's kink in the bigger vision models.
"""
from __future__ import annotations

import os
import subprocess
import sys

from inductor_ablate.bench.models import require_model
from inductor_ablate.errors import OneLineParser, UsageError, device_option, exit_with

#: The bench rows, each a config of model_latency.py (bench/configs.py says what each sets).
ROWS = ("all", "no-inlining", "no-fusion", "no-fusion-no-inlining")
LATENCY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_latency.py")


def measure(model: str, suite: str, device: str, dtype: str, mode: str, row: str) -> tuple[int, int, int]:
    """(kernels, kernel bytes, extern calls' bytes) of one compile, from model_latency.py --bytes."""
    proc = subprocess.run([sys.executable, LATENCY, model, "--suite", suite, "--device", device, "--dtype", dtype,
                           "--mode", mode, "--config", row, "--bytes"], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if not k.startswith("INDUCTOR_")})
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"{model}, {row}: model_latency.py exited {proc.returncode}: {last}")
    counts, moved = proc.stdout.strip().splitlines()[-2:]
    kernels, externs = counts.split(",")
    return int(kernels.split()[-1]), int(moved.removeprefix("bytes ")), int(externs.split()[-1])


def main() -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--suite", default="embedded")
    p.add_argument("--device", default="cpu", type=device_option)
    p.add_argument("--dtype", default="float32", choices=("float32", "float64", "bfloat16", "float16"))
    p.add_argument("--mode", default="training", choices=("inference", "training"))
    args = p.parse_args()
    try:  # a bad model or suite name: one line, before any compile
        for model in args.models:
            require_model(args.suite, model)
    except UsageError as exc:
        exit_with(exc)
    print(f"{args.suite} suite, {args.device}, {args.dtype}, {args.mode}: bytes the generated kernels read and write "
          "(Inductor's estimate)\n")
    print("| model | row | kernels | kernel bytes | x all | extern calls' bytes |")
    print("|---|---|---|---|---|---|")
    for model in args.models:
        base = None
        for name in ROWS:
            kernels, moved, externs = measure(model, args.suite, args.device, args.dtype, args.mode, name)
            base = moved if base is None else base
            ratio = f"{moved / base:.2f}" if base else "-"
            print(f"| {model} | {name} | {kernels} | {moved:,} | {ratio} | {externs:,} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
