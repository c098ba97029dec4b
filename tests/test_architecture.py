"""The house rules of issue 65, checked on the package's source (no import is run):

- imports run one way: no cycle between the package's modules, function-level imports included;
- the readers (views, compare, explain, bisect) and the shared modules below them (stats, rows,
  results) import nothing from bench/: they read results files, they do not measure;
- no function in the package is over 80 lines.
"""
import ast
from pathlib import Path

PACKAGE = "inductor_ablate"
ROOT = Path(__file__).resolve().parents[1] / "overlay"
LONGEST = 80


def _modules() -> dict[str, Path]:
    """{dotted module name: file}; a package is its __init__.py."""
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((PACKAGE, *parts))] = path
    return out


def _imports(name: str, path: Path, modules: dict) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its file (module level or inside a
    function), each resolved to the module file it loads."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in modules and t != name}
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v), on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read():
    graph = _graph()
    assert f"{PACKAGE}.stats" in graph[f"{PACKAGE}.commands.report"]  # a module-level import
    assert f"{PACKAGE}.profile" in graph[PACKAGE]  # a function-level one


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (function-level imports count too): " + "; ".join(" -> ".join(c) for c in cycles)


def test_a_cycle_would_be_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_readers_and_shared_modules_import_nothing_from_bench():
    graph = _graph()
    readers = [m for m in graph if m.startswith(f"{PACKAGE}.views") or m.rsplit(".", 1)[-1] in
               ("compare", "explain", "bisector", "stats", "rows", "results", "profile")]
    assert len(readers) >= 10, readers
    bad = {m: sorted(t for t in graph[m] if t.startswith(f"{PACKAGE}.bench")) for m in readers}
    assert not any(bad.values()), {m: t for m, t in bad.items() if t}


def test_no_function_over_80_lines():
    long = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long


def test_no_subpackage_shadows_a_name_the_package_exports():
    """``inductor_ablate.report()`` (the patches' states) stays a function once the views are imported:
    a subpackage named like an exported name would replace it on first import."""
    import inductor_ablate
    import inductor_ablate.views.terminal  # noqa: F401
    import inductor_ablate.commands.report  # noqa: F401

    exported = {n for n in dir(inductor_ablate) if not n.startswith("_") and callable(getattr(inductor_ablate, n))}
    subpackages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert not exported & subpackages, exported & subpackages
    assert callable(inductor_ablate.report)
