"""The transform: turn a patch definition (plain data) into new code for one torch function.

A patch names a function by module and qualified name, an *anchor* (text that must occur exactly
once in that function's source, whitespace ignored) and a few lines of code to insert ``at`` the start
of the function body, ``before`` or ``after`` the statement holding the anchor (``verify``: insert
nothing, only require the anchor, e.g. an upstream fix).  The edit is made on the AST of the real
file: inserted statements take the line number of the statement they precede or follow, every other
statement keeps its own, and the code is compiled with torch's real path, so tracebacks name torch's
file and line.

Only the code object of the target function is replaced (``func.__code__ = new``): every existing
reference (bound methods, staticmethod wrappers, ``from x import f`` copies) sees the patch, and a
module imported before the overlay can be patched in place.  Nothing is written to torch's
``__pycache__``; compiled results are cached in our own directory (see ``codecache_dir``).
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import itertools
import marshal
import operator
import os
import sys
import tempfile
import types
from typing import Any, Iterable

#: Name under which the runtime hooks are visible to patched code (set in the module's globals).
HOOKS_NAME = "__inductor_ablate__"
_VALID_AT = ("start", "before", "after", "verify")


class PatchError(Exception):
    """A patch cannot be applied to this torch's source (anchor missing, ambiguous, ...)."""

    def __init__(self, patch: "Patch", reason: str):
        self.patch = patch
        self.reason = reason
        super().__init__(f"patch {patch.slug!r} on {patch.target}.{patch.qualname}: {reason}")


@dataclasses.dataclass(frozen=True)
class Patch:
    """One source edit, as data (see patches/*.py)."""

    slug: str
    target: str  # module, e.g. "torch._inductor.choices"
    qualname: str  # e.g. "InductorChoices.can_fuse"
    anchor: str  # text that must occur exactly once in the function's source
    at: str  # "start" (after the docstring), "before"/"after" (the anchor's statement), or "verify"
    code: str  # statements to insert; refer to the hooks as __inductor_ablate__ ("verify": none)
    flag: str  # the switch that turns the inserted code on
    why: str = ""  # one line for `status` and the docs
    torch: str = ""  # the torch versions this definition is for, e.g. ">=2.10,<2.15" ("": all)

    def applies_to(self, version: str) -> bool:
        return version_in_range(version, self.torch)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Patch":
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(f"patch definition {data.get('slug')!r}: unknown fields {sorted(unknown)}")
        patch = cls(**data)
        if patch.at not in _VALID_AT:
            raise ValueError(f"patch {patch.slug!r}: at={patch.at!r}, expected one of {_VALID_AT}")
        ast.parse(patch.code)  # a syntax error in our own data is our bug: fail loudly
        version_in_range("0", patch.torch)  # so is a malformed version range
        return patch


def _release(version: str) -> tuple[int, ...]:
    """(2, 13, 0) from '2.13.0+cpu', '2.13.0a0+git...', '2.13': the numeric release, padded to 3."""
    parts = []
    for piece in version.split("+")[0].split("."):
        digits = "".join(itertools.takewhile(str.isdigit, piece))
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) < len(piece):  # '0a0', '0rc1': a pre-release of that number
            break
    return tuple(parts + [0] * (3 - len(parts)))


_COMPARE = {">=": operator.ge, "<=": operator.le, "==": operator.eq, ">": operator.gt, "<": operator.lt}


def version_in_range(version: str, spec: str) -> bool:
    """``spec``: comma-separated clauses such as '>=2.10,<2.15' ('' matches every version)."""
    release = _release(version)
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        op = next((o for o in _COMPARE if clause.startswith(o)), None)
        if op is None or not clause[len(op):].strip()[:1].isdigit():
            raise ValueError(f"bad torch version range {spec!r}: clause {clause!r}")
        if not _COMPARE[op](release, _release(clause[len(op):].strip())):
            return False
    return True


def _find_function(tree: ast.Module, qualname: str) -> tuple[list[ast.AST], ast.FunctionDef]:
    """Return (enclosing class/def chain, function node) for a dotted qualname."""
    parts = qualname.split(".")
    body: list[ast.stmt] = tree.body
    chain: list[ast.AST] = []
    node: ast.AST | None = None
    for i, part in enumerate(parts):
        want = (ast.FunctionDef, ast.AsyncFunctionDef) if i == len(parts) - 1 else (ast.ClassDef,)
        matches = [n for n in body if isinstance(n, want) and n.name == part]
        if len(matches) != 1:
            raise LookupError(f"{'.'.join(parts[: i + 1])} defined {len(matches)} times, expected once")
        node = matches[0]
        if i < len(parts) - 1:
            chain.append(node)
            body = node.body
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    return chain, node


def _first_line(func: ast.FunctionDef) -> int:
    return min([func.lineno] + [d.lineno for d in func.decorator_list])


def _locate_anchor(lines: list[str], func: ast.FunctionDef, patch: Patch) -> int:
    """Line number (1-based) where the anchor starts; it must occur exactly once in the function.

    Whitespace is ignored on both sides, so an anchor survives re-wrapping of torch's source (a
    signature split over several lines in one version and one line in another)."""
    start, end = _first_line(func), func.end_lineno
    text = "\n".join(lines[start - 1 : end])
    positions = [i for i, ch in enumerate(text) if not ch.isspace()]
    squeezed = "".join(text[i] for i in positions)
    anchor = "".join(patch.anchor.split())
    count = squeezed.count(anchor) if anchor else 0
    if count != 1:
        raise PatchError(patch, f"anchor {patch.anchor!r} found {count} times in the function, expected once")
    return start + text[: positions[squeezed.index(anchor)]].count("\n")


def _insert(func: ast.FunctionDef, patch: Patch, anchor_line: int, inserted: set[int]) -> None:
    new_stmts = ast.parse(patch.code).body
    inserted.update(id(node) for stmt in new_stmts for node in ast.walk(stmt))
    if patch.at == "verify":  # the anchor's presence is the whole check: nothing to insert
        return
    if patch.at == "start":
        body = func.body
        index = 1 if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str) else 0
        if index >= len(body):
            raise PatchError(patch, "function has no statement after its docstring")
        _splice(body, index, new_stmts)
        return
    # at == "before" / "after": the innermost statement that starts on the anchor's line
    found = None
    for parent in ast.walk(func):
        for field in ("body", "orelse", "finalbody", "handlers"):
            stmts = getattr(parent, field, None)
            if not isinstance(stmts, list):
                continue
            for i, stmt in enumerate(stmts):
                if (isinstance(stmt, ast.stmt) and stmt.lineno == anchor_line and stmt is not func
                        and id(stmt) not in inserted):
                    found = (stmts, i)
    if found is None:
        raise PatchError(patch, f"no statement starts on the anchor's line {anchor_line}")
    stmts, index = found
    _splice(stmts, index + 1 if patch.at == "after" else index, new_stmts, where=stmts[index])


def _splice(stmts: list[ast.stmt], index: int, new_stmts: list[ast.stmt], where: ast.stmt | None = None) -> None:
    """Insert ``new_stmts`` at ``index``, on the line of ``where`` (default: the statement they precede)."""
    where = where or stmts[index]
    for stmt in new_stmts:
        for node in ast.walk(stmt):
            if "lineno" in node._attributes:
                ast.copy_location(node, where)
                node.end_lineno, node.end_col_offset = where.lineno, where.col_offset
    stmts[index:index] = new_stmts


def _find_code(code: types.CodeType, name: str, firstlineno: int) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == firstlineno:
                return const
            hit = _find_code(const, name, firstlineno)
            if hit is not None:
                return hit
    return None


def compile_patched(source: str, filename: str, patches: Iterable[Patch]) -> dict[str, types.CodeType]:
    """Apply ``patches`` to ``source``; return {qualname: new code object}.  All or nothing."""
    tree = ast.parse(source, filename)
    lines = source.splitlines()
    futures = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    by_func: dict[str, list[Patch]] = {}
    for patch in patches:
        by_func.setdefault(patch.qualname, []).append(patch)
    result = {}
    for qualname, func_patches in by_func.items():
        try:
            chain, func = _find_function(tree, qualname)
        except LookupError as exc:
            raise PatchError(func_patches[0], str(exc)) from None
        anchor_lines = [_locate_anchor(lines, func, p) for p in func_patches]
        if all(p.at == "verify" for p in func_patches):
            continue  # found the anchors; the function itself stays torch's own
        inserted: set[int] = set()  # our own statements share the anchor's line number: skip them
        for patch, line in zip(func_patches, anchor_lines):
            _insert(func, patch, line, inserted)
        # Compile only the enclosing classes and this function: same names, same cells
        # (``__class__`` for super()), same line numbers, a fraction of the cost.
        node: ast.stmt = func
        for outer in reversed(chain):
            node = ast.ClassDef(name=outer.name, bases=[], keywords=[], body=[node], decorator_list=[],
                                **({"type_params": []} if sys.version_info >= (3, 12) else {}))
            ast.copy_location(node, outer)
        module = ast.Module(body=[*futures, node], type_ignores=[])
        ast.fix_missing_locations(module)
        code = compile(module, filename, "exec", dont_inherit=True)
        new = _find_code(code, func.name, _first_line(func))
        if new is None:  # pragma: no cover - would be a bug in this module
            raise PatchError(func_patches[0], "compiled function not found")
        result[qualname] = new
    return result


def resolve_function(module: types.ModuleType, qualname: str) -> types.FunctionType:
    """The plain function object behind ``module.<qualname>`` (through staticmethod, classmethod,
    and functools.wraps decorators)."""
    obj: Any = module
    for part in qualname.split("."):
        obj = vars(obj)[part] if isinstance(obj, (type, types.ModuleType)) else getattr(obj, part)
    name = qualname.rsplit(".", 1)[-1]
    for _ in range(10):
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        elif isinstance(obj, types.FunctionType) and obj.__code__.co_name == name:
            return obj
        elif hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
        else:
            break
    raise LookupError(f"{module.__name__}.{qualname} is not a plain function ({type(obj).__name__})")


def codecache_dir() -> str:
    base = os.environ.get("INDUCTOR_ABLATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "inductor_ablate"
    )
    return os.path.join(base, sys.implementation.cache_tag or "python")


def cached_compile(source_bytes: bytes, filename: str, patches: list[Patch], salt: str) -> dict[str, types.CodeType]:
    """``compile_patched`` with a disk cache keyed by the source, its path (code objects carry the
    file name tracebacks show: two torch installs with the same source must not share an entry),
    the patches and our version."""
    key = hashlib.sha256(source_bytes)
    key.update(filename.encode())
    key.update(repr([dataclasses.astuple(p) for p in patches]).encode())
    key.update(salt.encode())
    module_name = patches[0].target if patches else "none"
    path = os.path.join(codecache_dir(), f"{module_name}-{key.hexdigest()[:24]}.bin")
    try:
        with open(path, "rb") as f:
            codes = marshal.load(f)
        if isinstance(codes, dict) and all(isinstance(c, types.CodeType) for c in codes.values()):
            return codes
    except (OSError, EOFError, ValueError, TypeError):
        pass
    codes = compile_patched(source_bytes.decode("utf-8"), filename, patches)
    try:  # atomic write; a read-only or full disk only costs the recompile next time
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            marshal.dump(codes, f)
        os.replace(tmp, path)
    except OSError:
        pass
    return codes
