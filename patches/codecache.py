"""torch/_inductor/codecache.py: keep ablated and stock artifacts apart in Inductor's caches."""

PATCHES = [
    dict(
        slug="cache-key",
        target="torch._inductor.codecache",
        qualname="FxGraphHashDetails.__init__",
        anchor="self.gm = gm",
        at="before",
        code="if (_ablate_tag := __inductor_ablate__.cache_tag()) is not None: self.inductor_ablate = _ablate_tag",
        flag="cache-key",
        why="torch hashes its files on disk, not our patches: add the active switches to the FX-graph key "
            "(AOTAutograd's key inherits it; local and remote caches alike)",
    ),
]
