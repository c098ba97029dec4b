"""Samples the machine disturbed, told apart from those it did not (issue 66).

Other work on a small machine comes in bursts: a burst that lands on one cell's timing slows that
cell only, and a row timed during one looks like an effect.  The kernel counts, per thread, the time
a thread was ready to run but waited for a core (``/proc/<pid>/task/<tid>/schedstat``, second field:
run-queue delay).  A quiet sample's threads wait next to nothing; a sample during which another
process took the cores shows the wait directly, whatever the code being timed.

So each timed sample carries its threads' run-queue wait as a share of its wall time.  A pair of
samples (eager, compiled) is *disturbed* when either side waited more than ``DISTURBED`` of its wall
time; the cell keeps its undisturbed pairs, takes more samples (up to ``EXTRA`` times as many) until
it has as many as asked, and records how many it dropped.  A cell that could not gather half of them
ran on a busy machine: its figures stand, marked ``busy``, and no star rests on them.

Where the kernel gives no schedstat (not Linux, or accounting off), nothing is dropped and cells
carry no ``waited`` figures.
"""
from __future__ import annotations

import os
import time

#: a sample whose threads waited for a core longer than this share of its wall time is disturbed:
#: on a quiet 2-core machine samples of 20 ms waited under 1% (docs/bench.md, "Load")
DISTURBED = 0.05

#: at most this many times the asked samples are taken while looking for undisturbed ones
EXTRA = 3

_TASKS = "/proc/self/task"


def run_queue_wait_s() -> float | None:
    """Seconds the threads of this process have spent ready to run but waiting for a core, summed
    over its threads (None where the kernel does not say)."""
    try:
        tids = os.listdir(_TASKS)
    except OSError:
        return None
    total = 0
    for tid in tids:
        try:
            with open(f"{_TASKS}/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):  # a thread that ended between the two calls
            continue
    return total / 1e9


def waited(fn):
    """(``fn()``, the share of its wall time its threads spent waiting for a core); the share is 0.0
    where the kernel does not say."""
    before, t0 = run_queue_wait_s(), time.perf_counter()
    result = fn()
    wall, after = time.perf_counter() - t0, run_queue_wait_s()
    if before is None or after is None:
        return result, 0.0
    return result, max(0.0, after - before) / max(wall, 1e-9)


def steady_pairs(take_pair, wanted: int) -> dict:
    """``wanted`` undisturbed (eager ms, compiled ms) pairs where the machine allows it.

    ``take_pair()`` times one eager sample then one compiled sample and returns (eager ms, compiled
    ms, eager wait share, compiled wait share).  Returns {eager_ms, compiled_ms (the kept pairs),
    disturbed (pairs dropped), waited (the median wait share over every sample), busy}.  ``busy``:
    fewer than half the wanted pairs were undisturbed; then every pair is kept (there was nothing
    better to measure) and the cell says so."""
    kept, dropped, shares = [], [], []
    while len(kept) < wanted and len(kept) + len(dropped) < EXTRA * wanted:
        e, c, we, wc = take_pair()
        shares += [we, wc]
        (dropped if max(we, wc) > DISTURBED else kept).append((e, c))
    busy = len(kept) < wanted / 2
    use = kept + dropped if busy else kept
    shares.sort()
    return {"eager_ms": [p[0] for p in use], "compiled_ms": [p[1] for p in use], "disturbed": len(dropped),
            "waited": round(shares[len(shares) // 2], 4), "busy": busy}
