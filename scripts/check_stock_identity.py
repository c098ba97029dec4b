#!/usr/bin/env python
"""Off means stock: with every switch off, the patched Inductor generates byte-identical code.

Runs the program suite (inductor_ablate.programs) in two fresh interpreters, one with plain torch
(the overlay not loaded: no INDUCTOR_* variable set), one with the overlay installed and every switch
off, caches off in both, and compares the generated code of every graph after replacing each run's
temporary directory with a placeholder.  Exit status 0 only if every program matches.

    python scripts/check_stock_identity.py [--device cpu|cuda] [--programs a,b] [--json OUT]
    python scripts/check_stock_identity.py --overlay-env INDUCTOR_ONE_KERNEL_PER_OP=1  # must report MISMATCH
    python scripts/check_stock_identity.py --cpu-backend triton   # Triton's code generation, on CPU tensors

``--cpu-backend triton`` compares the Triton code Inductor writes for CPU tensors (its
``cpu_backend`` option), of each program's first graph, generated and never built or run
(inductor_ablate.cpu_triton), so a machine without a GPU checks the Triton side's patches too.
"""
import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile

DUMP = r"""
import contextlib, copy, json, sys, torch
from torch._inductor.utils import run_and_get_code
mode, device, names, backend = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4]
if mode == "overlay":
    import inductor_ablate
codegen = contextlib.nullcontext()
if backend == "triton":
    from inductor_ablate.cpu_triton import cpu_triton_codegen, first_graph_code
    codegen = cpu_triton_codegen()
    run_and_get_code = lambda fn, *args: (None, [first_graph_code(fn, *args)])
codegen.__enter__()
from inductor_ablate.programs import PROGRAMS
out = {}
for name in names:
    torch._dynamo.reset()
    torch.manual_seed(0)
    fn, args = PROGRAMS[name](device)
    _, codes = run_and_get_code(torch.compile(fn), *copy.deepcopy(args))
    out[name] = codes
if mode == "overlay":
    import sys as _s
    patched = [r["slug"] for r in inductor_ablate.report() if r["state"] == "applied"]
    out["__patched__"] = patched
print("JSON" + json.dumps(out))
"""


def run(mode: str, device: str, names: list[str], extra_env: dict | None = None, backend: str = "cpp") -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDUCTOR_")}
    env.update(extra_env or {})
    with tempfile.TemporaryDirectory(prefix="ia-identity-") as cache:
        env.update(TORCHINDUCTOR_CACHE_DIR=cache, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
        proc = subprocess.run([sys.executable, "-c", DUMP, mode, device, ",".join(names), backend], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{mode} run failed:\n{proc.stderr[-4000:]}")
        data = json.loads(proc.stdout[proc.stdout.rindex("JSON") + 4:])
    return {k: ([c.replace(cache, "<CACHE>") for c in v] if k != "__patched__" else v) for k, v in data.items()}


def main() -> int:
    from inductor_ablate.errors import OneLineParser, device_option
    from inductor_ablate.programs import PROGRAMS

    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", type=device_option)
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--json", help="write the per-program verdicts here")
    parser.add_argument("--cpu-backend", choices=("cpp", "triton"), default="cpp",
                        help="the code Inductor writes for CPU tensors: C++ (its default) or Triton")
    parser.add_argument("--overlay-env", action="append", default=[], metavar="NAME=VALUE",
                        help="negative control: set a switch in the overlay run (the check must then fail)")
    args = parser.parse_args()
    names = args.programs.split(",")
    extra = dict(item.split("=", 1) for item in args.overlay_env)
    if args.cpu_backend == "triton" and args.device != "cpu":
        parser.error("--cpu-backend triton: the Triton code for CPU tensors; on a GPU, Triton is the code already")
    stock = run("stock", args.device, names, backend=args.cpu_backend)
    overlay = run("overlay", args.device, names, extra, args.cpu_backend)
    print(f"overlay patches applied: {len(overlay['__patched__'])} ({', '.join(overlay['__patched__'])})")
    verdicts = {}
    for name in names:
        a, b = stock[name], overlay[name]
        same = a == b
        verdicts[name] = {"identical": same, "graphs": len(a), "bytes": sum(len(c) for c in a),
                          "triton_kernels": sum(c.count("@triton.jit") for c in a)}
        print(f"{name:<20} {'identical' if same else 'DIFFERENT'}  ({len(a)} graph(s), {verdicts[name]['bytes']} bytes"
              + (f", {verdicts[name]['triton_kernels']} Triton kernel(s))" if args.cpu_backend == "triton" else ")"))
        if not same:
            for x, y in zip(a, b):
                sys.stdout.writelines(list(difflib.unified_diff(x.splitlines(True), y.splitlines(True), "stock", "overlay"))[:40])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "patched": overlay["__patched__"], "programs": verdicts}, f, indent=1)
    ok = all(v["identical"] for v in verdicts.values())
    print("ALL IDENTICAL" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
