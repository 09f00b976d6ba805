"""How the reported figures are computed, on cases small enough to compute by hand: the ranking metrics, ties,
intervals over conversations and over seeds, and the verdict a paired interval gives."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sam_model.evaluation.metrics import per_query_metrics
from sam_model.evaluation.ranking import rank_range, tie_jitter


def _one(top, relevant, depth=100):
    pq = per_query_metrics([np.asarray(top, np.int64)], [np.asarray(sorted(relevant), np.int64)], [1, 5, 10], depth)
    return {k: float(v[0]) for k, v in pq.items()}


def test_ranking_metrics_by_hand():
    """MRR is the first useful memory's rank (0 when none is ranked, or only below depth); Recall@k the share of the
    useful memories in the top k (not 'any'); coverage@k all of them; nDCG@10 over the ideal of min(useful, 10)
    hits; Precision@k over k even when fewer were ranked."""
    two = _one([7, 3, 9, 4], {3, 4})  # useful at ranks 2 and 4
    assert two["mrr"] == 0.5 and two["recall@1"] == 0.0 and two["recall@5"] == 1.0 and two["coverage@5"] == 1.0
    assert two["precision@5"] == pytest.approx(2 / 5)
    ideal = 1 + 1 / math.log2(3)
    assert two["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    half = _one([7, 3, 9, 4], {3, 8})  # 8 never ranked (outside the candidates, or the index): recall's denominator
    assert half["mrr"] == 0.5 and half["recall@5"] == 0.5 and half["coverage@5"] == 0.0
    assert half["ndcg@10"] == pytest.approx((1 / math.log2(3)) / ideal)
    absent = _one([7, 3, 9], {8})  # nothing useful ranked: 0 everywhere, not 1/(len + 1)
    assert all(v == 0.0 for v in absent.values())
    assert _one([], {2})["mrr"] == 0.0
    deep = _one(list(range(20, 40)) + [5], {5}, depth=20)  # rank 21 with MRR@20
    assert deep["mrr"] == 0.0 and _one(list(range(20, 40)) + [5], {5}, depth=21)["mrr"] == pytest.approx(1 / 21)
    late = _one(list(range(20, 70)) + [5], {5})  # rank 51, beyond the largest k but inside depth
    assert late["mrr"] == pytest.approx(1 / 51) and late["recall@10"] == 0.0
    many = _one(list(range(12)), set(range(12)))  # 12 useful: Recall@10 is 10/12, coverage 0, nDCG@10 is 1
    assert many["recall@10"] == pytest.approx(10 / 12) and many["coverage@10"] == 0.0 and many["ndcg@10"] == 1.0


def test_exact_ties_are_broken_blind_to_the_labels_and_alike_for_every_method():
    """A method whose scores all tie does not rank the useful memory first (it would if ties went by position or
    by label); two methods with the same scores rank the same, since they share one seeded jitter."""
    flat = np.zeros(50)
    ranks = []
    for seed in range(200):
        jitter = tie_jitter(50, seed)
        top = rank_range(flat, 0, jitter, 50)
        assert top.tolist() == rank_range(flat.copy(), 0, jitter, 50).tolist()  # the same for any method
        ranks.append(int(np.flatnonzero(top == 0)[0]) + 1)  # memory 0 is the useful one
    assert 15 < np.mean(ranks) < 36  # about the middle (25.5), not 1
    distinct = rank_range(np.array([0.2, 0.9, 0.5]), 10, tie_jitter(13, 0), 3)
    assert distinct.tolist() == [11, 12, 10]  # the jitter never reorders real differences


def test_a_conversation_is_the_unit_of_a_decision_interval():
    """Ten copies of each decision in its conversation are no more evidence than the one: the interval over the
    conversations is the one-decision-per-conversation interval; drawn decision by decision it was far narrower."""
    from sam_model.janus.stats import bootstrap_ci

    rng = np.random.default_rng(3)
    per_conv = rng.uniform(0, 1, 30)
    x, groups = np.repeat(per_conv, 10), np.repeat([f"c{i}" for i in range(30)], 10)
    _, lo1, hi1 = bootstrap_ci(per_conv)
    mean, lo, hi = bootstrap_ci(x, groups=groups)
    assert mean == pytest.approx(per_conv.mean()) and hi - lo == pytest.approx(hi1 - lo1, rel=0.05)
    _, lo_d, hi_d = bootstrap_ci(x)
    assert hi_d - lo_d < 0.45 * (hi - lo)  # sqrt(10) narrower: what resampling the decisions claimed
    unequal = bootstrap_ci([1.0, 1.0, 1.0, 0.0], groups=["a", "a", "a", "b"])
    assert unequal[0] == 0.75 and unequal[1] == 0.0 and unequal[2] == 1.0  # a replicate: entries drawn / their count
    assert bootstrap_ci([0.2, 0.4], groups=["a", "a"])[1:] == (pytest.approx(math.nan, nan_ok=True),) * 2
    with pytest.raises(ValueError, match="2 group labels for 3 values"):
        bootstrap_ci([1, 2, 3], groups=["a", "b"])


def test_seed_intervals_are_t_intervals_by_hand():
    """Three seeds whose differences are 0.0, 0.1 and 0.2 at every decision: the interval is 0.1 ± t₂ · 0.1/√3
    (t₂ = 4.303), not the percentile bootstrap's [0.033, 0.167] that read as a difference. Shared decisions add
    their own spread, conversations as units; three copies of one run are that run."""
    from sam_model.bench.seeds import Estimate, average, mean_var, over_seeds

    n = 40
    runs = [np.full(n, d) for d in (0.0, 0.1, 0.2)]
    mean, lo, hi = over_seeds(runs, [f"c{i}" for i in range(n)], shared=True).ci()
    half = 4.303 * 0.1 / math.sqrt(3)
    assert (mean, lo, hi) == pytest.approx((0.1, 0.1 - half, 0.1 + half))
    assert mean_var(np.array([1.0, 2.0, 3.0, 6.0])) == (pytest.approx(np.var([1, 2, 3, 6], ddof=1) / 4), 3)
    # two conversations {1, 2} and {3, 6} about the mean 3: residual sums -3 and +3, 2/1 * 18 / 16 (the variance of
    # their means 1.5 and 4.5, over 2)
    assert mean_var(np.array([1.0, 2.0, 3.0, 6.0]), ["a", "a", "b", "b"]) == (pytest.approx(2 * 18 / 16), 1)
    x = np.random.default_rng(0).uniform(0, 1, 60)
    groups = [f"c{i // 3}" for i in range(60)]
    assert over_seeds([x, x, x], groups, shared=True).ci() == pytest.approx(over_seeds([x], groups).ci())
    v, df = mean_var(x, groups)
    assert over_seeds([x], groups).ci()[2] == pytest.approx(x.mean() + 2.093 * math.sqrt(v))  # t at 19 df
    own = over_seeds([x, x + 0.3, x - 0.3], shared=False).ci()  # seeds with their own decisions: t over 3 means
    assert own == pytest.approx((x.mean(), x.mean() - 4.303 * 0.3 / math.sqrt(3), x.mean() + 4.303 * 0.3 / math.sqrt(3)))
    both = average([Estimate(0.1, ((0.01, 2),)), Estimate(0.3, ((0.01, 2),))])
    assert both.mean == pytest.approx(0.2) and both.parts == ((0.0025, 2), (0.0025, 2))
    assert both.ci()[2] == pytest.approx(0.2 + 2.776 * math.sqrt(0.005))  # Satterthwaite: 4 degrees of freedom
    assert math.isnan(Estimate(0.5, ((math.nan, 0),)).ci()[1])


def _per_query(folder, rows):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "per_query.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_seed_tables_hold_the_seed_spread_of_three_seeds(tmp_path):
    """bench.lodo_seeds and bench.paired over three seeds: a variant 0.0 / 0.1 / 0.2 above the baseline in its three
    seeds is not a difference (the two-level bootstrap said [+0.033, +0.167])."""
    from sam_model.bench import lodo_seeds
    from sam_model.bench.paired import seeds_table

    runs, gain = [], (0.0, 0.1, 0.2)
    for s, g in enumerate(gain):
        rows = [{"episode_id": f"c{i // 2}", "step": i, "methods": {"bm25": {"rr": 0.5, "recall@5": 0.5},
                 "plots": {"rr": 0.5 + g, "recall@5": 0.5}, "fusion": {"rr": 0.5, "recall@5": 0.5}}}
                for i in range(40)]
        _per_query(tmp_path / f"s{s}" / "a", rows)
        (tmp_path / f"s{s}" / "lodo.json").write_text(json.dumps([{"domain": "a", "best_baseline": "bm25"}]))
        runs.append(tmp_path / f"s{s}")
    data, shared = lodo_seeds.load(runs, "plots", "fusion")
    mean, lo, hi = lodo_seeds.summarise(data, shared=shared)["a"]["variant - baseline"]
    assert mean == pytest.approx(0.1) and lo < -0.1 and hi > 0.3
    rows = [{"episode_id": f"c{i // 2}", "step": i, "methods": {
        **{f"a{s}": {"rr": 0.5 + g, "recall@5": 0.5} for s, g in enumerate(gain)},
        **{f"b{s}": {"rr": 0.5, "recall@5": 0.5} for s in range(3)}}} for i in range(40)]
    _per_query(tmp_path / "one", rows)
    mrr = next(line for line in seeds_table(tmp_path / "one", ["a0", "a1", "a2"], ["b0", "b1", "b2"]).splitlines()
               if line.startswith("| MRR"))
    assert mrr.endswith("| +0.100 [-0.148, +0.348] |")


def test_janus_tables_give_t_intervals_over_seeds_and_a_verdict_only_off_zero():
    """Ten seeds: the policy and paired intervals are mean ± t₉ · s/√10 (the percentile bootstrap was 18 %
    narrower); an interval that touches 0, or none (one seed), is no difference."""
    from sam_model.janus.stats import paired_table, policy_stats, verdict

    gain = np.array([0.05, -0.01, 0.04, 0.0, 0.03, -0.02, 0.06, 0.01, 0.02, 0.02])
    per_seed = {s: {"mmt": {"final_accuracy": 0.7 + g, "total_tasks": 1, "phi_tasks": 0, "comparison_tasks": 1},
                    "random": {"final_accuracy": 0.7, "total_tasks": 1, "phi_tasks": 0, "comparison_tasks": 1}}
                for s, g in enumerate(gain)}
    half = 2.262 * gain.std(ddof=1) / math.sqrt(10)
    row = paired_table(per_seed, [("mmt", "random")])[0]
    assert [row["mean"], *row["ci"]] == pytest.approx([gain.mean(), gain.mean() - half, gain.mean() + half])
    assert row["verdict"] == "beats"  # 0.02 ± 0.0176
    assert policy_stats(per_seed)["mmt"]["ci"] == pytest.approx([0.7 + gain.mean() - half, 0.7 + gain.mean() + half])
    assert verdict((0.01, 0.0, 0.02)) == "no difference" and verdict((-0.01, -0.02, 0.0)) == "no difference"
    assert verdict((0.01, 1e-12, 0.02)) == "beats" and verdict((-0.01, -0.02, -1e-12)) == "loses"
    one = paired_table({0: per_seed[0]}, [("mmt", "random")])[0]
    assert one["verdict"] == "no difference" and math.isnan(one["ci"][0])


def test_the_plain_query_table_resamples_conversations():
    """bench.plain_query's airline table drew decisions; it draws the conversations they belong to."""
    from sam_model.bench import plain_query
    from sam_model.janus.stats import bootstrap_ci, fmt_ci

    rng = np.random.default_rng(5)
    text = np.repeat(rng.uniform(0, 1, 8), 6).tolist()  # 8 conversations of 6 identical decisions
    groups = np.repeat([f"c{i}" for i in range(8)], 6).tolist()
    a = {"decisions": 48, "conversations": 8, "conversation": groups,
         "mrr": {plain_query.TEXT: text, plain_query.MINILM: [0.5] * 48},
         "recall@5": {plain_query.TEXT: text, plain_query.MINILM: [0.5] * 48}}
    probes = {plain_query.TEXT: {"top1": [1], "top3": [1], "nonsense_same_order": False}}
    out = plain_query.tables({"probes": probes, "airline": a})
    assert fmt_ci(bootstrap_ci(text, groups=groups), scale=1, digits=3) in out
    assert fmt_ci(bootstrap_ci(text), scale=1, digits=3) not in out
