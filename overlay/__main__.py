"""Command line: ``python -m inductor_ablate {status,list,run,census,bench,merge,bisect,diff,explain,report,compare}``."""
from __future__ import annotations

import argparse
import importlib.util
import os
import runpy
import sys
import traceback

from .errors import OneLineParser, UsageError, exit_with


def _add_switch_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("switches (also read from INDUCTOR_* variables)")
    g.add_argument("--no-fuse", nargs="?", const="1", default=None, metavar="KINDS",
                   help="veto fusion: every kind; --no-fuse=KINDS for a comma list of kinds (see `list`)")
    g.add_argument("--no-inline", action="store_true", help="realize every FX node's outputs")
    g.add_argument("--flush-every-node", action="store_true", help="one C++ function per scheduler node")
    g.add_argument("--one-kernel-per-op", action="store_true", help="all three")


def _apply_switch_options(args) -> None:
    """Validate the options, then export them: children (compile workers, subprocesses) inherit."""
    from . import switches
    from .config import config

    values = {}
    if args.no_fuse is not None:
        values["no_fuse"] = switches.parse(switches.SWITCHES["no_fuse"], args.no_fuse, "--no-fuse")
    for name in ("no_inline", "flush_every_node", "one_kernel_per_op"):
        if getattr(args, name):
            values[name] = True
    config.update(**values)
    os.environ.update(switches.to_environ(config.values()))


def _check_target(args) -> None:
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


_OUR_FRAMES = (os.path.dirname(os.path.abspath(__file__)), runpy.__file__, "<frozen runpy>")


def _run_target(args) -> int:
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
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_OUR_FRAMES):
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    return 0


def cmd_status(args) -> int:
    from . import importhook
    from .config import config

    importhook.import_targets()
    import torch

    print(f"torch {torch.__version__} ({torch.__file__})")
    print(f"inductor_ablate {importhook.__version__}; strict={importhook._state['strict']}")
    print("\npatches:")
    rows = importhook.report()
    width = max(len(r["slug"]) for r in rows)
    for r in rows:
        reason = f"  ({r['reason']})" if r["reason"] else ""
        print(f"  {r['slug']:<{width}}  {r['state']:<7}  flag={r['flag']:<16} {r['target']}.{r['qualname']}{reason}")
    print("\nswitches:")
    eff = config.effective()
    for name, value in config.values().items():
        print(f"  {name} = {sorted(value) if isinstance(value, frozenset) else value}")
    print(f"  -> fusion kinds blocked: {', '.join(sorted(eff['no_fuse'])) or 'none'}; "
          f"no_inline={eff['no_inline']}; flush_every_node={eff['flush_every_node']}")
    failed = [r for r in rows if r["state"] != "applied"]
    return 1 if failed else 0


def cmd_list(args) -> int:
    from .listing import print_listing

    print_listing()
    return 0


def cmd_run(args) -> int:
    _apply_switch_options(args)
    _check_target(args)
    return _run_target(args)


def cmd_census(args) -> int:
    from .kernel_census import recording, summarize

    _apply_switch_options(args)
    _check_target(args)
    with recording() as sink:
        status = _run_target(args)
    print(summarize(sink).table())  # what was compiled, even if the script failed later
    return status


def _bare_no_fuse(argv: list[str]) -> list[str]:
    """``--no-fuse script.py`` means every kind: only ``--no-fuse=KINDS`` takes a list, so a bare
    flag never swallows the target.  Options after the target belong to the script."""
    out, command_args = [], True
    for i, arg in enumerate(argv):
        if command_args and i > 0 and not arg.startswith("-"):
            command_args = False  # the target: the rest is the script's
        out.append("--no-fuse=1" if command_args and arg == "--no-fuse" else arg)
    return out


COMMANDS = ("status", "list", "run", "census", "bench", "merge", "bisect", "diff", "explain", "report", "compare")


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


def _main(argv) -> int:
    from . import importhook

    if importhook.deferred_error() is not None:  # a bad INDUCTOR_* value, seen by the start-up hook
        raise importhook.deferred_error()
    parser = OneLineParser(prog="python -m inductor_ablate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    sub.add_parser("status", help="torch version, every patch and whether it applied, active switches")
    sub.add_parser("list", help="every switch and fusion kind, and whether it applies here")
    for name, help_text in (("run", "run a script with switches on (like `coverage run`)"),
                            ("census", "run a script and print every kernel Inductor generated, with its ops")):
        p = sub.add_parser(name, help=help_text, prog=f"python -m inductor_ablate {name}")
        _add_switch_options(p)
        p.add_argument("-m", dest="module", action="store_true", help="target is a module name")
        p.add_argument("target")
        p.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("bench", add_help=False, help="the ablation study (see `bench --help`)")
    sub.add_parser("merge", add_help=False, help="join bench results files (shards) into one report")
    sub.add_parser("bisect", add_help=False, help="the first fusion/inlining decision that makes a command fail")
    if argv[:1] in (["bench"], ["merge"]):  # these parse their own options
        from .bench.cli import main as bench_main

        return bench_main(argv)
    sub.add_parser("diff", add_help=False, help="the fusions and inlinings in one decision log and not another")
    if argv[:1] == ["bisect"]:
        from .bisector import main as bisect_main

        return bisect_main(argv[1:])
    sub.add_parser("explain", add_help=False, help="why each row costs what it costs, from bench --profile")
    if argv[:1] == ["explain"]:
        from .explain import main as explain_main

        return explain_main(argv[1:])
    sub.add_parser("report", add_help=False, help="one HTML page (or Markdown tables) from results files")
    if argv[:1] == ["report"]:
        from .report.cli import main as report_main

        return report_main(argv[1:])
    sub.add_parser("compare", add_help=False, help="the rows of two results files side by side (repeatability)")
    if argv[:1] == ["compare"]:
        from .compare import main as compare_main

        return compare_main(argv[1:])
    if argv[:1] == ["diff"]:
        from .logdiff import main as diff_main

        return diff_main(argv[1:])
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        parser.error(f"unknown option {argv[0]!r} before the command; commands: {', '.join(COMMANDS)}")
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        parser.error(f"unknown command {argv[0]!r}; commands: {', '.join(COMMANDS)}")
    argv = _bare_no_fuse(argv)
    if argv and argv[0] in ("run", "census"):  # argparse would blame the missing target instead
        options = sub.choices[argv[0]]._option_string_actions
        for arg in argv[1:]:
            if not arg.startswith("-"):
                break
            if arg.split("=", 1)[0] not in options:
                sub.choices[argv[0]].error(f"unrecognized option {arg!r}")
    args = parser.parse_args(argv)
    return {"status": cmd_status, "list": cmd_list, "run": cmd_run, "census": cmd_census}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
