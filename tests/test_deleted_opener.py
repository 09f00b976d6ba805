"""What becomes of a task's opening (MemoryRecord.opens_task, MemoryRecorder's opener) when the memory that opened it
is deleted or replaced. The rule is the importer's (sam_model.data.lives.task_openings): the first user event of a
task opens it. A deleted memory's event keeps its place in its conversation (its words blanked), so a later user
message is not the first of its task and gets no flag; a scope whose memories are all deleted starts afresh, its
next message opening a task. An item rewritten in place keeps its flag (ScopedMemory.update). LangGraph's SAMStore
followed neither: a namespace emptied by deletes kept its opener (and the last state of its gone items), so its next
item opened no task, and a put replacing the opening item lost the flag, leaving the namespace no opener at all."""

from __future__ import annotations

import pytest

from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.store import MemoryStore


def _flags(store: MemoryStore) -> dict:
    return {h.id: store.opens_task(h.id) for h in store.get_all()}


def _memory() -> ScopedMemory:
    memory = ScopedMemory(HashingEncoder(64))
    memory.store.keep_openings = True  # as a task_opening model's store (MemoryStore.keeps_openings)
    return memory


def test_a_deleted_opener_gives_its_flag_to_no_later_message():
    memory = _memory()
    memory.add([{"role": "user", "content": "fix foo in bar.py"}, {"role": "assistant", "content": "reading bar.py"}],
               user_id="mia")
    memory.delete("mia#0")
    memory.add([{"role": "user", "content": "and foo in baz.py"}], user_id="mia")
    assert _flags(memory.store) == {"mia#1": False, "mia#2": False}


def test_a_scope_whose_memories_are_all_deleted_opens_a_new_task():
    memory = _memory()
    memory.add([{"role": "user", "content": "fix foo in bar.py"}], user_id="mia")
    memory.delete("mia#0")
    memory.add([{"role": "user", "content": "book a flight to Oslo"}], user_id="mia")
    assert _flags(memory.store) == {"mia#1": True}


@pytest.fixture
def samstore():
    pytest.importorskip("langgraph", reason="langgraph is not installed")
    from sam_model.integrations.langgraph import SAMStore

    store = MemoryStore(HashingEncoder(64))
    store.keep_openings = True
    return SAMStore(store=store)


NS = ("mia", "tasks")


def test_a_namespace_emptied_by_deletes_opens_a_new_task_and_forgets_its_last_state(samstore):
    samstore.put(NS, "a", {"kind": "user", "text": "fix foo in bar.py",
                           "state": {"phase": "collect", "constraints": {"card": "4242"}}})
    samstore.put(NS, "b", {"kind": "user", "text": "and foo in baz.py"})
    samstore.delete(NS, "b")
    assert "///mia.tasks" in samstore.store.recorder.episodes()  # an item left: the task goes on
    samstore.delete(NS, "a")
    assert "///mia.tasks" not in samstore.store.recorder.episodes()  # nor the gone items' last state, card and all
    samstore.put(NS, "c", {"kind": "user", "text": "book a flight to Oslo"})
    assert _flags(samstore.store) == {"///mia.tasks#2": True}


def test_a_put_replacing_the_opening_item_keeps_its_flag(samstore):
    samstore.put(NS, "a", {"kind": "user", "text": "fix foo in bar.py"})
    samstore.put(NS, "b", {"kind": "user", "text": "and foo in baz.py"})
    samstore.put(NS, "a", {"kind": "user", "text": "fix foo in bar.py and qux.py"})
    assert _flags(samstore.store) == {"///mia.tasks#1": False, "///mia.tasks#2": True}
    samstore.put(NS, "d", {"kind": "user", "text": "thanks"})
    assert _flags(samstore.store)["///mia.tasks#3"] is False
    samstore.put(NS, "b", {"kind": "user", "text": "and foo in baz.py, twice"})  # not the opener: no flag
    assert sum(_flags(samstore.store).values()) == 1


def test_a_put_replacing_the_opening_item_by_no_user_item_gives_the_flag_to_no_later_item(samstore):
    """The opening item rewritten as a tool's or an agent's item (no task statement any more) is, for the task's
    opening, the opener deleted (other items are left): its place keeps the flag, so no later item takes it, as
    when the item is deleted and put again. Before, the next user item after it opened the task, though an earlier
    user item of the task (b) was left."""
    samstore.put(NS, "a", {"kind": "user", "text": "fix foo in bar.py"})
    samstore.put(NS, "b", {"kind": "user", "text": "and foo in baz.py"})
    samstore.put(NS, "a", {"kind": "tool", "text": "bar.py: 12 lines"})
    samstore.put(NS, "d", {"kind": "user", "text": "thanks"})
    deleted = _flags(samstore.store)
    assert deleted == {"///mia.tasks#1": False, "///mia.tasks#2": False, "///mia.tasks#3": False}, deleted
