"""Leftovers of the memory store's reviews: episode ids checked like scopes, one rule for an empty add in-process
and over HTTP, an update's rollback that survives a failing first step, and writes of more than one engine call
that are all or nothing."""

from __future__ import annotations

import numpy as np
import pytest
from test_store_review import an_update, whole_state

from sam_model.backends import index_from_config
from sam_model.data.examples import MemoryRecord
from sam_model.data.schema import Event, State
from sam_model.memory import MemoryBank, MemoryConfig, MemoryUnit
from sam_model.memory.encoders import HashingEncoder
from sam_model.store import MemoryStore
from sam_model.storeconfig import StoreConfig

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


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "chunked"])
def test_an_update_naming_another_episode_is_refused_whole_or_chunked(store_backend, chunked):
    """Found beside the episode check: an update of a whole memory kept its stored episode whatever the record said,
    while a chunked memory's update moved it to the record's episode (its chunks re-added with it). Now both refuse
    a record of another episode, in one line, and change nothing."""
    store = MemoryStore(HashingEncoder(DIM), StoreConfig(provenance=False, chunking={"size": 180, "overlap": 50}))
    text = "view_file: " + " ".join(f"line_{i}" for i in range(80)) if chunked else "a short note on line_1"
    store.add([record(0, "e", text)])
    before = [(h.id, h.episode_id, h.text) for h in store.get_all()]
    with pytest.raises(ValueError, match=r"^memory\.episode_id is 'other' but memory 'm#0' is of episode 'e': an "
                                         r"update keeps its memory's episode"):
        store.update(record(0, "other", text.replace("line_", "row_")))
    assert [(h.id, h.episode_id, h.text) for h in store.get_all()] == before and not store.get_all(episode_id="other")
    store.update(record(0, "e", text.replace("line_", "row_")))
    assert {h.episode_id for h in store.get_all()} == {"e"} and "row_" in store.memory("m#0").text


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


# ---- 3. an update's rollback whose first step fails --------------------------------------------------------


class LostAnswer(ConnectionError):
    """The backend wrote, and the answer never came back (a timeout): the client cannot tell it from a refusal."""


def faulty(monkeypatch, index, removes_failing: int = 1) -> list:
    """Make the index's next add write its vectors and then raise LostAnswer, and the ``removes_failing`` removals
    after it raise too (the backend still down for a moment): the rollback's first step fails."""
    real_add, real_remove, log = index.add, index.remove, []

    def add(*args, **kwargs):
        real_add(*args, **kwargs)
        if "add" not in log:
            log.append("add")
            raise LostAnswer("the answer to the upsert was lost")

    def remove(*args, **kwargs):
        if "add" in log and log.count("remove") < removes_failing:
            log.append("remove")
            raise ConnectionError("backend down")
        return real_remove(*args, **kwargs)

    monkeypatch.setattr(index, "add", add)
    monkeypatch.setattr(index, "remove", remove)
    return log


@pytest.mark.parametrize("shape, removes_failing", [("chunked", 1), ("whole", 1), ("whole to chunked", 1),
                                                     ("chunked", 2), ("whole to chunked", 2)])
def test_an_update_whose_rollback_first_fails_to_take_the_new_version_out_is_still_all_or_nothing(
        store_backend, monkeypatch, shape, removes_failing):
    """Found by review: when the index took the new version and then failed (its answer lost), the rollback's first
    step, taking the new chunks back out, could fail too, and the rollback stopped there: the old version's entries,
    chunk list and links were not put back, and the index kept vectors of no memory (every search then raised a
    KeyError, every save failed to load). The rollback now puts the bookkeeping back first and asks the index twice
    (a chunked update's new chunks are asked for by the add's rollback, then by the update's); the old version is then
    exactly as it was, and the update retried goes through."""
    store, new = an_update(shape)
    before = whole_state(store)
    log = faulty(monkeypatch, store.index, removes_failing)
    with pytest.raises(LostAnswer):
        store.update(new)
    assert log == ["add"] + ["remove"] * removes_failing, "the faults were not reached"
    assert whole_state(store) == before
    store.update(new)
    assert store.memory("e#0").content == new.content
    assert [h.id for h in store.search(State(phase="plan"), "handler_7 return", k=2, user_id="mia", fold=True)]


def test_an_add_whose_index_wrote_then_failed_leaves_no_vector_behind(store_backend, monkeypatch):
    """Found by review: the index's add sat outside the add's rollback, so an add whose vectors the backend wrote
    before its answer was lost left them in the index under no memory: the same add retried was refused ('already
    in the index') and a save did not load. The add is now taken back whole, the index asked twice to let go."""
    store = MemoryStore(HashingEncoder(64), StoreConfig())
    store.add([Event("e", 0, "user", "my budget is 1400 dollars", State(phase="plan"))], user_id="mia")
    before = whole_state(store)
    batch = [Event("e", i, "user", f"note {i} about handler_{i}", State(phase="plan")) for i in (1, 2)]
    log = faulty(monkeypatch, store.index)
    with pytest.raises(LostAnswer):
        store.add(batch, user_id="mia")
    assert log == ["add", "remove"] and whole_state(store) == before
    assert store.add(batch, user_id="mia") == ["e#1", "e#2"]


def test_vectors_an_index_refused_twice_to_let_go_are_never_found_and_leave_at_the_next_write(
        store_backend, monkeypatch, tmp_path):
    """When the backend stays down through the rollback, the store keeps only what it can stand behind: the refused
    add's memories are not stored, the vectors the index kept are never returned by a search, and the next add or
    save takes them out (a save that cannot is refused, not written unloadable)."""
    store = MemoryStore(HashingEncoder(64), StoreConfig())
    store.add([Event("e", 0, "user", "my budget is 1400 dollars", State(phase="plan"))], user_id="mia")
    log = faulty(monkeypatch, store.index, removes_failing=4)
    with pytest.raises(LostAnswer):
        store.add([Event("e", 1, "user", "my budget is 1400 dollars too", State(phase="plan"))], user_id="mia")
    assert log == ["add", "remove", "remove"] and store.ids() == ["e#0"] and len(store.index) == 2
    assert [h.id for h in store.search(State(phase="plan"), "budget 1400 dollars", k=5, user_id="mia")] == ["e#0"]
    with pytest.raises(ConnectionError, match="^backend down$"):  # still down: no save that would not load
        store.save(tmp_path / "s")
    assert not (tmp_path / "s").exists() and log.count("remove") == 4
    assert store.add([Event("e", 1, "user", "another note", State(phase="plan"))], user_id="mia") == ["e#1"]
    assert sorted(map(str, store.index.ids())) == ["e#0", "e#1"]
    back = MemoryStore.load(store.save(tmp_path / "s"), HashingEncoder(64))
    assert [h.text for h in back.get_all()] == [h.text for h in store.get_all()]
    # an update the index refuses twice to take back: the memory leaves the entries (the backend's error raised),
    # its new vector is never found, and the next save takes it out
    monkeypatch.undo()
    log = faulty(monkeypatch, store.index, removes_failing=2)
    with pytest.raises(ConnectionError, match="^backend down$"):
        store.update(MemoryRecord("e#1", "e", 1, "user", "plan", "another note, revised", "another note, revised"))
    assert log == ["add", "remove", "remove"] and store.ids() == ["e#0"]
    assert [h.id for h in store.search(State(phase="plan"), "another note revised", k=5, user_id="mia")] == ["e#0"]
    back = MemoryStore.load(store.save(tmp_path / "s"), HashingEncoder(64))
    assert back.ids() == ["e#0"] and sorted(map(str, store.index.ids())) == ["e#0"]


# ---- 4. writes of more than one engine call ------------------------------------------------------------------


class Flaky:
    """An engine (a Qdrant client, an Edge shard) whose ``method``'s call number ``n`` raises ConnectionError: after
    doing its work when ``wrote`` (the answer lost), before it otherwise."""

    def __init__(self, engine, method: str, n: int, wrote: bool):
        self._engine, self._method, self._n, self._wrote, self.calls = engine, method, n, wrote, 0

    def __getattr__(self, name: str):
        attr = getattr(self._engine, name)
        if name != self._method:
            return attr

        def call(*args, **kwargs):
            self.calls += 1
            if self.calls == self._n:
                if self._wrote:
                    attr(*args, **kwargs)
                raise ConnectionError("the engine went away")
            return attr(*args, **kwargs)

        return call


@pytest.mark.parametrize("wrote", [False, True], ids=["refused", "answer-lost"])
@pytest.mark.parametrize("op", ["add", "remove"])
@pytest.mark.parametrize("kind", ["qdrant", "qdrant-edge"])
def test_a_write_of_more_points_than_one_engine_call_takes_is_all_or_nothing(tmp_path, monkeypatch, kind, op, wrote):
    """Found by review: over 1,024 points an add (upsert) or a remove (delete) is several engine calls, and one
    failing after the first left the earlier batches written while the index said nothing was: points the store
    knew nothing of were searched, or memories the store held had lost their vectors. A failed batch now takes the
    batches before it (and itself, whose answer may be what was lost) back: the engine holds what it held, vectors
    and payloads, and the write retried goes through."""
    pytest.importorskip({"qdrant": "qdrant_client", "qdrant-edge": "qdrant_edge"}[kind])
    from sam_model.backends.qdrant import BATCH

    cfg = {"kind": kind} if kind == "qdrant" else {"kind": kind, "path": str(tmp_path / "edge"), "exact": True}
    index = index_from_config(DIM, cfg)
    rng = np.random.default_rng(0)
    old = [f"old#{i}" for i in range(BATCH * 2 + 500)]
    index.add(old, rng.standard_normal((len(old), DIM)).astype(np.float32), episode_ids="old", scopes={"user_id": "u"})
    new = [f"new#{i}" for i in range(BATCH * 2 + 10)]
    x_new = rng.standard_normal((len(new), DIM)).astype(np.float32)
    q = rng.standard_normal((3, DIM)).astype(np.float32)

    def engine() -> tuple:
        """What the engine holds, read past the index's own bookkeeping: every point's payload, vector and rank."""
        found = index.search(q, 40, scopes={"user_id": "u"}), index.search(q, 40, episode_id="new")
        held = sorted(map(str, index.ids()))
        return (held, index.get_vectors(held).round(6).tolist(), [f[0] for f in found],
                [np.round(f[1], 5).tolist() for f in found], engine_count())

    def engine_count() -> int:
        return index._count() if kind == "qdrant" else index.info()["points"]

    before = engine()
    method = "update" if kind == "qdrant-edge" else ("upsert" if op == "add" else "delete")
    attr = "shard" if kind == "qdrant-edge" else "client"
    monkeypatch.setattr(index, attr, Flaky(getattr(index, attr), method, 3, wrote))
    with pytest.raises(ConnectionError, match="the engine went away"):
        if op == "add":
            index.add(new, x_new, episode_ids="new", scopes={"user_id": "u"})
        else:
            index.remove(old[: BATCH * 2 + 100])
    assert getattr(index, attr).calls >= 3, "the third call was not reached"
    monkeypatch.undo()
    assert engine() == before
    if op == "add":
        index.add(new, x_new, episode_ids="new", scopes={"user_id": "u"})
        assert len(index) == len(old) + len(new) == engine_count()
    else:
        index.remove(old[: BATCH * 2 + 100])
        assert len(index) == 400 == engine_count()
