"""Review of SAMMemoryService's matching of a session stored before its memories said their events' ids
(adk_events, 2026-12-07) by its words (_stored_before_ids): a delta of a later turn whose first words are the
session's first words (a repeated "ok") was read as the session's start sent again, and its new event never stored."""

from __future__ import annotations

import asyncio
from typing import Any

import test_adk_leftovers
from test_adk_leftovers import SCOPES, _stored_without_ids
from test_adk_memory import REAL, Dumped, adapter, add_events, stored  # noqa: F401 (adapter: a fixture)

from sam_model.memory import HashingEncoder, ScopedMemory


def _event(n: int, author: str, text: str) -> dict[str, Any]:
    return {"content": {"parts": [{"text": text}], "role": "user" if author == "user" else "model"},
            "invocation_id": f"e-{n // 2}", "author": author, "actions": {}, "id": f"ok-{n}",
            "timestamp": 1796600000.0 + n}


OKS = [_event(0, "user", "ok"), _event(1, "airline_agent", "Which booking?"), _event(2, "user", "ok"),
       _event(3, "airline_agent", "Which booking, ABC123 or XYZ789?")]


def _events(evs: list[dict[str, Any]]) -> list[Any]:
    if REAL:
        from google.adk.events import Event

        return [Event.model_validate(e) for e in evs]
    return evs


def _session(n: int) -> Dumped:
    return Dumped({"id": "conv-1", "app_name": "airline", "user_id": "ann_lee_123", "state": {},
                   "events": OKS[:n], "last_update_time": 1796600000.0 + n})


def _old_store(adapter: Any, monkeypatch: Any, n: int) -> ScopedMemory:  # noqa: F811
    """The session's first ``n`` events stored as a service of before 2026-12-07 stored them (no event ids)."""
    store = ScopedMemory(HashingEncoder(64))
    monkeypatch.setattr(test_adk_leftovers, "session", lambda _: _session(n))
    _stored_without_ids(adapter, store, monkeypatch, n)
    return store


def test_a_later_turn_opening_with_the_sessions_first_words_is_stored(adapter, monkeypatch):  # noqa: F811
    """A session stored before event ids (its first turn: "ok", "Which booking?"), then after a restart the next
    turn's events as a delta: its "ok" read like the session's start, matched the first memory's adk_digest, and was
    skipped, never stored. The stored memories' first event's time tells a delta opening at the session's start."""
    store = _old_store(adapter, monkeypatch, 2)
    add_events(adapter.SAMMemoryService(store), _events(OKS[2:]))
    assert [t for _, t in stored(store, **SCOPES)] == ["ok", "Which booking?", "ok", "Which booking, ABC123 or XYZ789?"]


def test_the_sessions_own_events_from_its_start_are_still_read_once(adapter, monkeypatch):  # noqa: F811
    """Guard: the same session's events from its start, as a delta after the restart, are the ones stored: each
    stored once."""
    store = _old_store(adapter, monkeypatch, 2)
    add_events(adapter.SAMMemoryService(store), _events(OKS))
    assert [t for _, t in stored(store, **SCOPES)] == ["ok", "Which booking?", "ok", "Which booking, ABC123 or XYZ789?"]


def test_a_new_turn_said_as_a_deleted_sessions_first_is_stored(adapter):  # noqa: F811
    """A session stored by this service (its memories and mark say their events' ids), its memories deleted, then
    after a restart a new turn said word for word as its first, as a delta: read by words against the mark's
    adk_to (whose events the mark names by id), its new events were never stored. The deleted ones stay deleted."""
    store = ScopedMemory(HashingEncoder(64))
    asyncio.run(adapter.SAMMemoryService(store).add_session_to_memory(_session(2)))
    for r in store.get_all(**SCOPES, limit=None)["results"]:
        store.delete(r["id"])
    again = [{**e, "id": f"again-{i}", "timestamp": e["timestamp"] + 60} for i, e in enumerate(OKS[:2])]
    add_events(adapter.SAMMemoryService(store), _events(again))
    assert [t for _, t in stored(store, **SCOPES)] == ["ok", "Which booking?"]


def test_the_users_words_said_again_after_turns_that_failed_are_each_stored(adapter):  # noqa: F811
    """A session added after the user's "ok" (its turn failed before a reply), then after two more "ok"s and the
    answer: the run of the user's two messages, opening with the scope's last add (the "ok" alone), was read as a
    hook's history going on from it, and one "ok" was lost (2 stored of 3). Each is stored."""
    store = ScopedMemory(HashingEncoder(64))
    service = adapter.SAMMemoryService(store)
    oks = [_event(0, "user", "ok"), _event(1, "user", "ok"), _event(2, "user", "ok"), OKS[1]]
    for n in (1, 4):
        asyncio.run(service.add_session_to_memory(Dumped({**_session(0).doc, "events": oks[:n]})))
    assert [t for _, t in stored(store, **SCOPES)] == ["ok", "ok", "ok", "Which booking?"]
