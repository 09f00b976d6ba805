"""evaluate.py's intervals: MRR and Recall@k of every method with a 95 % bootstrap interval over conversations,
and each --compare model's paired difference against the retriever, in report.json, report.md, the printed table
and the model card.

Until then every figure was a bare mean, though a conversation's decisions are correlated and two models on a few
dozen conversations can differ by chance. The intervals are sam_model.janus.stats.bootstrap_ci(groups=) and paired
(one implementation, as bench.paired)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_evaluate import HashedBowRetriever

from sam_model.card import evaluation_section
from sam_model.data.synthetic import write_synthetic
from sam_model.evaluation import evaluate
from sam_model.evaluation.metrics import intervals
from sam_model.evaluation.report import interval_cell, print_table


def _run(log: Path, out: Path) -> dict:
    return evaluate(log, out, HashedBowRetriever(), baselines=["recency"], latency_queries=2, tsne_points=20,
                    compare={"twin": HashedBowRetriever(), "content-only": HashedBowRetriever(use_state=False)},
                    quiet=True)


@pytest.fixture(scope="module")
def six(tmp_path_factory) -> tuple[dict, Path, Path]:
    """Six synthetic conversations, evaluated."""
    folder = tmp_path_factory.mktemp("six")
    write_synthetic(folder / "log.jsonl.gz", n_episodes=6, seed=0)
    return _run(folder / "log.jsonl.gz", folder / "out"), folder / "out", folder / "log.jsonl.gz"


def test_every_method_gets_an_interval_over_conversations_that_holds_its_mean(six, tmp_path, capsys):
    report, out, log = six
    on_disk = json.loads((out / "report.json").read_text())
    iv = on_disk["intervals"]
    episodes = {json.loads(line)["episode_id"] for line in (out / "per_query.jsonl").read_text().splitlines()}
    assert iv["n_conversations"] == len(episodes) == 6 and iv["unit"] == "conversation" and iv["level"] == 0.95
    assert iv["metrics"] == ["mrr", "recall@1", "recall@5", "recall@10"]
    assert set(iv["methods"]) == set(on_disk["methods"])  # the old figures stay where readers look for them
    for name, metrics in iv["methods"].items():
        for key, entry in metrics.items():
            lo, hi = entry["ci"]
            assert entry["mean"] == pytest.approx(on_disk["methods"][name][key]), (name, key)
            assert lo <= entry["mean"] <= hi, (name, key, entry)
    assert iv["methods"]["sam"]["mrr"]["ci"][0] < iv["methods"]["sam"]["mrr"]["ci"][1]
    again = _run(log, tmp_path / "again")  # a fixed bootstrap seed: the same run, the same intervals
    assert again["intervals"] == report["intervals"]
    sam_mrr = interval_cell(iv["methods"]["sam"]["mrr"])
    assert sam_mrr in (out / "report.md").read_text() and sam_mrr in evaluation_section(on_disk)
    print_table(on_disk)
    assert sam_mrr in capsys.readouterr().out


def test_a_model_against_itself_differs_by_zero_with_a_zero_interval(six):
    report, out, _ = six
    rows = {(p["a"], p["b"]): p for p in report["intervals"]["paired"]}
    assert set(rows) == {("twin", "sam"), ("content-only", "sam")}  # each --compare model, against the retriever
    for key in report["intervals"]["metrics"]:
        assert rows["twin", "sam"][key] == {"mean": 0.0, "ci": [0.0, 0.0], "verdict": "no difference"}
        per = report["intervals"]["methods"]
        diff = rows["content-only", "sam"][key]
        assert diff["mean"] == pytest.approx(per["content-only"][key]["mean"] - per["sam"][key]["mean"])
        assert diff["ci"][0] <= diff["mean"] <= diff["ci"][1]
    assert "| twin − sam | +0.000 [+0.000, +0.000] |" in (out / "report.md").read_text()
    assert "| twin − sam | +0.000 [+0.000, +0.000] |" in evaluation_section(report)


def test_the_interval_widens_when_decisions_are_grouped_in_fewer_conversations():
    """The same 40 decisions, alike within a conversation: as 40 conversations of one decision, or 8 of five."""
    values = np.sort(np.random.default_rng(0).uniform(size=40))  # neighbours alike: a conversation's shared difficulty
    per_query = {"sam": {"mrr": values, "recall@5": values}}
    width = {}
    for n in (40, 8):
        iv = intervals(per_query, [f"c{i * n // 40}" for i in range(40)])
        assert iv["n_conversations"] == n
        lo, hi = iv["methods"]["sam"]["mrr"]["ci"]
        width[n] = hi - lo
    assert width[8] > 1.5 * width[40]


def test_one_conversation_has_no_interval(tmp_path, capsys):
    write_synthetic(tmp_path / "one.jsonl.gz", n_episodes=1, seed=0)
    report = _run(tmp_path / "one.jsonl.gz", tmp_path / "out")
    iv = report["intervals"]
    assert report["n_queries"] > 1 and iv["n_conversations"] == 1  # many decisions, one conversation
    for entry in [*(e for m in iv["methods"].values() for e in m.values()),
                  *(p[k] for p in iv["paired"] for k in iv["metrics"])]:
        assert entry["ci"] is None
    assert json.loads((tmp_path / "out" / "report.json").read_text())["intervals"] == iv  # null, not NaN
    assert f"{report['methods']['sam']['mrr']:.3f} (no interval)" in (tmp_path / "out" / "report.md").read_text()
    assert "no interval" in evaluation_section(report)
    print_table(report)
    assert "no interval" in capsys.readouterr().out


def test_a_card_from_a_report_written_before_the_intervals_keeps_its_means():
    old = {"methods": {"sam": {"mrr": 0.5, "recall@5": 0.75}}, "data": "x", "scope": "episode", "n_queries": 3,
           "n_memories": 9}
    assert "| sam | 0.500 | 0.750 |" in evaluation_section(old)


def test_every_interval_comes_from_one_set_of_draws_and_is_the_one_drawn_alone(monkeypatch):
    """evaluate.py's intervals drew once per method and metric (44 times 10,000 draws on SGD dev's 4,532 decisions
    with 9 methods and 2 --compare models: 4.6 s a run); a seed draws the same units whatever the values, so one set
    of draws gives every interval, each the one bootstrap_ci (or paired) gives its column alone."""
    from sam_model.janus import stats

    rng = np.random.default_rng(7)
    groups = [f"c{i}" for i in rng.integers(0, 60, 400)]
    per_query = {m: {k: (rng.random(400) < 0.6).astype(float) if k != "mrr" else rng.random(400)
                     for k in ("mrr", "recall@1", "recall@3", "recall@5")} for m in ("sam", "a", "b")}
    draws = []
    real = stats._draws
    monkeypatch.setattr(stats, "_draws", lambda *a: draws.append(a[-1]) or real(*a))
    iv = intervals(per_query, groups, compared=["a", "b"])
    assert sum(draws) == iv["n_boot"] and len(draws) == -(-iv["n_boot"] // stats.BLOCK)  # the draws, once
    kw = {"groups": groups, "seed": iv["seed"], "n_boot": iv["n_boot"]}
    for m, metrics in per_query.items():
        for k, values in metrics.items():
            alone = stats.bootstrap_ci(values, **kw)
            assert [iv["methods"][m][k]["mean"], *iv["methods"][m][k]["ci"]] == pytest.approx(alone, abs=1e-12)
    for row in iv["paired"]:
        for k in iv["metrics"]:
            alone = stats.paired(per_query[row["a"]][k], per_query["sam"][k], **kw)
            assert [row[k]["mean"], *row[k]["ci"]] == pytest.approx(alone, abs=1e-12)
            assert row[k]["verdict"] == stats.verdict(alone)
    with pytest.raises(ValueError, match="paired difference a − sam: 399 and 400 decisions"):
        intervals({"sam": per_query["sam"], "a": {k: v[1:] for k, v in per_query["a"].items()}}, groups, ["a"])


def test_the_printed_intervals_are_whole_on_a_line_and_say_what_they_are(six, capsys, monkeypatch):
    """At 120 columns (a file, a pipe) the paired table with four metrics was one character too wide, so rich split
    '+0.000 [+0.000, +0.000]' over two lines; and the note did not say what the brackets and the paired rows are."""
    report, out, _ = six
    monkeypatch.setenv("COLUMNS", "120")
    print_table(json.loads((out / "report.json").read_text()))
    printed = capsys.readouterr().out
    iv = report["intervals"]
    cells = [interval_cell(e) for m in iv["methods"].values() for e in m.values()]
    cells += [interval_cell(p[k], signed=True) for p in iv["paired"] for k in iv["metrics"]]
    for cell in cells:
        assert cell in printed, cell
    words = " ".join(printed.split())  # the note wraps at the console width
    assert "mean [low, high]" in words and "on the same decisions" in words
