"""Switches scoped to part of a model or to certain ops (issue 64): ``INDUCTOR_ABLATE_MODULES`` and
``INDUCTOR_ABLATE_OPS`` (``config.patch(modules=..., ops=...)``).

With a scope set, the switches act only on FX nodes inside it: a fusion is vetoed only when one of
its sides holds a node in scope, and outputs are realized only into and out of nodes in scope.  A
node is in scope when its module (the innermost of Dynamo's ``nn_module_stack``, spelled as
``named_modules()`` spells it) or one of the modules holding it matches a module glob, and when its
aten op, or the op a decomposition made it from (``original_aten``), matches an op name or glob;
with both set, a node must match both.  Out of scope, the generated code is stock's.
"""
from __future__ import annotations

import difflib
import fnmatch
import os
import re

from . import switches
from .config import config
from .errors import UsageError, warn

_MODULE_ROOT = re.compile(r"^L\[['\"][^'\"]+['\"]\]\.?|^L__self___?")
_MODULE_ITEM = re.compile(r"\._modules\[['\"]([^'\"]+)['\"]\]|\[['\"]?([^'\"\]]+)['\"]?\]")


def module_path(node) -> str | None:
    """The innermost module an FX node came from, as ``named_modules()`` spells it
    (``encoder.layer.3.attention``), from the ``nn_module_stack`` Dynamo records; a backward node
    belongs to the module of the forward op it differentiates (``fwd_nn_module_stack``, which AOT
    autograd copies over).  None if absent (the root module's own ops give "")."""
    meta = getattr(node, "meta", None) or {}
    stack = meta.get("nn_module_stack") or meta.get("fwd_nn_module_stack")
    if not stack:
        return None
    path = list(stack.values())[-1][0]
    path = _MODULE_ROOT.sub("", str(path))
    path = _MODULE_ITEM.sub(lambda m: "." + (m.group(1) or m.group(2)), path)
    return path.strip(".")


def common_module(paths) -> str | None:
    """The deepest module holding every path (dotted prefix); None if none is known."""
    parts = [p.split(".") if p else [] for p in paths if p is not None]
    if not parts:
        return None
    out = []
    for level in zip(*parts):
        if len(set(level)) > 1:
            break
        out.append(level[0])
    return ".".join(out)


def op_names(node) -> set[str]:
    """The names a node's op answers to: ``aten.mul.Tensor``, ``mul.Tensor``, ``mul`` (and without a
    leading underscore: ``_softmax`` is ``softmax``), for its target and for its original aten op;
    another namespace's op too (``prims.iota.default``, ``iota``)."""
    names = set()
    for target in (getattr(node, "target", None), node.meta.get("original_aten") if hasattr(node, "meta") else None):
        if target is None or not callable(target) and not isinstance(target, str):
            continue
        text = str(target)
        parts = text.split(".")
        if parts[0] in ("aten", getattr(target, "namespace", "aten")):  # prims.iota.default: iota
            parts = parts[1:]
        for name in (".".join(parts), parts[0] if parts else text):
            names |= {name, name.lstrip("_")}
        names.add(text)
    return names - {""}


def scoped() -> bool:
    eff = config.effective()
    return bool(eff["modules"] or eff["ops"])


def module_matches(path: str | None, globs) -> bool:
    if path is None:
        return False
    parts = path.split(".") if path else []
    prefixes = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatchcase(p, g) for p in prefixes for g in globs)


def fx_in_scope(node) -> bool:
    """True when the FX node is inside the scope (always, with no scope set)."""
    eff = config.effective()
    modules, ops = eff["modules"], eff["ops"]
    if not modules and not ops:
        return True
    key = (modules, ops)
    memo = node.meta.get("_inductor_ablate_scope") if hasattr(node, "meta") else None
    if memo is not None and memo[0] == key:
        return memo[1]
    inside = (not modules or module_matches(module_path(node), modules)) and \
        (not ops or any(fnmatch.fnmatchcase(n, g) for n in op_names(node) for g in ops))
    if hasattr(node, "meta"):
        node.meta["_inductor_ablate_scope"] = (key, inside)
    return inside


def origins(snode) -> list:
    """The FX nodes a scheduler node (fused or not) was lowered from."""
    return [o for n in snode.get_nodes() for o in getattr(getattr(n, "node", None), "origins", ()) or ()]


def snode_in_scope(snode) -> bool:
    """True when a scheduler node (fused or not) computes an FX node inside the scope."""
    return any(fx_in_scope(origin) for origin in origins(snode))


def pair_in_scope(node1, node2) -> bool:
    """A fusion the switches may act on: no scope, or one side holds a node in scope."""
    return not scoped() or snode_in_scope(node1) or snode_in_scope(node2)


def lowering_in_scope(node) -> bool:
    """Outputs the switches may realize: no scope, or the node or one of its readers in scope."""
    return not scoped() or fx_in_scope(node) or any(fx_in_scope(u) for u in getattr(node, "users", ()))


def _ops_of(snode) -> set[str]:
    return {name for origin in origins(snode) if getattr(origin, "op", None) == "call_function"
            for name in op_names(origin)}


def joins_pair(node1, node2, pairs) -> bool:
    """``INDUCTOR_NO_FUSE_PAIRS``: the fusion joins a node of op A on one side with a node of op B on
    the other (either way round), for one of ``pairs`` ("A+B"; ``*`` matches any op)."""
    ops1, ops2 = _ops_of(node1), _ops_of(node2)

    def has(ops, glob):
        return any(fnmatch.fnmatchcase(o, glob) for o in ops)
    for pair in pairs:
        a, b = pair.split("+")
        if (has(ops1, a) and has(ops2, b)) or (has(ops1, b) and has(ops2, a)):
            return True
    return False


class ScopeWarning(UserWarning):
    """A module or op scope that holds no node of a compiled graph: the switches act nowhere there."""


class ScopeError(UsageError):
    """The same, under INDUCTOR_ABLATE_STRICT=1."""


def _nearest(wanted, have) -> list[str]:
    """The names in ``have`` closest to the globs in ``wanted`` (their text without wildcards)."""
    out = []
    for glob in wanted:
        for name in difflib.get_close_matches(re.sub(r"[*?\[\]]", "", glob), sorted(have), n=3, cutoff=0.3):
            if name not in out:
                out.append(name)
    return out[:4] or sorted(have)[:4]


def nearest_modules(globs, nodes) -> list[str]:
    """The module paths (and their parents) of ``nodes`` that come nearest to ``globs``."""
    paths = {".".join(p.split(".")[:i + 1]) for n in nodes for p in [module_path(n)] if p
             for i in range(len(p.split(".")))}
    return _nearest(globs, paths) if paths else []


_CHECKED = "_inductor_ablate_scope_checked"


def check_held(graph) -> None:
    """A scope that holds no FX node of this graph warns once, naming the module paths or ops the
    graph has that come nearest (an error under INDUCTOR_ABLATE_STRICT=1); a typo in a module path
    would otherwise turn a scoped study into a stock one without a sign.  Called where the FX-graph
    cache key is computed (so a cache hit warns too) and at codegen (caches off); once per graph."""
    if getattr(graph, _CHECKED, False):
        return
    setattr(graph, _CHECKED, True)
    eff = config.effective()
    nodes = [n for n in graph.nodes if n.op == "call_function"]
    if not nodes or any(fx_in_scope(n) for n in nodes):
        return
    ops = {name for n in nodes for name in op_names(n) if "." not in name}
    held = []
    if eff["modules"]:
        near = nearest_modules(eff["modules"], nodes)
        held.append(f"INDUCTOR_ABLATE_MODULES={','.join(eff['modules'])} (nearest modules: "
                    f"{', '.join(near) or 'none: no node of this graph records its module'})")
    if eff["ops"]:
        held.append(f"INDUCTOR_ABLATE_OPS={','.join(eff['ops'])} (nearest ops: {', '.join(_nearest(eff['ops'], ops))})")
    message = (f"{' with '.join(held)} holds no node of a graph Inductor compiled ({len(nodes)} ops): the "
               f"switches change nothing there")
    if switches.strict_from_environ(os.environ):
        raise ScopeError(message)
    warn(message, ScopeWarning)
