"""Find, without a GPU, the Triton kernels of a saved graph that load back what they stored on other
threads with nothing between: the data race of docs/correctness.md, "The bugs", section 4.

    python scripts/readback_check.py CODE.py --picks triton-picks.txt [--kernel SUBSTRING] [--arch 90]
    python scripts/readback_check.py CODE.py --config "R0_BLOCK=256 XBLOCK=2 num_warps=2 num_stages=1" --kernel NAME

CODE.py is a graph's output code (``model_latency.py --save-code``, ``--save-inputs``; gzipped too).
Each kernel is compiled by the installed Triton for the target given (``--arch 90``: the H100 and
H200) at the config a process ran it with (``--picks``: the triton-picks.txt written beside the
code) or at ``--config``; nothing runs, so any machine with the triton package will do.  In the
compiled kernel's TTGIR, each pointer argument loaded back after a store through it, in another
thread layout, is a candidate (one thread loads what another stored; Triton orders global memory
only within a thread); in its PTX, whose addresses are traced back to the kernel's parameters, a
``bar.sync`` between the store and the load orders them (the lowering places some, as for a
reduction's exchange through shared memory), and a candidate without one is a race.  One line
per kernel checked; exit 1 if any races, 0 if none.
"""
from __future__ import annotations

import ast
import gzip
import os
import re
import sys
import tempfile

from inductor_ablate.errors import OneLineParser

_KERNEL = re.compile(r"^# kernel path: (?P<path>\S+)\n(?:#[^\n]*\n)*(?P<name>\w+) = async_compile\.triton\("
                     r"'(?P=name)', '''\n(?P<source>.*?)\n''', device_str='\w+'\)", re.M | re.S)
_OP = re.compile(r"^\s*(?:(?P<result>%[\w.#]+(?::\d+)?) = )?(?P<op>[\w.]+|\"[\w.]+\")(?P<rest>.*)$")


def _fail(msg: str) -> None:
    print(f"readback_check.py: {msg}", file=sys.stderr)
    raise SystemExit(2)


def kernels_in(code: str) -> dict[str, tuple[str, str]]:
    """{kernel name: (its file's base name, as triton-picks.txt keys it; its module source)}."""
    return {m["name"]: (os.path.basename(m["path"]), m["source"]) for m in _KERNEL.finditer(code)}


def _literal_after(source: str, key: str):
    """The Python literal that follows ``'key': `` in the kernel's decorator (a dict or a list)."""
    start = source.index(f"'{key}': ") + len(key) + 4
    depth = 0
    for end in range(start, len(source)):
        depth += source[end] in "[{("
        depth -= source[end] in "]})"
        if depth == 0:
            return ast.literal_eval(source[start:end + 1])
    raise ValueError(f"no literal after {key!r}")


def parse_config(text: str) -> tuple[dict, int, int]:
    """``R0_BLOCK=256 XBLOCK=2 num_warps=2 num_stages=1`` (triton_picks.describe's form) as
    (block sizes, warps, stages)."""
    values = {}
    for part in text.split():
        key, sep, value = part.partition("=")
        if not sep or not value.lstrip("-").isdigit():
            raise ValueError(f"'{part}' is not NAME=NUMBER")
        values[key] = int(value)
    if "num_warps" not in values or "num_stages" not in values:
        raise ValueError("a config names num_warps and num_stages")
    return values, values.pop("num_warps"), values.pop("num_stages")


def compile_kernel(name: str, source: str, sizes: dict, warps: int, stages: int, arch: int) -> tuple[str, str, list]:
    """The kernel compiled by the installed Triton for sm_``arch`` at one config: its TTGIR, its PTX,
    and the names of its parameters in the PTX's order (its arguments but the constexprs)."""
    import importlib.util

    meta = source[source.index("triton_meta="):]
    signature = _literal_after(meta, "signature")
    attrs = _literal_after(meta, "configs")[0]
    constexprs = {k: sizes[k] for k, kind in signature.items() if kind == "constexpr" and k in sizes}
    missing = [k for k, kind in signature.items() if kind == "constexpr" and k not in sizes]
    if missing:
        raise ValueError(f"the config does not set {', '.join(missing)}")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    jit = source[source.index("@triton.jit"):]
    preamble = "\n".join(line for line in source[:source.index("@triton")].splitlines()
                         if line.startswith(("import ", "from ")))
    with tempfile.NamedTemporaryFile("w", suffix=".py", prefix=f"{name}-", delete=False) as f:
        f.write(preamble + "\n\n" + jit + "\n")  # Triton reads a jit function's source from its file
    try:
        spec = importlib.util.spec_from_file_location(f"readback_{name}", f.name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        compiled = triton.compile(ASTSource(fn=getattr(module, name), signature=signature, constexprs=constexprs,
                                            attrs=attrs), target=GPUTarget("cuda", arch, 32),
                                  options={"num_warps": warps, "num_stages": stages})
    finally:
        os.unlink(f.name)
    return compiled.asm["ttgir"], compiled.asm["ptx"], [k for k, kind in signature.items() if kind != "constexpr"]


def layout_changes(ttgir: str) -> dict[str, str]:
    """{argument: how} for each pointer argument the TTGIR loads back, in another thread layout, after
    storing through it with no barrier between at that level (the lowering may still add one: see
    ``unordered_in_ptx``)."""
    defs, layouts, events = {}, {}, []
    for number, line in enumerate(ttgir.splitlines(), 1):
        m = _OP.match(line)
        if not m:
            continue
        op, rest = m["op"].strip('"'), m["rest"].split(" loc(")[0]
        operands = re.findall(r"%[\w.#]+", rest)
        if m["result"]:
            defs[m["result"].split(":")[0]] = operands
        if op in ("tt.store", "tt.load"):
            layout = re.findall(r"#[\w.]+", rest.rsplit(":", 1)[-1])
            events.append((op, operands[0], layout[-1] if layout else "?", number))
        elif op in ("gpu.barrier", "ttg.barrier"):
            events.append(("barrier", "", "", number))
    for name, value in re.findall(r"^#(\w+) = (#ttg\.\w+<.*>)$", ttgir, re.M):
        layouts[f"#{name}"] = value

    def argument(value: str, seen=()) -> str | None:
        if value not in defs:
            return value  # a function argument: %in_out_ptr0
        for operand in defs[value][:1]:  # addptr, splat, broadcast, convert_layout: the pointer first
            if operand not in seen:
                return argument(operand, seen + (value,))
        return None

    stored: dict[str, tuple[str, int]] = {}
    changes = {}
    for op, pointer, layout, number in events:
        if op == "barrier":
            stored.clear()
            continue
        arg = argument(pointer)
        if arg is None:
            continue
        if op == "tt.store":
            stored[arg] = (layout, number)
        elif arg in stored and stored[arg][0] != layout and arg.lstrip("%") not in changes:
            store_layout, store_line = stored[arg]
            changes[arg.lstrip("%")] = (f"stored at TTGIR line {store_line} in {layouts.get(store_layout, store_layout)}, "
                                        f"loaded at line {number} in {layouts.get(layout, layout)}")
    return changes


def ptx_accesses(ptx: str, params: list[str]) -> list[tuple[str, str]]:
    """The PTX's global stores and loads and its barriers in order, as (``st``/``ld``/``bar``, the
    argument the address comes from): each address register is traced back through the
    instructions that define it to the ``ld.param`` of a kernel parameter (``params``: the names of
    the kernel's parameters in order)."""
    defs, param_of, events = {}, {}, []
    for text in ptx.splitlines():
        text = text.split("//")[0].strip().rstrip(";")
        m = re.match(r"ld\.param\.\w+\s+(%\w+),\s*\[\w+_param_(\d+)\]", text)
        if m:
            index = int(m[2])
            param_of[m[1]] = params[index] if index < len(params) else None
            continue
        if "bar.sync" in text or "barrier.sync" in text:
            events.append(("bar", ""))
            continue
        access = re.match(r"(?:@!?%\w+\s+)?(st|ld)\.global\S*\s+(.*)", text)
        if access:
            address = re.search(r"\[\s*(%\w+)", access[2])
            if address:
                events.append((access[1], address[1]))
            continue
        m = re.match(r"(?:@!?%\w+\s+)?[a-z][\w.]*\s+(%\w+)\s*,(.*)", text)
        if m:
            defs.setdefault(m[1], set()).update(re.findall(r"%\w+", m[2]))

    def source(register: str) -> str | None:
        seen, todo = set(), [register]
        while todo:
            reg = todo.pop()
            if reg in seen:
                continue
            seen.add(reg)
            if param_of.get(reg):
                return param_of[reg]
            todo.extend(defs.get(reg, ()))
        return None

    return [(kind, source(reg) if reg else "") for kind, reg in events]


def unordered_in_ptx(accesses: list[tuple[str, str]], arg: str) -> bool:
    """Whether the PTX (its ``ptx_accesses``) loads through ``arg`` after storing through it with no
    ``bar.sync`` between."""
    stored = False
    for kind, source in accesses:
        if kind == "bar":
            stored = False
        elif kind == "st" and source == arg:
            stored = True
        elif kind == "ld" and source == arg and stored:
            return True
    return False


def readback_races(ttgir: str, ptx: str, params: list[str]) -> tuple[list[str], list[str]]:
    """(races, ordered): each argument loaded back in another thread layout than it was stored in,
    as one line, split by whether the PTX has a ``bar.sync`` between (one the lowering placed, as
    for a reduction's exchange through shared memory, orders them too)."""
    races, ordered = [], []
    changes = layout_changes(ttgir)
    accesses = ptx_accesses(ptx, params) if changes else []  # the PTX read once, for every candidate
    for arg, how in changes.items():
        (races if unordered_in_ptx(accesses, arg) else ordered).append(f"{arg}: {how}")
    return races, ordered


def main(argv=None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("code", help="a graph's output code, as model_latency.py --save-code writes it (.gz too)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--picks", metavar="PICKS", help="each kernel at the config this triton-picks.txt names")
    which.add_argument("--config", help="every kernel chosen at this config ('R0_BLOCK=256 XBLOCK=2 num_warps=2 num_stages=1')")
    p.add_argument("--kernel", default="", help="only kernels whose name holds this")
    p.add_argument("--arch", type=int, default=90, help="the CUDA compute capability compiled for (default 90)")
    args = p.parse_args(argv)
    try:
        opener = gzip.open if args.code.endswith(".gz") else open
        with opener(args.code, "rt") as f:
            code = f.read()
    except (OSError, EOFError) as exc:
        _fail(f"{args.code}: {exc.strerror or exc}")
    kernels = {k: v for k, v in kernels_in(code).items() if args.kernel in k}
    if not kernels:
        _fail(f"{args.code}: no Triton kernel{' named *' + args.kernel + '*' if args.kernel else ''}")
    if args.config:
        try:
            sizes, warps, stages = parse_config(args.config)
        except ValueError as exc:
            _fail(f"--config {args.config!r}: {exc}")
        chosen = [(name, sizes, warps, stages) for name in kernels]
    else:
        from inductor_ablate.triton_picks import is_settled, read_picks

        try:
            picks = read_picks(args.picks)
        except (OSError, ValueError) as exc:
            _fail(f"--picks {args.picks}: {getattr(exc, 'strerror', None) or exc}")
        chosen = []  # a kernel alive twice on two configs has both on its line, after " | ": check each
        for name, (path, _) in kernels.items():
            text = picks.get(f"{name} {path}")
            if text and is_settled(text):
                chosen += [(name, *parse_config(config)) for config in text.split(" | ")]
        if not chosen:
            _fail(f"--picks {args.picks}: names none of this code's kernels (picks of other code?)")
    racy = 0
    for name, sizes, warps, stages in chosen:
        config = " ".join(f"{k}={v}" for k, v in sorted(sizes.items())) + f" num_warps={warps} num_stages={stages}"
        try:
            compiled = compile_kernel(name, kernels[name][1], sizes, warps, stages, args.arch)
        except ValueError as exc:
            _fail(f"{name} at {config}: {exc}")
        except ImportError:
            _fail("needs the triton package (pip install triton): it compiles each kernel for the target")
        races, ordered = readback_races(*compiled)
        racy += bool(races)
        said = ("RACE, no bar.sync between in the PTX: " + "; ".join(races) if races else "no read-back race")
        if ordered:
            said += "; loaded back in another layout after a bar.sync (ordered): " + "; ".join(ordered)
        print(f"{name} ({config}): {said}")
    print(f"readback check: {racy} of {len(chosen)} kernel(s) load back what other threads stored, with no barrier "
          f"(Triton {__import__('triton').__version__}, sm_{args.arch})")
    return 1 if racy else 0


if __name__ == "__main__":
    sys.exit(main())
