"""SAMMemoryService's leftovers: a service's first sight of a session read its memories twice, and a session stored
before its events' ids were kept in the memories (adk_events, 2026-12-07) was stored again when its events were
added as a delta after a restart."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_adk_memory import adapter, add_events, events, session, stored  # noqa: F401 (adapter: a fixture)

from sam_model.memory import HashingEncoder, ScopedMemory

SCOPES = {"user_id": "ann_lee_123", "agent_id": "airline", "run_id": "conv-1"}


def test_a_service_made_anew_reads_a_sessions_memories_once(adapter, monkeypatch):  # noqa: F811
    """A service made anew, adding a session stored before, listed the session's memories twice (_resume, then the
    ids it had seen): once now, and what it stores is as before."""
    store = ScopedMemory(HashingEncoder(64))
    asyncio.run(adapter.SAMMemoryService(store).add_session_to_memory(session(4)))
    reads, get_all = [], store.get_all

    def counted(*args: Any, **kw: Any) -> Any:
        reads.append(kw)
        return get_all(*args, **kw)

    monkeypatch.setattr(store, "get_all", counted)
    asyncio.run(adapter.SAMMemoryService(store).add_session_to_memory(session()))
    assert len(reads) == 1
    monkeypatch.setattr(store, "get_all", get_all)
    whole = ScopedMemory(HashingEncoder(64))
    asyncio.run(adapter.SAMMemoryService(whole).add_session_to_memory(session()))
    assert stored(store, **SCOPES) == stored(whole, **SCOPES)


def _stored_without_ids(adapter: Any, store: ScopedMemory, monkeypatch: Any, n: int) -> None:  # noqa: F811
    """The session's first ``n`` events added whole as a service of before 2026-12-07 stored them: its memories and
    its progress mark say no event's id (adk_events)."""
    add, progress = store.add, store.progress

    def old_add(*args: Any, metadata: dict | None = None, **kw: Any) -> Any:
        return add(*args, metadata={k: v for k, v in (metadata or {}).items() if k != adapter.EVENTS}, **kw)

    def old_progress(*args: Any, mark: Any = None, **kw: Any) -> Any:
        if mark is None:
            return progress(*args, **kw)
        return progress(*args, mark={k: v for k, v in mark.items() if k != adapter.EVENTS}, **kw)

    monkeypatch.setattr(store, "add", old_add)
    monkeypatch.setattr(store, "progress", old_progress)
    asyncio.run(adapter.SAMMemoryService(store).add_session_to_memory(session(n)))
    monkeypatch.setattr(store, "add", add)
    monkeypatch.setattr(store, "progress", progress)
    assert all(adapter.EVENTS not in r["metadata"] for r in store.get_all(**SCOPES, limit=None)["results"])
    assert adapter.EVENTS not in store.progress(**SCOPES)


@pytest.mark.parametrize("n", [4, 8])
def test_a_session_stored_before_event_ids_were_kept_is_not_stored_again_by_its_events(adapter, monkeypatch, n):  # noqa: F811
    """A session stored before 2026-12-07 (its memories say no event's id), then, after a restart, its events added
    as a delta from its start (a replay, or the session's events sent whole): each was stored again. The delta's
    chat messages up to a memory's adk_to, whose adk_digest is theirs, are the ones stored; what follows is new."""
    store, whole = ScopedMemory(HashingEncoder(64)), ScopedMemory(HashingEncoder(64))
    _stored_without_ids(adapter, store, monkeypatch, n)
    add_events(adapter.SAMMemoryService(store), events())
    asyncio.run(adapter.SAMMemoryService(whole).add_session_to_memory(session()))
    assert stored(store, **SCOPES) == stored(whole, **SCOPES)


def test_a_delta_whose_first_words_differ_from_a_stored_session_is_stored(adapter, monkeypatch):  # noqa: F811
    """Guard: a delta whose first words differ from what was stored of the session (an edited first message; a
    session id reused) opens with no stored chat: its new words are stored."""
    store = ScopedMemory(HashingEncoder(64))
    _stored_without_ids(adapter, store, monkeypatch, 4)
    add_events(adapter.SAMMemoryService(store), events(0, 4, **{"ev-0": "Hello, a new question."}))
    said = [t for _, t in stored(store, **SCOPES)]
    assert said.count("Hello, a new question.") == 1 and len(said) == 5


def test_documents_behaviour_a_delta_opening_mid_session_stores_its_stored_events_again(adapter, monkeypatch):  # noqa: F811
    """Documents behaviour (docs/integrations.md): of a session stored before 2026-12-07, a delta opening after the
    session's start (a turn sent again with the next) holds events the memories tell by no id: those the memory
    does not read as sent again are stored again (here a tool's result and the answer, 2 duplicates), none lost."""
    store, whole = ScopedMemory(HashingEncoder(64)), ScopedMemory(HashingEncoder(64))
    _stored_without_ids(adapter, store, monkeypatch, 4)
    add_events(adapter.SAMMemoryService(store), events(2, 6))
    asyncio.run(adapter.SAMMemoryService(whole).add_session_to_memory(session(6)))
    got, want = stored(store, **SCOPES), stored(whole, **SCOPES)
    assert got[:4] == want[:4] and got[6:] == want[4:] and got[4:6] == want[2:4]
