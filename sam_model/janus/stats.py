"""Statistics and costs for Janus benchmarks: enough to say whether one gate beats another.

Every benchmark runs each policy on the same seeds, so gates are compared *paired*: per seed s,
d_s = acc_A(s) − acc_B(s) removes what the seed does to both (its stream, its faults, its sampling).

- ``seed_ci(x)``: the mean of x over seeds and its Student-t 95 % interval (``t_interval``), what the policy and
  paired tables give: the seed-to-seed spread is itself estimated from a few seeds, which a percentile bootstrap
  ignores (with 10 seeds its interval is 18 % narrower than the t-interval; with 5, 37 %; until stop 50's review the
  tables used it).
- ``bootstrap_ci(x)``: the mean of x and a percentile bootstrap 95 % interval (resample the entries, or
  ``groups`` of them, with replacement, ``n_boot`` times, seeded, so a report is reproducible), for many units
  (decisions, conversations); ``bootstrap_cis`` the intervals of many columns from one set of draws.
- ``paired(a, b)``: the bootstrap of the differences a − b (same units, same order); ``paired_table`` the
  t-interval of the per-seed differences. A gate **beats** another only when the whole interval is above 0
  (``verdict``); an interval that contains or touches 0 is no difference.
- ``evaluation_cost``: what a policy spent evaluating memories, in *tasks scored*. A comparison scores
  every task of E_t on both memories (2·|E_t|); computing φ costs what the memory features say per call
  (a φ that scores 256 probe tasks costs 256; one that reuses the vectors the writes stored costs one
  pass over the bank, counted as 1). Total = Σ comparisons 2·|E_t| + calls(φ)·cost(φ).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from sam_model.janus.controller import StepDecision


def bootstrap_ci(x: Sequence[float], n_boot: int = 10_000, level: float = 0.95, seed: int = 0,
                 groups: Sequence | None = None) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``x`` and its percentile bootstrap interval over its entries; one entry (or
    group) gives none: (mean, nan, nan).

    ``groups``: one label per entry (the conversation a decision belongs to); the groups are then drawn with
    replacement, each with all its entries, and a replicate is the mean of the entries drawn. Why: the decisions of
    one conversation share its memories and its difficulty, so drawn one by one they pass for more independent
    evidence than they are and the interval comes out too narrow (on the 127 airline test decisions of 31
    conversations, up to 1.6 times too narrow)."""
    return bootstrap_cis([x], n_boot, level, seed, groups)[0]


def bootstrap_cis(columns: Sequence[Sequence[float]], n_boot: int = 10_000, level: float = 0.95, seed: int = 0,
                  groups: Sequence | None = None) -> list[tuple[float, float, float]]:
    """``bootstrap_ci`` of each column (one value per unit each, in one order), all from one set of draws: a seed
    draws the same units whatever the values, so each interval is the one ``bootstrap_ci`` gives its column alone
    (to float rounding), and the draws are paid once. Why: evaluate.py's intervals on SGD dev (4,532 decisions of
    1,978 conversations; 9 methods x 4 metrics and 2 paired differences) drew 44 times, 4.6 s a run on 2 cores
    (0.17 s from one set of draws)."""
    rows = [np.asarray(list(c), dtype=np.float64) for c in columns]
    if not rows or any(r.size == 0 for r in rows):
        raise ValueError("bootstrap_ci needs at least one value")
    if len({r.size for r in rows}) > 1:
        raise ValueError(f"bootstrap_cis: columns of {sorted({r.size for r in rows})} values; give each one value "
                         "per unit, in one order")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    a = np.stack(rows)
    means = [float(r.mean()) for r in rows]
    if groups is None:
        sums, counts = a, np.ones(a.shape[1])
    else:
        labels = list(groups)
        if len(labels) != a.shape[1]:
            raise ValueError(f"bootstrap_ci: {len(labels)} group labels for {a.shape[1]} values; give one per value")
        _, inverse = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
        counts = np.bincount(inverse).astype(np.float64)
        sums = np.stack([np.bincount(inverse, weights=r, minlength=counts.size) for r in a])
    if counts.size < 2:  # one unit: every replicate is it, and [mean, mean] would read as certainty
        return [(m, math.nan, math.nan) for m in means]
    rng = np.random.default_rng(seed)
    reps = np.concatenate([_draws(sums, counts, rng, min(BLOCK, n_boot - b)) for b in range(0, n_boot, BLOCK)])
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return [(m, float(low), float(high)) for m, low, high in zip(means, lo, hi)]


BLOCK = 1000  # replicates drawn at once: 10,000 x 4,532 SGD decisions at once took 360 MB of indices


def _draws(sums: np.ndarray, counts: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` replicate means of every column of ``sums`` (columns x units): the units drawn with replacement, as the
    times each was drawn, so one draw serves every column; the sum drawn over the count drawn. One column is
    gathered instead (cheaper alone, and the very sums bootstrap_ci always gave)."""
    units = counts.size
    pick = rng.integers(0, units, size=(n, units))
    if len(sums) == 1:
        return (sums[0][pick].sum(axis=1) / counts[pick].sum(axis=1))[:, None]
    times = np.bincount((pick + units * np.arange(n)[:, None]).ravel(), minlength=n * units)
    times = times.reshape(n, units).astype(np.float64)
    return (times @ sums.T) / (times @ counts)[:, None]


# Student's t, two-sided 95 % (the 0.975 quantile), for 1-30 degrees of freedom.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (beyond 30: the Cornish-Fisher series)."""
    if df < 1:
        raise ValueError("a t-interval needs at least two values")
    if df <= len(T975):
        return T975[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def t_interval(xs: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the 95 % Student-t interval of the mean of ``xs`` (mean ± t₀.₉₇₅,ₙ₋₁ · s / √n)."""
    a = np.asarray(list(xs), dtype=np.float64)
    half = t975(a.size - 1) * float(a.std(ddof=1)) / np.sqrt(a.size)
    mean = float(a.mean())
    return mean, mean - half, mean + half


def seed_ci(xs: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high) over seeds: the Student-t 95 % interval; one seed has none: (mean, nan, nan), which no
    verdict reads as a difference."""
    a = np.asarray(list(xs), dtype=np.float64)
    if a.size == 0:
        raise ValueError("seed_ci needs at least one seed")
    return t_interval(a) if a.size > 1 else (float(a[0]), math.nan, math.nan)


def paired(a: Sequence[float], b: Sequence[float], **kw) -> tuple[float, float, float]:
    """(mean, low, high) of the differences a − b, unit by unit (same units, same order), bootstrapped
    (``bootstrap_ci``'s keywords: ``groups``): for many units; over a few seeds use ``seed_ci``."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"paired difference needs one value per seed on both sides, got {len(a)} and {len(b)}")
    return bootstrap_ci([x - y for x, y in zip(a, b)], **kw)


def verdict(ci: tuple[float, float, float]) -> str:
    """'beats' when the interval is above 0, 'loses' when below, else 'no difference' (an interval touching 0, or
    none: nan)."""
    _, lo, hi = ci
    return "beats" if lo > 0 else "loses" if hi < 0 else "no difference"


def evaluation_cost(decisions: Iterable[StepDecision], phi_calls: int = 0, phi_cost: float = 0.0) -> dict[str, float]:
    """Tasks scored by a run: comparisons (2·|E_t| each), the trigger's φ, and their sum."""
    compare = float(sum(2 * d.sizes.get("total", 0) for d in decisions if d.triggered))
    phi = float(phi_calls * phi_cost)
    return {"comparison_tasks": compare, "phi_tasks": phi, "total_tasks": compare + phi}


def auc(scores: list[float], labels: list[bool]) -> float | None:
    """P(score of a positive > score of a negative), ties counting half; None without both classes."""
    pos = [x for x, y in zip(scores, labels) if y]
    neg = [x for x, y in zip(scores, labels) if not y]
    if not pos or not neg:
        return None
    return float(np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg]))


def fmt_ci(ci: tuple[float, float, float], scale: float = 100.0, digits: int = 1) -> str:
    """'71.2 [68.0, 74.1]' (scaled, e.g. fractions to points)."""
    m, lo, hi = (scale * v for v in ci)
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def fmt_diff(ci: tuple[float, float, float], scale: float = 100.0, digits: int = 1) -> str:
    """'+3.1 [+0.4, +5.9]' (signed)."""
    m, lo, hi = (scale * v for v in ci)
    return f"{m:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def fmt_interval(ci: tuple[float, float | None, float | None], signed: bool = False, scale: float = 1.0,
                 digits: int = 3) -> str:
    """``fmt_ci`` (or, ``signed``, ``fmt_diff``) of a (mean, low, high), or 'mean (no interval)' where there is none
    (one conversation: nan, or None from a report.json): '[nan, nan]' reads as a broken figure, [m, m] as certainty."""
    m, lo, hi = ci
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return f"{scale * m:{'+' if signed else ''}.{digits}f} (no interval)"
    return (fmt_diff if signed else fmt_ci)((m, lo, hi), scale, digits)


def seed_values(per_seed: dict, name: str, key: str = "final_accuracy") -> list[float]:
    """``key`` of policy ``name`` on every seed, in seed order."""
    return [float(per_seed[s][name][key]) for s in sorted(per_seed, key=int)]


def policy_stats(per_seed: dict, key: str = "final_accuracy") -> dict[str, dict]:
    """Per policy: mean and 95 % t-interval of ``key`` over seeds (seed_ci), and its evaluation cost (mean tasks
    scored, and relative to always-trigger's on the same seeds when always ran)."""
    names = list(next(iter(per_seed.values())))
    always = seed_values(per_seed, "always", "total_tasks") if "always" in names else None
    out = {}
    for n in names:
        ci = seed_ci(seed_values(per_seed, n, key))
        cost = seed_values(per_seed, n, "total_tasks")
        row = {"mean": ci[0], "ci": [ci[1], ci[2]], "seeds": len(cost), "total_tasks": float(np.mean(cost)),
               "phi_tasks": float(np.mean(seed_values(per_seed, n, "phi_tasks"))),
               "comparison_tasks": float(np.mean(seed_values(per_seed, n, "comparison_tasks")))}
        if always is not None and sum(always) > 0:
            row["cost_vs_always"] = float(np.sum(cost) / np.sum(always))
        out[n] = row
    return out


def default_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """The comparisons every Janus table reports: MMT against its matched baselines, the base updater
    and always-trigger; each ablation against MMT."""
    pairs = [("mmt", b) for b in ("random", "periodic", "none", "always") if b in names and "mmt" in names]
    pairs += [(n, "mmt") for n in names if n.startswith("mmt-no-") and "mmt" in names]
    return pairs


def paired_table(per_seed: dict, pairs: Sequence[tuple[str, str]], key: str = "final_accuracy") -> list[dict]:
    """One row per (a, b): mean paired difference a − b over seeds, its 95 % t-interval (seed_ci) and the verdict."""
    rows = []
    for a, b in pairs:
        ci = seed_ci(np.subtract(seed_values(per_seed, a, key), seed_values(per_seed, b, key)))
        rows.append({"a": a, "b": b, "mean": ci[0], "ci": [ci[1], ci[2]], "verdict": verdict(ci)})
    return rows


class CountedPhi:
    """Wraps the memory features φ and counts its calls, so a run's trigger cost can be reported.

    ``tasks_per_call``: what one call costs in tasks scored, from the encoder's own ``tasks_per_call``
    (0 when it does not say).
    """

    def __init__(self, phi):
        self.phi, self.calls = phi, 0
        self.tasks_per_call = float(getattr(phi, "tasks_per_call", 0.0))

    def __call__(self, memory) -> np.ndarray:
        self.calls += 1
        return self.phi(memory)
