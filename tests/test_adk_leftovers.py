"""SAMMemoryService's leftovers: a service's first sight of a session read its memories twice."""

from __future__ import annotations

import asyncio
from typing import Any

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
