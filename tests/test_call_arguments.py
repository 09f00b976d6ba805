"""A search by ``call`` whose arguments are not a JSON object is refused in one line naming ``call.arguments``, in
process, over HTTP and over MCP alike.

Found by a walkthrough as a telecom support agent: a call whose ``arguments`` was JSON text cut short (as a model
writes it when its output is cut) was searched with a 200, its state flagging no argument, silently: the readers
keep such arguments as their raw text, and a raw text has no argument to flag."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_call_state import served

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


@pytest.mark.parametrize("call, says", [
    ({"name": "schedule_technician", "arguments": CUT}, "call.arguments: not valid JSON (Unterminated string"),
    ([GOOD, {"type": "function", "function": {"name": "schedule_technician", "arguments": CUT}}],
     "call[1].arguments: not valid JSON"),
    ({"name": "schedule_technician", "arguments": "[1, 2]"}, "call.arguments: a list in JSON, not an object"),
    ({"name": "schedule_technician", "args": [1, 2]}, "call.arguments: a list in JSON, not an object"),
    ({"name": "schedule_technician", "arguments": '{"a": ' * 40 + "1" + "}" * 40},
     "call.arguments: an object nested more than 32 levels deep"),
])
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
