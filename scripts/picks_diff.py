"""Which Triton kernels' configs set the wrong processes of one generated program apart from the right.

    python scripts/picks_diff.py --wrong A.txt [B.txt ...] --right C.txt [D.txt ...] [--all]

Each file is one process's ``triton-picks.txt`` (``model_latency.py --save-code``): the config each
Triton kernel settled on at its first run, which timing noise picks, so processes that ran the same
code can differ in it.  Printed: how many kernels' configs differ between any two of the files;
the kernels on which every wrong process ran one config that no right process ran (the candidates
to pin, ``model_latency.py --pin``), with how many a kernel choosing between two configs at even
odds would give by chance; and the kernels a file lists as not settled, whose config there is not
known.  ``--all`` prints every kernel whose config differs, file by file.

Files of other code (another set of kernels) are refused in one line: their picks do not compare.
"""
from __future__ import annotations

import os
import sys

from inductor_ablate.errors import OneLineParser
from inductor_ablate.triton_picks import is_settled, read_picks


def _fail(msg: str) -> None:
    print(f"picks_diff.py: {msg}", file=sys.stderr)
    raise SystemExit(2)


def _read(path: str) -> dict[str, str]:
    if not os.path.isfile(path):
        _fail(f"{path}: no such file")
    try:
        picks = read_picks(path)
    except ValueError as exc:
        _fail(str(exc))
    if not picks:
        _fail(f"{path}: names no kernel")
    return picks


def split_kernels(wrong: list[dict], right: list[dict], keys: list[str]) -> dict[str, str]:
    """{kernel: the config} for each of ``keys`` (kernels settled in every file) that every wrong
    process ran at one config no right process ran."""
    found = {}
    for key in keys:
        ran_wrong = {p[key] for p in wrong}
        if len(ran_wrong) == 1 and not ran_wrong & {p[key] for p in right}:
            found[key] = ran_wrong.pop()
    return found


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--wrong", nargs="+", required=True, metavar="PICKS", help="picks files of processes that went wrong")
    p.add_argument("--right", nargs="+", required=True, metavar="PICKS", help="picks files of processes that were right")
    p.add_argument("--all", action="store_true", help="print every kernel whose config differs, per file")
    args = p.parse_args(argv)
    paths = args.wrong + args.right
    if len(set(paths)) < len(paths):
        _fail("a file is given twice")
    picks = [_read(path) for path in paths]
    for path, other in zip(paths[1:], picks[1:]):
        if set(other) != set(picks[0]):
            _fail(f"{paths[0]} and {path} name other kernels ({len(set(picks[0]) ^ set(other))} in one only): not the same code")
    wrong, right = picks[:len(args.wrong)], picks[len(args.wrong):]
    unknown = sorted(k for k in picks[0] if not all(is_settled(process[k]) for process in picks))
    settled = [k for k in picks[0] if k not in unknown]
    differ = [k for k in settled if len({process[k] for process in picks}) > 1]
    print(f"{len(paths)} processes ({len(wrong)} wrong, {len(right)} right), {len(picks[0])} kernels: "
          f"configs differ in {len(differ)} of the {len(settled)} settled in every file")
    if args.all:
        for key in differ:
            print(key)
            for i, (path, process) in enumerate(zip(paths, picks)):
                print(f"  {'wrong' if i < len(wrong) else 'right'} {path}: {process[key]}")
    split = split_kernels(wrong, right, differ)  # a kernel all files ran alike splits nothing
    chance = 2 * 0.5 ** len(paths) * len(differ)
    print(f"every wrong process on a config no right one ran: {len(split)} kernel(s) "
          f"(a kernel choosing between two configs at even odds does so by chance: about {chance:.1f} of the {len(differ)})")
    for key, config in split.items():
        print(f"  {key}: {config} (right: {'; '.join(sorted({process[key] for process in right}))})")
    if unknown:
        print(f"not settled in some file, config not known there: {len(unknown)} kernel(s)")
        for key in unknown:
            print(f"  {key}: " + "; ".join(f"{path} {process[key]}" for path, process in zip(paths, picks)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
