"""bench.state_fields: one state field taken away from an agent log, and nothing else changed."""

from __future__ import annotations

import json

import pytest

from sam_model.bench import state_fields
from sam_model.data import read_episodes
from sam_model.data.synthetic import write_synthetic


def _log(tmp_path):
    path = tmp_path / "demo.jsonl"
    write_synthetic(path, 3, seed=1)
    return path, [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("drop, key", [("known", "constraints"), ("subgoals", "subgoal_stack"),
                                       ("needs", "uncertainty_flags"), ("last", "last_action_result"),
                                       ("phase", "phase")])
def test_a_query_field_is_emptied_at_the_decision_points_only(tmp_path, drop, key):
    path, lines = _log(tmp_path)
    out = tmp_path / "out.jsonl"
    assert state_fields.main([str(path), str(out), "--drop", drop]) == 0
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(got) == len(lines)
    decisions = [i for i, e in enumerate(lines) if e.get("useful_memory_steps")]
    assert decisions and any(lines[i]["state"].get(key) for i in decisions)  # there was something to take away
    for i, (a, b) in enumerate(zip(lines, got)):
        assert {k: v for k, v in a.items() if k != "state"} == {k: v for k, v in b.items() if k != "state"}
        others = {k: v for k, v in a["state"].items() if k != key}
        assert {k: v for k, v in b["state"].items() if k != key} == others
        assert (not b["state"][key]) if i in decisions else b["state"].get(key) == a["state"].get(key)
    eps = read_episodes(out)  # still a valid agent log, with the same labels
    assert sum(len(e.decision_points) for e in eps) == len(decisions)


def test_constraints_go_from_every_event_so_no_memory_says_what_it_set(tmp_path):
    from sam_model.data.text import constraints_delta

    path, lines = _log(tmp_path)
    before = read_episodes(path)
    assert any(constraints_delta(a.state, b.state) for e in before for a, b in zip(e.events, e.events[1:]))
    got = state_fields.drop_field(lines, "constraints")
    assert all(not e["state"]["constraints"] for e in got)
    with pytest.raises(ValueError, match="unknown field"):
        state_fields.drop_field(lines, "mood")


def test_a_missing_or_broken_log_is_one_line_naming_it(tmp_path):
    with pytest.raises(SystemExit, match="no-such.jsonl: cannot read it"):
        state_fields.main([str(tmp_path / "no-such.jsonl"), str(tmp_path / "out.jsonl"), "--drop", "known"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"episode_id": "e", "step": 0}\n{not json\n')
    with pytest.raises(SystemExit, match="bad.jsonl, line 2: not JSON"):
        state_fields.main([str(bad), str(tmp_path / "out.jsonl"), "--drop", "known"])
    assert not (tmp_path / "out.jsonl").exists()
