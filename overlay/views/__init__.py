"""``python -m inductor_ablate report RESULTS... [-o report.html] [--markdown] [--log LOG]``: a
results file seen at a glance.  A reader of results files and decision logs only: it measures
nothing.  ``views`` computes what is shown (tables as data), ``markdown`` and ``charts`` render it,
``page`` puts it in one self-contained HTML page, ``cli`` is the command."""
