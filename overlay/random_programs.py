"""Random small programs, as data, for property tests: every switch must leave results unchanged.

A program is a ``Spec``: a shape, a dtype, and a list of steps ``(op, operands, param)``.  Each step
reads earlier values by index (the inputs come first) and appends one value of the same shape, so any
step can feed any other.  The spec's repr is the program: hypothesis prints it when a case fails, and
``Spec.source()`` writes it out as a plain Python function to paste into a bug report.
"""
from __future__ import annotations

import dataclasses

import torch

#: op -> (number of tensor operands, a template over {a}, {b} and {p} (the step's integer param)).
#: Every expression keeps the (rows, cols) shape; indices come from the ``perm`` / ``idx`` / ``rows``
#: inputs, ``w`` is a (cols, cols) weight, ``kern`` a (1, 1, 3, 3) convolution kernel.
OPS = {
    # elementwise
    "sin": (1, "{a}.sin()"),
    "relu": (1, "torch.relu({a})"),
    "sigmoid": (1, "torch.sigmoid({a})"),
    "tanh": (1, "torch.tanh({a})"),
    "exp_neg_abs": (1, "torch.exp(-{a}.abs())"),
    "gelu": (1, "torch.nn.functional.gelu({a}, approximate=('none', 'tanh')[{p} % 2])"),
    "silu": (1, "torch.nn.functional.silu({a})"),
    "clamp": (1, "{a}.clamp(-0.5 - {p}, 0.5)"),
    "upcast": (1, "{a}.double().sin().to({a}.dtype)"),
    "scale": (1, "{a} * (0.5 + {p})"),
    "add": (2, "{a} + {b}"),
    "sub": (2, "{a} - {b}"),
    "mul": (2, "{a} * {b}"),
    "maximum": (2, "torch.maximum({a}, {b})"),
    "where": (2, "torch.where({a} > 0, {a}, {b})"),
    # reductions, broadcast back
    "sum_rows": (1, "{a} - {a}.sum(dim={p} % 2, keepdim=True) / {a}.shape[{p} % 2]"),
    "amax": (1, "{a} - {a}.amax(dim={p} % 2, keepdim=True)"),
    "softmax": (1, "torch.softmax({a}, dim={p} % 2)"),
    "var": (1, "{a} * {a}.var(dim=1, keepdim=True, unbiased=False)"),
    "log_softmax": (1, "torch.log_softmax({a}, dim={p} % 2)"),
    # normalizations, as real models use them
    "layer_norm": (1, "torch.nn.functional.layer_norm({a}, {a}.shape[1:], eps=1e-5)"),
    "rms_norm": (1, "{a} * torch.rsqrt({a}.pow(2).mean(dim=1, keepdim=True) + 1e-5)"),
    "batch_norm": (1, "torch.nn.functional.batch_norm({a}, None, None, training=True) if {a}.shape[0] > 1 else {a}"),
    # scans
    "cumsum": (1, "{a}.cumsum(dim={p} % 2) * 0.1"),
    "sort": (1, "{a}.sort(dim={p} % 2).values"),
    # views and layout
    "transpose_copy": (1, "{a}.t().contiguous().t()"),
    "flatten_view": (1, "({a}.reshape(-1) * 2.0).view({a}.shape)"),
    "flip": (1, "{a}.flip({p} % 2)"),
    "roll": (1, "{a}.roll({p}, dims={p} % 2)"),
    "expand_row": (1, "{a}[:1].expand_as({a}) + {a}"),
    # slicing and cat
    "rotate_cat": (1, "torch.cat([{a}[:, {p} % {a}.shape[1]:], {a}[:, :{p} % {a}.shape[1]]], dim=1)"),
    "slice_pad": (1, "torch.nn.functional.pad({a}[:, 1:], (0, 1)) if {a}.shape[1] > 1 else {a}"),
    # indexing
    "index_select": (1, "{a}.index_select(1, perm)"),
    "gather": (1, "{a}.gather(1, idx)"),
    "scatter_add": (2, "torch.zeros_like({a}).scatter_add(1, idx, {b})"),
    "index_add": (2, "{a}.index_add(1, perm, {b})"),
    "index_put_acc": (2, "torch.zeros_like({a}).index_put((rows[:, None], idx), {b}, accumulate=True)"),
    # matmul
    "matmul": (1, "{a} @ w"),
    "attention": (2, "torch.softmax({a} @ {b}.t() * 0.5, dim=1) @ {b}"),
    # convolution and pooling over the (rows, cols) plane as one 1-channel image
    "conv3x3": (1, "torch.nn.functional.conv2d({a}[None, None], kern, padding=1)[0, 0]"),
    "max_pool": (1, "torch.nn.functional.max_pool2d({a}[None, None], 3, stride=1, padding=1)[0, 0]"),
    "avg_pool": (1, "torch.nn.functional.avg_pool2d({a}[None, None], 3, stride=1, padding=1)[0, 0]"),
    # in-place on a fresh copy (mutation inside the graph)
    "inplace_add": (2, "{a}.clone().add_({b})"),
    "inplace_mul_slice": (1, "(t := {a}.clone(), t[:, :1].mul_(3.0))[0]"),
    "inplace_index_put": (2, "{a}.clone().index_put_((rows[:, None], perm), {b})"),
}

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
#: Allowed error, as a fraction of the reference's largest magnitude (plus one).  bfloat16 is
#: compared to eager bfloat16, which rounds every op, while Inductor keeps float32 inside kernels.
TOLERANCE = {"float32": 2e-4, "float64": 1e-9, "bfloat16": 6e-2}


@dataclasses.dataclass(frozen=True)
class Spec:
    rows: int
    cols: int
    dtype: str
    n_inputs: int
    steps: tuple  # ((op, (operand indices...), param), ...)
    outputs: tuple  # value indices returned
    backward: bool

    def build(self, modules: bool = False):
        """``(fn, args)``: the program as a function (``modules``: as a module whose step i runs in
        submodule ``steps.i``, for module scopes), and its inputs (a fixed seed)."""
        gen = torch.Generator().manual_seed(self.rows * 1000 + self.cols * 10 + len(self.steps))
        dtype = DTYPES[self.dtype]
        xs = [torch.randn(self.rows, self.cols, generator=gen).to(dtype) for _ in range(self.n_inputs)]
        w = (torch.randn(self.cols, self.cols, generator=gen) / max(self.cols, 1) ** 0.5).to(dtype)
        perm = torch.randperm(self.cols, generator=gen)
        idx = torch.randint(0, self.cols, (self.rows, self.cols), generator=gen)
        rows = torch.arange(self.rows)
        kern = (torch.randn(1, 1, 3, 3, generator=gen) / 3).to(dtype)  # drawn last: earlier inputs unchanged
        scope = {"torch": torch}
        exec(self.source(modules), scope)  # noqa: S102 - our own generated code
        return scope["program"], (*xs, w, perm, idx, rows, kern)

    def source(self, modules: bool = False) -> str:
        """The program as Python: ``def program(...)``, or with ``modules`` a ``Program`` module
        (``program = Program()``) whose step i is the submodule ``steps.i``."""
        if modules:
            return self._module_source()
        names = [f"x{i}" for i in range(self.n_inputs)]
        lines = [f"def program({', '.join(names)}, w, perm, idx, rows, kern):"]
        for i, (op, operands, param) in enumerate(self.steps):
            a, b = (names[j] for j in (*operands, operands[0])[:2])
            expr = OPS[op][1].format(a=a, b=b, p=param)
            name = f"v{i}"
            lines.append(f"    {name} = {expr}  # {op}")
            names.append(name)
        lines.append(f"    return ({', '.join(names[j] for j in self.outputs)},)")
        return "\n".join(lines) + "\n"

    def _module_source(self) -> str:
        names = [f"x{i}" for i in range(self.n_inputs)]
        lines = ["class Step(torch.nn.Module):",
                 "    def __init__(self, fn):",
                 "        super().__init__()",
                 "        self.fn = fn",
                 "",
                 "    def forward(self, *values):",
                 "        return self.fn(*values)",
                 ""]
        calls = []
        for i, (op, operands, param) in enumerate(self.steps):
            lines += [f"def step{i}(a, b, w, perm, idx, rows, kern):  # {op}",
                      f"    return {OPS[op][1].format(a='a', b='b', p=param)}", ""]
            a, b = (names[j] for j in (*operands, operands[0])[:2])
            calls.append(f"        v{i} = self.steps[{i}]({a}, {b}, w, perm, idx, rows, kern)")
            names.append(f"v{i}")
        steps = ", ".join(f"Step(step{i})" for i in range(len(self.steps)))
        lines += ["class Program(torch.nn.Module):",
                  "    def __init__(self):",
                  "        super().__init__()",
                  f"        self.steps = torch.nn.ModuleList([{steps}])",
                  "",
                  f"    def forward(self, {', '.join(names[:self.n_inputs])}, w, perm, idx, rows, kern):",
                  *calls,
                  f"        return ({', '.join(names[j] for j in self.outputs)},)",
                  "",
                  "program = Program()"]
        return "\n".join(lines) + "\n"


def specs():
    """A hypothesis strategy for ``Spec`` (hypothesis is imported here, not at module import)."""
    from hypothesis import strategies as st

    @st.composite
    def spec(draw):
        n_inputs = draw(st.integers(1, 3))
        steps = []
        for i in range(draw(st.integers(1, 8))):
            op = draw(st.sampled_from(sorted(OPS)))
            operands = tuple(draw(st.integers(0, n_inputs + i - 1)) for _ in range(OPS[op][0]))
            steps.append((op, operands, draw(st.integers(0, 3))))
        last = n_inputs + len(steps) - 1
        extra = draw(st.lists(st.integers(n_inputs, last), max_size=1))
        # Sizes below, at and past the C++ backend's vector width (8 or 16 floats), multiples of it and
        # not, so the vectorized loops and their scalar tails both run, not only the scalar loops.
        rows = draw(st.sampled_from([1, 2, 3, 5, 7, 16]))
        cols = draw(st.sampled_from([1, 2, 3, 5, 7, 8, 16, 17, 33]))
        return Spec(rows=rows, cols=cols,
                    dtype=draw(st.sampled_from(["float32", "float32", "float64", "bfloat16"])),
                    n_inputs=n_inputs, steps=tuple(steps), outputs=(last, *extra), backward=draw(st.booleans()))

    return spec()


def run(fn, args, backward: bool) -> list:
    """Outputs, and with ``backward`` the gradients of the floating inputs (loss: mean of squares)."""
    args = [a.detach().clone().requires_grad_(backward and a.is_floating_point()) for a in args]
    outs = fn(*args)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    values = [o.detach() for o in outs]
    if backward:
        float_args = [a for a in args if a.requires_grad]
        loss = sum(o.float().pow(2).mean() for o in outs)
        values += [g if g is not None else torch.zeros_like(a)
                   for g, a in zip(torch.autograd.grad(loss, float_args, allow_unused=True), float_args)]
    return values


def max_error(got: list, expected: list) -> float:
    """The largest difference, as a fraction of each reference's largest magnitude plus one."""
    worst = 0.0
    for g, e in zip(got, expected):
        if g.shape != e.shape:
            return float("inf")
        g, e = g.double(), e.double()
        finite = torch.isfinite(e)
        if not torch.equal(torch.isfinite(g), finite):  # a NaN or inf on one side only
            return float("inf")
        if finite.any():
            worst = max(worst, (g[finite] - e[finite]).abs().max().item() / (1.0 + e[finite].abs().max().item()))
    return worst
