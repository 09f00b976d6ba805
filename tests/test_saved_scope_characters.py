"""A scope holding a control character (a newline, tab, NUL) is refused on every entry point since 2026-12-06
(sam_model.limits.check_scope, tests/test_scope_characters.py), but a bare MemoryStore still wrote one, and a save of
either holding one (written before) loaded without a word: its memories were then out of reach of every scoped call,
which refuses the scope. Refusing the save would lose them, so it loads, and says in one line per scope value which
file, field and value, and how to keep its memories."""

from __future__ import annotations

import logging

import pytest

import sam_model.memory.scoped as scoped_module
import sam_model.store as store_module
from sam_model.data.schema import parse_event
from sam_model.memory import HashingEncoder, ScopedMemory
from sam_model.store import MemoryStore


def _event(step: int, text: str):
    return parse_event({"episode_id": "ep", "step": step, "kind": "user", "text": text}, "test")


@pytest.mark.parametrize("name", ["user_id", "agent_id", "run_id"])
def test_a_bare_store_refuses_a_control_character_in_a_scope(name):
    store = MemoryStore(HashingEncoder(16))
    with pytest.raises(ValueError) as refused:
        store.add([_event(0, "my card ends 4242")], **{name: "mia\nbo"})
    assert str(refused.value).startswith(f"{name} holds the control character '\\n' at position 3")
    assert len(store) == 0
    store.add([_event(0, "my card ends 4242")], **{name: "mia/bo"})  # '/' is ScopedMemory's rule, not a bare store's
    assert [h.id for h in store.get_all(**{name: "mia/bo"})] == ["ep#0"]


def test_an_old_save_holding_one_loads_says_so_in_one_line_and_its_memories_can_be_kept(tmp_path, monkeypatch, caplog):
    with monkeypatch.context() as before:  # the entry points as they were until 2026-12-06: the scope taken
        before.setattr(scoped_module, "check_scope", lambda value, name: value)
        before.setattr(store_module, "check_scope_characters", lambda value, name: value, raising=False)
        old = ScopedMemory(HashingEncoder(16))
        old.add([{"role": "user", "content": "my card ends 4242"}, {"role": "user", "content": "I fly on Monday"}],
                user_id="mia\tbo")
        old.add("I live in Lyon", user_id="lea")
        old.save(tmp_path / "m")
    with caplog.at_level(logging.WARNING, logger="sam_model.store"):
        memory = ScopedMemory.load(tmp_path / "m", HashingEncoder(16))
    said = [r.getMessage() for r in caplog.records if "control character" in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0], said  # one line for the scope value, not one per memory
    assert said[0].startswith(str(tmp_path / "m" / "store" / "store.json"))
    assert "user_id 'mia\\tbo' of 2 memories" in said[0] and "get_all(all_scopes=True)" in said[0]
    assert len(memory.get_all(user_id="lea")["results"]) == 1  # the other scopes as they were
    assert len(memory.get_all(user_id="mia\tbo")["results"]) == 2  # read as written, where it holds memories
    with pytest.raises(ValueError, match="user_id holds the control character"):
        memory.add("hello", user_id="mia\tbo")
    kept = [r for r in memory.get_all(all_scopes=True)["results"] if r["user_id"] == "mia\tbo"]
    assert [r["memory"] for r in kept] == ["my card ends 4242", "I fly on Monday"]
    for r in kept:  # what the line says to do: add again under a printable scope, delete by id
        memory.add(r["memory"], user_id="mia-bo")
        memory.delete(r["id"])
    assert [r["memory"] for r in memory.get_all(user_id="mia-bo")["results"]] == ["my card ends 4242",
                                                                                    "I fly on Monday"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sam_model.store"):
        ScopedMemory.load(memory.save(tmp_path / "again"), HashingEncoder(16))
    assert not [r for r in caplog.records if "control character" in r.getMessage()]


def test_a_logged_write_holding_one_is_replayed_not_refused(tmp_path, monkeypatch, caplog):
    """sam-serve restarted after the rule came, its log holding a write acknowledged before (no checkpoint since): the
    start stopped, the only way on it named was to move the log away, losing the writes. The write is replayed as
    logged, and the start says so in one line."""
    from serving import keys_file

    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.store import store_config_of

    def serve() -> Tenants:
        return Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(16),
                       store_config_of(HashingEncoder(16)))

    with monkeypatch.context() as before:
        before.setattr(scoped_module, "check_scope", lambda value, name: value)
        before.setattr(store_module, "check_scope_characters", lambda value, name: value, raising=False)
        tenants = serve()
        tenants.tenants["acme"].write("add", {"data": "my card ends 4242", "user_id": "mia\tbo"}, checkpoint=False)
        tenants.tenants["acme"].write("add", {"data": "I live in Lyon", "user_id": "lea"}, checkpoint=False)
        for tenant in tenants.tenants.values():
            tenant.release()  # stopped without a checkpoint: the log holds the writes
    with caplog.at_level(logging.WARNING, logger="sam_model"):
        tenants = serve()
    memory = tenants.tenants["acme"].memory
    assert sorted(r["memory"] for r in memory.get_all(all_scopes=True)["results"]) == ["I live in Lyon",
                                                                                       "my card ends 4242"]
    said = [r.getMessage() for r in caplog.records if "control character" in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0] and "user_id 'mia\\tbo'" in said[0] and "wal.log" in said[0], said
    with pytest.raises(ValueError, match="user_id holds the control character"):  # a new write is refused still
        tenants.tenants["acme"].write("add", {"data": "hello", "user_id": "mia\tbo"})
    tenants.close()


def test_a_chunked_memory_of_an_old_scope_can_be_updated(tmp_path, monkeypatch, caplog):
    """A chunked memory's update stores its new chunks in the memory's own scopes through the store's add, which
    refused the old scope's control character: ScopedMemory.update(id, data), given no scope at all, was refused
    as 'user_id holds the control character', where a memory stored whole was updated. The load's warning counted
    the memory's chunks as memories and named a chunk's id, which delete refuses, to delete it by."""
    from sam_model.storeconfig import StoreConfig

    def memory() -> ScopedMemory:
        return ScopedMemory(HashingEncoder(16), StoreConfig(provenance=False, chunking={"size": 180}))

    with monkeypatch.context() as before:
        before.setattr(scoped_module, "check_scope", lambda value, name: value)
        before.setattr(store_module, "check_scope_characters", lambda value, name: value, raising=False)
        old = memory()
        old.add("my card ends 4242 and " + "the rest of a long note " * 20, user_id="mia\tbo")
        old.save(tmp_path / "m")
    with caplog.at_level(logging.WARNING):
        loaded = ScopedMemory.load(tmp_path / "m", HashingEncoder(16))
    [kept] = loaded.get_all(all_scopes=True)["results"]
    assert len(loaded.store) > 1  # stored as chunks
    said = [r.getMessage() for r in caplog.records if "control character" in r.getMessage()]
    assert len(said) == 1 and f"of 1 memories (the first {kept['id']!r})" in said[0], said  # not its chunks
    loaded.update(kept["id"], "my card ends 9999 and " + "the rest of a long note " * 20)
    [now] = loaded.get_all(all_scopes=True)["results"]
    assert now["memory"].startswith("my card ends 9999") and now["user_id"] == "mia\tbo"


def test_a_write_refused_for_its_scope_is_never_logged(tmp_path, monkeypatch):
    """An MCP remember's scope is checked by the add, after the write is logged (HTTP's by its body, before): a
    refused one was taken back from the log, but a server that died between the two (its record fsynced, not yet
    taken back) replayed it as logged (limits.as_logged) and stored the refused memories in the scope no call may
    name. The scopes of an add are checked before it is logged, as an update's, a delete's and a delete_all's are."""
    from serving import keys_file

    from sam_model.serve.tenants import Tenants, read_keys
    from sam_model.serve.wal import WriteAheadLog
    from sam_model.store import store_config_of

    def serve() -> Tenants:
        return Tenants(read_keys(keys_file(tmp_path)), tmp_path / "data", HashingEncoder(16),
                       store_config_of(HashingEncoder(16)))

    tenants = serve()
    with monkeypatch.context() as died:  # the server dies once the add is refused, before its record is taken back
        died.setattr(WriteAheadLog, "undo", lambda self, seq: None)
        with pytest.raises(ValueError, match="user_id holds the control character"):
            tenants.tenants["acme"].write("add", {"data": "my card ends 4242", "user_id": "mia\tbo"}, checkpoint=False,
                                          field="text")
    for tenant in tenants.tenants.values():
        tenant.release()
    tenants = serve()
    assert tenants.tenants["acme"].memory.get_all(all_scopes=True)["results"] == []
    tenants.close()
