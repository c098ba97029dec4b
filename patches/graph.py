"""torch/_inductor/graph.py and ir.py: lowering, where inlining is decided."""

from . import per_version

# run_node assigns the FX node as the result's origin after its realize heuristics: 2.10 moved that
# into ir.assign_origin_node(result, n), 2.9 does it inline under this test.
_ORIGIN_NODE = {
    ">=2.10": dict(anchor="assign_origin_node(result, n)"),
    "<2.10": dict(anchor="if isinstance(result, TensorBox) and isinstance(result.data, ir.StorageBox):"),
}

PATCHES = [
    *per_version(dict(
        slug="no-inline-realize",
        target="torch._inductor.graph",
        qualname="GraphLowering.run_node",
        at="before",
        code="if __inductor_ablate__.inline_hooks_on(): "
             "__inductor_ablate__.realize_node_outputs(n, result, self.buffers, buffer_watermark)",
        flag="no_inline",
        why="an unrealized buffer is inlined into its consumers; realize every FX node's outputs after lowering "
            "(INDUCTOR_INLINE_LIMIT: those past the limit; the decision log numbers them)",
    ), _ORIGIN_NODE),
    *per_version(dict(
        slug="census-fx-node",
        target="torch._inductor.graph",
        qualname="GraphLowering.run_node",
        at="before",
        code="if __inductor_ablate__.recording(): __inductor_ablate__.record_fx_node(n, self.buffers[buffer_watermark:])",
        flag="census",
        why="records each post-grad FX op lowered and the buffers its lowering created, for inductor_ablate.census",
    ), _ORIGIN_NODE),
    dict(
        slug="no-inline-zero-read",
        target="torch._inductor.ir",
        qualname="ComputedBuffer.make_loader",
        anchor="self.num_reads() == 0",
        at="start",
        code="if __inductor_ablate__.loads_zero_read(self): return super().make_loader()",
        flag="no_inline",
        why="a realized buffer that reads no memory (full, iota, arange) is still inlined into its readers; "
            "load it instead (INDUCTOR_INLINE_LIMIT: those of FX nodes past the limit)",
    ),
]
