#!/usr/bin/env python
"""Can load fake a star?  The same CPU bench run twice, side by side: on the quiet machine, then
beside bursty load (issue 66), and both tables printed, with what each starred.

The load is what faked stars before: ``--load N`` processes, each alternating busy spells of 0.1 to
2 s (a spinning Python loop) with idle spells of 0.1 to 1 s, seeded so every run meets the same
bursts.  Two steady busy loops did not fake a star; bursts do, because cells are timed one process
after another and a burst lands on whichever row is running.

    python scripts/load_stars.py [--load 4] [--json OUT] [--keep DIR] [--models ...] [--configs ...]

``--keep DIR`` keeps both runs' results files there (``cpu-load-quiet.json``, ``cpu-load-bursty.json``):
docs/bench.md's "Load" tables are generated from the committed pair.

Prints each run's noise line and summary table, then one line per row: its share of `all` kept and
star, quiet and loaded.  The check of issue 66: no star under load that the quiet run does not give
with the same sign.  Exit 1 when a loaded star has no quiet star of the same sign beside it.
"""
import argparse
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

MODELS = "pointwise_chain,mlp_gelu,norm_block,conv_bn_block"
CONFIGS = "all,no-fusion-no-inlining,one-kernel-per-op,no-pattern-matching,no-freezing"


def _bursts(seed: int, stop) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        until = time.perf_counter() + rng.uniform(0.1, 2.0)
        while time.perf_counter() < until:
            pass
        stop.wait(rng.uniform(0.1, 1.0))


def run_bench(path: str, models: str, configs: str, repeats: int) -> dict:
    cmd = [sys.executable, "-m", "inductor_ablate", "bench", "--device", "cpu", "--models", models, "--configs",
           configs, "--cell-repeats", str(repeats), "--json", path, "--fresh", "--no-progress"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"load_stars: bench failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
    with open(path) as f:
        data = json.load(f)
    return {"wall_s": round(wall, 1), "stdout": proc.stdout, "summary": data["summary"], "cells": data["cells"]}


def rows_of(run: dict) -> dict:
    return {r["config"]: r for r in run["summary"] if r["config"] != "all"}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--load", type=int, default=4, help="bursty processes beside the loaded run (default 4)")
    p.add_argument("--models", default=MODELS)
    p.add_argument("--configs", default=CONFIGS)
    p.add_argument("--cell-repeats", type=int, default=2)
    p.add_argument("--json", default=None, help="write both runs' summaries and the verdict here")
    p.add_argument("--keep", default=None, metavar="DIR", help="keep both runs' results files in DIR")
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="load-stars-")
    runs = {"quiet": run_bench(os.path.join(tmp, "quiet.json"), args.models, args.configs, args.cell_repeats)}
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=_bursts, args=(i, stop), daemon=True) for i in range(args.load)]
    for proc in load:
        proc.start()
    try:
        runs["loaded"] = run_bench(os.path.join(tmp, "loaded.json"), args.models, args.configs, args.cell_repeats)
    finally:
        stop.set()
        for proc in load:
            proc.join(5)
    for name, run in runs.items():
        busy = sum(bool(c.get("busy")) for c in run["cells"])
        dropped = sum(c.get("disturbed", 0) for c in run["cells"])
        print(f"\n## {name} ({run['wall_s']:.0f} s; {busy} busy cells, {dropped} disturbed sample pairs dropped)\n")
        print(run["stdout"].split("\nper model")[0].strip())
    quiet, loaded = rows_of(runs["quiet"]), rows_of(runs["loaded"])
    print(f"\n{'row':<26}{'quiet kept':>18}{'loaded kept':>18}  verdict")
    faked = []
    for config, lr in loaded.items():
        qr = quiet.get(config, {})

        def text(r):
            return "-" if r.get("kept") is None else f"{r['kept']:.2f}{'*' if r.get('significant') else ''}"
        sign = lambda r: (r["kept"] > 1) - (r["kept"] < 1) if r.get("kept") else 0  # noqa: E731
        ok = not lr.get("significant") or (qr.get("significant") and sign(qr) == sign(lr))
        if not ok:
            faked.append(config)
        print(f"{config:<26}{text(qr):>18}{text(lr):>18}  {'ok' if ok else 'STAR UNDER LOAD ONLY'}")
    verdict = {"load": args.load, "models": args.models, "configs": args.configs, "cell_repeats": args.cell_repeats,
               "faked": faked, "cpus": os.cpu_count(),
               "runs": {n: {"wall_s": r["wall_s"], "summary": r["summary"],
                            "busy_cells": sum(bool(c.get("busy")) for c in r["cells"]),
                            "disturbed_pairs": sum(c.get("disturbed", 0) for c in r["cells"]),
                            "table": r["stdout"].split("\nper model")[0].strip()} for n, r in runs.items()}}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(verdict, f, indent=1)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        for name, kept in (("quiet", "cpu-load-quiet.json"), ("loaded", "cpu-load-bursty.json")):
            shutil.copyfile(os.path.join(tmp, f"{name}.json"), os.path.join(args.keep, kept))
    print(f"\nstars under load only: {', '.join(faked) or 'none'}")
    return 1 if faked else 0


if __name__ == "__main__":
    sys.exit(main())
