"""``python -m inductor_ablate run [SWITCHES] script.py|-m module [ARGS]``: a script run as ``python``
would run it, with switches on (exported, so its compile workers and subprocesses see them too)."""
from __future__ import annotations

import argparse
import importlib.util
import os
import runpy
import sys
import traceback

from .. import switches
from ..config import config
from ..errors import OneLineParser, UsageError, usage_error_in
from . import COMMANDS


def add_switch_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("switches (also read from INDUCTOR_* variables)")
    g.add_argument("--no-fuse", nargs="?", const="1", default=None, metavar="KINDS",
                   help="veto fusion: every kind; --no-fuse=KINDS for a comma list of kinds (see `list`)")
    g.add_argument("--no-inline", action="store_true", help="realize every FX node's outputs")
    g.add_argument("--flush-every-node", action="store_true", help="one C++ function per scheduler node")
    g.add_argument("--one-kernel-per-op", action="store_true", help="all three")
    g.add_argument("--no-fuse-pairs", default=None, metavar="A+B,...",
                   help="veto only fusions joining op A with op B, e.g. mm+add (INDUCTOR_NO_FUSE_PAIRS)")
    g.add_argument("--modules", default=None, metavar="GLOBS",
                   help="only in these modules: a comma list of globs over module paths (INDUCTOR_ABLATE_MODULES)")
    g.add_argument("--ops", default=None, metavar="NAMES",
                   help="only on these aten ops: a comma list of names or globs (INDUCTOR_ABLATE_OPS)")
    g.add_argument("--expect-fused", default=None, metavar="GLOBS",
                   help="say when one of these modules compiles to more than one kernel, and why; an error with "
                        "INDUCTOR_ABLATE_STRICT=1 (INDUCTOR_EXPECT_FUSED)")


def apply_switch_options(args) -> None:
    """Validate the options, then export them: children (compile workers, subprocesses) inherit."""
    values = {}
    if args.no_fuse is not None:
        values["no_fuse"] = switches.parse(switches.SWITCHES["no_fuse"], args.no_fuse, "--no-fuse")
    for name in ("no_inline", "flush_every_node", "one_kernel_per_op"):
        if getattr(args, name):
            values[name] = True
    for name in ("no_fuse_pairs", "modules", "ops", "expect_fused"):
        if getattr(args, name, None) is not None:
            values[name] = switches.parse(switches.SWITCHES[name], getattr(args, name), f"--{name.replace('_', '-')}")
    config.update(**values)
    os.environ.update(switches.to_environ(config.values()))
    on = {k: v for k, v in config.values().items() if v not in (False, None, frozenset(), ())}
    if on:  # one line on stderr: which switches and scope this run has on
        print("inductor_ablate: " + " ".join(f"{switches.SWITCHES[k].env}={switches.to_environ({k: v})[switches.SWITCHES[k].env]}"
                                             for k, v in on.items()), file=sys.stderr)


def check_target(args) -> None:
    """A missing script or module is bad input (one line), found before anything runs."""
    if args.module:
        try:
            found = importlib.util.find_spec(args.target) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise UsageError(f"no module named {args.target!r}")
    elif not os.path.isfile(args.target):
        raise UsageError(f"can't open file {os.path.abspath(args.target)!r}: no such file")


_OUR_FRAMES = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), runpy.__file__, "<frozen runpy>")


def run_target(args) -> int:
    """Run the script or module as ``python`` would, and return the exit status it would give:
    its own traceback (our frames left out) and 1 if it raises, its code if it calls sys.exit."""
    sys.argv = [args.target, *args.args]
    try:
        if args.module:
            runpy.run_module(args.target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(args.target)))
            runpy.run_path(args.target, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException as exc:  # the script's own error: show it as python would, then report
        inner = usage_error_in(exc)
        if inner is not None:  # a strict check inside a compile: one line, exit 2
            raise inner from None
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_OUR_FRAMES):
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    return 0


def main(argv: list[str]) -> int:
    args = parse_script_command("run", argv)
    apply_switch_options(args)
    check_target(args)
    return run_target(args)


def _bare_no_fuse(argv: list[str]) -> list[str]:
    """``--no-fuse script.py`` means every kind: only ``--no-fuse=KINDS`` takes a list, so a bare
    flag never swallows the target.  Options after the target belong to the script."""
    out, command_args = [], True
    for i, arg in enumerate(argv):
        if command_args and not arg.startswith("-"):
            command_args = False  # the target: the rest is the script's
        out.append("--no-fuse=1" if command_args and arg == "--no-fuse" else arg)
    return out


def parse_script_command(name: str, argv: list[str]) -> argparse.Namespace:
    """The options of ``run`` and ``census``: switches, ``-m``, the target and the script's own
    arguments.  An unknown option before the target is named (argparse would blame the target)."""
    p = OneLineParser(prog=f"python -m inductor_ablate {name}", description=COMMANDS[name][1])
    add_switch_options(p)
    p.add_argument("-m", dest="module", action="store_true", help="target is a module name")
    p.add_argument("target")
    p.add_argument("args", nargs=argparse.REMAINDER)
    argv = _bare_no_fuse(argv)
    for arg in argv:
        if not arg.startswith("-"):
            break
        if arg.split("=", 1)[0] not in p._option_string_actions:
            p.error(f"unrecognized option {arg!r}")
    return p.parse_args(argv)
