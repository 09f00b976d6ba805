"""A walkthrough as a telecom support agent: ``tool_call_memories`` ranked the run's current message (recorded
before the search, as a LangGraph node records the turn) as a memory of the call about to be made, where
ScopedMemory.search(call=) leaves it out (README "Search at a step": evaluate.py ranks the events before a decision
point). The LangChain search for a call rebuilt from the graph's messages is now made at the same step."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402

from sam_model.integrations.langchain import SAMLangChainRetriever, openai_messages, tool_call_memories  # noqa: E402
from sam_model.memory import HashingEncoder, ScopedMemory  # noqa: E402

CALL = {"name": "schedule_technician", "args": {"account_id": "BL-175954", "day": "Monday"}, "id": "c2"}


def chat() -> list:
    return [SystemMessage("Brightline support. Look the customer up before any change."),
            HumanMessage("My internet is down. My email is farid@fastmail.com"),
            AIMessage("", tool_calls=[{"name": "lookup_customer", "args": {"email": "farid@fastmail.com"},
                                       "id": "c1"}]),
            ToolMessage(json.dumps({"account_id": "BL-175954", "plan": "FIBER100"}), tool_call_id="c1",
                        name="lookup_customer"),
            AIMessage("I can send a technician. Which day suits you?"),
            HumanMessage("Monday morning for BL-175954, go ahead")]


def test_tool_call_memories_search_as_scoped_memory_search_by_call():
    memory = ScopedMemory(HashingEncoder(512))
    msgs = chat()
    memory.add(openai_messages(msgs), user_id="farid", run_id="chat-1")  # the turn recorded, then the call searched
    newest = max(r["step"] for r in memory.get_all(user_id="farid", run_id="chat-1")["results"])
    want = memory.search("", call=CALL, user_id="farid", run_id="chat-1", k=20)
    assert want["results"] and all(r["step"] < newest for r in want["results"])
    retriever = SAMLangChainRetriever(memory=memory, k=20)
    config = {"configurable": {"user_id": "farid", "thread_id": "chat-1"}}
    per_call = tool_call_memories(retriever, [*msgs, AIMessage("", tool_calls=[CALL])], config)
    got = per_call["c2"]
    assert newest not in [d.metadata["step"] for d in got]  # the current message is no memory of its own call
    assert [d.metadata["id"] for d in got] == [r["id"] for r in want["results"]]
    assert [d.metadata["score"] for d in got] == [r["score"] for r in want["results"]]
    by_config = retriever.invoke("", {"configurable": {**config["configurable"], "sam_messages": msgs,
                                                       "sam_tool_call": CALL}})
    assert [d.metadata["id"] for d in by_config] == [r["id"] for r in want["results"]]
    # a step given still wins: made now, the current message is a candidate again
    later = retriever.invoke("", {"configurable": {**config["configurable"], "sam_messages": msgs,
                                                   "sam_tool_call": CALL, "sam_step": newest + 1}})
    assert newest in [d.metadata["step"] for d in later]



def test_messages_ahead_of_the_recorded_conversation_are_searched_now():
    """The graph's newest message not recorded yet: it is no memory, so the search is made now and the run's
    recorded messages, the newest included, are all candidates."""
    memory = ScopedMemory(HashingEncoder(512))
    msgs = chat()
    memory.add(openai_messages(msgs[:-1]), user_id="farid", run_id="chat-1")
    steps = {r["step"] for r in memory.get_all(user_id="farid", run_id="chat-1")["results"]}
    retriever = SAMLangChainRetriever(memory=memory, k=20, user_id="farid")
    got = tool_call_memories(retriever, [*msgs, AIMessage("", tool_calls=[CALL])], {"configurable": {
        "thread_id": "chat-1"}})["c2"]
    assert {d.metadata["step"] for d in got} == steps
