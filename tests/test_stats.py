"""How the reported figures are computed, on cases small enough to compute by hand: the ranking metrics and ties."""

from __future__ import annotations

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
