"""torch/_inductor/loop_body.py: a correctness fix in how a loop body records its index expressions."""

from . import per_version

PATCHES = [
    # Inductor bug (torch 2.9.1-2.12.1): a static size reaches LoopBody.add_index_expr as a Python int
    # (ops.check_bounds' size, where an index computed from an inlined iota is bounds-checked); the
    # C++ backend's fusion of nodes with different loop ranges then passes the body's expressions to
    # simplify_and_reorder, which asserts each is a sympy Expr.  2.13 wraps the int (verified there).
    *per_version(dict(
        slug="fix-int-index-expr",
        target="torch._inductor.loop_body",
        qualname="LoopBody.add_index_expr",
        code="if __inductor_ablate__.ablating(): expr = __inductor_ablate__.as_index_expr(expr)",
        flag="any switch",
        why="Inductor bug: a static size recorded as a Python int index expression stops the C++ fusion "
            "of nodes with different loop ranges (AssertionError in simplify_and_reorder); make it a "
            "sympy Integer, as torch 2.13 does (see docs/correctness.md)",
    ), {
        "<2.13": dict(anchor="name = self.indexing_exprs_name.get(expr)", at="before"),
        ">=2.13": dict(anchor="expr = self._wrap_int_to_sympy_integer(expr)", at="verify", code="",
                       why="fixed upstream in torch 2.13 (LoopBody wraps a Python int in sympy.Integer): "
                           "checked, not patched"),
    }),
]
