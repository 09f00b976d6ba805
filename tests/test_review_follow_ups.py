"""Follow-ups of the reviews: a re-encode that is all or nothing, a served tenant that saves a migrated checkpoint at
once, benches that write their results atomically, and the paired table that uses the one paired difference."""

from __future__ import annotations

import numpy as np
import pytest

from sam_model.data.examples import MemoryRecord
from sam_model.memory.encoders import HashingEncoder
from sam_model.store import MemoryStore, StoreConfig

try:  # its fixture: a Qdrant server answered by qdrant-client's local mode
    from test_backend_leftovers import server  # noqa: F401
except pytest.skip.Exception:  # no qdrant-client: that test skips itself
    pass

DIM = 16


def records(n: int, ep: str, start: int = 0) -> list[MemoryRecord]:
    return [MemoryRecord(f"{ep}#{i}", ep, i, "user", "plan", f"memory {i} of {ep} about handler_{i}")
            for i in range(start, start + n)]


def three_users(index: dict | None = None) -> MemoryStore:
    """Two memories of each of three users: a re-encode writes one scope after another."""
    store = MemoryStore(HashingEncoder(DIM), StoreConfig(provenance=False, index=index or {}))
    for user in ("mia", "bob", "ann"):
        store.add(records(2, user), user_id=user)
    return store


def vectors(store: MemoryStore) -> dict:
    """Every memory's vector and episode, as the index holds them."""
    ids = store.ids()
    return {i: (store.index.episode_of(i), v.round(6).tolist()) for i, v in zip(ids, store.index.get_vectors(ids))}


class Down(ConnectionError):
    """The backend went away during a write (its answer lost, when it wrote first)."""


def failing_add(index, n: int, wrote: bool):
    """An ``add`` for ``index`` whose call number ``n`` raises Down, after writing when ``wrote``."""
    real, calls = index.add, []

    def add(*args, **kwargs):
        calls.append(1)
        if len(calls) == n:
            if wrote:
                real(*args, **kwargs)
            raise Down("the backend went away")
        return real(*args, **kwargs)

    return add, calls


# ---- 1. a re-encode is all or nothing ------------------------------------------------------------------------


@pytest.mark.parametrize("wrote", [False, True], ids=["refused", "answer-lost"])
def test_a_reencode_the_index_refuses_midway_keeps_every_old_vector(store_backend, monkeypatch, wrote):
    """Found by review: a re-encode removed and re-added the vectors one scope at a time, so the index refusing the
    second scope left the first with the new model's vectors and the rest with the old one's (on a Qdrant server the
    collection stayed so after the failed load). The old vectors now come back in every scope written, and the
    re-encode retried goes through."""
    store = three_users()
    before = vectors(store)
    store.encoder = HashingEncoder(DIM, seed=1)  # another model
    add, calls = failing_add(store.index, 2, wrote)
    monkeypatch.setattr(store.index, "add", add)
    with pytest.raises(Down):
        store.reencode()
    assert len(calls) >= 2, "the fault was not reached"
    monkeypatch.undo()
    assert vectors(store) == before and len(store.index) == len(store) == 6
    assert store.reencode() == 6
    want = store.encoder.encode_memories([store.memory(i) for i in store.ids()])
    np.testing.assert_allclose(store.index.get_vectors(store.ids()), want, atol=1e-6)
    assert {h.id for h in store.search_vector(want[0], 6, user_id="mia")} == {"mia#0", "mia#1"}


def test_a_reencode_whose_rollback_is_refused_too_keeps_the_store_and_index_in_step(monkeypatch, caplog):
    """The backend still down for the rollback: the memories whose vectors it lost leave the store too (as an
    update's rollback does), so that a search and a save do not meet a memory without a vector."""
    store = three_users()
    store.encoder = HashingEncoder(DIM, seed=1)
    real_add, calls = store.index.add, []

    def add(*args, **kwargs):  # the second scope's add fails, and every add after it
        calls.append(1)
        if len(calls) >= 2:
            raise Down("the backend went away")
        return real_add(*args, **kwargs)

    monkeypatch.setattr(store.index, "add", add)
    with pytest.raises(Down):
        store.reencode()
    monkeypatch.undo()
    assert sorted(map(str, store.index.ids())) == sorted(store.ids()) and len(store) < 6
    assert "could not be taken back" in caplog.text and "scopes" in caplog.text


SERVER_MODE = pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant")


@SERVER_MODE
@pytest.mark.parametrize("wrote", [False, True], ids=["refused", "answer-lost"])
def test_a_server_load_whose_reencode_fails_leaves_the_collection_as_it_was(server, tmp_path, monkeypatch,  # noqa: F811
                                                                            wrote):
    """On a Qdrant server the collection outlives a load that failed: a re-encode refused midway left it half the
    new model's. It is now as it was, and the load retried re-encodes it whole."""
    import sam_model.backends.qdrant as qdrant

    store = three_users({"kind": "qdrant", "url": server})
    saved = store.save(tmp_path / "s")
    before = vectors(store)
    real = qdrant.QdrantIndex.add
    calls = []

    def add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            if wrote:
                real(self, *args, **kwargs)
            raise Down("the server went away")
        return real(self, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(qdrant.QdrantIndex, "add", add)
        with pytest.raises(Down):
            MemoryStore.load(saved, HashingEncoder(DIM, seed=1), reencode=True)
    assert len(calls) >= 2, "the fault was not reached"
    assert vectors(store) == before  # the collection, read through the first store (the same server and collection)
    back = MemoryStore.load(saved, HashingEncoder(DIM, seed=1), reencode=True)
    want = back.encoder.encode_memories([back.memory(i) for i in back.ids()])
    np.testing.assert_allclose(back.index.get_vectors(back.ids()), want, atol=1e-6)
    assert back.index._count() == 6
