"""A search by ``call`` whose arguments are not a JSON object is refused in one line naming its arguments field as
the call has it (``call.arguments``, ``call.input``, ``call.functionCall.args``, ...), in process, over HTTP and over
MCP alike.

Found by a walkthrough as a telecom support agent: a call whose ``arguments`` was JSON text cut short (as a model
writes it when its output is cut) was searched with a 200, its state flagging no argument, silently: the readers
keep such arguments as their raw text, and a raw text has no argument to flag."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_call_state import served

from sam_model.data.toolstate import live_state
from sam_model.memory import HashingEncoder, ScopedMemory

FARID = {"user_id": "farid", "run_id": "chat-1"}
CHAT = [{"role": "user", "content": "My internet is down. My email is farid@fastmail.com"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "lookup_customer", "arguments": json.dumps({"email": "farid@fastmail.com"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"account_id": "BL-175954"})},
        {"role": "assistant", "content": "I can send a technician. Which day suits you?"},
        {"role": "user", "content": "Monday morning, go ahead"}]
GOOD = {"name": "schedule_technician", "arguments": json.dumps({"account_id": "BL-175954", "day": "Monday"})}
CUT = '{"account_id": "BL-175954", "day": "Mon'


REFUSED = [
    ({"name": "schedule_technician", "arguments": CUT}, "call.arguments: not valid JSON (Unterminated string"),
    ([GOOD, {"type": "function", "function": {"name": "schedule_technician", "arguments": CUT}}],
     "call[1].function.arguments: not valid JSON"),
    ({"name": "schedule_technician", "arguments": "[1, 2]"}, "call.arguments: a list in JSON, not an object"),
    # each shape's own field: the error named call.arguments, a field none of these calls has
    ({"name": "schedule_technician", "args": [1, 2]}, "call.args: a list in JSON, not an object"),
    ({"type": "tool_use", "id": "t1", "name": "schedule_technician", "input": CUT}, "call.input: not valid JSON"),
    ([GOOD, {"type": "tool_use", "id": "t2", "name": "schedule_technician", "input": [1, 2]}],
     "call[1].input: a list in JSON, not an object"),
    ({"functionCall": {"name": "schedule_technician", "args": [1, 2]}},
     "call.functionCall.args: a list in JSON, not an object"),
    ({"toolUse": {"toolUseId": "t3", "name": "schedule_technician", "input": [1, 2]}},
     "call.toolUse.input: a list in JSON, not an object"),
    ({"type": "function_call", "name": "schedule_technician", "arguments": CUT, "call_id": "c4"},
     "call.arguments: not valid JSON"),
    ({"name": "schedule_technician", "arguments": '{"a": ' * 40 + "1" + "}" * 40},
     "call.arguments: an object nested more than 32 levels deep"),
]


@pytest.mark.parametrize("call, says", REFUSED)
def test_a_call_whose_arguments_are_no_object_is_refused_naming_them(call, says):
    memory = ScopedMemory(HashingEncoder(64))
    memory.add(CHAT, **FARID)
    assert memory.search("", call=GOOD, **FARID)["state"]["uncertainty_flags"] == ["account_id"]  # a good call's
    for ask in (lambda: memory.search("", call=call, **FARID), lambda: memory.live_state(**FARID, call=call)):
        with pytest.raises(ValueError) as refused:
            ask()
        assert str(refused.value).startswith(says) and "\n" not in str(refused.value)
        assert "give the arguments the tool will be called with, a JSON object" in str(refused.value)


def test_empty_arguments_are_a_call_of_none():
    memory = ScopedMemory(HashingEncoder(64))
    memory.add(CHAT, **FARID)
    for args in ("", "{}", None):
        assert memory.search("", call={"name": "reboot_router", "arguments": args}, **FARID)["state"]["phase"]


def test_served_searches_refuse_it_alike(tmp_path):
    pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    from mcp import Client
    from serving import KEYS

    from sam_model.serve.mcp import create_mcp

    bad = {"name": "schedule_technician", "arguments": CUT}
    for batched in (True, False):
        (tmp_path / str(batched)).mkdir()
        tenants, http = served(tmp_path / str(batched), HashingEncoder(64), batched=batched)
        headers = {"X-API-Key": KEYS["acme"]}
        assert http.post("/v1/memories", headers=headers, json={"messages": CHAT, **FARID}).status_code == 200
        r = http.post("/v1/memories/search", headers=headers, json={"query": "", "call": bad, **FARID})
        assert r.status_code == 422 and r.json()["detail"].startswith("call.arguments: not valid JSON"), r.text
        tenants.close()

    async def recall():
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            return await client.call_tool("recall", {"query": "", "call": bad, **FARID})
    (tmp_path / "mcp").mkdir()
    tenants, _ = served(tmp_path / "mcp", HashingEncoder(64), batched=False)
    tenants.tenants["acme"].memory.add(CHAT, **FARID)
    answer = asyncio.run(recall())
    assert answer.is_error and "call.arguments: not valid JSON" in answer.content[0].text
    tenants.close()


@pytest.mark.parametrize("call, says", REFUSED)
def test_the_library_functions_refuse_it_by_the_same_rule(call, says):
    """sam_model.data.toolstate.live_state and the LangChain state_from_messages kept such arguments raw and gave a
    state flagging no argument, where ScopedMemory refused the same call: one rule, one line naming the argument."""
    with pytest.raises(ValueError) as refused:
        live_state(CHAT, call)
    assert str(refused.value).startswith(says) and "\n" not in str(refused.value)
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from sam_model.integrations.langchain import state_from_messages

    with pytest.raises(ValueError) as refused:
        state_from_messages(CHAT, call)
    assert str(refused.value).startswith(says.replace("call", "tool_call", 1)) and "\n" not in str(refused.value)


def test_state_from_messages_names_the_trailing_messages_call():
    """Without ``tool_call``, the calls are the trailing assistant message's: the error names that message."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from sam_model.integrations.langchain import state_from_messages

    trailing = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "schedule_technician", "arguments": GOOD["arguments"]}},
        {"id": "c3", "type": "function", "function": {"name": "schedule_technician", "arguments": CUT}}]}
    with pytest.raises(ValueError) as refused:
        state_from_messages([*CHAT, trailing])
    assert str(refused.value).startswith("messages[5].tool_calls[1].function.arguments: not valid JSON")
    assert state_from_messages([*CHAT, {**trailing, "tool_calls": trailing["tool_calls"][:1]}])[0][
        "uncertainty_flags"] == ["account_id"]


TRAILING = [  # (a conversation whose trailing message's second call holds a list, the field as that message has it)
    ([{"role": "user", "content": "Monday"}, {"role": "assistant", "content": [
        {"type": "text", "text": "Booking it."}, {"type": "tool_use", "id": "t1", "name": "book", "input": {"d": 1}},
        {"type": "tool_use", "id": "t2", "name": "book", "input": [1, 2]}]}], "messages[1].content[2].input"),
    ([{"role": "user", "parts": [{"text": "Monday"}]}, {"role": "model", "parts": [
        {"functionCall": {"name": "book", "args": {"d": 1}}}, {"functionCall": {"name": "book", "args": [1, 2]}}]}],
     "messages[1].parts[1].functionCall.args"),
    ([{"role": "user", "content": [{"text": "Monday"}]}, {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "t1", "name": "book", "input": {"d": 1}}},
        {"toolUse": {"toolUseId": "t2", "name": "book", "input": [1, 2]}}]}], "messages[1].content[1].toolUse.input"),
    ([{"type": "human", "content": "Monday"}, {"type": "ai", "content": "", "tool_calls": [
        {"name": "book", "args": {"d": 1}, "id": "t1"}, {"name": "book", "args": [1, 2], "id": "t2"}]}],
     "messages[1].tool_calls[1].args"),
    # where the readers find the calls elsewhere: each was named messages[1].tool_calls[0].arguments, a path none has
    ([{"type": "human", "content": "Monday"}, {"type": "ai", "content": "", "tool_calls": [], "invalid_tool_calls": [
        {"type": "invalid_tool_call", "name": "book", "args": "[1, 2]", "id": "t1", "error": None}],
        "additional_kwargs": {"tool_calls": [{"id": "t1", "type": "function", "function": {
            "name": "book", "arguments": "[1, 2]"}}]}}],  # ChatOpenAI's output that parsed as no call, dumped
     "messages[1].additional_kwargs.tool_calls[0].function.arguments"),
    ([{"type": "human", "data": {"content": "Monday"}},
      {"type": "ai", "data": {"content": "", "tool_calls": [{"name": "book", "args": [1, 2], "id": "t1"}]}}],
     "messages[1].data.tool_calls[0].args"),  # messages_to_dict
    ([{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
       "kwargs": {"content": "Monday"}},
      {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": {
          "content": "", "additional_kwargs": {"function_call": {"name": "book", "arguments": "[1, 2]"}}}}],
     "messages[1].kwargs.additional_kwargs.function_call.arguments"),  # dumpd, the deprecated functions API
    ([{"role": "user", "content": "Monday"},
      {"role": "assistant", "content": None, "function_call": {"name": "book", "arguments": "[1, 2]"}}],
     "messages[1].function_call.arguments"),
    ([{"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": "Monday"}},
      {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "message": {
          "id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "book", "input": [1, 2]}]}}],
     "messages[1].message.content[0].input"),  # a Claude Code entry
]


@pytest.mark.parametrize("messages, field", TRAILING)
def test_state_from_messages_names_the_trailing_calls_field_as_its_format_has_it(messages, field):
    """Anthropic's, Gemini's, Bedrock's and LangChain's messages hold a call's arguments in their own fields: the error
    named ``messages[1].tool_calls[1].arguments``, a field none of them has."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from sam_model.integrations.langchain import state_from_messages

    with pytest.raises(ValueError) as refused:
        state_from_messages(messages)
    assert str(refused.value).startswith(f"{field}: a list in JSON, not an object"), str(refused.value)


PATCH = "*** Begin Patch\n*** Update File: src/router.py\n@@\n-reboot()\n+reboot(force=True)\n*** End Patch\n"


def test_a_freeform_patch_is_a_call_and_is_searched():
    """Codex's apply_patch custom tool call takes the patch itself, no JSON object: its paths are its argument values
    (argumentleaves.raw_patch), so it is searched, in process and by the library alike, not refused as cut JSON."""
    call = {"type": "custom_tool_call", "name": "apply_patch", "input": PATCH, "call_id": "c9"}
    memory = ScopedMemory(HashingEncoder(64))
    memory.add(CHAT, **FARID)
    assert memory.search("", call=call, **FARID)["state"]["phase"] == "apply_patch"
    assert memory.live_state(**FARID, call=call).phase == "apply_patch"
    assert live_state(CHAT, call)["phase"] == "apply_patch"


def test_state_from_messages_names_the_item_a_responses_call_came_from():
    """A Responses log's calls are items of their own, joined into one trailing assistant message: the error named
    that message by the last item's place (messages[2].tool_calls[0], the good call's item, which holds no
    tool_calls), not the item holding the cut arguments."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from sam_model.integrations.langchain import state_from_messages

    items = [{"type": "message", "role": "user", "content": CHAT[0]["content"]},
             {"type": "function_call", "name": "schedule_technician", "arguments": CUT, "call_id": "c1"},
             {"type": "function_call", "name": "schedule_technician", "arguments": GOOD["arguments"], "call_id": "c2"}]
    with pytest.raises(ValueError) as refused:
        state_from_messages(items)
    assert str(refused.value).startswith("messages[1].arguments: not valid JSON"), str(refused.value)
    with pytest.raises(ValueError) as refused:
        state_from_messages([items[0], items[2], items[1]])
    assert str(refused.value).startswith("messages[2].arguments: not valid JSON"), str(refused.value)


def _kept_call(arguments: str, deprecated: bool = False):
    """ChatOpenAI's AI message whose call parsed as no call: tool_calls empty, the raw call in additional_kwargs
    (and, for tool_calls, an invalid_tool_call), as the integration keeps a call cut short."""
    from langchain_core.messages import AIMessage

    if deprecated:
        return AIMessage(content="", additional_kwargs={"function_call": {"name": "book", "arguments": arguments}})
    return AIMessage(content="", additional_kwargs={"tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "book", "arguments": arguments}}]}, invalid_tool_calls=[
        {"type": "invalid_tool_call", "name": "book", "args": arguments, "id": "c1", "error": None}])


@pytest.mark.parametrize("deprecated, field", [(False, "messages[1].additional_kwargs.tool_calls[0].function.arguments"),
                                               (True, "messages[1].additional_kwargs.function_call.arguments")])
def test_a_message_object_and_its_dump_refuse_a_cut_call_alike(deprecated, field):
    """An AIMessage object whose only call was cut short was read as a turn without a call (langchain_core's
    converter drops additional_kwargs), the last event's state returned without an error, where its model_dump()
    was refused naming the cut arguments: both are refused now, in one line naming the same field."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from langchain_core.messages import HumanMessage

    from sam_model.integrations.langchain import state_from_messages

    ai = _kept_call(CUT, deprecated)
    assert ai.tool_calls == []
    for messages in ([HumanMessage("Monday"), ai], [HumanMessage("Monday").model_dump(), ai.model_dump()]):
        with pytest.raises(ValueError) as refused:
            state_from_messages(messages)
        assert str(refused.value).startswith(f"{field}: not valid JSON"), str(refused.value)
        assert "\n" not in str(refused.value)


@pytest.mark.parametrize("deprecated", [False, True])
def test_a_kept_call_that_parses_reads_as_its_dump(deprecated):
    """A call kept only in additional_kwargs whose arguments parse (an older integration's, the deprecated
    function_call) is the decision of the object as of its dump: the object had read as no call."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from langchain_core.messages import HumanMessage

    from sam_model.integrations.langchain import state_from_messages

    human = HumanMessage(CHAT[0]["content"])
    ai = _kept_call('{"email": "farid@fastmail.com", "day": ""}', deprecated)
    got = state_from_messages([human, ai])
    assert got == state_from_messages([human.model_dump(), ai.model_dump()])
    assert got[0]["phase"] == "book"


def test_ordinary_message_objects_read_as_langchain_converts_them():
    """The fix reads only AI objects whose calls are all in additional_kwargs by their dump: every other object is
    read as langchain_core's converter gives it, as before."""
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from langchain_core.messages import (
        AIMessage,
        AIMessageChunk,
        HumanMessage,
        ToolMessage,
        convert_to_openai_messages,
    )

    from sam_model.integrations.langchain import openai_messages

    kept = {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book", "arguments": '{"d": 1}'}}]}
    objects = [HumanMessage("Monday"), AIMessage("Booked."), AIMessage("", additional_kwargs={"refusal": None}),
               AIMessage("", tool_calls=[{"name": "book", "args": {"d": 1}, "id": "c1"}], additional_kwargs=kept),
               AIMessageChunk(content="", tool_call_chunks=[{"name": "book", "args": '{"d": 1}', "id": "c1",
                                                             "index": 0}]),
               ToolMessage("booked", tool_call_id="c1")]
    for m in objects:
        assert openai_messages([m]) == [convert_to_openai_messages(m)], m
