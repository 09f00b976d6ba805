"""Decisions split by what their label is (sam_model.bench.label_groups): the diagnosis of where a method wins."""

from __future__ import annotations

import json

import pytest

from sam_model.data.examples import MemoryRecord, RetrievalExample

KINDS = ["user", "action", "result", "user", "action", "result", "system"]  # steps 0..6 of episode "e"


def memories() -> list[MemoryRecord]:
    return [MemoryRecord(MemoryRecord.make_id("e", s), "e", s, k, "", f"[{k}] {s}") for s, k in enumerate(KINDS)]


def example(step: int, labels: list[int], used: tuple = (), task_start: int | None = 0) -> RetrievalExample:
    return RetrievalExample("e", step, None, "", 0, step, frozenset(f"e#{s}" for s in labels), task_start, used)


def test_each_decision_goes_to_the_first_group_holding_a_label():
    from sam_model.bench.label_groups import label_group

    mem = memories()
    assert label_group(mem, example(7, [2, 0], used=((2, 4),))) == ("used", True)  # used wins over the opening
    assert label_group(mem, example(7, [0, 6])) == ("opening", False)  # the task's first user event, no uses
    assert label_group(mem, example(7, [5])) == ("recent", False)  # one of the two newest (5, 6)
    assert label_group(mem, example(7, [5]), recent=1) == ("other", False)  # only 6 is the newest
    assert label_group(mem, example(7, [1], used=((2, 4),))) == ("other", True)
    # a use before the task's start is another task's: not used here, and step 3 opens the task
    assert label_group(mem, example(7, [2, 3], used=((2, 1),), task_start=3)) == ("opening", False)


def test_groups_add_up_to_the_whole_difference_and_a_missing_method_is_named(tmp_path):
    from sam_model.bench.label_groups import rows_with_groups, table

    mem = memories()
    exs = [example(3, [0]), example(6, [2], used=((2, 4),)), example(7, [1], used=((2, 4),))]
    rr = {"a": [1.0, 0.5, 0.25], "b": [0.5, 1.0, 0.125]}
    (tmp_path / "per_query.jsonl").write_text("".join(
        json.dumps({"episode_id": "e", "step": ex.step, "methods": {m: {"rr": rr[m][i]} for m in rr}}) + "\n"
        for i, ex in enumerate(exs)))
    rows = rows_with_groups(tmp_path, mem, exs)
    assert [r["group"] for r in rows] == ["opening", "used", "other"]
    lines = {line.split(" | ")[0]: line for line in table([rows], ["a", "b"], "a", "b").splitlines()}
    assert lines["| used"] == "| used | 1 | 0.500 | 1.000 | -0.167 |"
    assert lines["| opening"].endswith("| +0.167 |") and lines["| other"].endswith("| +0.042 |")
    assert lines["| all"] == "| all | 3 | 0.583 | 0.542 | +0.042 |"  # the groups' shares add up to it
    assert lines["| label not used, task has used"].startswith("| label not used, task has used | 1 | 0.250 |")
    with pytest.raises(SystemExit, match="no method 'c' .it has: a, b"):
        table([rows], ["a", "c"], "a", "b")
    with pytest.raises(SystemExit, match="step 3 is not in the data given"):
        rows_with_groups(tmp_path, mem, exs[1:])


def test_by_origin_splits_the_decisions_by_their_labels_kinds(tmp_path):
    """--by origin: each decision by where its labels come from (the kinds of the labels' memories), the most
    decisions first: the freight walkthrough's loss was that every label is a tool result and the model ranks the
    user's turns first."""
    from sam_model.bench.label_groups import rows_with_groups, table

    mem = memories()
    exs = [example(3, [2]), example(6, [5]), example(7, [2, 3]), example(5, [0])]
    rr = {"a": [0.5, 0.25, 1.0, 1.0], "b": [1.0, 1.0, 0.5, 0.5]}
    (tmp_path / "per_query.jsonl").write_text("".join(
        json.dumps({"episode_id": "e", "step": ex.step, "methods": {m: {"rr": rr[m][i]} for m in rr}}) + "\n"
        for i, ex in enumerate(exs)))
    rows = rows_with_groups(tmp_path, mem, exs)
    assert [r["origin"] for r in rows] == ["result", "result", "result+user", "user"]
    lines = table([rows], ["a", "b"], "a", "b", by="origin").splitlines()
    assert lines[0] == "| origin | decisions | a | b | share of a − b |"
    assert lines[2:] == ["| result | 2 | 0.375 | 1.000 | -0.312 |", "| result+user | 1 | 1.000 | 0.500 | +0.125 |",
                         "| user | 1 | 1.000 | 0.500 | +0.125 |", "| all | 4 | 0.688 | 0.750 | -0.062 |"]
