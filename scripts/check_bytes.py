"""Hold the byte estimate of each generated kernel (``runtime.kernel_bytes``) against the DRAM
traffic Nsight Compute counted for it.

    ncu --profile-from-start off --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \\
        --csv --page raw --log-file NCU.csv \\
        python scripts/model_latency.py MODEL --suite real --dtype bfloat16 --config ROW --set triton.cudagraphs=False \\
        --census CENSUS.json --samples 1
    python scripts/check_bytes.py CENSUS.json NCU.csv [CENSUS2.json NCU2.csv ...] [--json OUT] [--label L ...]

Nsight Compute replays each kernel with the caches flushed (its default ``--cache-control all``),
so ``dram__bytes_read + dram__bytes_write`` is what one cold call moves: the quantity the estimate
claims.  Per kernel: estimate, measured, their ratio; then the ratios' spread, per kernel kind
(pointwise, reduction, persistent reduction, template), over kernels moving at least 1 MB.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys

KIND = re.compile(r"^triton_(poi|red|per|tem|spl)_")
KINDS = {"poi": "pointwise", "red": "reduction", "per": "persistent reduction", "tem": "template", "spl": "split scan"}


def read_ncu(path: str) -> dict[str, list[dict]]:
    """{kernel name: [{bytes, ms}] per launch} from ``ncu --csv --page raw``'s log."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise SystemExit(f"check_bytes: error: {path}: no Nsight Compute CSV table (\"ID\",...) in it")
    rows = list(csv.DictReader(lines[start:]))
    out: dict[str, list[dict]] = {}
    for row in rows[1:]:  # the first row holds the units
        name = row.get("Kernel Name") or row.get("Function Name") or ""
        try:
            read, write = float(row["dram__bytes_read.sum"]), float(row["dram__bytes_write.sum"])
            ns = float(row.get("gpu__time_duration.sum") or "nan")
        except (KeyError, ValueError):
            continue
        units = rows[0]
        scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}
        factor = scale.get(units.get("dram__bytes_read.sum", "byte"), 1)
        tscale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}.get(units.get("gpu__time_duration.sum", "nsecond"), 1e-6)
        out.setdefault(name, []).append({"bytes": (read + write) * factor, "ms": ns * tscale})
    return out


def join(census_path: str, ncu_path: str, label: str) -> list[dict]:
    with open(census_path) as f:
        census = json.load(f)
    measured = read_ncu(ncu_path)
    out = []
    for k in census["kernels"]:
        launches = measured.get(k["name"])
        if not launches or not k.get("bytes"):
            continue
        got = statistics.median(x["bytes"] for x in launches)
        ms = statistics.median(x["ms"] for x in launches)
        kind = KIND.match(k["name"])
        out.append({"label": label, "name": k["name"], "kind": KINDS.get(kind.group(1), "other") if kind else "other",
                    "estimate": k["bytes"], "measured": got, "ratio": k["bytes"] / got if got else None,
                    "ms": ms, "launches": len(launches), "device": census.get("device")})
    return out


def summary(rows: list[dict], floor: float = 1e6) -> dict:
    """The ratio estimate/measured per kernel kind, over kernels that moved at least ``floor`` bytes."""
    out = {}
    for kind in sorted({r["kind"] for r in rows}) + ["all"]:
        ratios = sorted(r["ratio"] for r in rows if r["ratio"] and r["measured"] >= floor and kind in ("all", r["kind"]))
        if ratios:
            out[kind] = {"kernels": len(ratios), "median": statistics.median(ratios), "min": ratios[0],
                         "max": ratios[-1], "within_25pct": sum(0.75 <= r <= 1.25 for r in ratios)}
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pairs", nargs="+", metavar="CENSUS NCU")
    p.add_argument("--label", action="append", default=[], help="a name for each pair, in order")
    p.add_argument("--json", metavar="OUT")
    args = p.parse_args()
    if len(args.pairs) % 2:
        p.error("give census and ncu files in pairs")
    rows = []
    for i in range(0, len(args.pairs), 2):
        label = args.label[i // 2] if i // 2 < len(args.label) else args.pairs[i]
        rows += join(args.pairs[i], args.pairs[i + 1], label)
    if not rows:
        print("check_bytes: error: no kernel of the census was measured (is the ncu log from the same run?)",
              file=sys.stderr)
        return 2
    print(f"{'label':<28} {'kernel':<60} {'estimate MB':>12} {'measured MB':>12} {'ratio':>7}")
    for r in sorted(rows, key=lambda r: -r["measured"]):
        print(f"{r['label'][:28]:<28} {r['name'][:60]:<60} {r['estimate'] / 1e6:>12.2f} {r['measured'] / 1e6:>12.2f} "
              f"{r['ratio']:>7.2f}")
    result = summary(rows)
    print("\nestimate / measured, kernels moving >= 1 MB:")
    for kind, s in result.items():
        print(f"  {kind:<22} {s['kernels']:>4} kernels  median {s['median']:.2f}  range [{s['min']:.2f}, {s['max']:.2f}]  "
              f"within 25%: {s['within_25pct']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernels": rows, "summary": result}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
