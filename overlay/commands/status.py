"""``python -m inductor_ablate status``: the torch in use, every patch and its state, the switches."""
from __future__ import annotations

from .. import importhook
from ..config import config
from ..errors import OneLineParser
from . import COMMANDS


def main(argv: list[str]) -> int:
    OneLineParser(prog="python -m inductor_ablate status", description=COMMANDS["status"][1]).parse_args(argv)
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
