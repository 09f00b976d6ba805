"""OpenAI's deprecated functions API added live: an assistant's ``function_call`` (content None or "") and the
``function`` message of its result, which the importer's openai reader reads as one tool call and its result."""

from __future__ import annotations

import pytest
from test_live_adds import conversation, imported, stored

from sam_model.memory import HashingEncoder, ScopedMemory

MESSAGES = [{"role": "system", "content": "You book tables."},
            {"role": "user", "content": "my phone is 555"},
            {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": '{"phone": "555"}'}},
            {"role": "function", "name": "lookup", "content": '{"user": "ann_7"}'},
            {"role": "assistant", "content": "", "function_call": {"name": "book",
                                                                   "arguments": '{"user": "ann_7", "guests": 2}'}},
            {"role": "function", "name": "book", "content": "booked"},
            {"role": "assistant", "content": "Booked."}]


@pytest.mark.parametrize("how", ["one add", "a message an add", "checked first"])
def test_a_legacy_function_call_and_its_result_are_the_importers_memories(tmp_path, how):
    """The call's message was refused ('data[2].content is missing', 'data[4].content is empty'), though
    sam-data transcripts reads the same messages: the add stores the importer's memories, in the states it gives."""
    events = imported(tmp_path, "c.jsonl", [{"id": "c", "messages": MESSAGES}])
    assert [e["text"] for e in events if e["kind"] == "action"] == ["CALL lookup(phone=555)",
                                                                     "CALL book(user=ann_7, guests=2)"]
    memory = ScopedMemory(HashingEncoder(16))
    for batch in [MESSAGES] if how == "one add" else [[m] for m in MESSAGES]:
        read = memory.check_add(batch, "messages", user_id="me", run_id="s") if how == "checked first" else None
        assert "skipped" not in memory.add(batch, user_id="me", run_id="s", read=read)
    assert stored(memory) == [(e["step"], e["kind"], e["text"]) for e in events]
    assert conversation(memory) == [(e["state"], e.get("useful_memory_steps") or []) for e in events]


def test_a_function_message_without_a_name_is_refused_naming_it():
    """The reader's rule, named by the add's message: a result of no function answers nothing."""
    with pytest.raises(ValueError, match=r"data, message 1: function message without a 'name'"):
        ScopedMemory(HashingEncoder(16)).add([MESSAGES[2], {"role": "function", "content": "ok"}],
                                             user_id="me", run_id="s")
