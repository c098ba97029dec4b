"""Which kind of fusion a candidate pair is (one of ``switches.FUSION_KINDS``): what
``INDUCTOR_NO_FUSE=KIND`` vetoes and what the decision log records.  Torch is imported lazily."""
from __future__ import annotations


def fusion_kind(node1, node2) -> str:
    """Classify a candidate fusion pair into one of FUSION_KINDS."""
    from torch._inductor import scheduler as s

    if node1.is_template():
        return "epilogue"
    if node2.is_template():
        return "prologue"
    if isinstance(node1, s.ExternKernelSchedulerNode):
        return "user-kernel-epilogue"
    if node1.is_foreach() or node2.is_foreach():
        return "foreach"
    nested = getattr(s, "FusedNestedReductions", None)
    if nested is not None and isinstance(node1, nested):
        return "nested-reduction"
    nested_rules = getattr(s, "NestedReduction", None)
    if nested_rules is not None and node1.is_reduction() and node2.is_reduction():
        try:
            if nested_rules._is_dependent_reduction_pair(node1, node2) and nested_rules.can_fuse(node1, node2):
                return "nested-reduction"
        except Exception:  # a classification probe must never break compilation
            pass
    mix = getattr(s, "FusedMixOrderReductions", None)
    if mix is not None and isinstance(node1, mix):
        return "mix-order"
    mix_rules = getattr(s, "MixOrderReduction", None)
    if mix_rules is not None and node1.is_reduction() and node2.is_reduction():
        try:
            if mix_rules.are_mix_order_reductions(node1, node2):
                return "mix-order"
        except Exception:
            pass
    if node1.get_operation_names() & node2.ancestors:
        return "vertical"
    return "horizontal"
