"""`python -m inductor_ablate list`: every switch and fusion kind, and whether it applies here
(like ``gcc -Q --help=optimizers``)."""
from __future__ import annotations

from .. import importhook, switches
from ..config import config
from ..errors import OneLineParser
from . import COMMANDS

#: The patches each fusion kind's veto needs.
_KIND_PATCHES = {"outer-loop": ["no-fuse-outer-loop"], "foreach": ["no-fuse-foreach", "no-fuse-veto"],
                 "combo": ["no-fuse-combo"]}
_SWITCH_PATCHES = {
    "no_fuse": ["no-fuse-veto", "no-fuse-outer-loop", "no-fuse-foreach", "no-fuse-combo"],
    "no_inline": ["no-inline-realize"],
    "flush_every_node": ["flush-every-node", "flush-before-scoped-node"],
    "one_kernel_per_op": ["no-fuse-veto", "no-inline-realize", "flush-every-node", "flush-before-scoped-node"],
    "fuse_limit": ["no-fuse-veto", "decision-log-fusion"],
    "inline_limit": ["no-inline-realize"],
    "fuse_skip": ["no-fuse-veto", "decision-log-fusion"],
    "no_fuse_pairs": ["no-fuse-veto"],
    "modules": ["no-fuse-veto", "no-fuse-outer-loop", "no-inline-realize"],
    "ops": ["no-fuse-veto", "no-fuse-outer-loop", "no-inline-realize"],
    "expect_fused": ["expect-fused-check", "decision-log-refusal"],
}


def rows() -> list[dict]:
    """Switch and kind rows: name, what it changes, applies (yes / no: why), current value."""
    importhook.import_targets()
    import torch
    from torch._inductor import scheduler

    gpu = torch.cuda.is_available()
    state = {r["slug"]: r for r in importhook.report()}

    def patches_ok(slugs):
        bad = [s for s in slugs if state[s]["state"] != "applied"]
        return "yes" if not bad else f"no: patch {bad[0]} {state[bad[0]]['state']}"

    out = []
    values = config.values()
    for name, sw in switches.SWITCHES.items():
        value = values[name]
        if sw.is_limit:
            shown = "unset" if value is None else str(value)
        elif sw.is_numbers:
            shown = ",".join(str(n) for n in sorted(value)) or "unset"
        elif sw.is_scope:
            shown = ",".join(value) or "everywhere"
        elif sw.takes_kinds:
            shown = "all" if value == frozenset(switches.FUSION_KINDS) else ",".join(sorted(value)) or "off"
        else:
            shown = "on" if value else "off"
        out.append(dict(kind="switch", name=sw.env, doc=sw.doc, applies=patches_ok(_SWITCH_PATCHES[name]), value=shown))
    blocked = config.effective()["no_fuse"]
    for kind, doc in switches.FUSION_KINDS.items():
        cls, device = switches.KIND_NEEDS.get(kind), switches.KIND_DEVICE.get(kind)
        applies = patches_ok(_KIND_PATCHES.get(kind, ["no-fuse-veto"]))
        if applies == "yes" and cls and not hasattr(scheduler, cls):
            applies = f"no: torch {torch.__version__} has no {cls}"
        elif applies == "yes" and device == "cuda" and not gpu:
            applies = "gpu only (no GPU here)"
        elif applies == "yes" and device == "cpu":
            applies = "yes (C++ backend only)"
        out.append(dict(kind="fusion kind", name=kind, doc=doc, applies=applies,
                        value="blocked" if kind in blocked else "allowed"))
    return out


def print_listing() -> None:
    import torch

    print(f"torch {torch.__version__}, device: {'cuda' if torch.cuda.is_available() else 'cpu'}\n")
    table = rows()
    for section in ("switch", "fusion kind"):
        items = [r for r in table if r["kind"] == section]
        print("switches:" if section == "switch" else "\nfusion kinds (INDUCTOR_NO_FUSE=kind,kind,...):")
        w = max(len(r["name"]) for r in items)
        for r in items:
            print(f"  {r['name']:<{w}}  [{r['value']}]  applies: {r['applies']}\n  {'':<{w}}  {r['doc']}")


def main(argv: list[str]) -> int:
    OneLineParser(prog="python -m inductor_ablate list", description=COMMANDS["list"][1]).parse_args(argv)
    print_listing()
    return 0
