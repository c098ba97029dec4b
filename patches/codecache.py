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
    dict(
        slug="scope-held-check-cached",
        target="torch._inductor.codecache",
        qualname="FxGraphHashDetails.__init__",
        anchor="self.gm = gm",
        at="before",
        code="if type(self) is FxGraphHashDetails: __inductor_ablate__.check_scope_held(gm.graph)",
        flag="modules, ops",
        why="the scope check of scope-held-check, where the FX-graph cache key is computed (not AOTAutograd's "
            "subclass, whose graph is Dynamo's): a cache hit "
            "never reaches codegen, and must warn all the same",
    ),
]
