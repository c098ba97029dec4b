"""torch/_inductor/codegen/cpp.py: the C++ backend's own grouping, and a correctness fix."""

from . import per_version

PATCHES = [
    # Inductor bug: a 2-D tiled C++ kernel's indirect atomic_add store passes an index that
    # CppTile2DKernel.store has already offset by the inner tile variable, and index_expr offsets it
    # again (x0 + 2*x0_inner): wrong sums, writes out of bounds (docs/correctness.md).  2.15 fixed it
    # in CppTile2DKernel.store (the verify entry checks that).
    *per_version(dict(
        slug="fix-tile2d-atomic-index",
        target="torch._inductor.codegen.cpp",
        qualname="CppTile2DOverrides.index_expr",
        anchor="expr = V.kernel.transform_indexing(expr)",
        at="before",
        code="if __inductor_ablate__.ablating() and __inductor_ablate__.tile2d_index_transformed(V.kernel, expr): "
             "return CppVecOverrides.index_expr(expr, dtype)",
        flag="any switch",
        why="Inductor bug: a 2-D tiled kernel's indirect atomic_add store offsets its index by the tile "
            "variable twice; offset an index only once (see docs/correctness.md)",
    ), {
        "<2.15": dict(),
        ">=2.15": dict(qualname="CppTile2DKernel.store", at="verify", code="",
                       anchor="new_index = index if vec_atomic_add else self.transform_indexing(index)",
                       why="fixed upstream in torch 2.15 (the vectorized atomic_add path gets the index "
                           "untransformed): checked, not patched"),
    }),
    # Inductor bug: outer-loop fusion keeps an intermediate in a local buffer sized for one outer
    # element, yet a kernel may tile a fused outer loop, and the tile's lanes then share one slot
    # (docs/correctness.md, pytorch/pytorch#185702).  Fall back to codegen without the local buffer,
    # as Inductor does when the fused loops' tiling differs.
    dict(
        slug="fix-local-buffer-tiled-outer-loop",
        target="torch._inductor.codegen.cpp",
        qualname="OuterLoopFusedSchedulerNode.check_outer_fusion_loop_level_attr",
        anchor="for idx in range(len(cpp_kernel_proxy_list) - 1):",
        at="before",
        code="if __inductor_ablate__.ablating() and __inductor_ablate__.local_buffer_in_tiled_outer_loop("
             "cpp_kernel_proxy_list, outer_loop_fusion_depth): return False",
        flag="any switch",
        why="Inductor bug: a C++ outer-loop fusion's local buffer holds one outer element's row, but a "
            "kernel that tiles a fused outer loop writes several rows into it at once; fall back to "
            "codegen without the local buffer (see docs/correctness.md)",
    ),
    dict(
        slug="flush-every-node",
        target="torch._inductor.codegen.cpp",
        qualname="CppScheduling.ready_to_flush",
        anchor="return self._ready_to_flush",
        at="start",
        code="if __inductor_ablate__.cpp_flush_after(self): return True",
        flag="flush_every_node",
        why="Scheduler._codegen flushes when the backend is ready: one C++ function (one omp region) per node "
            "(under a scope, after a node in it)",
    ),
    dict(
        slug="flush-before-scoped-node",
        target="torch._inductor.codegen.cpp",
        qualname="CppScheduling.codegen_node",
        anchor="kernel_group.finalize_kernel(cpp_kernel_proxy, nodes)",
        at="start",
        code="__inductor_ablate__.cpp_flush_before(self, node)",
        flag="flush_every_node",
        why="under a scope, a node in it starts a C++ function of its own: the one being built is closed "
            "first (only this backend's: Scheduler.flush would free the buffers this node still reads)",
    ),
    dict(
        slug="no-fuse-outer-loop",
        target="torch._inductor.codegen.cpp",
        qualname="CppScheduling.can_fuse_vertical_outer_loop",
        anchor="def can_fuse_vertical_outer_loop(self, node1, node2)",
        at="start",
        code="if __inductor_ablate__.kind_blocked('outer-loop', node1, node2): return False",
        flag="no_fuse",
        why="C++ outer-loop fusion (OuterLoopFusedSchedulerNode) is decided here",
    ),
    dict(
        slug="census-cpp-kernel",
        target="torch._inductor.codegen.cpp",
        qualname="CppScheduling.define_kernel",
        anchor="return kernel_name",
        at="before",
        code="if __inductor_ablate__.recording(): __inductor_ablate__.record_kernel('cpp', kernel_name, nodes, __inductor_ablate__.cpp_kernel_args(self, kernel_args))",
        flag="census",
        why="records each C++ function and the FX nodes inside it for inductor_ablate.census",
    ),
]
