"""Patch definitions, as data: one file per Inductor target module.

Each entry is a dict with:
  slug      short unique name, used in status, warnings and docs
  target    the torch module the patch edits
  qualname  the function inside it
  anchor    text that must occur exactly once in that function's source (else the patch fails)
  at        "start": insert at the top of the body; "before": insert before the anchor's statement
  code      the inserted statements; they reach our hooks as ``__inductor_ablate__``
  flag      the switch that turns the inserted code on (census / cache-key are internal)
  why       one line for `status` and the docs
"""
from . import choices, codecache, cpp, graph, scheduler, triton

DEFINITIONS = [*choices.PATCHES, *scheduler.PATCHES, *cpp.PATCHES, *triton.PATCHES, *graph.PATCHES,
               *codecache.PATCHES]
