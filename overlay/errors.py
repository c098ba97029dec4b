"""Bad input from the user: one line naming the problem, exit status 2, nothing half-done.

Everything a user can get wrong (a switch value, a results file, a script path, a torch version a
patch does not fit under INDUCTOR_ABLATE_STRICT=1) raises a ``UsageError`` subclass.  The command
line prints it as ``inductor_ablate: error: ...`` and exits 2; so does the start-up hook, at the
first Inductor import, for a bad INDUCTOR_* value in front of an unchanged script.
"""
from __future__ import annotations

import argparse
import os
import sys


class UsageError(Exception):
    """Bad input: the message names what was wrong and what is valid."""


def warn(message: str, category: type[Warning]) -> None:
    """A warning about the user's input, attributed to no source line: ``warnings.warn`` would name
    the torch line that called our hook and echo it, which tells the reader nothing."""
    import warnings

    warnings.warn_explicit(message, category, filename="inductor_ablate", lineno=0, module="inductor_ablate")


def usage_error_in(exc: BaseException | None) -> UsageError | None:
    """Our UsageError inside ``exc``, if any: one raised inside a compile (a strict check) reaches
    the user wrapped by Dynamo and Inductor (``InductorError``, ``BackendCompilerFailed``)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, UsageError):
            return exc
        seen.add(id(exc))
        exc = getattr(exc, "inner_exception", None) or exc.__cause__ or exc.__context__
    return None


def one_line_excepthook(previous):
    """A ``sys.excepthook`` for an unchanged script run with switches: our UsageError, even wrapped
    by a compile, is one line and exit 2 (after the exit handlers: logs and profiles are kept);
    anything else goes to ``previous``."""
    def hook(kind, exc, tb):
        inner = usage_error_in(exc)
        if inner is None:
            return previous(kind, exc, tb)
        import atexit

        sys.stderr.write(f"inductor_ablate: error: {inner}\n")
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(2)
    return hook


def exit_with(exc: BaseException, status: int = 2):
    """Print ``exc`` as one line on stderr and exit (SystemExit passes through torch's handlers)."""
    sys.stdout.flush()
    sys.stderr.write(f"inductor_ablate: error: {exc}\n")
    sys.stderr.flush()
    raise SystemExit(status)


def run_script(main, name: str) -> None:
    """A script's ``if __name__ == "__main__"``: ``main(sys.argv[1:])``'s status, or a ``UsageError``
    as one line naming the script, exit 2."""
    try:
        status = main(sys.argv[1:])
    except UsageError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        status = 2
    sys.exit(status)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line (naming the command) and exit 2, like the rest."""

    def error(self, message):
        exit_with(f"{self.prog}: {message} (see {self.prog} --help)")


def device_option(text: str, present: bool = True) -> str:
    """argparse ``type`` for ``--device``: ``cpu``, ``cuda`` or ``cuda:N``, present on this machine
    (``present=False``: only spelled right, for a plan made elsewhere, ``bench --estimate``).
    Checked while parsing, so a typo or a GPU the machine lacks is one line before anything runs,
    not an error in every cell (or a traceback from a run's own set-up)."""
    import torch

    try:
        device = torch.device(text)
    except RuntimeError:
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise argparse.ArgumentTypeError(f"{text!r} is not cpu, cuda or cuda:N")
    if device.type == "cuda" and present:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise argparse.ArgumentTypeError(f"{text}: torch {torch.__version__} sees no CUDA device here; use cpu")
        if device.index is not None and device.index >= count:
            raise argparse.ArgumentTypeError(f"{text}: this machine has {count} CUDA device(s), cuda:0 to cuda:{count - 1}")
    return text


def check_writable(path: str, what: str = "results file", hint: str = "choose another --json path") -> None:
    """Fail before any setup, not after the first cell or measuring run, when ``path`` (its directory
    created if missing) cannot be written: a results file, a report (CSV, plot, ranking), a claim file."""
    folder = os.path.dirname(os.path.abspath(path))
    above = folder
    while above and not os.path.exists(above):
        above = os.path.dirname(above)
    if above and not os.path.isdir(above):
        raise UsageError(f"cannot write {what} {path}: {above} is a file, not a directory; {hint}")
    if os.path.isdir(path):
        raise UsageError(f"cannot write {what} {path}: a directory; {hint}")
    try:
        os.makedirs(folder, exist_ok=True)
        probe = f"{path}.{os.getpid()}.tmp"  # this process's own: two lanes starting together probe one folder
        with open(probe, "a"):
            pass
        os.remove(probe)
    except OSError as exc:
        raise UsageError(f"cannot write {what} {path}: {exc.strerror}; {hint}") from None


def require_extra(what: str, modules: tuple[str, ...], extra: str) -> None:
    """A command (or option) that needs an optional dependency says which and how to get it, in one
    line, before it does anything: ``report needs matplotlib and jinja2: pip install
    'inductor_ablate[report]'``."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(f"{what} needs {' and '.join(missing)}: pip install 'inductor_ablate[{extra}]'")
