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
