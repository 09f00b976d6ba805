"""ScopedMemory.add of an ADK session's events (the generic input path, docs/integrations.md: "an ADK session's
events" added whole after each turn): a load_memory result SAMMemoryService answered is SAM's own recall where the
add's user_id and agent_id are the session's user and app (SAMMemoryService's scopes), so it is stored as the
recall marker, not as the recalled memories' words again. Read without the add's scopes (CONVERSION_VERSION 226 told
a recall by its owner, which the add did not pass), each recall stored its memories again under the new session.
Runs on the stand-ins of tests/test_adk_memory.py, and on the real package where installed."""

from __future__ import annotations

import copy

import test_adk_memory
from test_adk_load_memory import FIRST, SCOPES, _recall, _second
from test_adk_memory import stored

from sam_model.data.formats.recalls import recalled

adapter = test_adk_memory.adapter  # the fixture: the adapter over the real package or the stand-ins
MARKER = "load_memory: " + recalled(2)


def _said(store, **scopes) -> list[str]:
    return [t for _, t in stored(store, **scopes)]


def test_an_add_of_events_holding_sams_recall_stores_the_marker_not_the_memories_again(adapter):
    store, _, response = _recall(adapter)
    events = _second(response)["events"]
    store.add(copy.deepcopy(events), **SCOPES, run_id="s2")
    store.add(copy.deepcopy(events), **SCOPES, run_id="s2")  # the whole session again, as an agent loop adds it
    said = _said(store, **SCOPES, run_id="s2")
    assert MARKER in said, said
    assert not any("to Paris" in t for t in said), said  # the recalled memories are s1's, stored once
    everything = _said(store, **SCOPES)
    for _, text in FIRST:
        assert sum(text in t for t in everything) == 1, everything


def test_a_served_add_checked_first_reads_the_recall_alike(adapter):
    """sam-serve and MCP check an add (check_add) before logging it, then add what was read."""
    store, _, response = _recall(adapter)
    events = copy.deepcopy(_second(response)["events"])
    read = store.check_add(events, "messages", 100, **SCOPES, run_id="s2")
    store.add(events, **SCOPES, run_id="s2", read=read)
    said = _said(store, **SCOPES, run_id="s2")
    assert MARKER in said and not any("to Paris" in t for t in said), said


def test_an_add_of_another_scope_keeps_the_results_words(adapter):
    """Of another user, or naming no agent (no app): the entries are no recall of the add's scopes, the result's
    words are stored (nothing lost)."""
    store, _, response = _recall(adapter)
    events = _second(response)["events"]
    for scopes in ({"user_id": "bob", "agent_id": "shop"}, {"user_id": "mia"}):
        store.add(copy.deepcopy(events), **scopes, run_id="s2")
        said = [t for t in _said(store, **scopes, run_id="s2") if t.startswith("load_memory: ")]
        assert len(said) == 1 and MARKER not in said and "to Paris" in said[0], (scopes, said)
