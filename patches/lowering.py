"""torch/_inductor/lowering.py: a correctness fix in the lowering of index_put_."""

PATCHES = [
    dict(
        slug="fix-index-put-self-values",
        target="torch._inductor.lowering",
        qualname="index_put_impl_",
        anchor="self.realize()",
        at="after",
        code="if __inductor_ablate__.ablating(): values = __inductor_ablate__.copy_if_reads(self, values)",
        flag="any switch",
        why="Inductor bug: index_put_ realizes the tensor it writes, and values that read it (x.index_put_(i, x), "
            "which the reinplace pass makes of x.clone().index_put_(i, x)) then load the buffer the scatter "
            "overwrites, before reading all of it; scatter from a copy (see docs/correctness.md)",
    ),
]
