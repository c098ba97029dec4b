"""inductor_ablate: switch TorchInductor's optimizations off one at a time, and measure them.

``import inductor_ablate`` installs the overlay: switches come from the environment
(INDUCTOR_NO_FUSE, INDUCTOR_NO_INLINE, INDUCTOR_FLUSH_EVERY_NODE, INDUCTOR_ONE_KERNEL_PER_OP) and from
``inductor_ablate.config``.  Importing this package does not import torch.
"""
import os as _os
import sys as _sys

from .config import config
from .importhook import (InductorAblateWarning, OverlayError, __version__, install, is_installed, report,
                         uninstall, when_inductor_imported)
from .switches import FUSION_KINDS, PROFILE_ENV, SWITCHES, SwitchValueError


def census(fn, *args, **kwargs):
    """Compile and run ``fn(*args, **kwargs)``; return what Inductor generated (see census.Census)."""
    from .kernel_census import census as _census

    return _census(fn, *args, **kwargs)


def kernel_profile(path: str):
    """``with inductor_ablate.kernel_profile("prof.json"): ...``: a table of every kernel that ran
    inside, with its ops, calls, time and bytes, written to ``path`` (see profile.KernelProfile)."""
    from .profile import KernelProfile

    return KernelProfile(path)


def assert_one_op_per_kernel(result, **kwargs):
    """Raise AssertionError naming any kernel that computes more than one op (see census)."""
    from .kernel_census import assert_one_op_per_kernel as _check

    return _check(result, **kwargs)


def _profile_from_environ() -> None:
    """INDUCTOR_KERNEL_PROFILE: the profile starts once Inductor is imported, and torch with it."""
    if _os.environ.get(PROFILE_ENV):
        from .profile import start_from_environ

        start_from_environ()


when_inductor_imported(_profile_from_environ)

# The start-up hook (inductor_ablate.pth) sets this flag while it imports us: there a bad switch
# value must not break unrelated programs, so the error waits for the first Inductor import.
_boot = bool(getattr(_sys, "_inductor_ablate_boot", False))
install(defer_errors=_boot)
if _boot:
    from .importhook import _debug

    _debug(f"start-up hook active in pid {_os.getpid()}")
