"""Statistics shared by the side that measures (bench) and the sides that read (explain, bisect,
report): bootstrap resampling and its percentile interval.  Imports nothing of the package."""
from __future__ import annotations

import random

BOOTSTRAP = 2000  # resamples for the 95% intervals


def percentiles(values: list[float]) -> tuple[float, float] | None:
    """The 2.5th and 97.5th percentiles of bootstrap resamples; None for fewer than 20 of them."""
    values = sorted(v for v in values if v is not None)
    if len(values) < 20:
        return None
    return values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def mean_interval(values: list[float], seed: str) -> tuple[float, float] | None:
    """A 95% bootstrap interval of the mean of ``values`` (seeded: the same figures every read);
    None for fewer than 2 values, which have nothing to resample."""
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    return percentiles([mean([rng.choice(values) for _ in values]) for _ in range(BOOTSTRAP)])
