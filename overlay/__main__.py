"""Command line: ``python -m inductor_ablate {status,list,run,census,bench,merge}``."""
from __future__ import annotations

import argparse
import os
import runpy
import sys


def _add_switch_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("switches (also read from INDUCTOR_* variables)")
    g.add_argument("--no-fuse", nargs="?", const="1", default=None, metavar="KINDS",
                   help="veto fusion: every kind, or a comma list of kinds (see `list`)")
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


def _run_target(args) -> None:
    sys.argv = [args.target, *args.args]
    if args.module:
        runpy.run_module(args.target, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(args.target)))
        runpy.run_path(args.target, run_name="__main__")


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
    _run_target(args)
    return 0


def cmd_census(args) -> int:
    from .kernel_census import recording, summarize

    _apply_switch_options(args)
    with recording() as sink:
        _run_target(args)
    print(summarize(sink).table())
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inductor_ablate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("status", help="torch version, every patch and whether it applied, active switches")
    sub.add_parser("list", help="every switch and fusion kind, and whether it applies here")
    for name, help_text in (("run", "run a script with switches on (like `coverage run`)"),
                            ("census", "run a script and print every kernel Inductor generated, with its ops")):
        p = sub.add_parser(name, help=help_text)
        _add_switch_options(p)
        p.add_argument("-m", dest="module", action="store_true", help="target is a module name")
        p.add_argument("target")
        p.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("bench", add_help=False, help="the ablation study (see `bench --help`)")
    sub.add_parser("merge", add_help=False, help="join bench results files (shards) into one report")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["bench"], ["merge"]):  # these parse their own options
        from .bench.cli import main as bench_main

        return bench_main(argv)
    args = parser.parse_args(argv)
    from .switches import SwitchValueError

    try:
        return {"status": cmd_status, "list": cmd_list, "run": cmd_run, "census": cmd_census}[args.command](args)
    except SwitchValueError as exc:
        print(f"inductor_ablate: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
