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

    python scripts/bench_overhead.py [--rounds 7]
"""
import argparse
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
    args = parser.parse_args()
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
