"""A search hit says whether its memory opened its task (``opens_task``) where the store keeps the flag, as it says its
kind and step: a task_opening model ranks by it, and a caller reading the results (Mem0's dicts, a LangChain Document,
sam-serve's JSON) could not tell the task's statement from a later user message saying the same words. A store that
keeps no flag (its model does not read it) says nothing, its results as they were."""

from __future__ import annotations

import pytest

from sam_model.memory import HashingEncoder, ScopedMemory

CHAT = [{"role": "user", "content": "fix foo in bar.py"}, {"role": "assistant", "content": "reading bar.py"},
        {"role": "user", "content": "fix foo in bar.py too"}]


def _memory(keep: bool) -> ScopedMemory:
    memory = ScopedMemory(HashingEncoder(64))
    memory.store.keep_openings = keep  # as a task_opening model's store (MemoryStore.keeps_openings)
    memory.add(CHAT, user_id="mia")
    return memory


def test_every_view_of_a_hit_says_whether_it_opened_its_task():
    memory = _memory(True)
    want = {f"mia#{s}": memory.store.opens_task(f"mia#{s}") for s in range(3)}
    assert want == {"mia#0": True, "mia#1": False, "mia#2": False}
    hits = memory.store.search({}, "fix foo", k=3, user_id="mia")
    assert {h.id: h.opens_task for h in hits} == want and {h.id: h.to_dict()["opens_task"] for h in hits} == want
    assert {h.id: h.opens_task for h in memory.store.get_all(user_id="mia")} == want
    found = memory.search("fix foo", user_id="mia", limit=3)["results"]
    assert {r["id"]: r["opens_task"] for r in found} == want
    assert {r["id"]: r["opens_task"] for r in memory.get_all(user_id="mia")["results"]} == want
    assert memory.get("mia#0")["opens_task"] is True


def test_the_langchain_document_carries_it_and_an_added_back_document_does_not_store_it():
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    from sam_model.integrations.langchain import SAMVectorStore

    memory = _memory(True)
    store = SAMVectorStore(memory, user_id="mia")
    docs = store.similarity_search("fix foo", k=3)
    assert {d.metadata["id"]: d.metadata["opens_task"] for d in docs} == {"mia#0": True, "mia#1": False,
                                                                          "mia#2": False}
    store.add_documents([docs[0]])  # SAM's own field, not the memory's metadata
    assert all("opens_task" not in r["metadata"] for r in memory.get_all(user_id="mia")["results"])


def test_a_store_that_keeps_no_flag_says_nothing():
    memory = _memory(False)
    assert [h.opens_task for h in memory.store.search({}, "fix foo", k=3, user_id="mia")] == [None] * 3
    assert all("opens_task" not in r for r in memory.search("fix foo", user_id="mia", limit=3)["results"])
