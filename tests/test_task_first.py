"""The task-first baseline: the task as the user gave it first, then newest first (no model).

A learned retriever is worth its cost only where it beats what an agent gets for free by keeping the task in its
prompt and a window of recent turns; the shell-agent proxy showed that rule level with the adapted model, so it
is a baseline of the table, ranked here by hand on small logs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sam_model.data.chunks import Chunking
from sam_model.data.reader import read_episodes
from sam_model.evaluation.data import build_eval_data, chunk_eval_data
from sam_model.evaluation.methods import BASELINES
from sam_model.evaluation.ranking import rank_recency, rank_task_first

EMPTY = {"phase": "p", "subgoal_stack": [], "constraints": {}, "uncertainty_flags": [], "last_action_result": ""}


def event(ep: str, step: int, kind: str, text: str, useful=None, source=None) -> dict:
    e = {"episode_id": ep, "step": step, "kind": kind, "text": text, "state": EMPTY}
    if useful:
        e["useful_memory_steps"] = useful
    if source:
        e["meta"] = {"source_episode": source}
    return e


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def data_of(path: Path, scope="episode"):
    return build_eval_data(str(path), read_episodes(path), scope)


def steps(data, ranking) -> list[tuple[str, int]]:
    return [(data.memories[p].episode_id, data.memories[p].step) for p in ranking]


# a system prompt before the task, an agent turn, a call and its result, a second user turn, then two decisions
TRIP = [event("A", 0, "system", "You are a travel agent. Follow the policy."),
        event("A", 1, "user", "Book me a flight to Paris on March 3rd, user id mia_3668."),
        event("A", 2, "system", "Which airport do you prefer?"),
        event("A", 3, "user", "CDG please."),
        event("A", 4, "action", "CALL search_flights(to=CDG, date=2024-03-03)"),
        event("A", 5, "result", "AF123 08:10, AF125 12:40", useful=[1]),
        event("A", 6, "action", "CALL book(flight=AF125, user=mia_3668)", useful=[5])]


def test_the_first_user_event_ranks_first_then_the_rest_newest_first(tmp_path):
    data = data_of(write(tmp_path / "trip.jsonl", TRIP))
    first, second = rank_task_first(data.memories, data.examples, "episode", depth=10)
    # not the system prompt at step 0, not the later user turn at step 3: the first thing the user said
    assert steps(data, first) == [("A", 1), ("A", 4), ("A", 3), ("A", 2), ("A", 0)]
    assert steps(data, second) == [("A", 1), ("A", 5), ("A", 4), ("A", 3), ("A", 2), ("A", 0)]
    assert steps(data, rank_task_first(data.memories, data.examples[1:], "episode", depth=3)[0]) == \
        [("A", 1), ("A", 5), ("A", 4)]


def test_no_user_event_before_the_decision_is_recency(tmp_path):
    lines = [event("B", 0, "system", "policy"), event("B", 1, "action", "CALL ls()"),
             event("B", 2, "result", "a.py b.py", useful=[1]), event("B", 3, "user", "now fix b.py")]
    data = data_of(write(tmp_path / "b.jsonl", lines))
    got = rank_task_first(data.memories, data.examples, "episode", depth=10)
    assert [list(r) for r in got] == [list(r) for r in rank_recency(data.examples, "episode", 10)]


def test_global_scope_pins_the_decisions_own_task_and_a_lifes_later_task_its_own(tmp_path):
    lines = [event("C", 0, "user", "first conversation's task"), event("C", 1, "result", "done"),
             event("D", 0, "user", "Book me a flight to Paris."), event("D", 1, "system", "Which airport?"),
             event("D", 2, "user", "CDG please."), event("D", 3, "action", "CALL search_flights(to=CDG)", useful=[0])]
    data = data_of(write(tmp_path / "g.jsonl", lines), scope="global")
    (ranking,) = rank_task_first(data.memories, data.examples, "global", depth=10)
    assert steps(data, ranking) == [("D", 0), ("D", 2), ("D", 1), ("C", 1), ("C", 0)]
    # a life: two tasks in one episode (meta.source_episode); the second task's decision pins its own request
    life = [event("L", 0, "user", "task one: refund order 17", source="t1"),
            event("L", 1, "result", "refunded", source="t1"),
            event("L", 2, "system", "Anything else?", source="t2"),
            event("L", 3, "user", "task two: cancel order 18", source="t2"),
            event("L", 4, "result", "order 18: pending", source="t2"),
            event("L", 5, "action", "CALL cancel(order=18)", useful=[3], source="t2")]
    data = data_of(write(tmp_path / "life.jsonl", life))
    (ranking,) = rank_task_first(data.memories, data.examples, "episode", depth=10)
    assert steps(data, ranking) == [("L", 3), ("L", 4), ("L", 2), ("L", 1), ("L", 0)]


def test_a_chunked_task_statement_comes_first_whole_in_text_order(tmp_path):
    issue = "Bug in invoicer: " + " ".join(f"word{i}" for i in range(120))
    lines = [event("E", 0, "user", issue), event("E", 1, "action", "CALL grep(word7)"),
             event("E", 2, "result", "tax.py:12: word7", useful=[0])]
    search = chunk_eval_data(data_of(write(tmp_path / "c.jsonl", lines)), Chunking()).search
    statement = [p for p, m in enumerate(search.memories) if m.step == 0]
    assert len(statement) > 2  # the issue was split
    (ranking,) = rank_task_first(search.memories, search.examples, "episode", depth=50)
    assert list(ranking[: len(statement)]) == statement  # chunk 0 first
    assert steps(search, ranking[len(statement):]) == [("E", 1)]


def test_task_first_is_a_baseline_of_evaluate_py_with_the_reciprocal_ranks_it_should_have(tmp_path):
    """evaluate.py's --baselines takes it and runs it by default, the table prints it and per_query.jsonl scores it:
    decision 1's useful memory is the task (RR 1), decision 2's the newest event (recency 1, task-first 1/2)."""
    from sam_model.evaluation import evaluate
    from sam_model.evaluation.run import build_parser

    log = write(tmp_path / "trip.jsonl", TRIP)
    base = ["--retriever", "x", "--data", str(log), "--out", str(tmp_path / "o")]
    assert "task-first" in BASELINES and "task-first" in build_parser().parse_args(base).baselines
    assert build_parser().parse_args([*base, "--baselines", "task-first,recency"]).baselines == \
        ["task-first", "recency"]
    out = tmp_path / "r"
    report = evaluate(log, out, None, baselines=["task-first", "recency"], latency_queries=1, quiet=True)
    assert report["methods"]["task-first"]["mrr"] == pytest.approx((1 + 1 / 2) / 2)
    assert report["methods"]["recency"]["mrr"] == pytest.approx((1 / 4 + 1) / 2)
    rows = [json.loads(x) for x in (out / "per_query.jsonl").read_text().splitlines()]
    assert [r["methods"]["task-first"]["rr"] for r in rows] == pytest.approx([1.0, 0.5])
    assert "| task-first |" in (out / "report.md").read_text()
