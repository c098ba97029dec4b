"""torch/_inductor/codegen/triton.py: census records for GPU kernels, and a barrier before a read-back."""

PATCHES = [
    # Triton bug (triton-lang/triton#10924, open): its coalescing pass can give a store and a later
    # load of the same global buffer different thread layouts, and nothing orders the two, so a
    # thread reads an element another thread stored before that store lands: the buffer's old
    # values.  Inductor emits such a pair when a kernel stores a buffer in one reduction loop and
    # reloads it in the next (the buffer is then in ``cse.invalidated_stores``); NO_INLINE realizes
    # intermediates, which makes such kernels, and ConvNeXt-T's training step read stale values
    # (docs/correctness.md, "A case on CUDA, closed").  The same change was proposed upstream
    # (pytorch/pytorch#190519, closed unmerged).
    dict(
        slug="fix-readback-barrier",
        target="torch._inductor.codegen.triton",
        qualname="TritonKernel.load",
        anchor="var = self.args.input(name)",
        at="before",
        code="if __inductor_ablate__.ablating(): __inductor_ablate__.readback_barrier(self, name)",
        flag="any switch",
        why="a barrier before a Triton kernel reloads a buffer it stored in an earlier reduction loop "
            "(triton-lang/triton#10924)",
    ),
    dict(
        slug="census-triton-kernel",
        target="torch._inductor.codegen.triton",
        qualname="TritonScheduling.define_kernel",
        anchor="return kernel_name",
        at="before",
        code="if __inductor_ablate__.recording(): __inductor_ablate__.record_kernel('triton', kernel_name, node_schedule, kernel.args)",
        flag="census",
        why="records each Triton kernel and the FX nodes inside it for inductor_ablate.census",
    ),
]
