"""MCP's remember records the conversation as sam-serve's HTTP add does: ``messages`` in any format ScopedMemory.add
reads, tool calls and their results included, so that recall by ``call`` traces the next call's arguments to a tool
result (ids, prices an agent looked up), which an MCP client that could store only user text never had. Checked as
the HTTP add checks, in its words; logged as the HTTP add is logged; one tenant's remember never reaches another's."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
pytest.importorskip("mcp", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from mcp import Client  # noqa: E402
from serving import KEYS, keys_file  # noqa: E402

from sam_model.data.toolstate import live_state  # noqa: E402
from sam_model.limits import MAX_ADD_ITEMS, MAX_TEXT_CHARS  # noqa: E402
from sam_model.memory import HashingEncoder  # noqa: E402
from sam_model.serve.http import create_app  # noqa: E402
from sam_model.serve.mcp import create_mcp  # noqa: E402
from sam_model.serve.tenants import Tenants, read_keys  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

MIA = {"user_id": "mia", "run_id": "trip"}
FOUND = {"name": "Ann", "reservations": [{"id": "QX7Z9A", "destination": "BOS", "cabin": "economy"}]}
# the reservation id and the cabin are only in the tool's result: no user or assistant text says them
OPENAI = [
    {"role": "user", "content": "Hi, I am ann_lee_123. Cancel my Boston trip please."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_user", "arguments": '{"user_id": "ann_lee_123"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": json.dumps(FOUND)},
    {"role": "assistant", "content": "Your Boston trip: shall I cancel it?"},
    {"role": "user", "content": "yes"},
]
ANTHROPIC = [
    OPENAI[0],
    {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "get_user",
                                       "input": {"user_id": "ann_lee_123"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": json.dumps(FOUND)}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Your Boston trip: shall I cancel it?"}]},
    OPENAI[4],
]
CANCEL = {"name": "cancel_reservation", "arguments": {"reservation_id": "QX7Z9A", "user_id": "ann_lee_123",
                                                      "cabin": "economy"}}


def open_tenants(folder):
    return Tenants(read_keys(keys_file(folder)), folder / "data", HashingEncoder(32), StoreConfig())


def mcp_calls(tenants: Tenants, tenant: str, *calls: tuple[str, dict]) -> list:
    """The answers to ``calls`` (tool, arguments) made by an MCP client of ``tenant``'s memory."""
    async def run() -> list:
        async with Client(create_mcp(tenants, stdio_tenant=tenant)) as client:
            return [await client.call_tool(tool, args) for tool, args in calls]
    return asyncio.run(run())


def answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def writes(tenant) -> list[dict]:
    return [r for r in tenant.wal.records() if r["op"] != "vectors"]


@pytest.mark.parametrize("messages", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def test_remembered_tool_calls_and_results_feed_recall_by_call_as_live_state(tmp_path, messages):
    tenants = open_tenants(tmp_path)
    added, found = mcp_calls(tenants, "acme", ("remember", {"messages": messages, **MIA}),
                             ("recall", {"query": "", "call": CANCEL, **MIA}))
    memory = tenants.tenants["acme"].memory
    assert [m["memory"] for m in answer(added)["results"]] == [m["memory"] for m in memory.get_all(**MIA)["results"]]
    assert any("QX7Z9A" in m["memory"] and m["memory"].startswith("get_user") for m in answer(added)["results"])
    state = answer(found)["state"]
    assert state == live_state(messages, CANCEL)  # the importer's decision-point state of these messages
    assert {"reservation_id", "cabin"} <= set(state["uncertainty_flags"])  # traced to the tool's result
    assert state["last_action_result"].startswith("get_user: ok")
    text_only = [m for m in messages if m["role"] == "user" and isinstance(m["content"], str)]
    assert not {"reservation_id", "cabin"} & set(live_state(text_only, CANCEL)["uncertainty_flags"])  # remember(text)
    assert answer(found) == memory.search("", call=CANCEL, **MIA)
    tenants.close()


def test_an_mcp_remember_is_logged_as_the_http_add_and_survives_a_restart_without_checkpoint(tmp_path):
    """Same log record as an HTTP add of the same messages, applied by the same path, replayed after a stop that
    wrote no checkpoint (what a kill -9 leaves; the real kill: tests/test_serve_kill.py)."""
    tenants = open_tenants(tmp_path)
    tenant = tenants.tenants["acme"]
    answer(mcp_calls(tenants, "acme", ("remember", {"messages": OPENAI, **MIA}))[0])
    r = TestClient(create_app(tenants)).post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                                             json={"messages": OPENAI, "user_id": "bob"})
    assert r.status_code == 200, r.text
    by_mcp, by_http = writes(tenant)
    assert by_mcp["op"] == by_http["op"] == "add" and by_mcp["args"] == {**by_http["args"], **MIA}
    assert by_mcp["args"]["data"] == OPENAI
    want = tenant.memory.search("", call=CANCEL, **MIA)
    for t in tenants.tenants.values():
        t.release()  # no checkpoint: the log replays
    again = open_tenants(tmp_path)
    assert len(writes(again.tenants["acme"])) == 2
    got = answer(mcp_calls(again, "acme", ("recall", {"query": "", "call": CANCEL, **MIA}))[0])
    assert got["state"] == want["state"] == live_state(OPENAI, CANCEL)
    assert [(h["id"], h["memory"], round(h["score"], 5)) for h in got["results"]] == \
        [(h["id"], h["memory"], round(h["score"], 5)) for h in want["results"]]  # (created_at: the replay's time)
    again.close()


def test_one_tenants_remembered_messages_never_reach_anothers_scope(tmp_path):
    tenants = open_tenants(tmp_path)
    ours = [{"role": "user", "content": "Cancel my trip please."}, {"role": "assistant", "content": "Which one?"},
            {"role": "user", "content": "the Boston one"}]
    answer(mcp_calls(tenants, "globex", ("remember", {"messages": OPENAI, **MIA}))[0])
    answer(mcp_calls(tenants, "acme", ("remember", {"messages": ours, **MIA}))[0])
    for name, messages in (("acme", ours), ("globex", OPENAI)):
        found, listed = mcp_calls(tenants, name, ("recall", {"query": "QX7Z9A reservation", "call": CANCEL, **MIA}),
                                  ("recall", {"query": "QX7Z9A reservation", **MIA, "limit": 50}))
        assert answer(found)["state"] == live_state(messages, CANCEL)
        assert {h["memory"] for h in answer(listed)["results"]} == \
            {m["memory"] for m in tenants.tenants[name].memory.get_all(**MIA)["results"]}
        assert len(answer(listed)["results"]) == len(messages)
    assert not any("QX7Z9A" in m["memory"] for m in tenants.tenants["acme"].memory.get_all(**MIA)["results"])
    assert live_state(ours, CANCEL)["uncertainty_flags"] == []  # globex's tool result never reached acme's state
    tenants.close()


BAD = [  # messages HTTP's add refuses with a 422: MCP's remember refuses them with the same line
    [],
    [{"role": "user"}],
    [{"role": "user", "content": "ok"}, {"role": "user", "content": " "}],
    [{"role": "user", "content": "x" * (MAX_TEXT_CHARS + 1)}],
    [{"role": "user", "content": 5}],
    [{"role": "user", "content": "ok"}, {"foo": 1}],
    # one message of more calls than the limit on messages: each call is a memory (it made 1,001 of them)
    [{"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "ping", "arguments": "{}"}}
        for i in range(MAX_ADD_ITEMS + 1)]}],
    [{"role": "model", "parts": [{"functionCall": {"name": "ping", "args": {}}}] * (MAX_ADD_ITEMS + 1)}],
]


@pytest.mark.parametrize("messages", BAD, ids=["empty", "no-content", "blank", "too-long", "number", "no-role",
                                               "too-many-calls", "too-many-gemini-calls"])
def test_mcp_remember_refuses_what_the_http_add_refuses_in_its_words_and_logs_nothing(tmp_path, messages):
    tenants = open_tenants(tmp_path)
    r = TestClient(create_app(tenants)).post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                                             json={"messages": messages, **MIA})
    assert r.status_code == 422, r.text
    refused = mcp_calls(tenants, "acme", ("remember", {"messages": messages, **MIA}))[0]
    assert refused.is_error and refused.content[0].text == f"Error executing tool remember: {r.json()['detail']}"
    assert "\n" not in refused.content[0].text
    assert writes(tenants.tenants["acme"]) == [] and len(tenants.tenants["acme"].memory.store) == 0
    tenants.close()


@pytest.mark.parametrize("args, says", [
    ({}, "give text or messages: text for one thing said, messages for the conversation's new messages"),
    ({"text": "hi", "messages": [{"role": "user", "content": "hi"}]}, "give text or messages, not both"),
    ({"messages": [{"role": "user", "content": "hi"}] * (MAX_ADD_ITEMS + 1)},
     f"argument 'messages' has {MAX_ADD_ITEMS + 1} items, more than the limit of {MAX_ADD_ITEMS}"),
    ({"messages": {"role": "user", "content": "hi"}}, "argument 'messages' must be an array or null, got object"),
    ({"messages": ["hi"]}, "argument 'messages' must be"),
])
def test_a_remember_with_neither_both_or_too_many_is_one_line_naming_it(tmp_path, args, says):
    tenants = open_tenants(tmp_path)
    refused = mcp_calls(tenants, "acme", ("remember", {**args, **MIA}))[0]
    assert refused.is_error and refused.content[0].text.startswith(f"Error executing tool remember: {says}")
    assert "\n" not in refused.content[0].text
    assert writes(tenants.tenants["acme"]) == []
    tenants.close()


def test_the_remember_schema_tells_an_agent_when_and_what_to_send(tmp_path):
    tenants = open_tenants(tmp_path)

    async def tools() -> dict:
        async with Client(create_mcp(tenants, stdio_tenant="acme")) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    remember = asyncio.run(tools())["remember"]
    props = remember.input_schema["properties"]
    assert "required" not in remember.input_schema or not {"text", "messages"} & set(remember.input_schema["required"])
    assert "tool_calls" in props["messages"]["description"] and "tool_result" in props["messages"]["description"]
    assert "Instead of text" in props["messages"]["description"] and "instead of messages" in props["text"]["description"]
    assert "after each user turn and each tool result" in " ".join(remember.description.split())
    tenants.close()


@pytest.mark.parametrize("args, field", [
    ({"text": "fly me to \ud83d Boston"}, "text"),
    ({"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": "to \ud83d Boston"}]},
     "messages[1].content"),
])
def test_a_lone_surrogate_in_a_remember_names_the_argument_it_is_in(tmp_path, args, field):
    """The log refuses a lone UTF-16 surrogate (valid JSON, no Unicode text) naming the field: it called an add's data
    the HTTP body's ``messages``, also when remember's ``text`` held it."""
    tenants = open_tenants(tmp_path)
    refused = mcp_calls(tenants, "acme", ("remember", {**args, **MIA}))[0]
    assert refused.is_error and refused.content[0].text.startswith(
        f"Error executing tool remember: {field} holds a lone UTF-16 surrogate ('\\ud83d')")
    assert writes(tenants.tenants["acme"]) == [] and len(tenants.tenants["acme"].memory.store) == 0
    tenants.close()


GEMINI = [{"role": "user", "parts": [{"text": "Hi, I am ann_lee_123. Cancel my Boston trip please."}]},
          {"role": "model", "parts": [{"functionCall": {"name": "get_user", "args": {"user_id": "ann_lee_123"}}}]},
          {"role": "user", "parts": [{"functionResponse": {"name": "get_user", "response": {"output": FOUND}}}]}]


def test_a_served_add_reads_its_messages_through_their_reader_once(tmp_path, monkeypatch):
    """The HTTP add and MCP remember check an add's messages (naming their field) before logging it, then the memory
    wrote them: each format's reader ran twice per served add (ScopedMemory.add alone reads them once). The check's
    messages are now the ones written."""
    import sam_model.memory.scopedinput as scopedinput

    reads = []
    real = scopedinput.to_chat
    monkeypatch.setattr(scopedinput, "to_chat", lambda *a, **kw: reads.append(a[0]) or real(*a, **kw))
    tenants = open_tenants(tmp_path)
    r = TestClient(create_app(tenants)).post("/v1/memories", headers={"X-API-Key": KEYS["acme"]},
                                             json={"messages": GEMINI, **MIA})
    assert r.status_code == 200 and len(reads) == 1, r.text
    added = answer(mcp_calls(tenants, "acme", ("remember", {"messages": GEMINI, "user_id": "bo"}))[0])
    assert len(reads) == 2 and reads[1] == GEMINI
    memory = tenants.tenants["acme"].memory  # what was written is what the reader read, in both
    assert [m["memory"] for m in r.json()["results"]] == [m["memory"] for m in added["results"]] == [
        m["memory"] for m in memory.get_all(user_id="bo")["results"]]
    assert any("QX7Z9A" in m["memory"] for m in added["results"])
    tenants.close()


def test_mcp_forget_all_deletes_a_scopes_memories_and_conversation_as_the_http_delete_all(tmp_path):
    """MCP had no delete-all: a user who wanted all their memories gone was forgotten one id at a time. forget_all is
    the HTTP DELETE /v1/memories?<scope>: the same log record, the same refusals (no scope, a '/', an unknown
    argument; logged never), within the caller's tenant only, and the conversation goes with the memories."""
    tenants = open_tenants(tmp_path)
    acme = tenants.tenants["acme"]
    answer(mcp_calls(tenants, "acme", ("remember", {"messages": OPENAI, **MIA}))[0])
    answer(mcp_calls(tenants, "acme", ("remember", {"text": "eve's note", "user_id": "eve"}))[0])
    answer(mcp_calls(tenants, "globex", ("remember", {"messages": OPENAI, **MIA}))[0])
    logged = len(writes(acme))
    refused = mcp_calls(tenants, "acme", ("forget_all", {}), ("forget_all", {"user_id": "mia/trip"}),
                        ("forget_all", {"usr_id": "mia"}), ("forget_all", {"user_id": 7}))
    assert [r.is_error for r in refused] == [True] * 4
    assert "give user_id, agent_id or run_id" in refused[0].content[0].text
    assert "without '/'" in refused[1].content[0].text and "unknown argument 'usr_id'" in refused[2].content[0].text
    assert len(writes(acme)) == logged
    done, found = mcp_calls(tenants, "acme", ("forget_all", MIA), ("recall", {"query": "", "call": CANCEL, **MIA}))
    assert answer(done) == {"message": f"{len(OPENAI)} memories deleted"}
    assert answer(found) == {"results": [], "state": live_state([], CANCEL)}  # the conversation went too
    assert writes(acme)[-1]["op"] == "delete_all" and writes(acme)[-1]["args"] == {**MIA, "agent_id": None}
    assert [m["memory"] for m in acme.memory.get_all(user_id="eve")["results"]] == ["eve's note"]
    assert len(tenants.tenants["globex"].memory.get_all(**MIA)["results"]) == len(OPENAI)
    http = TestClient(create_app(tenants)).delete("/v1/memories", headers={"X-API-Key": KEYS["globex"]}, params=MIA)
    assert http.json() == {"message": f"{len(OPENAI)} memories deleted"}
    assert writes(tenants.tenants["globex"])[-1]["args"] == writes(acme)[-1]["args"]  # logged alike
    for t in tenants.tenants.values():
        t.release()  # no checkpoint: the log replays
    again = open_tenants(tmp_path)
    assert again.tenants["acme"].memory.get_all(**MIA)["results"] == []
    assert len(again.tenants["acme"].memory.get_all(user_id="eve")["results"]) == 1
    again.close()
