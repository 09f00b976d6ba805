"""bench.lodo_seeds --reference-from: the reference read from an earlier measurement's runs of the same seeds and
decisions (issue 21's reuse-recent against stop 59's reuse, whose checkpoints were trained apart), still paired."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sam_model.bench import lodo_seeds


def _run(folder: Path, methods: dict[str, list[float]], steps: range = range(6)) -> Path:
    (folder / "coding").mkdir(parents=True)
    lines = [json.dumps({"episode_id": f"e{i // 2}", "step": i,
                         "methods": {m: {"rr": rr[n], "recall@5": 0} for m, rr in methods.items()}})
             for n, i in enumerate(steps)]
    (folder / "coding" / "per_query.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "lodo.json").write_text(json.dumps([{"domain": "coding", "variant": "new", "best_baseline": "bm25"}]))
    return folder


def test_the_reference_comes_from_the_other_runs_seed_by_seed_and_stays_paired(tmp_path, capsys):
    new = [_run(tmp_path / f"new{s}", {"bm25": [0.5] * 6, "new": [1, 1, 0.5, 1, 0.5, 1 - s / 10]}) for s in (0, 1)]
    old = [_run(tmp_path / f"old{s}", {"bm25": [0.5] * 6, "old": [1, 0.5, 0.5, 1, 0.5, 0.2 * s]}) for s in (0, 1)]
    data, shared = lodo_seeds.load(new, "new", "old", old)
    (s0, s1) = data["coding"]
    assert s0["reference"].tolist() == [1, 0.5, 0.5, 1, 0.5, 0] and s1["reference"][-1] == 0.2  # seed by seed
    summary = lodo_seeds.summarise(data, shared)
    want = np.mean([np.mean(np.subtract(s["variant"], s["reference"])) for s in (s0, s1)])
    assert summary["coding"]["variant - reference"][0] == pytest.approx(want)
    assert lodo_seeds.main([*map(str, new), "--variant", "new", "--reference", "old",
                            "--reference-from", *map(str, old)]) == 0
    assert "| coding | 2 |" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="has no method 'old'"):  # read from the runs themselves without it
        lodo_seeds.load(new, "new", "old")


def test_other_decisions_or_another_number_of_runs_are_refused(tmp_path):
    new = [_run(tmp_path / "new0", {"bm25": [0.5] * 6, "new": [1] * 6})]
    other = [_run(tmp_path / "old0", {"bm25": [0.5] * 6, "old": [1] * 6}, range(1, 7))]
    with pytest.raises(SystemExit, match="ranked different decisions"):
        lodo_seeds.load(new, "new", "old", other)
    with pytest.raises(SystemExit, match="one for each run"):
        lodo_seeds.load(new, "new", "old", other * 2)
