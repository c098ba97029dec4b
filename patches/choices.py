"""torch/_inductor/choices.py: the fusion veto (the hook the maintainers point to)."""

PATCHES = [
    dict(
        slug="no-fuse-veto",
        target="torch._inductor.choices",
        qualname="InductorChoices.can_fuse",
        anchor="shared_data_score: int",
        at="start",
        code="if __inductor_ablate__.fusion_blocked(node1, node2): return False",
        flag="no_fuse",
        why="every scheduler fusion (vertical, horizontal, epilogue, prologue, reduction kinds) asks "
            "InductorChoices.can_fuse first; the pair is classified and vetoed by kind",
    ),
]
