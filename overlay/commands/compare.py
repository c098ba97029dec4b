"""``python -m inductor_ablate compare EARLIER LATER``: two results files' rows side by side."""
from __future__ import annotations

from ..compare import LABELS, TABLES, compare
from ..errors import OneLineParser, UsageError


def parse_labels(text: str) -> tuple[str, str]:
    """``--labels A,B``: two names, as the tables' column heads."""
    names = [n.strip() for n in text.split(",")]
    if len(names) != 2 or not all(names) or any("|" in n for n in names):
        raise UsageError(f"--labels {text!r}: give two names for the two files, comma-separated, e.g. --labels H200,H100")
    return names[0], names[1]


def main(argv: list[str]) -> int:
    p = OneLineParser(prog="python -m inductor_ablate compare",
                      description="the rows of two results files (another day, GPU or dtype) side by side")
    p.add_argument("--labels", default=",".join(LABELS), metavar="A,B", help="the two files' names in the tables")
    p.add_argument("--table", choices=TABLES, default=None, help="print one table only (as docs embed them)")
    p.add_argument("earlier", metavar="EARLIER")
    p.add_argument("later", metavar="LATER")
    args = p.parse_args(argv)
    compare(args.earlier, args.later, parse_labels(args.labels), args.table)
    return 0
