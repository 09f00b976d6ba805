"""The used-first baseline and the reuse signal it ranks by: memories earlier decisions of the task took values
from go first (latest use first), then newest first (no model).

Causality is the point: at a decision, only the labels of earlier decisions of its own task are known (the calls
already made); its own labels are what it is scored on, a later decision's are the future.
"""

from __future__ import annotations

import json

import pytest
from test_task_first import data_of, event, steps, write

from sam_model.data.chunks import Chunking
from sam_model.data.reuse import earlier_uses
from sam_model.evaluation.data import chunk_eval_data
from sam_model.evaluation.methods import BASELINES
from sam_model.evaluation.ranking import rank_recency, rank_used_first, used_memories

# the issue supplies two calls, a result supplies the third; the user's later message supplies nothing
ISSUE = [event("A", 0, "system", "You are a coding agent."),
         event("A", 1, "user", "Bug in Invoice.total of billing/tax.py: rounding."),
         event("A", 2, "action", "CALL search_method(Invoice.total)", useful=[1]),
         event("A", 3, "result", "billing/tax.py:40 def total(self):"),
         event("A", 4, "user", "Please hurry."),
         event("A", 5, "action", "CALL open(billing/tax.py, 40)", useful=[1, 3]),
         event("A", 6, "result", "40 def total(self): return round(x)"),
         event("A", 7, "action", "CALL edit(billing/tax.py, 41)", useful=[3, 6])]


def test_earlier_uses_count_earlier_decisions_of_the_task_only():
    steps_, labels = [0, 1, 2, 3, 4], [[], [0], [0, 1], [], [2]]
    assert earlier_uses(steps_, labels, [0] * 5) == [(), (), ((0, 1),), ((0, 2), (1, 2)), ((0, 2), (1, 2))]
    # a new task forgets the earlier task's uses
    assert earlier_uses(steps_, labels, [0, 0, 0, 3, 3]) == [(), (), ((0, 1),), (), ()]


def test_a_label_of_the_current_or_a_later_decision_never_counts(tmp_path):
    data = data_of(write(tmp_path / "issue.jsonl", ISSUE))
    used = {ex.step: dict(ex.used) for ex in data.examples}
    assert used[2] == {}  # its own label, the issue, is not known yet
    assert used[5] == {1: 2}  # the issue, used at step 2; not the result at 3 (its own label, and step 7's)
    assert used[7] == {1: 5, 3: 5}  # not the result at 6, which only its own call uses


def test_used_first_ranks_the_latest_used_first_then_the_rest_newest_first(tmp_path):
    data = data_of(write(tmp_path / "issue.jsonl", ISSUE))
    first, second, third = rank_used_first(data.memories, data.examples, "episode", depth=10)
    assert [list(first)] == [list(r) for r in rank_recency(data.examples[:1], "episode", 10)]  # nothing used yet
    assert steps(data, second) == [("A", 1), ("A", 4), ("A", 3), ("A", 2), ("A", 0)]
    # the issue and the result, both last used at step 5: the newer first; then the rest newest first
    assert steps(data, third) == [("A", 3), ("A", 1), ("A", 6), ("A", 5), ("A", 4), ("A", 2), ("A", 0)]
    assert steps(data, rank_used_first(data.memories, data.examples[2:], "episode", depth=3)[0]) == \
        [("A", 3), ("A", 1), ("A", 6)]


def test_a_lifes_later_task_does_not_inherit_the_earlier_tasks_uses(tmp_path):
    life = [event("L", 0, "user", "task one: refund order 17", source="t1"),
            event("L", 1, "action", "CALL refund(order=17)", useful=[0], source="t1"),
            event("L", 2, "user", "task two: cancel order 18", source="t2"),
            event("L", 3, "action", "CALL cancel(order=18)", useful=[2], source="t2"),
            event("L", 4, "action", "CALL notify(order=18)", useful=[2], source="t2")]
    data = data_of(write(tmp_path / "life.jsonl", life))
    # the examples keep the episode's uses; the ranking keeps the task's (a use at or after its task start)
    assert [dict(ex.used) for ex in data.examples] == [{}, {0: 1}, {0: 1, 2: 3}]
    assert [[data.memories[p].step for p in used_memories(data.memories, ex)] for ex in data.examples] == [[], [], [2]]


def test_a_used_chunked_event_comes_first_whole_in_text_order(tmp_path):
    issue = "Bug in invoicer: " + " ".join(f"word{i}" for i in range(120))
    lines = [event("E", 0, "user", issue), event("E", 1, "action", "CALL grep(word7)", useful=[0]),
             event("E", 2, "result", "tax.py:12: word7"), event("E", 3, "action", "CALL open(word9)", useful=[0])]
    search = chunk_eval_data(data_of(write(tmp_path / "c.jsonl", lines)), Chunking()).search
    issue_chunks = [p for p, m in enumerate(search.memories) if m.step == 0]
    assert len(issue_chunks) > 2
    (_, ranking) = rank_used_first(search.memories, search.examples, "episode", depth=50)
    assert list(ranking[: len(issue_chunks)]) == issue_chunks
    assert steps(search, ranking[len(issue_chunks):]) == [("E", 2), ("E", 1)]


def test_used_first_is_a_baseline_of_evaluate_py_with_the_reciprocal_ranks_it_should_have(tmp_path):
    """evaluate.py runs it by default: decision 1 has nothing used (recency: the issue is the newest, RR 1),
    decision 2's label the issue is used (RR 1; recency ranks the user's "Please hurry." above it), decision 3's
    labels the result at 3, used (RR 1; recency has the result at 6 first)."""
    from sam_model.evaluation import evaluate
    from sam_model.evaluation.run import build_parser

    log = write(tmp_path / "issue.jsonl", ISSUE)
    base = ["--retriever", "x", "--data", str(log), "--out", str(tmp_path / "o")]
    assert "used-first" in BASELINES and "used-first" in build_parser().parse_args(base).baselines
    out = tmp_path / "r"
    report = evaluate(log, out, None, baselines=["used-first", "recency"], latency_queries=1, quiet=True)
    rows = [json.loads(x) for x in (out / "per_query.jsonl").read_text().splitlines()]
    assert [r["methods"]["used-first"]["rr"] for r in rows] == pytest.approx([1.0, 1.0, 1.0])
    assert [r["methods"]["recency"]["rr"] for r in rows] == pytest.approx([1.0, 1 / 2, 1.0])
    assert report["methods"]["used-first"]["mrr"] == pytest.approx(1.0)
    assert "| used-first |" in (out / "report.md").read_text()


def test_with_the_task_start_unknown_the_earlier_tasks_uses_count_too(tmp_path):
    """--task-start unknown measures an agent that does not say where its task began: task-first then pins the
    life's first statement, so used-first must not know the boundary either; task one's use ranks first in task
    two then (a decision of task two, first in its task: recency with the start known)."""
    from sam_model.evaluation.options import read_log
    from sam_model.evaluation.run import build_parser

    life = [event("L", 0, "user", "task one: refund order 17", source="t1"),
            event("L", 1, "action", "CALL refund(order=17)", useful=[0], source="t1"),
            event("L", 2, "user", "task two: cancel order 18", source="t2"),
            event("L", 3, "system", "Checking.", source="t2"),
            event("L", 4, "action", "CALL cancel(order=18)", useful=[2], source="t2")]
    log = write(tmp_path / "life.jsonl", life)
    base = ["--retriever", "x", "--data", str(log), "--out", str(tmp_path / "o")]
    for start, want in (("known", [3, 2, 1, 0]), ("unknown", [0, 3, 2, 1])):
        data = read_log(str(log), build_parser().parse_args([*base, "--task-start", start]), progress=False)
        ranking = rank_used_first(data.memories, data.examples, "episode", depth=10)[1]
        assert [s for _, s in steps(data, ranking)] == want, start
