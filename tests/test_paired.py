"""The paired comparison of two methods of one evaluation (sam_model.bench.paired)."""

from __future__ import annotations

import json

import pytest


def test_two_methods_are_paired_decision_by_decision(tmp_path):
    from sam_model.bench.paired import table

    rr = {"sam": [1.0, 0.5, 0.25, 1.0], "shipped": [0.5, 0.5, 0.25, 0.5]}
    (tmp_path / "per_query.jsonl").write_text("".join(
        json.dumps({"episode_id": f"e{i}", "step": i, "methods": {
            m: {"rr": rr[m][i], "recall@5": 1.0} for m in rr}}) + "\n" for i in range(4)))
    rows = {line.split(" | ")[0]: line for line in table(tmp_path, "sam", "shipped").splitlines()}
    assert "| 0.688 [" in rows["| MRR"] and "| 0.438 [" in rows["| MRR"] and "| +0.250 [+0.000, +0.500] |" in rows["| MRR"]
    assert rows["| Recall@5"].endswith("| +0.000 [+0.000, +0.000] |")
    with pytest.raises(SystemExit, match="no method 'bm25' .it has: sam, shipped"):
        table(tmp_path, "sam", "bm25")


def test_b_from_another_run_of_the_same_decisions(tmp_path):
    from sam_model.bench.paired import table

    for name, rr in (("new", [1.0, 1.0, 0.5]), ("old", [0.5, 1.0, 0.5])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "per_query.jsonl").write_text("".join(
            json.dumps({"episode_id": "e", "step": i, "methods": {"fusion": {"rr": r, "recall@5": 1.0}}}) + "\n"
            for i, r in enumerate(rr)))
    mrr = [line for line in table(tmp_path / "new", "fusion", "fusion", tmp_path / "old").splitlines()
           if line.startswith("| MRR")][0]
    assert "| 0.833 [" in mrr and "| 0.667 [" in mrr and "| +0.167 [" in mrr
    (tmp_path / "old" / "per_query.jsonl").write_text("")
    with pytest.raises(SystemExit, match="different decision points"):
        table(tmp_path / "new", "fusion", "fusion", tmp_path / "old")


def test_two_recipes_over_seeds_hold_the_seed_spread_and_stay_paired(tmp_path):
    import numpy as np

    from sam_model.bench.paired import main, seeds_table

    base = np.random.default_rng(0).uniform(0.2, 0.6, 50)
    rr = {"a0": base + 0.1, "a1": base + 0.1, "a2": base + 0.1,  # A: the baseline + 0.1 in every seed
          "b0": base, "b1": base + 0.3, "b2": base - 0.3}  # B: the same mean as base, its seeds spread by ±0.3
    (tmp_path / "per_query.jsonl").write_text("".join(
        json.dumps({"episode_id": f"e{i // 2}", "step": i, "methods": {m: {"rr": float(v[i]), "recall@5": 1.0}
                                                               for m, v in rr.items()}}) + "\n" for i in range(50)))
    text = seeds_table(tmp_path, ["a0", "a1", "a2"], ["a2", "a0", "a1"])
    assert "| +0.000 [+0.000, +0.000] |" in text  # a recipe against itself, seeds reordered: exactly 0
    mrr = [line for line in seeds_table(tmp_path, ["a0", "a1", "a2"], ["b0", "b1", "b2"]).splitlines()
           if line.startswith("| MRR")][0]
    diff = mrr.split(" | ")[-1].strip(" |")  # "+0.100 [lo, hi]"
    mean, lo, hi = (float(x) for x in diff.replace("[", "").replace("]", "").replace(",", "").split())
    assert mean == pytest.approx(0.1, abs=1e-3) and lo < -0.1 and hi > 0.25  # B's seed spread is in the interval
    assert f"({base.mean():.3f} / {base.mean() + 0.3:.3f} / {base.mean() - 0.3:.3f})" in mrr  # per-seed means
    with pytest.raises(SystemExit, match="A has 3 seeds .* and B 2"):
        seeds_table(tmp_path, ["a0", "a1", "a2"], ["b0", "b1"])
    with pytest.raises(SystemExit, match="no method 'zz'"):
        seeds_table(tmp_path, ["a0", "zz"], ["b0", "b1"])
    assert main([str(tmp_path), "a0,a1", "b0,b1"]) == 0
