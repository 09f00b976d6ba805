"""The paired comparison of two methods of one evaluation (sam_model.bench.paired)."""

from __future__ import annotations

import json

import pytest


def test_two_methods_are_paired_decision_by_decision(tmp_path):
    from sam_model.bench.paired import table

    rr = {"sam": [1.0, 0.5, 0.25, 1.0], "shipped": [0.5, 0.5, 0.25, 0.5]}
    (tmp_path / "per_query.jsonl").write_text("".join(
        json.dumps({"episode_id": "e", "step": i, "methods": {
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
