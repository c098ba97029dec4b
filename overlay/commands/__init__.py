"""One module per command of ``python -m inductor_ablate``: each parses its own options and runs.

The table below is the whole command line: ``__main__`` looks a command up here and imports only its
module, so ``status`` never pays for bench's imports.  A new command is a module with ``main(argv)
-> int`` (bad input raises ``errors.UsageError``) and a line here."""

#: command -> (module under commands/, one line of help), in the order ``--help`` lists them
COMMANDS = {
    "status": ("status", "torch version, every patch and whether it applied, active switches"),
    "list": ("listing", "every switch and fusion kind, and whether it applies here"),
    "run": ("run", "run a script with switches on (like `coverage run`)"),
    "census": ("census", "run a script and print every kernel Inductor generated, with its ops"),
    "bench": ("bench", "the ablation study (see `bench --help`)"),
    "merge": ("merge", "join bench results files (shards) into one report"),
    "bisect": ("bisect", "the first fusion/inlining decision that makes a command fail"),
    "diff": ("diff", "the fusions and inlinings in one decision log and not another"),
    "explain": ("explain", "why each row costs what it costs, from bench --profile"),
    "report": ("report", "one HTML page (or Markdown tables) from results files"),
    "compare": ("compare", "the rows of two results files side by side (repeatability)"),
}
