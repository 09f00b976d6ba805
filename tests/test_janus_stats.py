"""Janus statistics: bootstrap intervals, paired differences and their verdicts, evaluation cost."""

import numpy as np
import pytest

from sam_model.janus.controller import StepDecision
from sam_model.janus.stats import (
    CountedPhi,
    bootstrap_ci,
    default_pairs,
    evaluation_cost,
    fmt_ci,
    fmt_diff,
    paired,
    paired_table,
    policy_stats,
    verdict,
)


def test_bootstrap_interval_holds_the_mean_narrows_with_seeds_and_is_reproducible():
    rng = np.random.default_rng(0)
    few, many = rng.normal(0.7, 0.05, 5), rng.normal(0.7, 0.05, 80)
    m, lo, hi = bootstrap_ci(few)
    assert lo <= m <= hi and m == pytest.approx(few.mean())
    _, lo2, hi2 = bootstrap_ci(many)
    assert hi2 - lo2 < hi - lo
    assert bootstrap_ci(few) == bootstrap_ci(few)  # seeded
    assert bootstrap_ci([0.4])[0] == 0.4 and np.isnan(bootstrap_ci([0.4])[1:]).all()  # one seed: no interval
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_ci([])


def test_paired_difference_removes_what_the_seed_does_to_both():
    # seeds swing both gates by ±20 points, but A is 2 points above B on every seed
    swing = np.array([0.5, 0.9, 0.6, 0.8, 0.7, 0.55, 0.85, 0.65, 0.75, 0.6])
    a, b = swing + 0.02, swing
    assert verdict(paired(a, b)) == "beats" and verdict(paired(b, a)) == "loses"
    _, lo, hi = bootstrap_ci(a)
    assert lo < b.mean() < hi  # unpaired intervals overlap: no way to tell them apart
    noisy = swing + np.array([0.03, -0.03] * 5)
    assert verdict(paired(noisy, swing)) == "no difference"
    with pytest.raises(ValueError, match="one value per seed"):
        paired([1, 2], [1])


def _d(t, triggered, total):
    return StepDecision(t=t, gate="g", cos=None, triggered=triggered, accepted=True, sizes={"total": total} if triggered else {})


def test_evaluation_cost_counts_both_memories_per_comparison_and_the_trigger():
    ds = [_d(1, True, 10), _d(2, False, 0), _d(3, True, 6)]
    assert evaluation_cost(ds) == {"comparison_tasks": 32.0, "phi_tasks": 0.0, "total_tasks": 32.0}
    assert evaluation_cost(ds, phi_calls=4, phi_cost=256)["total_tasks"] == 32 + 1024


def test_counted_phi_and_policy_tables():
    class Probe:
        tasks_per_call = 3.0

        def __call__(self, m):
            return np.zeros(2)

    phi = CountedPhi(Probe())
    phi(None), phi(None)
    assert phi.calls == 2 and phi.tasks_per_call == 3.0 and CountedPhi(lambda m: m).tasks_per_call == 0.0
    per_seed = {s: {"always": {"final_accuracy": 0.8, "total_tasks": 100, "phi_tasks": 0, "comparison_tasks": 100},
                    "mmt": {"final_accuracy": 0.8 + (0.01 if s % 2 else -0.01), "total_tasks": 30, "phi_tasks": 5,
                            "comparison_tasks": 25},
                    "none": {"final_accuracy": 0.5, "total_tasks": 0, "phi_tasks": 0, "comparison_tasks": 0}}
                for s in range(10)}
    st = policy_stats(per_seed)
    assert st["mmt"]["cost_vs_always"] == pytest.approx(0.3) and st["none"]["cost_vs_always"] == 0.0
    assert st["always"]["ci"] == [pytest.approx(0.8), pytest.approx(0.8)]
    pairs = default_pairs(list(st))
    assert ("mmt", "none") in pairs and ("mmt", "always") in pairs and ("mmt", "random") not in pairs
    rows = {(r["a"], r["b"]): r for r in paired_table(per_seed, pairs)}
    assert rows[("mmt", "none")]["verdict"] == "beats" and rows[("mmt", "always")]["verdict"] == "no difference"
    assert fmt_ci((0.712, 0.68, 0.741)) == "71.2 [68.0, 74.1]" and fmt_diff((0.03, -0.01, 0.05)) == "+3.0 [-1.0, +5.0]"
