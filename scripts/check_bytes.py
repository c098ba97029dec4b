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

import csv
import json
import re
import statistics
import sys

KIND = re.compile(r"^triton_(poi|red|per|tem|spl)_")
KINDS = {"poi": "pointwise", "red": "reduction", "per": "persistent reduction", "tem": "template", "spl": "split scan"}


def _fail(message: str):
    print(f"check_bytes: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        _fail(f"cannot read {path}: {exc.strerror}")


def read_ncu(path: str) -> dict[str, list[dict]]:
    """{kernel name: [{bytes, read, write, ms}] per launch} from ``ncu --csv --page raw``'s log."""
    lines = _read(path).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        _fail(f"{path}: no Nsight Compute CSV table (\"ID\",...) in it")
    rows = list(csv.DictReader(lines[start:]))
    out: dict[str, list[dict]] = {}
    for row in rows[1:]:  # the first row holds the units
        name = row.get("Kernel Name") or row.get("Function Name") or ""
        try:
            number = lambda key: float((row.get(key) or "nan").replace(",", ""))  # noqa: E731 (1,234 as ncu prints it)
            read, write = number("dram__bytes_read.sum"), number("dram__bytes_write.sum")
            ns = number("gpu__time_duration.sum")
        except (KeyError, ValueError):
            continue
        units = rows[0]
        scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}
        factor = scale.get(units.get("dram__bytes_read.sum", "byte"), 1)
        tscale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}.get(units.get("gpu__time_duration.sum", "nsecond"), 1e-6)
        out.setdefault(name, []).append({"bytes": (read + write) * factor, "read": read * factor,
                                         "write": write * factor, "ms": ns * tscale})
    return out


def join(census_path: str, ncu_path: str, label: str) -> list[dict]:
    try:
        census = json.loads(_read(census_path))
        census["kernels"]
    except (ValueError, KeyError, TypeError):
        _fail(f"{census_path}: not a census file (model_latency.py --census writes one)")
    measured = read_ncu(ncu_path)
    out, seen = [], set()
    for k in census["kernels"]:
        if k["name"] in seen:  # one kernel, several call sites: the census lists it per site
            continue
        seen.add(k["name"])
        launches = measured.get(k["name"])
        if not launches or not k.get("bytes"):
            continue
        got = statistics.median(x["bytes"] for x in launches)
        read = statistics.median(x["read"] for x in launches)
        ms = statistics.median(x["ms"] for x in launches)
        kind = KIND.match(k["name"])
        out.append({"label": label, "name": k["name"], "sites": sum(1 for c in census["kernels"] if c["name"] == k["name"]), "kind": KINDS.get(kind.group(1), "other") if kind else "other",
                    "estimate": k["bytes"], "estimate_read": k.get("read_bytes"), "measured": got, "dram_read": read, "ratio": k["bytes"] / got if got else None,
                    "ms": ms, "launches": len(launches), "device": census.get("device")})
    return out


def summary(rows: list[dict], floor: float = 1e6) -> dict:
    """Per kernel kind, over kernels that moved at least ``floor`` bytes: the estimate over the DRAM
    bytes counted (reads + writes: writes a write-back L2 holds at the kernel's end are not yet in
    DRAM, so this ratio runs above 1 by the outputs' share), over the DRAM reads alone (the cache
    flushed before each kernel: every byte read comes from DRAM once, a tiled matmul's re-reads
    more), and where the census split it, the estimate's reads over the DRAM reads."""
    out = {}
    for kind in sorted({r["kind"] for r in rows}) + ["all"]:
        mine = [r for r in rows if r["measured"] >= floor and kind in ("all", r["kind"])]
        if not mine:
            continue
        total = sorted(r["estimate"] / r["measured"] for r in mine)
        reads = sorted(r["estimate"] / r["dram_read"] for r in mine if r["dram_read"])
        out[kind] = {"kernels": len(mine), "median": statistics.median(total), "min": total[0], "max": total[-1],
                     "estimate_over_dram_read": {"median": statistics.median(reads), "min": reads[0], "max": reads[-1],
                                                 "at_least_reads": sum(r >= 0.98 for r in reads)}}
        split = sorted(r["estimate_read"] / r["dram_read"] for r in mine if r.get("estimate_read") and r["dram_read"])
        if split:
            out[kind]["read_estimate_over_dram_read"] = {"median": statistics.median(split), "min": split[0],
                                                         "max": split[-1], "within_10pct": sum(0.9 <= r <= 1.1 for r in split)}
    return out


def main() -> int:
    from inductor_ablate.errors import OneLineParser

    p = OneLineParser(description=__doc__.split("\n\n")[0])
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
    print(f"{'label':<24} {'kernel':<60} {'estimate MB':>11} {'(read)':>8} {'DRAM MB':>9} {'(read)':>8} {'us':>7}")
    for r in sorted(rows, key=lambda r: -r["measured"]):
        est_read = f"{r['estimate_read'] / 1e6:8.2f}" if r.get("estimate_read") is not None else f"{'-':>8}"
        print(f"{r['label'][:24]:<24} {r['name'][:60]:<60} {r['estimate'] / 1e6:>11.2f} {est_read} "
              f"{r['measured'] / 1e6:>9.2f} {r['dram_read'] / 1e6:>8.2f} {r['ms'] * 1e3:>7.1f}")
    result = summary(rows)
    print("\nkernels moving >= 1 MB: estimate / DRAM bytes (reads + writes); estimate / DRAM reads; estimate's reads / DRAM reads")
    for kind, s in result.items():
        r = s["estimate_over_dram_read"]
        line = (f"  {kind:<22} {s['kernels']:>4} kernels  {s['median']:.2f} [{s['min']:.2f}, {s['max']:.2f}]  "
                f"{r['median']:.2f} [{r['min']:.2f}, {r['max']:.2f}], at least the reads: {r['at_least_reads']}")
        if "read_estimate_over_dram_read" in s:
            q = s["read_estimate_over_dram_read"]
            line += f"  reads {q['median']:.2f} [{q['min']:.2f}, {q['max']:.2f}], within 10%: {q['within_10pct']}"
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernels": rows, "summary": result}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
