"""Tables in Markdown docs, filled from results files by the command written above each one, so no
figure in a doc is typed by hand::

    <!-- inductor_ablate report --markdown --table headline docs/results/h200-real-bf16-inference.json -->
    | row | ... |
    <!-- end -->

``report --fill DOC`` runs each block's command (``report --markdown ...`` or ``compare ...``, in
this process, paths from the current directory) and writes its output between the markers;
``--check`` changes nothing and fails naming each block whose table is not what its command prints."""
from __future__ import annotations

import contextlib
import io
import re
import shlex

from ..errors import UsageError

BLOCK = re.compile(r"(<!-- inductor_ablate (?P<command>[^\n]*?) -->\n)(?P<body>.*?)(<!-- end -->)", re.S)


def _output(command: str, commands: dict) -> str:
    argv = shlex.split(command)
    if not argv or argv[0] not in commands or (argv[0] == "report" and "--markdown" not in argv):
        raise UsageError(f"a table block runs `report --markdown ...` or `compare ...`, not {command!r}")
    main = commands[argv[0]]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(argv[1:])
    return out.getvalue().strip() + "\n"


def fill(path: str, commands: dict, check: bool = False) -> list[str]:
    """The commands of the blocks that were stale (rewritten unless ``check``).  ``commands``: {name:
    its main(argv)}, the subcommands a block may run (handed in, so this module imports no CLI)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    stale = []

    def replace(match):
        body = _output(match["command"], commands)
        if body != match["body"]:
            stale.append(match["command"])
        return match[1] + body + match[4]

    new = BLOCK.sub(replace, text)
    if not check and new != text:
        with open(path, "w") as f:
            f.write(new)
    return stale
