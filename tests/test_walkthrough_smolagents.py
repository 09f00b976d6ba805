"""What a walkthrough of the README as a smolagents team found (an HR leave-booking assistant, tests/smolagents_leave.py):
its memory's steps added live, as they come or whole after each run, store the importer's memories once."""

from __future__ import annotations

import json

from smolagents_leave import conversations
from transcript_logs import added_whole_after_each_run, listed

from sam_model.data.transcripts import iter_transcript_events
from sam_model.memory import HashingEncoder, ScopedMemory


def test_the_steps_added_as_they_come_store_the_importers_memories(tmp_path):
    """A step added alone (a step callback's step.dict(), agent.memory.system_prompt.dict() first) was refused: the
    system prompt's step alone, {"system_prompt"}, was no smolagents step, 'message 0: message without role'."""
    cid, steps = conversations(1, 0)[0]
    memory = ScopedMemory(HashingEncoder(16))
    for step in steps:
        memory.add([step], user_id="me", run_id="s")
    (tmp_path / "m.json").write_text(json.dumps(steps))
    want = list(iter_transcript_events(tmp_path / "m.json"))
    assert listed(memory) == [(e["step"], e["text"]) for e in want]


def test_the_whole_memory_added_after_each_run_stores_each_step_once():
    """An agent adding agent.memory.get_full_steps() whole after each run (reset=False) sends the earlier runs again:
    a walkthrough's conversation of 15 memories stored 33 after three runs. The steps' timings and call ids,
    written once, tell the last add sent again, read once."""
    cid, steps = conversations(1, 0)[0]
    runs = [i for i, s in enumerate(steps) if "task" in s][1:] + [len(steps)]
    assert len(runs) == 3
    once, _ = added_whole_after_each_run(steps, [len(steps)])
    whole, result = added_whole_after_each_run(steps, runs)
    assert result["notes"] == [{"reason": f"data[0:{runs[1]}]: the scope's last add of smolagents messages (told by "
                                          "their timings or call ids), sent again: read once, not stored again"}]
    assert listed(whole) == listed(once) and len(listed(once)) == 15
