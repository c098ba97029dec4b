"""The policy: which modules get patched, and when.

A finder at the front of ``sys.meta_path`` answers only for the target modules.  It asks the other
finders for the real spec and wraps the loader: the real loader executes the module as usual (torch's
own ``.pyc``, untouched), then our patches replace the code of the targeted functions.  Modules that
were imported before ``install()`` are patched in place at install time, through the same function,
so import order does not matter.  A module is patched whole or not at all.
"""
from __future__ import annotations

import functools
import importlib.abc
import os
import sys
import threading
import warnings

from . import runtime, switches
from .errors import UsageError, exit_with, one_line_excepthook
from .config import config
from .patcher import HOOKS_NAME, Patch, PatchError, cached_compile, resolve_function

__version__ = "0.1.0"


class InductorAblateWarning(UserWarning):
    """A patch could not be applied; the module it targets stays stock."""


class OverlayError(RuntimeError, UsageError):
    """Raised instead of the warning under INDUCTOR_ABLATE_STRICT=1, after every patch is undone."""


def _load_definitions() -> list[Patch]:
    from inductor_ablate.patches import DEFINITIONS

    patches = [Patch.from_dict(d) for d in DEFINITIONS]
    by_slug: dict[str, list[Patch]] = {}
    for p in patches:
        by_slug.setdefault(p.slug, []).append(p)
    for slug, variants in by_slug.items():  # one slug, several torch ranges: each must name its range
        if len(variants) > 1 and (not all(v.torch for v in variants) or len({v.target for v in variants}) > 1):
            raise ValueError(f"patch {slug!r} is defined {len(variants)} times: each definition needs its own "
                             f"torch version range, and all must target one module")
    return patches


#: Every definition, for every torch version; SLUGS: each patch once, in definition order.
PATCHES: list[Patch] = _load_definitions()
SLUGS: list[str] = list(dict.fromkeys(p.slug for p in PATCHES))
runtime.set_patches(PATCHES)  # the cache key's digest of our patches
TARGETS: dict[str, list[Patch]] = {}
for _p in PATCHES:
    TARGETS.setdefault(_p.target, []).append(_p)


def definitions_for(version: str, target: str | None = None) -> tuple[list[Patch], list[str]]:
    """The definitions that apply to torch ``version`` (of ``target``'s patches, or all), and the
    slugs that have no definition for it."""
    pool = TARGETS[target] if target else PATCHES
    chosen: dict[str, Patch] = {}
    for p in pool:
        if p.applies_to(version):
            if p.slug in chosen:
                raise ValueError(f"patch {p.slug!r}: torch ranges {chosen[p.slug].torch!r} and {p.torch!r} overlap")
            chosen[p.slug] = p
    missing = [slug for slug in dict.fromkeys(p.slug for p in pool) if slug not in chosen]
    return list(chosen.values()), missing

_lock = threading.RLock()
_state = {
    "installed": False,
    "strict": False,
    "deferred_error": None,  # a bad switch value seen at start-up, raised at the first Inductor import
    "report": {slug: ("pending", "module not imported yet") for slug in SLUGS},
    "originals": {},  # (module, qualname) -> (function, original code)
}


def _debug(msg: str) -> None:
    if os.environ.get(switches.DEBUG_ENV, "").lower() in switches.TRUE_WORDS:
        sys.stderr.write(f"inductor_ablate: {msg}\n")


def torch_version() -> str:
    torch = sys.modules.get("torch")
    return getattr(torch, "__version__", "unknown") if torch else "not imported"


@functools.lru_cache(maxsize=None)
def _cache_salt() -> str:
    """Our version, Python's, and the transform's own source: a change to any invalidates the cache."""
    import hashlib

    from . import patcher

    with open(patcher.__file__, "rb") as f:
        return f"{__version__}|{sys.version}|{hashlib.sha256(f.read()).hexdigest()}"


def patch_module(module) -> bool:
    """Apply every patch for ``module``; all or nothing.  Returns True if applied."""
    name = module.__name__
    with _lock:
        states = {_state["report"][p.slug][0] for p in TARGETS[name]}
        if states == {"applied"}:
            return True
        if states == {"failed"}:  # already reported for this torch; warn once, not at every install()
            return False
        patches, missing = definitions_for(torch_version(), name)
        try:
            if missing:
                raise PatchError(next(p for p in TARGETS[name] if p.slug == missing[0]),
                                 f"no definition for torch {torch_version()} (defined for "
                                 f"{', '.join(p.torch for p in TARGETS[name] if p.slug == missing[0])})")
            filename = module.__file__
            with open(filename, "rb") as f:
                source = f.read()
            codes = cached_compile(source, filename, patches, salt=_cache_salt())
            functions = {}
            for qualname, code in codes.items():
                func = resolve_function(module, qualname)
                if func.__code__.co_freevars != code.co_freevars:
                    raise PatchError(next(p for p in patches if p.qualname == qualname),
                                     f"free variables differ: {func.__code__.co_freevars} vs {code.co_freevars}")
                functions[qualname] = func
        except (PatchError, LookupError, SyntaxError, OSError, TypeError) as exc:
            failed = exc.patch.slug if isinstance(exc, PatchError) else None
            reason = getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}"
            slugs = list(dict.fromkeys(p.slug for p in TARGETS[name]))
            for slug in slugs:
                _state["report"][slug] = ("failed", reason if slug == failed or failed is None
                                          else f"module left stock because {failed!r} failed")
            msg = (f"cannot patch {name} on torch {torch_version()}: "
                   f"{'patch ' + repr(failed) + ': ' if failed else ''}{reason}. "
                   f"Patches {slugs} are not applied; this module stays stock.")
            if _state["strict"]:  # undo every patch: never leave torch half-patched
                _restore_all(keep_report=True)
                raise OverlayError(msg + f" ({switches.STRICT_ENV}=1; every patch undone)") from exc
            warnings.warn(f"inductor_ablate: {msg}", InductorAblateWarning, stacklevel=2)
            return False
        module.__dict__[HOOKS_NAME] = runtime
        for qualname, func in functions.items():
            _state["originals"].setdefault((name, qualname), (func, func.__code__))
            func.__code__ = codes[qualname]
        for p in patches:
            _state["report"][p.slug] = ("applied", "")
        _debug(f"patched {name}: {', '.join(p.slug for p in patches)}")
        return True


class _PatchingLoader:
    """Runs the real loader, then patches the fresh module."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            patch_module(module)
        except OverlayError as exc:  # strict, inside someone's import: one line, exit 2
            exit_with(exc)
        _inductor_imported()

    def __getattr__(self, name):  # get_source, get_filename, ... for inspect and linecache
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self._busy = threading.local()

    def find_spec(self, fullname, path, target=None):
        if fullname == "torch._inductor" and _state["deferred_error"] is not None:
            exit_with(_state["deferred_error"])  # a bad INDUCTOR_* value: one line, exit 2
        if fullname not in TARGETS:
            return None
        busy = self._busy.__dict__.setdefault("names", set())
        if fullname in busy:
            return None
        busy.add(fullname)
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            busy.discard(fullname)
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader)
        return spec


_finder = _Finder()


def install(*, defer_errors: bool = False) -> None:
    """Read the switches from the environment, hook imports, patch what is already imported.

    A bad switch value raises SwitchValueError at once, or with ``defer_errors`` (the start-up hook,
    which must not break unrelated programs) when torch._inductor is first imported.
    """
    with _lock:
        try:
            env_values = switches.from_environ()
            _state["strict"] = switches.strict_from_environ()
            switches.check_environ()
            _state["deferred_error"] = None
        except switches.SwitchValueError as exc:
            if not defer_errors:
                raise
            _state["deferred_error"] = exc
            env_values = None
        if env_values is not None and not _state["installed"]:
            config.update(**env_values)
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)
        if defer_errors and not _state["installed"]:  # an unchanged script: a strict check's error is one line
            sys.excepthook = one_line_excepthook(sys.excepthook)
        _state["installed"] = True
        for name in TARGETS:
            module = sys.modules.get(name)
            if module is not None and getattr(module, "__file__", None):
                patch_module(module)
    if any(name in sys.modules for name in TARGETS):
        _inductor_imported()


#: What starts once Inductor is imported (and torch with it): the package registers INDUCTOR_KERNEL_PROFILE's
#: start here, so the policy below imports nothing above it.
_when_inductor_imported: list = []


def when_inductor_imported(fn) -> None:
    """Call ``fn()`` each time a target module has been imported and patched (``fn`` keeps itself to once)."""
    _when_inductor_imported.append(fn)


def _inductor_imported() -> None:
    if _state["deferred_error"] is None:
        for fn in _when_inductor_imported:
            fn()


def import_targets() -> None:
    """Import every target module (which applies its patches); a module that cannot be imported
    here (e.g. a backend missing on this machine) is reported as failed, with the reason."""
    import importlib

    for target, patches in TARGETS.items():
        try:
            importlib.import_module(target)
        except Exception as exc:
            for p in patches:
                _state["report"][p.slug] = ("failed", f"import failed: {exc!r}")


def _restore_all(keep_report: bool) -> None:
    with _lock:
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        for (_name, _qualname), (func, code) in _state["originals"].items():
            func.__code__ = code
        _state["originals"].clear()
        for slug in SLUGS:
            if not (keep_report and _state["report"][slug][0] == "failed"):
                _state["report"][slug] = ("pending", "overlay uninstalled")
        _state["installed"] = False


def uninstall() -> None:
    """Restore every patched function's original code and remove the import hook."""
    _restore_all(keep_report=False)


def report() -> list[dict]:
    """One row per patch: slug, target, qualname, flag, state (applied/failed/pending), reason."""
    chosen = {p.slug: p for p in definitions_for(torch_version())[0]} if "torch" in sys.modules else {}
    rows = []
    for slug in SLUGS:
        p = chosen.get(slug) or next(p for p in PATCHES if p.slug == slug)
        rows.append(dict(slug=slug, target=p.target, qualname=p.qualname, flag=p.flag, at=p.at, torch=p.torch,
                         state=_state["report"][slug][0], reason=_state["report"][slug][1], why=p.why))
    return rows


def deferred_error():
    """The bad INDUCTOR_* value the start-up hook saw (a SwitchValueError), or None."""
    return _state["deferred_error"]


def is_installed() -> bool:
    return _state["installed"]
