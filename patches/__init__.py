"""Patch definitions, as data: one file per Inductor target module.

Each entry is a dict with:
  slug      short unique name, used in status, warnings and docs
  target    the torch module the patch edits
  qualname  the function inside it
  anchor    text that must occur exactly once in that function's source (else the patch fails)
  at        "start": insert at the top of the body; "before" / "after": next to the anchor's statement;
            "verify": insert nothing, only require the anchor (torch has the fix upstream)
  code      the inserted statements; they reach our hooks as ``__inductor_ablate__``
  flag      the switch that turns the inserted code on (census / cache-key are internal)
  why       one line for `status` and the docs
  torch     (optional) the torch versions the entry is for, e.g. ">=2.10,<2.15"; a slug whose source
            changed between versions has one entry per range (see ``per_version``)
"""


def per_version(common: dict, ranges: dict[str, dict]) -> list[dict]:
    """One entry per torch version range: ``common`` fields plus that range's own (anchor, at, ...)."""
    return [{**common, "torch": spec, **fields} for spec, fields in ranges.items()]


from . import choices, codecache, cpp, graph, loop_body, lowering, scheduler, triton  # noqa: E402 (they use per_version)

DEFINITIONS = [*choices.PATCHES, *scheduler.PATCHES, *cpp.PATCHES, *triton.PATCHES, *graph.PATCHES,
               *lowering.PATCHES, *loop_body.PATCHES,
               *codecache.PATCHES]
