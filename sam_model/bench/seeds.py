"""Intervals over training seeds and decisions, for figures that are means over several trainings of one recipe
(sam_model.bench.lodo_seeds, .paired, .chunk_table use it).

Two trainings of one recipe differ by about as much as a change does, so the interval must hold the seed-to-seed
spread, and with the three seeds a recipe gets here that spread is itself barely known: a Student-t interval over
the seeds' means (t at 2 degrees of freedom is 4.30, not 1.96), not a bootstrap of them. Until stop 50's review this was a
two-level percentile bootstrap (the seeds drawn with replacement, then the decisions): three seeds drawn with
replacement spread their mean by sqrt(2/3) of its true spread, and the percentile took the normal 1.96, so the seed
part of an interval came out 2.7 times too narrow.

The interval of a mean over seeds is mean ± t · sqrt(V), V the sum of independent variances:

- the seeds: the variance of the seeds' means over k (k − 1 degrees of freedom);
- where every seed ranked the same decisions (a fixed test split), the decisions too: the seeds' means share that
  one sample, so their spread holds none of its noise; its variance is that of the mean over the decisions of the
  seeds' average per decision, the conversations as units (mean_var), on C − 1 degrees of freedom. (Each part holds
  the seed-by-decision noise once more, a few parts in a thousand at a few hundred decisions: a little wider.)
  Seeds with decisions of their own (a sample drawn per seed) carry that noise in their means already.

and t at the Welch-Satterthwaite degrees of freedom of V (rounded down: a little wider). A single run is its
decisions' interval alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sam_model.janus.stats import t975


def mean_var(x: np.ndarray, groups: Sequence | None = None) -> tuple[float, int]:
    """(variance of the mean of ``x``, its degrees of freedom), the groups (conversations) as the units: C/(C−1) ·
    Σ_c (Σ_{i in c} (x_i − x̄))² / n² on C − 1 degrees of freedom; without groups each entry is its own (s² / n).
    Why the conversations: its decisions share memories and difficulty, so they are not independent draws."""
    x = np.asarray(x, dtype=np.float64)
    if groups is None:
        inverse = np.arange(x.size)
    else:
        if len(groups) != x.size:
            raise ValueError(f"mean_var: {len(groups)} group labels for {x.size} values; give one per value")
        _, inverse = np.unique(np.asarray(list(groups), dtype=str), return_inverse=True)
    c = int(inverse.max()) + 1 if x.size else 0
    if c < 2:
        return math.nan, 0
    resid = np.bincount(inverse, weights=x - x.mean(), minlength=c)
    return float(c / (c - 1) * (resid ** 2).sum() / x.size ** 2), c - 1


@dataclass(frozen=True)
class Estimate:
    """A mean and the variances of the independent spreads it holds, each ``(variance, degrees of freedom)``."""

    mean: float
    parts: tuple[tuple[float, int], ...]

    def ci(self) -> tuple[float, float, float]:
        """(mean, low, high): mean ± t₀.₉₇₅ · sqrt(Σ variances), t at the Welch-Satterthwaite degrees of freedom,
        rounded down. No part with a spread to estimate (one seed of one conversation): (mean, nan, nan)."""
        if not self.parts or any(df < 1 or math.isnan(v) for v, df in self.parts):
            return self.mean, math.nan, math.nan
        var = sum(v for v, _ in self.parts)
        if var <= 0.0:
            return self.mean, self.mean, self.mean
        df = var ** 2 / sum(v ** 2 / d for v, d in self.parts)
        half = t975(max(1, int(df + 1e-9))) * math.sqrt(var)
        return self.mean, self.mean - half, self.mean + half


def over_seeds(runs: Sequence[np.ndarray], groups: Sequence | None = None, shared: bool = False) -> Estimate:
    """The mean over seeds of each run's mean, with the spreads it holds (module doc). ``runs``: one value per
    decision per seed (a difference, where paired: a − b decision by decision within a seed); ``shared``: every
    seed ranked the same decisions (as many, in one order; ``groups`` then labels them by conversation)."""
    runs = [np.asarray(r, dtype=np.float64) for r in runs]
    means = np.array([r.mean() for r in runs])
    if len(runs) == 1:
        return Estimate(float(means[0]), (mean_var(runs[0], groups),))
    seeds = (float(means.var(ddof=1)) / len(runs), len(runs) - 1)
    if not shared:
        return Estimate(float(means.mean()), (seeds,))
    if len({r.size for r in runs}) != 1:
        raise ValueError(f"shared decisions need as many per seed, got {sorted({r.size for r in runs})}")
    return Estimate(float(means.mean()), (seeds, mean_var(np.mean(runs, axis=0), groups)))


def average(estimates: Sequence[Estimate]) -> Estimate:
    """The mean of independent estimates (domains, each its own trainings and decisions): variances over D²."""
    d = len(estimates)
    return Estimate(float(np.mean([e.mean for e in estimates])),
                    tuple((v / d ** 2, df) for e in estimates for v, df in e.parts))
