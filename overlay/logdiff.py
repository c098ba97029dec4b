"""``python -m inductor_ablate diff LOG_A LOG_B``: the fusions and inlinings one decision log holds
and the other does not, as opt-diff does for LLVM's remarks.

Decisions are matched by the ops on each side, not by number: numbers shift as soon as one decision
differs, while a fusion of ``sin`` and ``mul`` is the same fusion in any config and in any run of the
program (FX node names are stable).  A fusion is the pair of op sets (either order); an inlining is an
FX node's output left to Inductor (``realized`` outputs are not inlinings); a veto is a pair a switch
vetoed, with the switch: what a switched log holds that a stock one cannot.  Refusals are not compared.
"""
from __future__ import annotations

from collections import Counter

from .scope import module_matches


def _names(ops: list[str]) -> tuple[str, ...]:
    """``["sin:aten.sin.default", ...]`` -> ``("sin", ...)``: the FX node names, sorted."""
    return tuple(sorted(op.split(":", 1)[0] for op in ops))


def key(record: dict):
    """What a decision is, independent of its number; None for records that are not compared."""
    if record["decision"] == "fusion" and record.get("result") == "fused":
        return ("fusion", record.get("kind"), frozenset((_names(record["ops1"]), _names(record["ops2"]))))
    if record["decision"] == "inline" and record.get("result") == "left to Inductor":
        return ("inline", record["fx_node"], record["op"])
    if record["decision"] == "veto" and record.get("ops1") is not None:
        return ("veto", record.get("kind"), frozenset((_names(record["ops1"]), _names(record["ops2"]))),
                record["result"])
    return None


def describe(k) -> str:
    if k[0] in ("fusion", "veto"):
        sides = sorted(k[2]) if len(k[2]) == 2 else [*k[2]] * 2
        pair = f"[{', '.join(sides[0])}] + [{', '.join(sides[1])}]"
        return f"fusion {k[1]}: {pair}" if k[0] == "fusion" else f"veto {k[1]} ({k[3][len('vetoed ('):-1]}): {pair}"
    return f"inline {k[1]} ({k[2]})"


def modules_of(record: dict) -> list[str]:
    """Where a decision happened: both sides' modules for a fusion, the node's for an inlining (logs
    written before they were recorded: none)."""
    names = ([record.get("module1"), record.get("module2")] if record["decision"] in ("fusion", "veto")
             else [record.get("module")])
    return [m for m in names if m is not None]


def in_modules(record: dict, globs) -> bool:
    """A decision with a side in one of the modules (a glob; a submodule is inside)."""
    return any(module_matches(m, globs) for m in modules_of(record))


def where(records: list[dict], k) -> str:
    """The decision numbers and modules of ``k`` in one log: ``#12 (encoder.layer.0.attention)``."""
    hits = [r for r in records if key(r) == k]
    return ", ".join((f"#{r['n']}" if "n" in r else f"after #{r.get('after')}")
                     + (f" ({' + '.join(dict.fromkeys(modules_of(r)))})" if modules_of(r) else "") for r in hits)


def diff(records_a: list[dict], records_b: list[dict], modules=()) -> tuple[list, list, int]:
    """(only in A, only in B, in both), as multisets of keys: a program may fuse the same ops twice.
    ``modules``: only decisions with a side in these module globs."""
    if modules:
        records_a = [r for r in records_a if in_modules(r, modules)]
        records_b = [r for r in records_b if in_modules(r, modules)]
    a = Counter(k for k in map(key, records_a) if k is not None)
    b = Counter(k for k in map(key, records_b) if k is not None)
    return sorted((a - b).elements(), key=describe), sorted((b - a).elements(), key=describe), sum((a & b).values())
