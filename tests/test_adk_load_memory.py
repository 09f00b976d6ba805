"""ADK's load_memory tool answered by SAMMemoryService: its result, saved in the session's events, is SAM's own recall.
Read as a tool's result, storing the session (add_session_to_memory, add_events_to_memory) stored the recalled
memories again under the new session, and sam-data transcripts (a saved session, ADK's session database) wrote them
as training data whose labels pointed at SAM's recall. The adk reader reads it as the recall marker, its call kept;
an app's own load_memory, another memory service's answer, or an empty one, reads as any result.

Runs on the stand-ins of tests/test_adk_memory.py, and on the real package where installed (its Runner test too)."""

from __future__ import annotations

import asyncio
import copy
import json
import sqlite3
from typing import Any

import pytest
import test_adk_memory
from test_adk_memory import Dumped, needs_adk, stored
from test_format_adk import camel_keys

from sam_model.data.formats import adk
from sam_model.data.formats.recalls import recalled
from sam_model.data.transcripts import ImportReport, iter_transcript_events
from sam_model.memory import HashingEncoder, ScopedMemory

adapter = test_adk_memory.adapter  # the fixture: the adapter over the real package or the stand-ins
SCOPES = {"user_id": "mia", "agent_id": "shop"}
FIRST = [("user", "My order is ORD-5521, to Paris."), ("shop_agent", "Your order ORD-5521 ships to Paris.")]


def _event(n: int, author: str, sid: str, parts: list[dict[str, Any]], role: str | None = None) -> dict[str, Any]:
    return {"content": {"parts": parts, "role": role or ("user" if author == "user" else "model")},
            "invocation_id": f"{sid}-inv-{n // 4}", "author": author, "actions": {}, "id": f"{sid}-{n}",
            "timestamp": 1796600000.0 + n}


def _session(sid: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": sid, "app_name": "shop", "user_id": "mia", "state": {}, "events": events,
            "last_update_time": 1796600100.0}


def _first() -> dict[str, Any]:
    return _session("s1", [_event(i, a, "s1", [{"text": t}]) for i, (a, t) in enumerate(FIRST)])


def _second(response: dict[str, Any], name: str = "load_memory") -> dict[str, Any]:
    """The user's next session: a question, a load_memory call, its answer ``response``, the agent's reply."""
    call = {"id": "adk-1", "name": name, "args": {"query": "order"}}
    return _session("s2", [
        _event(0, "user", "s2", [{"text": "Which order was it?"}]),
        _event(1, "shop_agent", "s2", [{"function_call": call}]),
        _event(2, "shop_agent", "s2", [{"function_response": {"id": "adk-1", "name": name, "response": response}}],
               role="user"),
        _event(3, "shop_agent", "s2", [{"text": "It was ORD-5521."}])])


def _recall(adapter: Any) -> tuple[ScopedMemory, Any, dict[str, Any]]:
    """A store holding the first session, its service, and load_memory's response as ADK saves it: the service's
    MemoryEntry items (model_dump(mode="json")) in ADK's LoadMemoryResponse, wrapped as {"result": ...}."""
    store = ScopedMemory(HashingEncoder(64))
    service = adapter.SAMMemoryService(store)
    service.store(_first())
    found = service.search("shop", "mia", "order")
    assert len(found.memories) == 2
    return store, service, {"result": {"memories": [m.model_dump(mode="json") for m in found.memories]}}


def _read(events: list[dict[str, Any]], owner: tuple[str, str] | None = ("mia", "shop")) -> Any:
    """The events read as the session of ``owner`` (its user and app) holds them."""
    return adk.to_chat(events, "session", owner=owner)


def _tool_texts(events: list[dict[str, Any]]) -> list[Any]:
    return [m["content"] for m in _read(events).messages if m["role"] == "tool"]


def _shapes(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The session as the dumps a program saves it: plain, without its nulls (the SQL services), by alias."""
    bare = copy.deepcopy(doc)
    for e in bare["events"]:  # exclude_none: an entry's unset author, timestamp or session dropped
        for entry in (e["content"]["parts"][0].get("function_response") or {}).get("response", {}).get(
                "result", {}).get("memories", []):
            entry.pop("timestamp", None)
            entry["custom_metadata"] = {k: v for k, v in entry["custom_metadata"].items() if v is not None}
    return {"plain": doc, "exclude_none": bare, "by_alias": camel_keys(doc)}


@pytest.mark.parametrize("shape", ["plain", "exclude_none", "by_alias"])
def test_sams_load_memory_result_reads_as_the_recall_marker_its_call_kept(adapter, shape):
    _, _, response = _recall(adapter)
    doc = _shapes(_second(response))[shape]
    chat = _read(doc["events"])
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "tool", "assistant"]
    assert chat.messages[1]["tool_calls"][0]["function"] == {"name": "load_memory", "arguments": {"query": "order"}}
    assert chat.messages[2] == {"role": "tool", "name": "load_memory", "content": recalled(2), "tool_call_id": "adk-1"}
    assert chat.messages[3]["content"] == "It was ORD-5521."


def test_storing_the_session_stores_the_recall_as_the_marker_not_its_memories_again(adapter, tmp_path):
    """add_session_to_memory and add_events_to_memory (one code path, the reader): the recalled memories are in the
    store once, under the first session; sam-data transcripts reads the saved session alike."""
    store, service, response = _recall(adapter)
    doc = _second(response)
    asyncio.run(service.add_session_to_memory(Dumped(doc)))
    said = [t for _, t in stored(store, **SCOPES)]
    for _, text in FIRST:
        assert said.count(text) == 1, said
    assert "load_memory: " + recalled(2) in said and "CALL load_memory(query=order)" in said, said
    assert not any("to Paris" in t for _, t in stored(store, **SCOPES, run_id="s2")), said
    events_store, events_service, _ = _recall(adapter)
    events_service.store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2")
    assert stored(events_store, **SCOPES) == stored(store, **SCOPES)
    path = tmp_path / "s2.json"
    path.write_text(json.dumps(doc))
    texts = [e["text"] for e in iter_transcript_events(path)]
    assert "load_memory: " + recalled(2) in texts and not any("ships to Paris" in t for t in texts), texts


def test_adks_session_database_reads_the_recall_as_the_marker(adapter, tmp_path):
    _, _, response = _recall(adapter)
    db = tmp_path / "sessions.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE events (id TEXT, app_name TEXT, user_id TEXT, session_id TEXT, invocation_id TEXT, "
                    "timestamp REAL, event_data TEXT)")
        for e in _second(response)["events"]:
            data = {k: v for k, v in e.items() if k not in ("id", "invocation_id")}
            con.execute("INSERT INTO events VALUES (?, 'shop', 'mia', 's2', ?, ?, ?)",
                        (e["id"], e["invocation_id"], e["timestamp"], json.dumps(data)))
    con.close()
    texts = [e["text"] for e in iter_transcript_events(db)]
    assert "load_memory: " + recalled(2) in texts and not any("ships to Paris" in t for t in texts), texts


OTHERS = ["an app's own tool returning a dict", "another service's entries (no SAM metadata)",
          "an entry whose id is not its step's", "other metadata beside SAM's", "an entry of two parts",
          "more beside the memories", "an empty recall", "a step and its id without SAM's score",
          "an app's own score, session and step, its id another session's", "SAM's shape from another tool"]


def _others(sam: dict[str, Any]) -> dict[str, tuple[dict[str, Any], str]]:
    """load_memory answers that are not SAM's recall, with the tool's name: each reads as a result."""
    entries = sam["result"]["memories"]
    plain = [{"content": e["content"], "author": e["author"], "timestamp": e["timestamp"]} for e in entries]
    return {
        "an app's own tool returning a dict": ({"memories": entries}, "load_memory"),
        "another service's entries (no SAM metadata)": ({"result": {"memories": plain}}, "load_memory"),
        "an entry whose id is not its step's": ({"result": {"memories": [{**entries[0], "id": "note-7"}]}},
                                                "load_memory"),
        "other metadata beside SAM's": ({"result": {"memories": [
            {**entries[0], "custom_metadata": {**entries[0]["custom_metadata"], "source": "crm"}}]}}, "load_memory"),
        "an entry of two parts": ({"result": {"memories": [
            {**entries[0], "content": {**entries[0]["content"], "parts": entries[0]["content"]["parts"] * 2}}]}},
            "load_memory"),
        "more beside the memories": ({"result": {"memories": entries, "note": "x"}}, "load_memory"),
        "an empty recall": ({"result": {"memories": []}}, "load_memory"),
        # an app's own memory service, its entries steps of a guide: no score, or a session its id is not of
        "a step and its id without SAM's score": ({"result": {"memories": [
            {**entries[0], "id": "guide-3#2", "custom_metadata": {"step": 2}}]}}, "load_memory"),
        "an app's own score, session and step, its id another session's": ({"result": {"memories": [
            {**entries[0], "id": "faq-12#2", "custom_metadata": {"score": 0.9, "session": "kb", "step": 2}}]}},
            "load_memory"),
        "SAM's shape from another tool": (sam, "search_notes"),
    }


@pytest.mark.parametrize("case", OTHERS)
def test_any_other_load_memory_answer_reads_as_a_result(adapter, case):
    _, _, sam = _recall(adapter)
    others = _others(sam)
    assert list(others) == OTHERS
    response, name = others[case]
    texts = _tool_texts(_second(response, name)["events"])
    assert len(texts) == 1 and "recalled: stored already" not in texts[0], texts
    assert json.loads(texts[0]) == response.get("result", response), texts  # the answer, word for word


# ---- the real package ---------------------------------------------------------------------------------------------

async def _run(runner: Any, sessions: Any, text: str) -> Any:
    from google.genai import types

    made = await sessions.create_session(app_name="shop", user_id="mia")
    async for _ in runner.run_async(user_id="mia", session_id=made.id,
                                    new_message=types.Content(role="user", parts=[types.Part(text=text)])):
        pass
    return await sessions.get_session(app_name="shop", user_id="mia", session_id=made.id)


def _runner(service: Any, script: list[list[Any]]) -> tuple[Any, Any]:
    from google.adk.agents import LlmAgent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.adk.tools import load_memory
    from test_adk_memory import Scripted

    sessions = InMemorySessionService()
    agent = LlmAgent(name="shop_agent", model=Scripted(script=script, requests=[]), instruction="You help shoppers.",
                     tools=[load_memory])
    return Runner(agent=agent, app_name="shop", session_service=sessions, memory_service=service), sessions


@needs_adk
def test_a_real_runner_s_load_memory_is_stored_once_and_read_as_the_marker(adapter, tmp_path):
    """Two sessions of one user through a real Runner with load_memory; the second calls it: storing the second
    session adds its question, the call, the marker and the reply (the recalled memories are not stored again),
    and its saved session and its events read alike (nulls, exclude_none, by alias)."""
    store = ScopedMemory(HashingEncoder(64))
    service = adapter.SAMMemoryService(store)
    runner, sessions = _runner(service, [[FIRST[1][1]], [{"name": "load_memory", "args": {"query": "order"}}],
                                         ["It was ORD-5521."]])
    first = asyncio.run(_run(runner, sessions, FIRST[0][1]))
    asyncio.run(service.add_session_to_memory(first))
    second = asyncio.run(_run(runner, sessions, "Which order was it?"))
    asyncio.run(service.add_session_to_memory(second))
    assert [t for _, t in stored(store, **SCOPES, run_id=second.id)] == [
        "Which order was it?", "CALL load_memory(query=order)", "load_memory: " + recalled(2), "It was ORD-5521."]
    assert len(stored(store, **SCOPES)) == 6
    for dump in (json.loads(second.model_dump_json()), json.loads(second.model_dump_json(exclude_none=True)),
                 second.model_dump(mode="json", by_alias=True)):
        assert _tool_texts(dump["events"]) == [recalled(2)]
    again = ScopedMemory(HashingEncoder(64))  # the delta way, a service of its own
    asyncio.run(adapter.SAMMemoryService(again).add_events_to_memory(app_name="shop", user_id="mia",
                                                                     events=second.events, session_id=second.id))
    assert [t for _, t in stored(again, **SCOPES)] == [t for _, t in stored(store, **SCOPES, run_id=second.id)]


@needs_adk
def test_a_real_runner_s_load_memory_of_another_memory_service_reads_as_a_result(adapter):
    """ADK's InMemoryMemoryService answering load_memory (its entries no SAM's): the result is read as it was."""
    from google.adk.memory import InMemoryMemoryService

    other = InMemoryMemoryService()
    runner, sessions = _runner(other, [[FIRST[1][1]], [{"name": "load_memory", "args": {"query": "order"}}],
                                       ["It was ORD-5521."]])
    asyncio.run(other.add_session_to_memory(asyncio.run(_run(runner, sessions, FIRST[0][1]))))
    second = asyncio.run(_run(runner, sessions, "Which order was ORD-5521?"))
    texts = _tool_texts(json.loads(second.model_dump_json())["events"])
    assert len(texts) == 1 and "ORD-5521" in texts[0] and texts[0] != recalled(2), texts


def _then(adapter: Any, monkeypatch: Any) -> None:
    """The adapter reading sessions as it did before SAM's load_memory results read as the marker."""
    now = adapter.to_chat
    monkeypatch.setattr(adapter, "to_chat", lambda events, where, **_: now(events, where, recalls="none"))


def _more(doc: dict[str, Any]) -> dict[str, Any]:
    """The session after one more turn."""
    return {**doc, "events": [*doc["events"], _event(4, "user", "s2", [{"text": "Thanks."}]),
                              _event(5, "shop_agent", "s2", [{"text": "You're welcome."}])]}


def test_a_session_stored_before_the_marker_is_read_on_after_an_upgrade_not_stored_again(adapter, monkeypatch):
    """A session holding SAM's recall, stored by a service that read it as a result, then added whole after the
    upgrade (a service made anew, the session one turn longer): only the new turn is stored (its chat messages'
    digests differ from what was stored from the recall on: the turns after it were stored again)."""
    store, _, response = _recall(adapter)
    doc = _second(response)
    with monkeypatch.context() as m:
        _then(adapter, m)
        adapter.SAMMemoryService(store).store(doc)
    before = stored(store, **SCOPES, run_id="s2")
    assert any("to Paris" in t for _, t in before), before  # as it was then: the recall as a result
    assert adapter.SAMMemoryService(store).store(_more(doc)) == 2
    assert stored(store, **SCOPES, run_id="s2") == [*before, ("user", "Thanks."), ("system", "You're welcome.")]


def test_events_stored_before_the_marker_are_not_stored_again_or_warned_as_edited(adapter, monkeypatch, caplog):
    """The same as a delta (add_events_to_memory), and the session added whole after it: nothing stored again,
    no warning that the recall's event changed."""
    store, _, response = _recall(adapter)
    doc = _second(response)
    with monkeypatch.context() as m:
        _then(adapter, m)
        adapter.SAMMemoryService(store).store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2")
    before = stored(store, **SCOPES, run_id="s2")
    with caplog.at_level("WARNING"):
        assert adapter.SAMMemoryService(store).store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2") == 0
        assert adapter.SAMMemoryService(store).store(doc) == 0
    assert stored(store, **SCOPES, run_id="s2") == before and not caplog.records, caplog.text


def test_a_session_stored_before_event_ids_and_the_marker_is_not_stored_again_by_its_events(adapter, monkeypatch):
    """A session holding SAM's recall stored before 2026-12-07 (its memories say no event's id, and read the recall
    as a result), then its events added as a delta from its start: matched by the words stored then (the recall a
    result), not today's (the marker), so nothing after the recall is stored again."""
    store, _, response = _recall(adapter)
    doc = _second(response)
    add, progress = store.add, store.progress
    with monkeypatch.context() as m:
        _then(adapter, m)
        m.setattr(store, "add", lambda *a, metadata=None, **kw: add(
            *a, metadata={k: v for k, v in (metadata or {}).items() if k != adapter.EVENTS}, **kw))
        m.setattr(store, "progress", lambda *a, mark=None, **kw: progress(*a, **kw) if mark is None else progress(
            *a, mark={k: v for k, v in mark.items() if k != adapter.EVENTS}, **kw))
        adapter.SAMMemoryService(store).store(doc)
    before = stored(store, **SCOPES, run_id="s2")
    assert before and all(adapter.EVENTS not in r["metadata"]
                          for r in store.get_all(**SCOPES, run_id="s2", limit=None)["results"])
    assert adapter.SAMMemoryService(store).store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2") == 0
    assert stored(store, **SCOPES, run_id="s2") == before


@pytest.mark.parametrize("said", ["Which order was it?", "Is ORD-5521 my order? Which order was it?"])
def test_a_value_from_the_recall_is_labelled_where_this_transcript_said_it_never_at_the_marker(adapter, tmp_path,
                                                                                                said):
    """Documents behaviour (docs/formats.md, the ADK reader): a later call's value that the recall held is labelled
    at the event of this session that said it first; said only in the recalled memories (another session's), it is
    counted untraceable in the import report, not labelled: no label points at the marker."""
    _, _, response = _recall(adapter)
    doc = _second(response)
    call = {"id": "c9", "name": "track_order", "args": {"order_id": "ORD-5521"}}
    doc["events"][0] = _event(0, "user", "s2", [{"text": said}])
    doc["events"][3] = _event(3, "shop_agent", "s2", [{"function_call": call}])
    doc["events"] += [_event(4, "shop_agent", "s2", [{"function_response": {
        "id": "c9", "name": "track_order", "response": {"status": "shipped"}}}], role="user"),
        _event(5, "shop_agent", "s2", [{"text": "It shipped."}])]
    path = tmp_path / "s2.json"
    path.write_text(json.dumps(doc))
    report = ImportReport()
    events = list(iter_transcript_events(path, report=report))
    assert events[2]["text"] == "load_memory: " + recalled(2)
    labels = [s for e in events for s in e.get("useful_memory_steps") or ()]
    if "ORD-5521" in said:
        assert labels == [0] and not report.untraceable, (labels, report.untraceable)
    else:
        assert labels == [] and dict(report.untraceable) == {"track_order.order_id": 1}, (labels, report.untraceable)


@needs_adk
def test_a_real_session_database_with_parallel_recalls_reads_each_as_the_marker(adapter, tmp_path):
    """ADK's own DatabaseSessionService (sqlite), the model calling load_memory twice in one turn (parallel calls,
    their answers in one event): the session stored and the database read by sam-data transcripts both hold the
    two calls and a marker for each, the recalled memories once, under the first session."""
    pytest.importorskip("aiosqlite")
    from google.adk.agents import LlmAgent
    from google.adk.runners import Runner
    from google.adk.sessions import DatabaseSessionService
    from google.adk.tools import load_memory
    from test_adk_memory import Scripted

    db = tmp_path / "sessions.db"
    store = ScopedMemory(HashingEncoder(64))
    service = adapter.SAMMemoryService(store)
    sessions = DatabaseSessionService(f"sqlite+aiosqlite:///{db}")
    calls = [{"name": "load_memory", "args": {"query": q}, "id": f"c{i}"} for i, q in enumerate(["order", "city"])]
    agent = LlmAgent(name="shop_agent", model=Scripted(script=[[FIRST[1][1]], calls, ["It was ORD-5521."]],
                                                       requests=[]), instruction="You help shoppers.", tools=[load_memory])
    runner = Runner(agent=agent, app_name="shop", session_service=sessions, memory_service=service)

    async def turns() -> Any:
        first = await _run(runner, sessions, FIRST[0][1])
        await service.add_session_to_memory(first)
        second = await _run(runner, sessions, "Which order was it?")
        await service.add_session_to_memory(second)
        return second

    second = asyncio.run(turns())
    told = ["Which order was it?", "CALL load_memory(query=order)", "CALL load_memory(query=city)",
            "load_memory: " + recalled(2), "load_memory: " + recalled(2), "It was ORD-5521."]
    assert [t for _, t in stored(store, **SCOPES, run_id=second.id)] == told
    assert len(stored(store, **SCOPES)) == 8
    assert [e["text"] for e in iter_transcript_events(db)] == [t for _, t in FIRST] + told
