"""torch/_inductor/codegen/triton.py: census records for GPU kernels."""

PATCHES = [
    dict(
        slug="census-triton-kernel",
        target="torch._inductor.codegen.triton",
        qualname="TritonScheduling.define_kernel",
        anchor="return kernel_name",
        at="before",
        code="if __inductor_ablate__.recording(): __inductor_ablate__.record_kernel('triton', kernel_name, node_schedule)",
        flag="census",
        why="records each Triton kernel and the FX nodes inside it for inductor_ablate.census",
    ),
]
