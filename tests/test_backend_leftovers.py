"""Three leftovers of the Qdrant backends: a point whose payload disagrees with the store's record (its owner's
search missed it), a ScopedMemory saved before each scope had its own episode (two scopes shared a conversation),
and a Qdrant server's rollback at load (it deleted the point of a memory updated after the save)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

pytest.importorskip("qdrant_client", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from sam_model.data.examples import MemoryRecord  # noqa: E402
from sam_model.store import MemoryStore  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

DIM = 16


def records(n: int, ep: str, start: int = 0) -> list[MemoryRecord]:
    return [MemoryRecord(f"{ep}#{i}", ep, i, "user", "plan", f"memory {i} of {ep}") for i in range(start, start + n)]


def two_users(index: dict) -> MemoryStore:
    """mia's two memories and bob's two, each user's in an episode of their own name."""
    store = MemoryStore(None, StoreConfig(provenance=False, index=index), DIM)
    x = np.eye(DIM, dtype=np.float32)
    store.add(records(2, "mia"), x[:2], user_id="mia")
    store.add(records(2, "bob"), x[2:4], user_id="bob")
    return store


def found(store: MemoryStore, **scope) -> set:
    return {h.id for h in store.search_vector(np.ones(DIM, np.float32), 5, **scope)}


def test_a_payload_that_disagrees_with_the_store_is_repaired_at_load_not_left_to_hide_a_memory(tmp_path, caplog):
    """Stop 50 kept a point whose payload named another user out of that user's search; but Qdrant filters by the
    payload, so mia's own search never reached it either, and a damaged episode hid it from its episode's search:
    the memory was lost to its owner without a word. A load now checks every payload against the store's record,
    rewrites those that disagree and says which."""
    store = two_users({"kind": "qdrant", "path": str(tmp_path / "q")})
    saved = store.save(tmp_path / "s")
    points = saved / "index" / "points.json"
    payloads = json.loads(points.read_text())
    payloads[0]["user_id"] = "bob"  # mia#0's point, as bob's
    payloads[1]["episode"] = "bob"  # mia#1's point, in bob's episode
    points.write_text(json.dumps(payloads))
    with caplog.at_level(logging.WARNING, logger="sam_model.backends.points"):
        back = MemoryStore.load(saved)
    assert found(back, user_id="mia") == {"mia#0", "mia#1"}  # mia#0 was missing
    assert found(back, user_id="bob") == {"bob#0", "bob#1"}
    assert {h.id for h in back.search_vector(np.ones(DIM, np.float32), 5, episode_id="mia")} == {"mia#0", "mia#1"}
    assert "mia#0" in caplog.text and "2 points" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sam_model.backends.points"):
        MemoryStore.load(back.save(tmp_path / "s2"))  # the repair is saved
    assert "held a payload" not in caplog.text


def test_a_damaged_payload_of_a_qdrant_edge_shard_is_repaired_at_load(tmp_path, caplog):
    qe = pytest.importorskip("qdrant_edge", reason="the [qdrant-edge] extra is not installed")
    from sam_model.backends.points import point_id

    store = two_users({"kind": "qdrant-edge", "path": str(tmp_path / "edge"), "exact": True})
    store.index.shard.update(qe.UpdateOperation.set_payload([point_id("mia#0")], {"user_id": "bob"}))  # damaged
    assert found(store, user_id="mia") == {"mia#1"}  # what the damage does
    with caplog.at_level(logging.WARNING, logger="sam_model.backends.points"):
        back = MemoryStore.load(store.save(tmp_path / "s"))
    assert found(back, user_id="mia") == {"mia#0", "mia#1"} and found(back, user_id="bob") == {"bob#0", "bob#1"}
    assert "mia#0" in caplog.text


@pytest.fixture
def server(monkeypatch) -> str:
    """A Qdrant 'server' at a URL answered by qdrant-client's local mode: the index runs its server code (the
    vectors stay in the collection, not in the save; a load rolls the collection back by write number), which
    needs no network to test."""
    import threading

    from qdrant_client import QdrantClient

    import sam_model.backends.qdrant as qdrant

    url, engine, real = "http://qdrant.test:6333", (QdrantClient(location=":memory:"), threading.RLock()), qdrant.client_for
    monkeypatch.setattr(qdrant, "client_for", lambda u, p: engine if u == url else real(u, p))
    monkeypatch.setenv(qdrant.URLS_ENV, url)
    return url


SERVER_MODE = pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant")


@SERVER_MODE
def test_a_server_load_of_an_earlier_save_keeps_a_memory_updated_since_as_saved(server, tmp_path):
    """On a server an update is a remove and an add (a new write number), so the load's rollback (points written
    after the save) deleted the updated memory's point: the store listed a memory with no vector and its search
    raised. Now a point of a memory the save holds is kept, and one written after the save is encoded again from
    the saved text, so the store is the save's, vector included."""
    from sam_model.memory import HashingEncoder

    enc = HashingEncoder(DIM)
    store = MemoryStore(enc, StoreConfig(provenance=False, index={"kind": "qdrant", "url": server}))
    store.add(records(3, "mia"), user_id="mia")
    saved = store.save(tmp_path / "s")
    want = store.index.get_vectors(["mia#1", "mia#2"])
    store.update(MemoryRecord("mia#1", "mia", 1, "user", "plan", "an entirely different text"))
    store.add(records(1, "mia", 3), user_id="mia")  # written after the save: rolled back
    store.delete(["mia#2"])  # deleted after the save: back, as saved
    assert not np.allclose(store.index.get_vectors(["mia#1"]), want[:1])
    back = MemoryStore.load(saved, enc)
    assert back.ids() == ["mia#0", "mia#1", "mia#2"] and back.index._count() == 3
    np.testing.assert_allclose(back.index.get_vectors(["mia#1", "mia#2"]), want, atol=1e-6)
    assert found(back, user_id="mia") == {"mia#0", "mia#1", "mia#2"}


@SERVER_MODE
def test_a_server_load_without_an_encoder_keeps_the_updated_point_and_says_so(server, tmp_path, caplog):
    store = MemoryStore(None, StoreConfig(provenance=False, index={"kind": "qdrant", "url": server}), DIM)
    x = np.eye(DIM, dtype=np.float32)
    store.add(records(2, "mia"), x[:2], user_id="mia")
    saved = store.save(tmp_path / "s")
    store.update(records(1, "mia", 1)[0], x[5])
    with caplog.at_level(logging.WARNING, logger="sam_model.store"):
        back = MemoryStore.load(saved)
    assert found(back, user_id="mia") == {"mia#0", "mia#1"}  # mia#1 had no point: its search missed it
    assert "mia#1" in caplog.text and "after the save" in caplog.text


def old_episode(user_id=None, agent_id=None, run_id=None) -> str:
    """ScopedMemory.episode_of before 2026-12-05 (b5e316e): only the given values, joined by '/'."""
    return "/".join(str(p) for p in (user_id, agent_id, run_id) if p is not None)


VICTIM, OTHER = {"user_id": "alice", "agent_id": "bot"}, {"agent_id": "alice", "run_id": "bot"}


def old_save(tmp_path, monkeypatch, index: dict):
    """A ScopedMemory saved as the code before the episode-naming change saved it: {user alice, agent bot} and
    {agent alice, run bot} write one episode 'alice/bot' (one conversation), agent 'bot' and user 'bot' one episode
    'bot'; scoped.json has no version (checked by hand against a save of b5e316e^'s code: the same files and
    keys)."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    with monkeypatch.context() as m:
        m.setattr(ScopedMemory, "episode_of", staticmethod(old_episode))
        memory = ScopedMemory(HashingEncoder(256), StoreConfig(index=index))
        memory.add("my card number is 4111-2222", **VICTIM)
        memory.add("my pin is 9876", **OTHER)
        memory.add("my zip is 90210", **OTHER)
        memory.add("I want to go to Paris", **OTHER)
        memory.add("the bot's own note", agent_id="bot")
        memory.add("I am user bot", user_id="bot")
        memory.delete("alice/bot#2")  # OTHER's zip, deleted: its history stays
        folder = memory.save(tmp_path / "old")
    assert memory.get_all(**OTHER)["results"][0]["episode_id"] == "alice/bot"  # the old naming
    f = folder / "scoped.json"
    d = json.loads(f.read_text())
    f.write_text(json.dumps({k: v for k, v in d.items() if k not in ("version", "owners")}))
    return folder


@pytest.mark.parametrize("index", ["flat", "qdrant"])
def test_a_save_from_before_each_scope_had_its_own_episode_loads_with_the_scopes_apart(index, tmp_path, monkeypatch):
    """Two scopes of one old episode shared one conversation: after a load, {user alice, agent bot}'s tool call
    was traced to {agent alice, run bot}'s words and revised its memory (an UPDATE of another scope's memory,
    answered with its words), and the history of its deleted memory was shown to user alice (the id's places read
    as the new naming). The load now moves each memory to its scopes' own episode, drops the conversations that
    mixed scopes (each scope's next message starts afresh) and keeps the owner of what the old ids do not place."""
    from sam_model.memory import HashingEncoder, ScopedMemory

    cfg = {"kind": "flat"} if index == "flat" else {"kind": "qdrant", "path": str(tmp_path / "q")}
    folder = old_save(tmp_path, monkeypatch, cfg)
    memory = ScopedMemory.load(folder, HashingEncoder(256))
    owner = {h.id: (h.user_id, h.agent_id, h.run_id) for h in memory.store.get_all()}
    out = memory.add([{"role": "assistant", "tool_calls": [{"function": {"name": "pay", "arguments":
                                                                         {"pin": "9876"}}}]}], **VICTIM)
    assert [r["event"] for r in out["results"]] == ["ADD"] and "Paris" not in json.dumps(out)
    paris = memory.get("alice/bot#3")
    assert paris["memory"] == "I want to go to Paris" and [h["event"] for h in memory.history("alice/bot#3")] == ["ADD"]
    assert memory.history("alice/bot#2", user_id="alice") == []  # OTHER's deleted zip
    assert memory.history("alice/bot#2", agent_id="alice") == []  # whose, an old id does not say
    assert memory.history("alice/bot#2")[-1]["event"] == "DELETE"  # unscoped: as before
    for h in memory.store.get_all():  # each memory in its scopes' episode, its id kept
        assert h.episode_id == ScopedMemory.episode_of(h.user_id, h.agent_id, h.run_id), h.id
    more = memory.add("and a window seat", **OTHER)["results"][0]["id"]  # in its own episode, no id taken
    assert memory.get(more)["episode_id"] == "/alice/bot" and memory.get(more)["step"] == 4
    memory.delete("alice/bot#3", **OTHER)
    assert memory.history("alice/bot#3", user_id="alice") == [] and memory.history("alice/bot#3", **OTHER)
    owner.update({h.id: (h.user_id, h.agent_id, h.run_id) for h in memory.store.get_all()})
    again = ScopedMemory.load(memory.save(tmp_path / "new"), HashingEncoder(256))
    for m in (memory, again):
        for scope in (VICTIM, OTHER, {"user_id": "alice"}, {"agent_id": "alice"}, {"agent_id": "bot"},
                      {"user_id": "bot"}, {"run_id": "bot"}):
            got = {r["id"] for r in m.search("card pin Paris note window", **scope, limit=20)["results"]}
            want = {i for i in m.store.ids() if all(owner[i][n] == v for n, v in enumerate(
                scope.get(k) for k in ("user_id", "agent_id", "run_id")) if v is not None)}
            assert got == want, scope
        assert m.history("alice/bot#3", user_id="alice") == [] and m.history("alice/bot#2", user_id="alice") == []


def test_a_scoped_json_of_a_later_version_or_with_bad_owners_is_one_line(tmp_path):
    from sam_model.io import SAMFileError
    from sam_model.memory import HashingEncoder, ScopedMemory

    folder = ScopedMemory(HashingEncoder(64)).save(tmp_path / "m")
    f = folder / "scoped.json"
    d = json.loads(f.read_text())
    assert d["version"] == 3
    for bad, match in (({"version": 4}, "field 'version' is 4"), ({"owners": [["a#0", ["x"]]]}, "owners of 'a#0'")):
        f.write_text(json.dumps({**d, **bad}))
        with pytest.raises(SAMFileError, match=match):
            ScopedMemory.load(folder, HashingEncoder(64))


def test_a_move_the_index_refuses_midway_leaves_every_memory_in_its_episode():
    """MemoryStore.move (the old save's memories to their scopes' episodes) is a remove and an add per scope: one
    refused after another went through puts them all back, vectors and episodes as they were."""
    store = MemoryStore(None, StoreConfig(provenance=False), DIM)
    x = np.eye(DIM, dtype=np.float32)
    store.add(records(2, "bot"), x[:2], agent_id="bot")
    store.add(records(2, "bot", 2), x[2:4], user_id="bot")
    add, calls = store.index.add, []

    def refuse_the_second(*a, **k):
        calls.append(k.get("episode_ids"))
        if len(calls) == 2:
            raise RuntimeError("the backend is down")
        return add(*a, **k)

    store.index.add = refuse_the_second
    with pytest.raises(RuntimeError, match="down"):
        store.move(["bot#0", "bot#1", "bot#2", "bot#3"], "moved")
    store.index.add = add
    assert [h.episode_id for h in store.get_all()] == ["bot"] * 4
    np.testing.assert_array_equal(store.index.get_vectors([f"bot#{i}" for i in range(4)]), x[:4])
    store.move(["bot#0", "bot#1"], "/bot")
    assert [h.episode_id for h in store.get_all()] == ["/bot", "/bot", "bot", "bot"]
    assert store.next_step("/bot") == 2 and store.next_step("bot") == 4
