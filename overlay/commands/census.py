"""``python -m inductor_ablate census [SWITCHES] script.py``: the script run, then every kernel
Inductor generated for it, with the ops each computes."""
from __future__ import annotations

from ..config import config
from ..kernel_census import recording, summarize
from .run import apply_switch_options, check_target, parse_script_command, run_target


def main(argv: list[str]) -> int:
    args = parse_script_command("census", argv)
    apply_switch_options(args)
    check_target(args)
    with recording() as sink:
        status = run_target(args)
    census = summarize(sink)
    print(census.table(modules=config.effective()["modules"]))  # what was compiled, even if the script failed later
    return status
