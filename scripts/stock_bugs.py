#!/usr/bin/env python
"""The Inductor bugs that stock settings reach (inductor_ablate.regressions), shown on this torch.

Each program runs in two fresh interpreters, compiled with Inductor's caches off: stock torch (no
INDUCTOR_* variable, so the overlay is not even imported), and with the overlay and a switch that
changes nothing else on these programs (INDUCTOR_NO_FUSE=combo: combo kernels are off by default),
under which the overlay's fix applies.  Prints the largest error against eager for each.

    python scripts/stock_bugs.py [--device cpu|cuda] [--json OUT]
"""
import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, torch
from inductor_ablate.regressions import REGRESSIONS
from inductor_ablate.random_programs import max_error, run
case = REGRESSIONS[sys.argv[1]]
fn, args = case.build(sys.argv[2])
expected = run(fn, args, case.backward)
got = run(torch.compile(fn), args, case.backward)
print("JSON" + json.dumps({"error": max_error(got, expected), "torch": torch.__version__,
                           "overlay": "inductor_ablate.importhook" in sys.modules}))
"""


def run_case(name: str, device: str, switches: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDUCTOR_")}
    env.update(switches, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    proc = subprocess.run([sys.executable, "-c", CHILD, name, device], env=env, capture_output=True, text=True,
                          timeout=600)
    line = next((l for l in proc.stdout.splitlines() if l.startswith("JSON")), None)
    if line is None:  # a crash (the out-of-bounds scatter can abort the process) is a result too
        return {"error": None, "crash": (proc.stderr.strip().splitlines() or ["rc %d" % proc.returncode])[-1]}
    return json.loads(line[4:])


def main() -> int:
    from inductor_ablate.regressions import REGRESSIONS

    from inductor_ablate.errors import OneLineParser, device_option

    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", type=device_option)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    rows = []
    print(f"{'program':<30} {'fix':<34} {'stock error':>12} {'with a switch':>14}")
    for name, case in REGRESSIONS.items():
        if not case.stock_bug:
            continue
        stock = run_case(name, args.device, {})
        fixed = run_case(name, args.device, {"INDUCTOR_NO_FUSE": "combo"})
        show = lambda r: "crash" if r["error"] is None else f"{r['error']:.3g}"  # noqa: E731
        print(f"{name:<30} {case.stock_bug:<34} {show(stock):>12} {show(fixed):>14}")
        rows.append(dict(program=name, fix=case.stock_bug, device=args.device, stock=stock, with_switch=fixed))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
