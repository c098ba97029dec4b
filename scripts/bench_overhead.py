#!/usr/bin/env python
"""Import-and-patch cost of the overlay, measured side by side with a stock import of Inductor.

Each sample is a fresh interpreter that imports torch and then the Inductor modules we patch
(scheduler, choices, graph, ir, codecache, codegen.cpp, codegen.triton), timing only the Inductor
import (torch is imported first, outside the timer).  Variants, interleaved round by round so drift
does not favour one:
  stock        no INDUCTOR_* variable: the start-up hook does nothing
  overlay      INDUCTOR_NO_FUSE=1: the hook installs the overlay; our code cache is warm
  overlay-cold the same with an empty code cache (first run after install or after a torch upgrade)
Also the start-up cost of the hook itself: `python -c pass` with and without an INDUCTOR_* variable.

With ``--cells``: what a bench cell costs beyond compiling and timing (process start, model set-up,
eager reference), the same cells run twice side by side: each cell importing the suite's packages
itself, then with bench's forkserver preloading them (bench's way).

    python scripts/bench_overhead.py [--rounds 7]
    python scripts/bench_overhead.py --cells [--suite hf --models distilbert,t5_small_encoder --device cpu]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TIMED = """
import time, torch, sys
patch_ms = 0.0
if sys.argv[1] != "stock":  # time our own share exactly: every call of importhook.patch_module
    from inductor_ablate import importhook
    _orig = importhook.patch_module
    def _timed(module):
        global patch_ms
        t0 = time.perf_counter(); ok = _orig(module); patch_ms += (time.perf_counter() - t0) * 1000
        assert ok, module.__name__
        return ok
    importhook.patch_module = _timed
t = time.perf_counter()
import torch._inductor.scheduler, torch._inductor.choices, torch._inductor.graph, torch._inductor.ir
import torch._inductor.codecache, torch._inductor.codegen.cpp, torch._inductor.codegen.triton
dt = time.perf_counter() - t
assert ("inductor_ablate" in sys.modules) == (sys.argv[1] != "stock"), sys.argv[1]
print(dt, patch_ms / 1000)
"""


CELLS = """
import sys
import inductor_ablate.bench.runner as runner
if sys.argv[1] == "no-preload":  # the forkserver reads another variable: it preloads torch and Inductor only
    runner.PRELOAD_ENV = "ABLATE_BENCH_COST_UNUSED"
from inductor_ablate.commands.bench import main as bench_main
sys.exit(bench_main(sys.argv[2:]))
"""


def cells(args) -> int:
    """``--cells``: each cell's process start + model set-up, without and with the preload."""
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in ("no-preload", "preload"):
            path = os.path.join(tmp, f"{variant}.json")
            proc = subprocess.run([sys.executable, "-c", CELLS, variant, "--suite", args.suite, "--models", args.models,
                                   "--configs", args.configs, "--device", args.device, "--repeat", "3", "--jobs", "1",
                                   "--json", path, "--no-progress"], capture_output=True, text=True)
            if proc.returncode not in (0, 1):
                print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
                return proc.returncode
            with open(path) as f:
                results[variant] = {(c["model"], c["config"]): c for c in json.load(f)["cells"] if c["status"] == "ok"}
            if not results[variant]:
                print(f"{variant}: no cell ran ok\n{proc.stdout[-2000:]}", file=sys.stderr)
                return 1
    print(f"{'cell':<34} {'no preload s':>13} {'preload s':>10}   (process start + model set-up)")
    cost = lambda c: c["wall_s"] - c["cell_s"] + c["setup_s"]  # noqa: E731
    for key in results["preload"]:
        if key in results["no-preload"]:
            print(f"{' / '.join(key):<34} {cost(results['no-preload'][key]):>13.2f} {cost(results['preload'][key]):>10.2f}")
    medians = {v: statistics.median(cost(c) for c in rows.values()) for v, rows in results.items()}
    print(f"{'median':<34} {medians['no-preload']:>13.2f} {medians['preload']:>10.2f}   "
          f"(preload saves {medians['no-preload'] - medians['preload']:.2f} s a cell)")
    return 0


def sample(variant: str, cache_dir: str) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDUCTOR_")}
    if variant != "stock":
        env["INDUCTOR_NO_FUSE"] = "1"
        env["INDUCTOR_ABLATE_CACHE_DIR"] = tempfile.mkdtemp() if variant == "overlay-cold" else cache_dir
    out = subprocess.run([sys.executable, "-c", TIMED, variant], env=env, capture_output=True, text=True, check=True)
    total, patching = out.stdout.strip().splitlines()[-1].split()
    return float(total), float(patching)


def startup(with_var: bool) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDUCTOR_")}
    if with_var:
        env["INDUCTOR_NO_FUSE"] = "1"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - t


def main() -> int:
    from inductor_ablate.errors import OneLineParser

    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cells", action="store_true", help="a bench cell's cost beyond compiling and timing instead")
    parser.add_argument("--suite", default="hf")
    parser.add_argument("--models", default="distilbert,t5_small_encoder")
    parser.add_argument("--configs", default="all,no-fusion")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    if args.cells:
        return cells(args)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: expected 1 or more")
    cache_dir = tempfile.mkdtemp(prefix="ia-overhead-")
    sample("overlay", cache_dir)  # fill the warm cache
    times = {"stock": [], "overlay": [], "overlay-cold": []}
    patching = {"overlay": [], "overlay-cold": []}
    boot = {False: [], True: []}
    for _ in range(args.rounds):
        for variant in times:
            total, patch_time = sample(variant, cache_dir)
            times[variant].append(total)
            if variant in patching:
                patching[variant].append(patch_time)
        for flag in boot:
            boot[flag].append(startup(flag))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"Inductor import, median of {args.rounds} fresh interpreters (min..max):")
    for k, v in times.items():
        print(f"  {k:<13} {med[k] * 1000:7.1f} ms  ({min(v) * 1000:.1f}..{max(v) * 1000:.1f})")
    print(f"difference of medians, warm cache: {(med['overlay'] - med['stock']) * 1000:+.1f} ms; "
          f"cold cache: {(med['overlay-cold'] - med['stock']) * 1000:+.1f} ms (includes machine noise)")
    for k, v in patching.items():
        print(f"time inside the overlay's patching ({k}): median {statistics.median(v) * 1000:.1f} ms, "
              f"max {max(v) * 1000:.1f} ms" + ("  (goal: <= 100 ms with a warm cache)" if k == "overlay" else ""))
    b0, b1 = statistics.median(boot[False]), statistics.median(boot[True])
    print(f"`python -c pass`: {b0 * 1000:.1f} ms without INDUCTOR_*, {b1 * 1000:.1f} ms with ({(b1 - b0) * 1000:+.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
