"""Bad input from the user: one line naming the problem, exit status 2, nothing half-done.

Everything a user can get wrong (a switch value, a results file, a script path, a torch version a
patch does not fit under INDUCTOR_ABLATE_STRICT=1) raises a ``UsageError`` subclass.  The command
line prints it as ``inductor_ablate: error: ...`` and exits 2; so does the start-up hook, at the
first Inductor import, for a bad INDUCTOR_* value in front of an unchanged script.
"""
from __future__ import annotations

import argparse
import sys


class UsageError(Exception):
    """Bad input: the message names what was wrong and what is valid."""


def exit_with(exc: BaseException, status: int = 2):
    """Print ``exc`` as one line on stderr and exit (SystemExit passes through torch's handlers)."""
    sys.stdout.flush()
    sys.stderr.write(f"inductor_ablate: error: {exc}\n")
    sys.stderr.flush()
    raise SystemExit(status)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line (naming the command) and exit 2, like the rest."""

    def error(self, message):
        exit_with(f"{self.prog}: {message} (see {self.prog} --help)")
