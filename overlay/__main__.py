"""Command line: ``python -m inductor_ablate COMMAND ...``; the commands are ``commands.COMMANDS``, each
in its own module."""
from __future__ import annotations

import importlib
import os
import sys

from . import importhook
from .commands import COMMANDS
from .errors import OneLineParser, UsageError, exit_with, usage_error_in


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    our_stdout = argv[:1] != ["run"]  # under `run` it is the script's: as plain `python script.py` shows it
    try:
        code = _main(argv)
        if our_stdout:
            sys.stdout.flush()  # a closed pipe shows here, inside the try, not in Python's exit
        return code
    except UsageError as exc:
        exit_with(exc)
    except BrokenPipeError:
        if not our_stdout:
            raise
        # `... status | head`: the reader has gone, which is not an error of ours (Python's signal docs
        # give this recipe): stdout to devnull so the exit's flush stays quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # a strict check raised inside a compile: wrapped by Dynamo and Inductor
        inner = usage_error_in(exc)
        if inner is None:
            raise
        exit_with(inner)


def _main(argv) -> int:
    if importhook.deferred_error() is not None:  # a bad INDUCTOR_* value, seen by the start-up hook
        raise importhook.deferred_error()
    if argv[:1] and argv[0] in COMMANDS:
        module = importlib.import_module(f"{__package__}.commands.{COMMANDS[argv[0]][0]}")
        return module.main(argv[1:])
    parser = OneLineParser(prog="python -m inductor_ablate",
                           description="switch TorchInductor's optimizations off one at a time, and measure what each is worth")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        parser.error(f"unknown option {argv[0]!r} before the command; commands: {', '.join(COMMANDS)}")
    if argv and not argv[0].startswith("-"):
        parser.error(f"unknown command {argv[0]!r}; commands: {', '.join(COMMANDS)}")
    parser.parse_args(argv)  # --help, or no command: argparse says which are required
    return 2


if __name__ == "__main__":
    sys.exit(main())
