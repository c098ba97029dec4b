"""torch/_inductor/graph.py: lowering, where inlining is decided."""

PATCHES = [
    dict(
        slug="no-inline-realize",
        target="torch._inductor.graph",
        qualname="GraphLowering.run_node",
        anchor="assign_origin_node(result, n)",
        at="before",
        code="if __inductor_ablate__.on('no_inline'): __inductor_ablate__.realize_node_outputs(n, result)",
        flag="no_inline",
        why="an unrealized buffer is inlined into its consumers; realize every FX node's outputs after lowering",
    ),
    dict(
        slug="census-fx-node",
        target="torch._inductor.graph",
        qualname="GraphLowering.run_node",
        anchor="assign_origin_node(result, n)",
        at="before",
        code="if __inductor_ablate__.recording(): __inductor_ablate__.record_fx_node(n)",
        flag="census",
        why="counts the post-grad FX ops lowered, for inductor_ablate.census",
    ),
]
