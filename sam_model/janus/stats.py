"""Statistics and costs for Janus benchmarks: enough to say whether one gate beats another.

Every benchmark runs each policy on the same seeds, so gates are compared *paired*: per seed s,
d_s = acc_A(s) − acc_B(s) removes what the seed does to both (its stream, its faults, its sampling).

- ``bootstrap_ci(x)``: the mean of x and a percentile bootstrap 95 % interval (resample seeds with
  replacement, ``n_boot`` times, seeded, so a report is reproducible).
- ``t_interval(x)``: the mean of x and its Student-t 95 % interval, for a few repeated runs of a benchmark
  whose spread is itself estimated (the served load bench's pairs, the first-epoch bench's rounds).
- ``paired(a, b)``: the same for the per-seed differences a − b. A gate **beats** another only when
  the whole interval is above 0 (``verdict``); an interval that contains 0 is no difference.
- ``evaluation_cost``: what a policy spent evaluating memories, in *tasks scored*. A comparison scores
  every task of E_t on both memories (2·|E_t|); computing φ costs what the memory features say per call
  (a φ that scores 256 probe tasks costs 256; one that reuses the vectors the writes stored costs one
  pass over the bank, counted as 1). Total = Σ comparisons 2·|E_t| + calls(φ)·cost(φ).

With few seeds the percentile bootstrap is narrow (it ignores that the seed-to-seed spread is itself
estimated), which is one more reason the benchmarks use at least 10 held-out seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from sam_model.janus.controller import StepDecision


def bootstrap_ci(x: Sequence[float], n_boot: int = 10_000, level: float = 0.95, seed: int = 0
                 ) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``x`` and its percentile bootstrap interval over its entries."""
    a = np.asarray(list(x), dtype=np.float64)
    if a.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    mean = float(a.mean())
    if a.size == 1:
        return mean, mean, mean
    rng = np.random.default_rng(seed)
    means = a[rng.integers(0, a.size, size=(n_boot, a.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return mean, float(lo), float(hi)


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


def paired(a: Sequence[float], b: Sequence[float], **kw) -> tuple[float, float, float]:
    """(mean, low, high) of the per-seed differences a − b (same seeds, same order)."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"paired difference needs one value per seed on both sides, got {len(a)} and {len(b)}")
    return bootstrap_ci([x - y for x, y in zip(a, b)], **kw)


def verdict(ci: tuple[float, float, float]) -> str:
    """'beats' when the interval is above 0, 'loses' when below, else 'no difference'."""
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


def seed_values(per_seed: dict, name: str, key: str = "final_accuracy") -> list[float]:
    """``key`` of policy ``name`` on every seed, in seed order."""
    return [float(per_seed[s][name][key]) for s in sorted(per_seed, key=int)]


def policy_stats(per_seed: dict, key: str = "final_accuracy") -> dict[str, dict]:
    """Per policy: mean and 95 % interval of ``key`` over seeds, and its evaluation cost (mean tasks
    scored, and relative to always-trigger's on the same seeds when always ran)."""
    names = list(next(iter(per_seed.values())))
    always = seed_values(per_seed, "always", "total_tasks") if "always" in names else None
    out = {}
    for n in names:
        ci = bootstrap_ci(seed_values(per_seed, n, key))
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
    """One row per (a, b): mean paired difference a − b over seeds, its 95 % interval and the verdict."""
    rows = []
    for a, b in pairs:
        ci = paired(seed_values(per_seed, a, key), seed_values(per_seed, b, key))
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
