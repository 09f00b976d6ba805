"""Leftovers of the memory store's reviews: episode ids checked like scopes, one rule for an empty add in-process
and over HTTP, an update's rollback that survives a failing first step, and writes of more than one engine call
that are all or nothing."""

from __future__ import annotations

import numpy as np
import pytest

from sam_model.backends import index_from_config
from sam_model.data.examples import MemoryRecord
from sam_model.memory import MemoryBank, MemoryConfig, MemoryUnit
from sam_model.memory.encoders import HashingEncoder
from sam_model.store import MemoryStore, StoreConfig

DIM = 8
NOT_STRINGS = (True, 1, 1.0, ["e"], np.int64(1))


def record(i: int, ep: object = "e", text: str | None = None) -> MemoryRecord:
    return MemoryRecord(f"m#{i}", ep, i, "user", "plan", text or f"memory {i}", text or f"memory {i}")


# ---- 1. episode ids ----------------------------------------------------------------------------------------


def test_true_and_1_were_one_faiss_episode_but_two_qdrant_ones(store_backend, tmp_path):
    """Found by review: episode ids were not checked where scopes were. ``True`` and ``1`` are equal dict keys, so
    FAISS searched them as one episode where Qdrant matched two payload values, and a FAISS index holding ``True``
    saved a meta.json its own load refused. Every entry point that takes an episode id now refuses one that is not
    a string in one line naming the field, and a refused call changes nothing."""
    store = MemoryStore(HashingEncoder(DIM), StoreConfig(provenance=False))
    x = np.eye(DIM, dtype=np.float32)
    store.add([record(0, "1")], x[:1])
    before = [(h.id, h.episode_id) for h in store.get_all()]
    for bad in NOT_STRINGS:
        shown = type(bad).__name__
        with pytest.raises(ValueError, match=rf"^memories\[0\]\.episode_id must be a string .*got {shown}"):
            store.add([record(1, bad)], x[1:2])
        with pytest.raises(ValueError, match=rf"^memory\.episode_id must be a string .*got {shown}"):
            store.update(record(0, bad), x[2])
        for call in (lambda bad=bad: store.search_vector(x[0], 3, episode_id=bad),
                     lambda bad=bad: store.search({"phase": "plan"}, "memory", 3, episode_id=bad),
                     lambda bad=bad: store.get_all(episode_id=bad), lambda bad=bad: store.next_step(bad)):
            with pytest.raises(ValueError, match=rf"^episode_id must be a string such as 'trip-17' \(or None\), got "
                                                 rf"{shown}"):
                call()
    assert [(h.id, h.episode_id) for h in store.get_all()] == before
    assert [h.id for h in store.search_vector(x[0], 3, episode_id="1")] == ["m#0"]
    assert [h.id for h in MemoryStore.load(store.save(tmp_path / "s"), HashingEncoder(DIM)).get_all(
        episode_id="1")] == ["m#0"]


def test_the_memory_bank_refuses_an_episode_that_is_not_a_string():
    """The bank writes and searches through the store: a unit of episode 1 is refused with no unit left behind,
    and a search of episode 1 is refused instead of walking the graph of whatever episode equals it."""
    bank = MemoryBank(DIM, MemoryConfig())
    v = np.eye(DIM, dtype=np.float32)
    bank.add(MemoryUnit("e#0", "memory 0", "user", "plan", "e", 0), v[0])
    with pytest.raises(ValueError, match=r"episode_id must be a string"):
        bank.add(MemoryUnit("x#0", "memory x", "user", "plan", 1, 0), v[1])  # type: ignore[arg-type]
    assert "x#0" not in bank.units and "x#0" not in bank.store
    with pytest.raises(ValueError, match=r"^episode_id must be a string"):
        bank.search(v[0], 3, episode_id=True)  # type: ignore[arg-type]
    assert [h.id for h in bank.search(v[0], 3, episode_id="e")] == ["e#0"]


@pytest.mark.parametrize("kind", ["flat", "qdrant", "qdrant-edge"])
def test_every_index_refuses_an_episode_its_own_save_could_not_load(tmp_path, kind):
    """Below the store, the indexes keep what their saves can load back: strings, integers or none. A bool (a FAISS
    dict key equal to 1, a Qdrant payload that is not) or a float is refused before anything is written."""
    pytest.importorskip({"flat": "faiss", "qdrant": "qdrant_client", "qdrant-edge": "qdrant_edge"}[kind])
    index = index_from_config(DIM, {"kind": kind, **({"path": str(tmp_path / kind)} if kind != "flat" else {})})
    x = np.eye(DIM, dtype=np.float32)
    index.add(["a", "b"], x[:2], episode_ids=["e", 7])
    for bad in (True, 1.5, ["e"]):
        with pytest.raises(TypeError, match=r"^episode ids must be str, int or None, got "):
            index.add(["c"], x[2:3], episode_ids=[bad])
    for bad in (True, 1.5, [True]):
        with pytest.raises(TypeError, match=r"^episode ids must be str, int or None, got "):
            index.search(x[:1], 2, episode_id=bad)
    assert sorted(map(str, index.ids())) == ["a", "b"]
    assert index.search(x[1:2], 2, episode_id=7)[0][0][0] == "b"
