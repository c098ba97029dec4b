"""torch/_inductor/scheduler.py: grouping that happens outside can_fuse, a correctness fix, census records."""

from . import per_version

PATCHES = [
    # Inductor bug: recomputing a node's body (C++ fusion of nodes with different loop ranges) re-reads
    # its dependencies from the body and drops the renames to a mutated buffer, so a reader of an
    # in-place result can be scheduled before the mutation (docs/correctness.md).  2.12-2.14 re-apply
    # the renames only when the node has fake deps; 2.15 fixed it (the verify entry checks that).
    *per_version(dict(
        slug="fix-mutation-renames",
        target="torch._inductor.scheduler",
        qualname="SchedulerNode.recompute_size_and_body",
        code="if __inductor_ablate__.ablating(): "
             "self.set_read_writes(self.read_writes.rename(self.mutation_renames))",
        flag="any switch",
        why="Inductor bug: a node whose body is recomputed loses the renames to a buffer mutated before it "
            "and can be scheduled before the mutation; re-apply them (see docs/correctness.md)",
    ), {
        "<2.12": dict(anchor="self._compute_attrs(", at="after"),
        ">=2.12,<2.15": dict(anchor="if fake_deps:", at="before"),
        ">=2.15": dict(anchor="if fake_deps or self.mutation_renames:", at="verify", code="",
                       why="fixed upstream in torch 2.15 (renames re-applied whenever the node has any): "
                           "checked, not patched"),
    }),
    # A choices class that overrides can_fuse (a user's config.inductor_choices_class, torch 2.15's
    # registered contributors) never reaches the patched InductorChoices.can_fuse: the scheduler asks
    # the same veto itself, right before it asks V.choices (the one call site in every version).
    *per_version(dict(
        slug="no-fuse-veto-any-choices",
        target="torch._inductor.scheduler",
        anchor="if not V.choices.can_fuse(self, node1, node2, shared_data_score):",
        at="before",
        code="if __inductor_ablate__.fusion_blocked(node1, node2): return False",
        flag="no_fuse",
        why="the same veto at the scheduler's call of V.choices.can_fuse, so a choices class that overrides "
            "can_fuse without calling the base class cannot get around INDUCTOR_NO_FUSE or the limits",
    ), {"<2.13": dict(qualname="Scheduler.can_fuse"), ">=2.13": dict(qualname="Scheduler._can_fuse")}),
    # Before 2.11 fuse_two_nodes is a closure inside fuse_nodes_once (self is in its scope); applied
    # on 2.9.1 and 2.10.0 installs, test_bisect.py passes on 2.10.0.
    *per_version(dict(
        slug="decision-log-fusion",
        target="torch._inductor.scheduler",
        code="if __inductor_ablate__.decisions_active() and __inductor_ablate__.fusion_made(self, node1, node2): "
             "return node1",
        flag="fuse_limit",
        why="numbers and logs every fusion the scheduler makes (INDUCTOR_ABLATE_LOG, TORCH_LOGS), so "
            "INDUCTOR_FUSE_LIMIT can veto those past the limit and INDUCTOR_FUSE_SKIP the ones it names "
            "(returning before the fusion: callers do not use the fused node)",
    ), {
        "<2.11": dict(qualname="Scheduler.fuse_nodes_once", anchor='fusion_log.debug("fusing %s with %s"',
                      at="before"),
        ">=2.11": dict(qualname="Scheduler.fuse_two_nodes", anchor="def fuse_two_nodes(", at="start"),
    }),
    # Inductor's own refusals, for the decision log (issue 51): WhyNoFuse (a slots dataclass) keeps
    # only the two names, so its __init__ hands the nodes to us (only while decisions are counted).
    dict(
        slug="decision-log-refusal-nodes",
        target="torch._inductor.scheduler",
        qualname="WhyNoFuse.__init__",
        anchor="self.name1 = node1.get_name()",
        at="before",
        code="if __inductor_ablate__.decisions_active(): __inductor_ablate__.refusal_nodes(self, node1, node2)",
        flag="fuse_limit",
        why="keeps a refused pair's nodes, so the decision log can give both sides' ops",
    ),
    dict(
        slug="decision-log-refusal",
        target="torch._inductor.scheduler",
        qualname="WhyNoFuse.__call__",
        anchor="fusion_log.debug(self)",
        at="after",
        code="if __inductor_ablate__.decisions_active(): __inductor_ablate__.fusion_refused(self)",
        flag="fuse_limit",
        why="logs each candidate pair Inductor refuses, with its reason (result 'refused (...)'); "
            "refusals are not numbered, so the limits and bisect count what they counted before",
    ),
    dict(
        slug="no-fuse-foreach",
        target="torch._inductor.scheduler",
        qualname="Scheduler.create_foreach_nodes",
        anchor="def create_foreach_nodes(self)",
        at="start",
        code="if __inductor_ablate__.kind_blocked('foreach'): return",
        flag="no_fuse",
        why="foreach lists (GPU) are grouped into one kernel before fusion; skip the grouping",
    ),
    dict(
        slug="no-fuse-combo",
        target="torch._inductor.scheduler",
        qualname="Scheduler.create_combo_kernel_nodes",
        anchor="def create_combo_kernel_nodes(self",
        at="start",
        code="if __inductor_ablate__.kind_blocked('combo'): return",
        flag="no_fuse",
        why="combo kernels (config.combo_kernels, GPU) group independent nodes; skip the grouping",
    ),
    dict(
        slug="census-extern",
        target="torch._inductor.scheduler",
        qualname="Scheduler.codegen_extern_call",
        anchor="def codegen_extern_call(self, scheduler_node",
        at="start",
        code="if __inductor_ablate__.recording(): __inductor_ablate__.record_extern(scheduler_node)",
        flag="census",
        why="records each extern call (mm, conv, fallbacks) for inductor_ablate.census",
    ),
    dict(
        slug="expect-fused-check",
        target="torch._inductor.scheduler",
        qualname="Scheduler._codegen",
        anchor="def _codegen(self, nodes",
        at="start",
        code="if __inductor_ablate__.expecting(): __inductor_ablate__.check_expected_fused(nodes)",
        flag="expect_fused",
        why="INDUCTOR_EXPECT_FUSED: counts the kernels computing each expected module after fusion, and "
            "says so (with Inductor's refusals between them) when there is more than one",
    ),
    dict(
        slug="scope-held-check",
        target="torch._inductor.scheduler",
        qualname="Scheduler._codegen",
        anchor="def _codegen(self, nodes",
        at="start",
        code="__inductor_ablate__.check_scope_held(V.graph.graph)",
        flag="modules, ops",
        why="a module or op scope that holds no node of a graph warns once per graph, naming the nearest "
            "modules or ops it has (INDUCTOR_ABLATE_STRICT=1: an error)",
    ),
    dict(
        slug="census-scheduler-nodes",
        target="torch._inductor.scheduler",
        qualname="Scheduler._codegen",
        anchor="def _codegen(self, nodes",
        at="start",
        code="if __inductor_ablate__.recording(): __inductor_ablate__.record_scheduler_nodes(nodes)",
        flag="census",
        why="counts the scheduler nodes left after fusion (one loop nest / kernel each) for the census",
    ),
]
