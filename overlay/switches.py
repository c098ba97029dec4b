"""The switches: names, environment variables, valid values, and what each one changes.

Parsing lives here so that every way in (environment, ``config.patch``, the ``run`` command line)
accepts exactly the same values and fails with the same message.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import re

from .errors import UsageError, check_writable

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")

#: Fusion kinds that INDUCTOR_NO_FUSE can block one by one (a comma list), and where each is decided.
FUSION_KINDS = {
    "vertical": "producer -> consumer fusion of pointwise/reduction nodes (Scheduler.can_fuse_vertical)",
    "horizontal": "sibling nodes that share inputs (Scheduler.can_fuse_horizontal)",
    "epilogue": "a node fused after a matmul/conv template (template epilogue)",
    "prologue": "a pointwise node fused before a template (template prologue)",
    "user-kernel-epilogue": "a node fused after a user-defined Triton kernel (FusedExternTritonKernelSchedulerNode)",
    "mix-order": "reductions over different dimensions of one tensor (FusedMixOrderReductions, torch>=2.10)",
    "nested-reduction": "a reduction fused into a dependent reduction (FusedNestedReductions, torch>=2.13)",
    "outer-loop": "C++ nodes sharing outer loops (CppScheduling: OuterLoopFusedSchedulerNode)",
    "foreach": "foreach lists grouped into one kernel (Scheduler.create_foreach_nodes, GPU backends)",
    "combo": "independent nodes grouped into combo kernels (Scheduler.create_combo_kernel_nodes, config.combo_kernels)",
}

#: Where a kind can occur: "cuda" (GPU backends only) or "cpu" (C++ backend only); absent = both.
KIND_DEVICE = {"user-kernel-epilogue": "cuda", "mix-order": "cuda", "foreach": "cuda", "combo": "cuda",
               "outer-loop": "cpu"}
#: The torch._inductor.scheduler class a kind needs (older torch versions lack it).
KIND_NEEDS = {"mix-order": "FusedMixOrderReductions", "nested-reduction": "FusedNestedReductions",
              "user-kernel-epilogue": "FusedExternTritonKernelSchedulerNode"}


@dataclasses.dataclass(frozen=True)
class Switch:
    name: str  # attribute of inductor_ablate.config
    env: str  # environment variable
    doc: str
    takes_kinds: bool = False
    is_limit: bool = False  # a decision count (None = unset = stock), not on/off
    is_numbers: bool = False  # a set of decision numbers (empty = stock)
    is_scope: bool = False  # a comma list of names or globs where the other switches apply (empty = everywhere)

    @property
    def off(self) -> str:
        """The value that leaves Inductor as it is."""
        return "" if self.is_limit or self.is_numbers or self.is_scope else "0"


SWITCHES = {
    s.name: s
    for s in (
        Switch("no_fuse", "INDUCTOR_NO_FUSE",
               "veto scheduler fusion: 1 for every kind, or a comma list of kinds", takes_kinds=True),
        Switch("no_inline", "INDUCTOR_NO_INLINE",
               "realize the output of every FX node after lowering, so no op is computed inside another"),
        Switch("flush_every_node", "INDUCTOR_FLUSH_EVERY_NODE",
               "flush after every scheduler node, so the C++ backend emits one function per node"),
        Switch("one_kernel_per_op", "INDUCTOR_ONE_KERNEL_PER_OP",
               "all of the above: no fusion, no inlining, a flush after every node"),
        Switch("fuse_limit", "INDUCTOR_FUSE_LIMIT",
               "allow only the first N scheduler fusions of the process (the decision log's numbering), "
               "veto the rest; 0 = no fusion", is_limit=True),
        Switch("inline_limit", "INDUCTOR_INLINE_LIMIT",
               "leave only the first N FX nodes' outputs to Inductor's inlining, realize the rest; "
               "0 = INDUCTOR_NO_INLINE", is_limit=True),
        Switch("fuse_skip", "INDUCTOR_FUSE_SKIP",
               "veto only the scheduler fusions with these numbers in the decision log (a comma list of "
               "numbers or ranges a-b), and keep their two sides apart for the rest of the graph",
               is_numbers=True),
        Switch("no_fuse_pairs", "INDUCTOR_NO_FUSE_PAIRS",
               "veto only fusions that join a node of op A with a node of op B: a comma list of A+B (names or "
               "globs as INDUCTOR_ABLATE_OPS takes them; * for any), e.g. mm+add for matmul epilogues",
               is_scope=True),
        Switch("modules", "INDUCTOR_ABLATE_MODULES",
               "scope: the other switches act only on FX nodes of these modules (globs over module paths as "
               "named_modules() spells them, e.g. encoder.layer.*.attention; a node of a submodule is inside)",
               is_scope=True),
        Switch("ops", "INDUCTOR_ABLATE_OPS",
               "scope: the other switches act only on FX nodes of these aten ops (as the census prints them, "
               "e.g. mul or softmax; a node a decomposition made counts as its original op)", is_scope=True),
        Switch("expect_fused", "INDUCTOR_EXPECT_FUSED",
               "a check, not a switch: say at compile time when a module's nodes (globs as INDUCTOR_ABLATE_MODULES "
               "takes them) end up in more than one kernel, with Inductor's refusals between them; an error "
               "under INDUCTOR_ABLATE_STRICT=1", is_scope=True),
    )
}
STRICT_ENV = "INDUCTOR_ABLATE_STRICT"
DEBUG_ENV = "INDUCTOR_ABLATE_DEBUG"
LOG_ENV = "INDUCTOR_ABLATE_LOG"  # the decision log (decisions.py writes it)
PROFILE_ENV = "INDUCTOR_KERNEL_PROFILE"  # a kernel profile of the whole run (profile.py writes it)
# Read elsewhere: the patched-code cache (patcher.py), and the test suite's device and fuzz settings.
OTHER_ENVS = ("INDUCTOR_ABLATE_CACHE_DIR", "INDUCTOR_ABLATE_TEST_DEVICE", "INDUCTOR_ABLATE_FUZZ_LOG",
              "INDUCTOR_ABLATE_FUZZ_EXAMPLES", "INDUCTOR_ABLATE_FUZZ_POISON")


class SwitchValueError(ValueError, UsageError):
    """A bad INDUCTOR_* variable (a switch's value, or a name of ours misspelled); raised before
    anything is compiled."""


def valid_values_text(switch: Switch) -> str:
    words = "1/0/true/false/yes/no/on/off (any case)"
    if switch.takes_kinds:
        return f"{words}, or a comma list of fusion kinds: {', '.join(FUSION_KINDS)}"
    return words


def parse_bool(value, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise SwitchValueError(f"{where}={value!r} is not valid; valid values: {'/'.join(TRUE_WORDS + FALSE_WORDS[:-1])} (any case)")


def parse_limit(value, where: str):
    """A decision limit: None (unset: stock) or a count >= 0."""
    if value is None or isinstance(value, str) and value.strip().lower() in ("", "none", "off"):
        return None
    if isinstance(value, bool):
        raise SwitchValueError(f"{where}={value!r} is not valid; valid values: a count of decisions >= 0, or unset")
    try:
        count = int(str(value).strip())
    except ValueError:
        count = -1
    if count < 0:
        raise SwitchValueError(f"{where}={value!r} is not valid; valid values: a count of decisions >= 0, or unset")
    return count


def parse_numbers(value, where: str) -> frozenset:
    """Decision numbers: empty (unset: stock), or a comma list of numbers >= 1 and ranges a-b."""
    bad = SwitchValueError(f"{where}={value!r} is not valid; valid values: decision numbers >= 1 as a comma "
                           f"list with ranges (3,17,20-25), or unset")
    if value is None:
        return frozenset()
    if isinstance(value, bool):
        raise bad
    if isinstance(value, int):
        value = str(value)
    items = [str(v) for v in value] if isinstance(value, (set, frozenset, list, tuple)) else str(value).split(",")
    numbers = set()
    for item in (i.strip() for i in items):
        if not item:
            continue
        lo, _, hi = item.partition("-")
        if not lo.strip().isdigit() or (hi and not hi.strip().isdigit()):
            raise bad
        lo, hi = int(lo), int(hi or lo)
        if lo < 1 or hi < lo or hi - lo > 1_000_000:
            raise bad
        numbers.update(range(lo, hi + 1))
    if not numbers and "".join(items).strip():
        raise bad
    return frozenset(numbers)


def parse_scope(value, where: str, pairs: bool = False) -> tuple[str, ...]:
    """A scope: names or globs, sorted; empty (unset) is everywhere.  ``pairs``: each item A+B."""
    if value is None:
        return ()
    items = [str(v) for v in value] if isinstance(value, (set, frozenset, list, tuple)) else str(value).split(",")
    names = sorted({i.strip() for i in items if i.strip()})
    bad = [n for n in names if not (all(_SCOPE_NAME.fullmatch(p) for p in n.split("+")) and n.count("+") == 1
                                    if pairs else _SCOPE_NAME.fullmatch(n))]
    if bad:
        what = "pairs A+B of op names or globs" if pairs else "names or globs"
        raise SwitchValueError(f"{where}={value!r} is not valid: {bad[0]!r}; valid values: a comma list of {what} "
                               f"(letters, digits, _ . * ? [ ]), or unset")
    for name in names:
        problem = _glob_problem(name)
        if problem:
            raise SwitchValueError(f"{where}={value!r} is not valid: {name!r} {problem}; a glob's [...] holds the "
                                   f"characters one place may be, e.g. layer.[0-3]")
    return tuple(names)


def _glob_problem(glob: str) -> str | None:
    """Why a glob's brackets are malformed (fnmatch would take a lone ``[`` as a literal character
    and match nothing), or None."""
    depth = 0
    for i, ch in enumerate(glob):
        if ch == "[":
            if depth:
                return "opens a [ inside another"
            depth, start = 1, i
        elif ch == "]":
            if not depth:
                return "closes a ] it never opened"
            if i == start + 1:
                return "has an empty []"
            depth = 0
    return "opens a [ it never closes" if depth else None


_SCOPE_NAME = re.compile(r"[A-Za-z0-9_.*?\[\]-]+")


def parse(switch: Switch, value, where: str | None = None):
    """Normalize a switch value: a bool, for no_fuse a frozenset of fusion kinds, for a limit None or
    a count, for a scope a sorted tuple of names."""
    where = where or switch.env
    if switch.is_scope:
        return parse_scope(value, where, pairs=switch.name == "no_fuse_pairs")
    if switch.is_limit:
        return parse_limit(value, where)
    if switch.is_numbers:
        return parse_numbers(value, where)
    if not switch.takes_kinds:
        try:
            return parse_bool(value, where)
        except SwitchValueError:
            raise SwitchValueError(f"{where}={value!r} is not valid; valid values: {valid_values_text(switch)}") from None
    if isinstance(value, (set, frozenset, list, tuple)):
        items = [str(v) for v in value]
    else:
        try:
            return frozenset(FUSION_KINDS) if parse_bool(value, where) else frozenset()
        except SwitchValueError:
            items = str(value).split(",")
    kinds = {item.strip().lower().replace("_", "-") for item in items if item.strip()}
    unknown = sorted(kinds - set(FUSION_KINDS))
    if unknown or not kinds and items:
        raise SwitchValueError(
            f"{where}={value!r} is not valid: unknown fusion kind(s) {', '.join(unknown) or '(empty)'}; "
            f"valid values: {valid_values_text(switch)}")
    return frozenset(kinds)


def from_environ(environ=None) -> dict:
    """Read every switch from the environment; raises SwitchValueError naming the variable."""
    environ = os.environ if environ is None else environ
    values = {}
    for switch in SWITCHES.values():
        raw = environ.get(switch.env)
        values[switch.name] = parse(switch, raw if raw is not None else switch.off)
    return values


def check_environ(environ=None) -> None:
    """The rest of the INDUCTOR_* variables, so that none is silently ignored: a name that is ours
    misspelled (``INDUCTOR_NO_FUZE=1`` would otherwise measure stock Inductor as "no fusion"), a bad
    INDUCTOR_ABLATE_DEBUG value, a decision log that cannot be written.  Torch reads a few INDUCTOR_*
    names of its own (INDUCTOR_POST_FUSION_SVG, ...): none is within reach of ours (difflib ratio of
    the part after ``INDUCTOR_`` at most 0.5, against 0.74 or more for the typos tried), so they pass."""
    environ = os.environ if environ is None else environ
    ours = [s.env for s in SWITCHES.values()] + [STRICT_ENV, DEBUG_ENV, LOG_ENV, PROFILE_ENV, *OTHER_ENVS]
    for name in sorted(environ):
        upper = name.upper()  # inductor_no_fuse=1 is ignored as surely as a typo: the same "did you mean"
        if not upper.startswith("INDUCTOR_") or name in ours:
            continue
        likeness, near = max((difflib.SequenceMatcher(None, upper[9:], o[9:]).ratio(), o) for o in ours)
        if upper.startswith("INDUCTOR_ABLATE_") or likeness >= 0.7:
            raise SwitchValueError(f"{name} is not a variable of inductor_ablate (did you mean {near}?); "
                                   f"switches: {', '.join(s.env for s in SWITCHES.values())}")
    parse_bool(environ.get(DEBUG_ENV, "0"), DEBUG_ENV)
    for env, what in ((LOG_ENV, "the decision log"), (PROFILE_ENV, "the kernel profile")):
        path = environ.get(env)
        if path:  # one rule for every output path: missing folders are made (errors.check_writable)
            try:
                check_writable(path, what, "give a writable file path")
            except UsageError as exc:
                raise SwitchValueError(f"{env}={path!r}: {exc}") from None


def strict_from_environ(environ=None) -> bool:
    environ = os.environ if environ is None else environ
    return parse_bool(environ.get(STRICT_ENV, "0"), STRICT_ENV)


def effective(values: dict) -> dict:
    """Resolve ONE_KERNEL_PER_OP into the three switches it implies; the limits and the scope pass
    through."""
    all_on = values.get("one_kernel_per_op", False)
    modules, ops = tuple(values.get("modules", ())), tuple(values.get("ops", ()))
    return {
        "no_fuse": frozenset(FUSION_KINDS) if all_on else frozenset(values.get("no_fuse", ())),
        "no_inline": bool(all_on or values.get("no_inline")),
        "flush_every_node": bool(all_on or values.get("flush_every_node")),
        "fuse_limit": values.get("fuse_limit"),
        "inline_limit": values.get("inline_limit"),
        "fuse_skip": frozenset(values.get("fuse_skip", ())),
        "no_fuse_pairs": tuple(values.get("no_fuse_pairs", ())),
        "modules": modules,
        "ops": ops,
        "expect_fused": tuple(values.get("expect_fused", ())),
    }


def to_environ(values: dict) -> dict[str, str]:
    """The environment variables that reproduce ``values`` (for child processes)."""
    env = {}
    for name, value in values.items():
        switch = SWITCHES[name]
        if switch.is_limit:
            env[switch.env] = "" if value is None else str(value)
        elif switch.is_numbers:
            env[switch.env] = ",".join(str(n) for n in sorted(value))
        elif switch.is_scope:
            env[switch.env] = ",".join(value)
        elif switch.takes_kinds:
            kinds = frozenset(value)
            env[switch.env] = "1" if kinds == frozenset(FUSION_KINDS) else ",".join(sorted(kinds)) or "0"
        else:
            env[switch.env] = "1" if value else "0"
    return env
