"""The decision log and the decision limits (INDUCTOR_FUSE_LIMIT, INDUCTOR_INLINE_LIMIT).

A *fusion decision* is a scheduler fusion Inductor makes (``Scheduler.fuse_two_nodes``); an
*inlining decision* is an FX node whose computed output lowering leaves unrealized, free for
Inductor to inline into its readers, or realizes.  Both are numbered from 1 in the order Inductor
makes them in this process (and per graph), which is deterministic for a given program, so decision
k of a run with limit N >= k is decision k of every such run: counter-based bisection as LLVM's
``-opt-bisect-limit`` does it.  ``INDUCTOR_FUSE_SKIP=k`` vetoes fusion k alone (leave-one-out, as
GCC's ``-fdbg-cnt`` ranges do): it is numbered and logged as vetoed, and its two sides are kept
apart for the rest of the graph, so a later round cannot make the same fusion under a new number.

Where the log goes: ``INDUCTOR_ABLATE_LOG=path`` appends one JSON object per decision; the Python
logger ``inductor_ablate.decisions`` logs one line each at DEBUG (``TORCH_LOGS=+inductor_ablate``).
Torch is imported lazily: this module must import without it.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import uuid

from . import scope, switches
from .config import config

LOG_ENV = switches.LOG_ENV
log = logging.getLogger("inductor_ablate.decisions")


class _Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.total = {"fusion": 0, "inline": 0}
        self.in_scope = 0  # fusions made in scope (INDUCTOR_ABLATE_MODULES/OPS): what a limit counts there
        self.graphs = 0
        self.nonce = uuid.uuid4().hex  # this numbering's own cache-key value (runtime.cache_tag)
        self.log_path, self.log_file = None, None


_counts = _Counts()


def reset() -> None:
    """Start numbering again (a new program in the same process, e.g. a test)."""
    with _counts.lock:
        if _counts.log_file is not None:
            _counts.log_file.close()
        _counts.reset()


def counts() -> tuple[int, int]:
    """(fusions, inlining decisions) made so far in this process."""
    return _counts.total["fusion"], _counts.total["inline"]


def fusions_counted() -> int:
    """The fusions INDUCTOR_FUSE_LIMIT counts: every one, or under a scope those in it."""
    return _counts.in_scope if scope.scoped() else _counts.total["fusion"]


def logging_on() -> bool:
    return bool(os.environ.get(LOG_ENV)) or log.isEnabledFor(logging.DEBUG)


def nonce() -> str:
    return _counts.nonce


def active() -> bool:
    """Decisions are counted when a limit or a skip is set or the log is wanted; otherwise nothing runs."""
    eff = config.effective()
    return (eff["fuse_limit"] is not None or eff["inline_limit"] is not None or bool(eff["fuse_skip"])
            or logging_on() or bool(eff["expect_fused"]))


def _members(node) -> frozenset:
    return frozenset(n.get_name() for n in node.get_nodes())


def kept_apart(node1, node2) -> bool:
    """True if the pair would join the two sides of a fusion INDUCTOR_FUSE_SKIP vetoed in this graph."""
    apart = getattr(getattr(node1, "scheduler", None), "_inductor_ablate_apart", None)
    if not apart:
        return False
    m1, m2 = _members(node1), _members(node2)
    return any((a & m1 and b & m2) or (a & m2 and b & m1) for a, b in apart)


def graph_index() -> int:
    """This graph's number in the process (1, 2, ...): the log's ``graph`` and the warnings name it."""
    from torch._inductor.virtualized import V

    graph = V.graph
    index = getattr(graph, "_inductor_ablate_index", None)
    if index is None:
        with _counts.lock:
            _counts.graphs += 1
            index = _counts.graphs
        graph._inductor_ablate_index = index
        graph._inductor_ablate_counts = {"fusion": 0, "inline": 0}
    return index


def _next(kind: str) -> tuple[int, int, int]:
    """(number in the process, graph index, number in the graph) for the next decision of ``kind``."""
    from torch._inductor.virtualized import V

    graph = graph_index()
    with _counts.lock:
        _counts.total[kind] += 1
        V.graph._inductor_ablate_counts[kind] += 1
        return _counts.total[kind], graph, V.graph._inductor_ablate_counts[kind]


def _ops(node) -> list[str]:
    """The FX ops a scheduler node (fused or not) computes, as ``name:target``, sorted."""
    return sorted({f"{o.name}:{o.target}" for o in scope.origins(node) if getattr(o, "op", None) == "call_function"})


def _emit(record: dict) -> None:
    path = os.environ.get(LOG_ENV)
    if path:
        with _counts.lock:  # one open file per path, a line written and flushed per record
            if _counts.log_path != path or _counts.log_file is None or _counts.log_file.closed:
                if _counts.log_file is not None:
                    _counts.log_file.close()
                _counts.log_path, _counts.log_file = path, open(path, "a", buffering=1)
            _counts.log_file.write(json.dumps(record) + "\n")
    if log.isEnabledFor(logging.DEBUG):
        if record["decision"] == "refusal":
            log.debug("graph %s fusion %s %s: %s %s + %s %s: %s", record["graph"], record["kind"], record["result"],
                      record["node1"], record["ops1"], record["node2"], record["ops2"], record["reason"])
        elif record["decision"] == "fusion":
            log.debug("#%d graph %d.%d fusion %s %s: %s %s + %s %s (score %s)", record["n"], record["graph"],
                      record["graph_n"], record["kind"], record["result"], record["node1"], record["ops1"],
                      record["node2"], record["ops2"], record["score"])
        else:
            log.debug("#%d graph %d.%d inline: %s %s (read by %s) -> %s", record["n"], record["graph"],
                      record["graph_n"], record["fx_node"], record["op"], ", ".join(record["readers"]),
                      record["result"])


def fusion_made(scheduler, node1, node2) -> bool:
    """Called first thing in Scheduler.fuse_two_nodes: number the fusion and log it.  True vetoes
    it (its number is in INDUCTOR_FUSE_SKIP): the caller returns without fusing."""
    from .fusion_kinds import fusion_kind

    n, graph, graph_n = _next("fusion")
    in_scope, scoped = scope.pair_in_scope(node1, node2), scope.scoped()
    scope_n = None
    if scoped and in_scope:  # under a scope the limit and the skips number in-scope fusions
        with _counts.lock:
            _counts.in_scope += 1
            scope_n = _counts.in_scope
    skip = (scope_n if scoped else n) in config.effective()["fuse_skip"]
    if skip:
        if not hasattr(scheduler, "_inductor_ablate_apart"):
            scheduler._inductor_ablate_apart = []
        scheduler._inductor_ablate_apart.append((_members(node1), _members(node2)))
    try:
        score = scheduler.score_fusion_memory(node1, node2)
    except Exception:  # a log field must never break compilation
        score = None
    _emit({"decision": "fusion", "n": n, "graph": graph, "graph_n": graph_n, "kind": fusion_kind(node1, node2),
           "node1": node1.get_name(), "node2": node2.get_name(), "ops1": _ops(node1), "ops2": _ops(node2),
           "score": score, "result": "vetoed (INDUCTOR_FUSE_SKIP)" if skip else "fused", **_where(node1, node2, in_scope),
           **({"scope_n": scope_n} if scoped else {})})
    return skip


def _where(node1, node2, in_scope: bool) -> dict:
    """Both sides' modules (the deepest holding each side's FX nodes) and, under a scope, whether the
    pair was in it: a log line says where a fusion happened, not only what it joined."""
    def module(node):
        return scope.common_module(scope.module_path(o) for o in scope.origins(node))
    out = {"module1": module(node1), "module2": module(node2)}
    if scope.scoped():
        out["in_scope"] = in_scope
    return out


def fusion_vetoed(node1, node2, kind, switch: str) -> None:
    """A switch (or limit, skip set, op pair) vetoed a pair Inductor asked about: logged once per pair
    and switch in a graph, not numbered (limits and bisect number only fusions made), so that a stock
    log and a switched one show what the switch took out and which switch did it (``diff``)."""
    from torch._inductor.virtualized import V

    graph = V.graph
    names = (node1.get_name(), node2.get_name()) if node1 is not None else (None, None)
    seen = graph.__dict__.setdefault("_inductor_ablate_vetoed", set())
    if (*names, switch) in seen:
        return
    seen.add((*names, switch))
    sides = {"ops1": _ops(node1), "ops2": _ops(node2), **_where(node1, node2, True)} if node1 is not None else {}
    _emit({"decision": "veto", "graph": graph_index(), "after": _counts.total["fusion"], "kind": kind,
           "node1": names[0], "node2": names[1], "result": f"vetoed ({switch})", **sides})


def _pending_refusals() -> dict:
    """{id(WhyNoFuse): (node1, node2)} of the graph being compiled (it dies with the graph)."""
    from torch._inductor.virtualized import V

    return V.graph.__dict__.setdefault("_inductor_ablate_why", {})


def refusal_nodes(why, node1, node2) -> None:
    """WhyNoFuse.__init__: keep the pair's nodes until Inductor says why it refuses them."""
    if logging_on() or config.effective()["expect_fused"]:
        _pending_refusals()[id(why)] = (node1, node2)


def fusion_refused(why) -> None:
    """Called after Inductor's WhyNoFuse records why it will not fuse a pair: log the refusal once per
    pair and reason in a graph.  Not numbered and not counted: INDUCTOR_FUSE_LIMIT, INDUCTOR_FUSE_SKIP
    and bisect number only the fusions made, so their numbers do not change with the log on."""
    from torch._inductor.virtualized import V

    from .fusion_kinds import fusion_kind

    nodes = _pending_refusals().pop(id(why), None)
    if nodes is None:
        return
    graph = V.graph
    seen = graph.__dict__.setdefault("_inductor_ablate_refused", set())
    key = (why.name1, why.name2, why.reason)
    if key in seen:
        return
    seen.add(key)
    try:
        reason = why.reason % why.args
    except Exception:  # a log field must never break compilation
        reason = why.reason
    try:
        kind = fusion_kind(*nodes)
    except Exception:
        kind = None
    template = why.reason.split("%")[0].strip().rstrip(":,=( ") or why.reason
    graph.__dict__.setdefault("_inductor_ablate_refusals", []).append(
        (_members(nodes[0]), _members(nodes[1]), " ".join(str(reason).split())))  # INDUCTOR_EXPECT_FUSED reads them
    _emit({"decision": "refusal", "graph": getattr(graph, "_inductor_ablate_index", None),
           "after": _counts.total["fusion"], "kind": kind, "node1": why.name1, "node2": why.name2,
           "ops1": _ops(nodes[0]), "ops2": _ops(nodes[1]), "result": f"refused ({template})",
           "reason": " ".join(str(reason).split())})


def inline_limit_reached() -> bool:
    """True once INDUCTOR_INLINE_LIMIT decisions were made: every later one is realized."""
    limit = config.effective()["inline_limit"]
    return limit is not None and _counts.total["inline"] >= limit


def inline_candidate(fx_node, box) -> bool:
    """An FX node's unrealized computed output: number it, and return True to realize it (beyond
    INDUCTOR_INLINE_LIMIT) or False to leave it to Inductor (which may still realize it)."""
    n, graph, graph_n = _next("inline")
    eff = config.effective()
    realize = eff["inline_limit"] is not None and n > eff["inline_limit"]
    result = ("realized (INDUCTOR_NO_INLINE)" if eff["no_inline"] else "realized (limit)" if realize
              else "left to Inductor")
    _emit({"decision": "inline", "n": n, "graph": graph, "graph_n": graph_n, "fx_node": fx_node.name,
           "op": str(fx_node.target), "readers": sorted(u.name for u in fx_node.users), "result": result,
           "module": scope.module_path(fx_node)})
    return realize


def load_log(path: str) -> list[dict]:
    """Every record of a decision log a user names: a missing file, a line that is not JSON or a
    record that is not a decision is bad input (UsageError: one line, exit 2)."""
    from .errors import UsageError

    try:
        with open(path) as f:
            lines = f.readlines()
    except OSError as exc:
        raise UsageError(f"cannot read decision log {path!r}: {exc.strerror}") from None
    records = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise UsageError(f"{path}:{i}: not a decision log (not a JSON line; INDUCTOR_ABLATE_LOG writes one "
                             f"JSON object per decision)") from None
        if not isinstance(record, dict) or record.get("decision") not in ("fusion", "inline", "refusal", "veto"):
            raise UsageError(f"{path}:{i}: not a decision log (no 'decision' of fusion, inline, refusal or veto)")
        records.append(record)
    return records


def read_log(path: str, kind: str | None = None) -> list[dict]:
    """The records of a JSONL decision log (``kind``: "fusion", "inline" or "refusal" only)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return [r for r in records if kind is None or r["decision"] == kind]
