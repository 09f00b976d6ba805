"""Intervals over training seeds and decisions: a two-level bootstrap (the seeds drawn with replacement, then the
decisions), for figures that are means over several trainings of one recipe. Two trainings differ by about as much
as a change does, so an interval over the decisions alone would hide that (sam_model.bench.lodo_seeds, .paired,
.chunk_table use it)."""

from __future__ import annotations

import numpy as np

BOOT = 4000


def two_level(seeds: list[dict[str, np.ndarray]], rng: np.random.Generator, boot: int = BOOT,
              shared: bool = False) -> dict[str, np.ndarray]:
    """``boot`` bootstrap replicates of each method's mean reciprocal rank (seeds, then decisions, resampled).

    ``shared``: every seed ranked the same decisions (a fixed test split), so each replicate draws the decisions
    once for all its seeds. Why it matters: drawn per seed, the decisions' spread would average out over the
    seeds as if each seed had its own test set, and three copies of one run would get an interval 40 % narrower
    than the run's own. Seeds with decisions of their own (a sample drawn per seed) are drawn per seed."""
    k = len(seeds)
    reps = {m: np.empty(boot) for m in seeds[0]}
    sizes = {len(next(iter(s.values()))) for s in seeds}  # every method of a seed ranked the same decisions
    if shared and len(sizes) != 1:
        raise ValueError(f"shared decisions need as many per seed, got {sorted(sizes)}")
    for b in range(boot):
        pick = rng.integers(0, k, size=k)
        sums = dict.fromkeys(reps, 0.0)
        common = rng.integers(0, next(iter(sizes)), size=next(iter(sizes))) if shared else None
        for s in pick:
            n = len(next(iter(seeds[s].values())))
            idx = common if shared else rng.integers(0, n, size=n)
            for m in reps:
                sums[m] += seeds[s][m][idx].mean()
        for m in reps:
            reps[m][b] = sums[m] / k
    return reps


def ci(point: float, reps: np.ndarray) -> tuple[float, float, float]:
    lo, hi = np.quantile(reps, [0.025, 0.975])
    return point, float(lo), float(hi)
