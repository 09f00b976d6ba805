"""HybridEvalSet: composition, bounds, ablations, determinism."""

import json

import numpy as np
import pytest

from sam_model.janus import HybridEvalSet


def identity(tasks):
    """Tasks are their own embeddings in these tests."""
    return np.asarray(tasks, dtype=np.float32).reshape(len(tasks), -1)


def blobs(n_per=20, centers=((0, 0), (10, 0), (0, 10)), seed=0):
    rng = np.random.default_rng(seed)
    return [tuple(np.asarray(c) + rng.normal(scale=0.5, size=2)) for c in centers for _ in range(n_per)]


def test_coverage_takes_one_representative_per_cluster():
    tasks = blobs()
    es = HybridEvalSet(identity, coverage=3, boundary=0, fresh=0)
    es.add(tasks)
    cov = es.coverage_set()
    assert len(set(cov)) == 3
    assert sorted(i // 20 for i in cov) == [0, 1, 2]  # one task from each blob
    x = es.embeddings()
    for i in cov:  # each representative is the task nearest its blob's mean (≈ the centroid)
        blob = slice(i // 20 * 20, i // 20 * 20 + 20)
        d = ((x[blob] - x[blob].mean(0)) ** 2).sum(1)
        assert i == i // 20 * 20 + int(d.argmin())


def test_coverage_with_fewer_tasks_than_clusters_takes_all():
    es = HybridEvalSet(identity, coverage=8, boundary=0, fresh=0)
    es.add([(0.0, 1.0), (1.0, 0.0), (2.0, 2.0)])
    assert es.coverage_set() == [0, 1, 2]


def test_boundary_is_bounded_oldest_out_and_reflips_move_back():
    es = HybridEvalSet(identity, coverage=0, boundary=3, fresh=1)
    es.add([(float(i),) for i in range(10)])
    idx = np.arange(6)
    flips = es.record(idx, [1, 1, 0, 0, 1, 1], [0, 1, 1, 0, 1, 0])  # 0, 2, 5 flipped
    assert flips == 3 and es.boundary == [0, 2, 5]
    es.record(np.array([7, 8, 0]), [0, 0, 1], [1, 0, 0])  # 7 and 0 flip; 0 flips again → back of queue
    assert es.boundary == [5, 7, 0]
    es.record(np.array([9]), [1], [0])
    assert es.boundary == [7, 0, 9]  # capacity 3: the oldest (5) left
    with pytest.raises(ValueError, match="correctness"):
        es.record(np.array([1, 2]), [1], [0])


def test_fresh_samples_only_since_last_trigger():
    es = HybridEvalSet(identity, coverage=0, boundary=0, fresh=4, seed=3)
    es.add([(float(i),) for i in range(10)])
    first = es.build()
    assert len(first.parts["fresh"]) == 4 and set(first.parts["fresh"]) <= set(range(10))
    es.record(first.indices, np.zeros(4, bool), np.zeros(4, bool))  # a comparison happened
    assert es.build().indices.size == 0  # nothing new since
    es.add([(10.0,), (11.0,)])
    assert es.build().parts["fresh"] == [10, 11]


def test_union_deduplicates_and_reports_sizes():
    es = HybridEvalSet(identity, coverage=4, boundary=5, fresh=50)
    es.add([(float(i), float(i % 3)) for i in range(12)])
    es.boundary = [0, 1, 2]
    sel = es.build()
    assert len(set(sel.indices.tolist())) == len(sel.indices) == 12  # fresh takes all 12; no duplicates
    sizes = sel.sizes()
    assert sizes["coverage"] == 4 and sizes["boundary"] == 3 and sizes["fresh"] == 12 and sizes["total"] == 12
    assert es.select(sel) == [es.tasks[i] for i in sel.indices]


@pytest.mark.parametrize("off", ["coverage", "boundary", "fresh"])
def test_ablation_switches(off):
    es = HybridEvalSet(identity, coverage=3, boundary=3, fresh=3, **{f"use_{off}": False})
    es.add(blobs(n_per=5))
    es.record(np.array([0, 1]), [1, 1], [0, 0])
    es.add(blobs(n_per=2, seed=1))
    sel = es.build()
    assert sel.parts[off] == []
    for part in {"coverage", "boundary", "fresh"} - {off}:
        assert sel.parts[part]


def test_all_parts_off_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        HybridEvalSet(identity, use_coverage=False, use_boundary=False, fresh=0)


def test_deterministic_with_seed_and_resumable():
    def feed(es):
        for b in range(5):
            es.add(blobs(n_per=4, seed=b))
            sel = es.build()
            es.record(sel.indices, sel.indices % 2 == 0, sel.indices % 3 == 0)
        return es

    a, b = feed(HybridEvalSet(identity, 4, 5, 3, seed=7)), feed(HybridEvalSet(identity, 4, 5, 3, seed=7))
    a.add(blobs(n_per=4, seed=9))
    b.add(blobs(n_per=4, seed=9))
    c = HybridEvalSet(identity, 4, 5, 3, seed=7)  # resumed: same tasks and embeddings, restored state
    c.add(a.tasks, a.embeddings())
    c.load_state_dict(json.loads(json.dumps(a.state_dict())))
    sa, sb, sc = a.build(), b.build(), c.build()
    np.testing.assert_array_equal(sa.indices, sb.indices)
    np.testing.assert_array_equal(sa.indices, sc.indices)
    assert sa.parts == sc.parts


def test_bad_encoder_output_and_state_mismatch():
    es = HybridEvalSet(lambda tasks: np.zeros((len(tasks) + 1, 2)))
    with pytest.raises(ValueError, match="expected \\(n_tasks, dim\\)"):
        es.add([1, 2])
    es = HybridEvalSet(identity)
    es.add([(1.0, 2.0)])
    with pytest.raises(ValueError, match="size changed"):
        es.add([(1.0, 2.0, 3.0)])
    state = es.state_dict()
    with pytest.raises(ValueError, match="same task stream"):
        HybridEvalSet(identity).load_state_dict(state)
