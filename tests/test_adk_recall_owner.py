"""Whose load_memory result is SAM's recall: an entry's id names the scope it was stored in (ScopedMemory.episode_of:
user/app/session#step), and SAM's search of a session's user and app returns that user's of that app only. So the
adk reader, told the session's user and app, reads a result as the recall marker only when every entry's id names a
scope of them; an app's own memory service imitating SAM's entries exactly, or an app's load_memory relaying another
user's (or no user's) entries, is the app's result, its words kept (read as the marker, they were lost from the
training data and the store). Events read without their session name no user: their results read as words.

A session stored before (its imitating entries read as the marker then) is read on where it was, not stored again.
Runs on the stand-ins of tests/test_adk_memory.py, and on the real package where installed."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest
import test_adk_memory
from test_adk_load_memory import SCOPES, _more, _read, _recall, _second, _tool_texts
from test_adk_memory import stored

from sam_model.data.formats import to_chat
from sam_model.data.formats.recalls import recalled
from sam_model.data.transcripts import iter_transcript_events

adapter = test_adk_memory.adapter  # the fixture: the adapter over the real package or the stand-ins
MARKER = recalled(2)
# an entry's id as SAM writes it of each scope: the session's user and app (mia, shop) the recall's, others the app's
IDS = {"the session's user and app": ("mia/shop/s1", True), "another user's": ("bob/shop/s1", False),
       "no user's": ("/shop/s1", False), "another app's": ("mia/crm/s1", False),
       "a deeper scope's": ("mia/shop/x/s1", False), "no app's": ("mia//s1", False)}


def _as_of(response: dict[str, Any], episode: str) -> dict[str, Any]:
    """SAM's load_memory answer, its entries' ids of ``episode`` (their step kept): SAM's shape exactly."""
    out = copy.deepcopy(response)
    for e in out["result"]["memories"]:
        e["id"] = f"{episode}#{e['id'].rsplit('#', 1)[1]}"
    return out


@pytest.mark.parametrize("whose", IDS)
def test_a_saved_session_reads_only_its_own_users_entries_as_the_recall(adapter, tmp_path, whose):
    """sam-data transcripts, a session's dump (the reader told its user_id and app_name by the dump)."""
    _, _, response = _recall(adapter)
    episode, sams = IDS[whose]
    doc = _second(_as_of(response, episode))
    path = tmp_path / "s2.json"
    path.write_text(json.dumps(doc))
    tools = [e["text"] for e in iter_transcript_events(path) if e["text"].startswith("load_memory: ")]
    assert len(tools) == 1, tools
    if sams:
        assert tools == ["load_memory: " + MARKER]
    else:  # the app's result, word for word
        assert MARKER not in tools[0] and "to Paris" in tools[0] and episode in tools[0], tools


@pytest.mark.parametrize("whose", IDS)
def test_the_service_stores_another_users_entries_as_the_apps_result(adapter, whose):
    """add_session_to_memory and add_events_to_memory: the entries of another scope are the app's words, stored."""
    episode, sams = IDS[whose]
    for way in ("session", "events"):
        store, service, response = _recall(adapter)
        doc = _second(_as_of(response, episode))
        if way == "session":
            service.store(doc)
        else:
            service.store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2")
        said = [t for _, t in stored(store, **SCOPES, run_id="s2")]
        assert ("load_memory: " + MARKER in said) is sams, (way, said)
        assert any("to Paris" in t for t in said) is not sams, (way, said)


def test_a_session_of_another_user_reads_mias_entries_as_its_apps_result(adapter):
    """The same entries (mia's) in bob's session: no recall of bob's, so his app's result."""
    _, _, response = _recall(adapter)
    events = _second(response)["events"]
    assert _tool_texts(events) == [MARKER]
    bobs = [m["content"] for m in _read(events, ("bob", "shop")).messages if m["role"] == "tool"]
    assert json.loads(bobs[0]) == response["result"], bobs


def test_events_read_without_their_session_read_the_result_as_words(adapter):
    """formats.to_chat of the events alone: they name no user, so no entry is told SAM's; nothing is lost."""
    _, _, response = _recall(adapter)
    tool = [m["content"] for m in to_chat(_second(response)["events"]).messages if m["role"] == "tool"]
    assert json.loads(tool[0]) == response["result"], tool


def test_a_relay_of_sams_entries_reformatted_by_the_app_reads_as_its_result(adapter):
    """An app's own load_memory relaying SAM's answer through its code: unchanged (SAM's entries of the session's
    user and app), it is SAM's recall; any field dropped or added, the app's result (its words kept)."""
    _, _, response = _recall(adapter)
    assert _tool_texts(_second(copy.deepcopy(response))["events"]) == [MARKER]
    relayed = copy.deepcopy(response)
    for e in relayed["result"]["memories"]:
        e["custom_metadata"].pop("score")
    assert json.loads(_tool_texts(_second(relayed)["events"])[0]) == relayed["result"]


def _shaped(adapter: Any, monkeypatch: Any) -> None:
    """The adapter reading sessions as it did in CONVERSION_VERSION 224 and 225: by SAM's shape, whoever's ids."""
    now = adapter.to_chat
    monkeypatch.setattr(adapter, "to_chat", lambda events, where, **kw: now(events, where, owner=kw.get("owner"),
                                                                             recalls="shaped"))


def test_a_session_stored_with_the_shape_reading_is_read_on_not_stored_again(adapter, monkeypatch):
    """An app's imitating entries (bob's id in mia's session) stored as the marker before, the session then added
    whole after the upgrade one turn longer: only the new turn is stored (its digests differ from what was stored
    from the result on: the turns after it were stored again)."""
    store, _, response = _recall(adapter)
    doc = _second(_as_of(response, "bob/shop/s1"))
    with monkeypatch.context() as m:
        _shaped(adapter, m)
        adapter.SAMMemoryService(store).store(doc)
    before = stored(store, **SCOPES, run_id="s2")
    assert ("result", "load_memory: " + MARKER) in before, before  # as it was then
    assert adapter.SAMMemoryService(store).store(_more(doc)) == 2
    assert stored(store, **SCOPES, run_id="s2") == [*before, ("user", "Thanks."), ("system", "You're welcome.")]


def test_events_stored_with_the_shape_reading_are_not_stored_again_or_warned(adapter, monkeypatch, caplog):
    """The same as a delta (add_events_to_memory), then the session whole: nothing stored again, no warning that
    the result's event changed."""
    store, _, response = _recall(adapter)
    doc = _second(_as_of(response, "bob/shop/s1"))
    with monkeypatch.context() as m:
        _shaped(adapter, m)
        adapter.SAMMemoryService(store).store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2")
    before = stored(store, **SCOPES, run_id="s2")
    with caplog.at_level(logging.WARNING):
        assert adapter.SAMMemoryService(store).store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2") == 0
        assert adapter.SAMMemoryService(store).store(doc) == 0
    assert stored(store, **SCOPES, run_id="s2") == before and not caplog.records, caplog.text


def test_events_stored_with_todays_reading_are_not_read_again_the_earlier_ways(adapter, monkeypatch):
    """A delta or session sent again that today's reading tells stored reads no event with an earlier reading
    (EARLIER): those are made only where today's digest differs, not for every event each call."""
    store, _, response = _recall(adapter)
    doc = _second(response)
    adapter.SAMMemoryService(store).store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2")
    now, readings = adapter.to_chat, []
    monkeypatch.setattr(adapter, "to_chat", lambda events, where, **kw: (
        readings.append((len(events), kw.get("recalls", "owned"))), now(events, where, **kw))[1])
    service = adapter.SAMMemoryService(store)
    assert service.store_events("shop", "mia", copy.deepcopy(doc["events"]), "s2") == 0
    assert [r for r in readings if r[0] == 1 and r[1] != "owned"] == [], readings
    readings.clear()
    service = adapter.SAMMemoryService(store)
    assert service.store(doc) == 0
    assert [r for r in readings if r[0] == 1 and r[1] != "owned"] == [], readings
