"""Thread safety is a contract: memories shared by many threads never crash, leak across scopes or save badly.

The fast version of ``python -m sam_model.bench.threads`` (whose 20-run tally is in the README) runs here in
process: 8 threads add, search, list, delete and save one ScopedMemory and one bare MemoryStore."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

from sam_model.bench.threads import one_run
from sam_model.data.schema import State
from sam_model.index import MemoryIndex
from sam_model.memory import HashingEncoder, MemoryBank, SAMMemory
from sam_model.memory.config import MemoryConfig


def test_eight_threads_never_crash_leak_or_save_badly():
    tally = one_run(seed=3, threads=8, ops=60)
    assert tally["errors"] == []
    assert (tally["exceptions"], tally["leaks"], tally["lost"], tally["bad_saves"]) == (0, 0, 0, 0)
    assert tally["saves"] >= 1 and tally["searches"] > 500 and tally["adds"] > 150  # the threads did work


def test_the_probe_sees_a_write_answered_and_not_stored(monkeypatch):
    """Found by review: the probe discarded what adds answered, so an add that stored nothing passed it."""
    from sam_model.memory.scoped import ScopedMemory

    real, calls = ScopedMemory.add, [0]

    def forgetful(self, data, *args, **kwargs):
        calls[0] += 1
        if calls[0] % 7 == 0:
            return {"results": [{"id": f"fake-{calls[0]}", "memory": "x", "event": "ADD"}]}
        return real(self, data, *args, **kwargs)

    monkeypatch.setattr(ScopedMemory, "add", forgetful)
    assert one_run(seed=3, threads=4, ops=40)["lost"] > 0


def _run(threads: int, fn) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(threads)

    def wrap(t):
        barrier.wait()
        try:
            fn(t)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    pool = [threading.Thread(target=wrap, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return errors


def test_index_gives_every_concurrent_add_its_own_faiss_id():
    ix = MemoryIndex(16, "flat", device="cpu")
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((8, 200, 16)).astype(np.float32)

    def add(t):
        for i in range(200):
            ix.add([f"t{t}-{i}"], vecs[t, i : i + 1], episode_ids=f"ep{t}")
            ix.search(vecs[t, i], 3, episode_id=f"ep{t}")

    assert _run(8, add) == []
    assert len(ix) == 1600 and ix._index.ntotal == 1600
    for t in (0, 7):  # each id still finds its own vector
        np.testing.assert_array_equal(ix.get_vectors([f"t{t}-5"])[0], vecs[t, 5])


def test_agents_sharing_one_bank_from_threads(tmp_path):
    enc = HashingEncoder(64)
    bank = MemoryBank(64, MemoryConfig(capacity=0))
    words = ["flight", "hotel", "Lisbon", "seat", "refund", "budget"]

    def agent(t):
        mem = SAMMemory(enc, bank=bank, episode_id=f"ep{t}")
        for i in range(25):
            mem.observe(f"{words[(t + i) % 6]} number {i} of agent {t}", State("plan"))
            hits = mem.retrieve(State("plan"), "flight hotel")
            assert all(h.episode_id == f"ep{t}" for h in hits)

    assert _run(8, agent) == []
    assert len(bank) == 200
    with bank.lock:
        bank.save(tmp_path / "bank.npz")
    back = MemoryBank.load(tmp_path / "bank.npz")
    assert sorted(u.id for u in back) == sorted(u.id for u in bank)


def test_the_lock_is_reentrant_and_shared_by_a_caller():
    from sam_model.memory import ScopedMemory

    memory = ScopedMemory(HashingEncoder(32))
    memory.add("a seat by the window", user_id="ana")
    entered = threading.Event()

    def writer():
        entered.set()
        memory.add("and a vegetarian meal", user_id="bo")

    with memory.lock:  # a caller's several calls are one step: the writer waits for it
        th = threading.Thread(target=writer)
        th.start()
        entered.wait(5)
        th.join(0.2)
        assert th.is_alive() and len(memory.store) == 1
        memory.search("window", user_id="ana")  # re-entrant: the holder's own calls go through
    th.join(5)
    assert len(memory.store) == 2


@pytest.mark.parametrize("k", [0, -1, 10**9, 2.5, True, "5"])
def test_bad_k_is_refused_in_one_line(k):
    from sam_model.memory import ScopedMemory

    memory = ScopedMemory(HashingEncoder(32))
    memory.add("a seat by the window", user_id="ana")
    with pytest.raises((ValueError, TypeError), match=r"^k must be an integer from 1 to 10000, got "):
        memory.search("window", user_id="ana", k=k)


def test_langgraph_stores_sharing_one_memory_store_put_into_one_namespace_from_threads(run_threads):
    """Found by review: a put read its namespace's next step from the shared store, then added its memory under
    another lock hold; two SAMStores over one MemoryStore (``store=``, documented as shareable) putting into one
    namespace at once took the same step, and one put was refused ('already in the store')."""
    pytest.importorskip("langgraph", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")
    from langgraph.store.base import PutOp

    from sam_model.integrations.langgraph import SAMStore
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    store = MemoryStore(HashingEncoder(16), StoreConfig(provenance=False))
    graphs = [SAMStore(store=store), SAMStore(store=store)]

    def puts(t: int):  # a batch makes all its puts ready (their steps read) before it stores the first
        return lambda i: graphs[t % 2].batch([PutOp(("mem", "mia"), f"k{t}-{i}-{j}", {"content": f"note {j} of {t}"})
                                             for j in range(8)])

    assert run_threads(*((puts(t), 25) for t in range(4))) == []
    assert len(store) == 4 * 25 * 8
    for t in range(4):
        assert graphs[t % 2].get(("mem", "mia"), f"k{t}-24-7").value == {"content": f"note 7 of {t}"}


def test_a_scoped_delete_all_never_forgets_a_conversation_another_entry_point_writes(run_threads):
    """Found by review: ScopedMemory.delete_all listed the live episodes, then dropped the recorder's state of every
    other episode, without holding the store between the two: a SAMStore sharing the store, writing a namespace's
    first memory in that gap, lost its state, and the namespace's next memory was compared with none (it 'set' the
    slots its first memory had set already)."""
    pytest.importorskip("langgraph", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")
    from sam_model.data.examples import MemoryRecord
    from sam_model.integrations.langgraph import SAMStore
    from sam_model.memory.scoped import ScopedMemory
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    enc = HashingEncoder(16)
    store = MemoryStore(enc, StoreConfig(provenance=False))
    store.add([MemoryRecord(f"old#{i}", "old", i, "user", "", "an old note", "") for i in range(2000)])  # a long list
    memory, graph = ScopedMemory(enc, store=store), SAMStore(store=store)
    said = {"kind": "user", "text": "I fly to Paris", "state": {"phase": "plan", "constraints": {"city": "Paris"}}}
    done = threading.Event()

    def clear(i: int) -> None:
        while not done.is_set():
            memory.add("a note", user_id="ana")
            memory.delete_all(user_id="ana")

    def write(i: int) -> None:
        try:
            graph.put(("trips", f"t{i}"), "first", said)
            graph.put(("trips", f"t{i}"), "again", said)  # the same state again: it sets nothing new
        finally:
            if i == 59:
                done.set()

    assert run_threads((clear, 1), (write, 60)) == []
    for i in range(60):  # and once more, after the threads: a state forgotten at any moment shows
        graph.put(("trips", f"t{i}"), "later", said)
    assert [store.sets_of(f"///trips.t{i}#0") for i in range(60)] == [("city",)] * 60
    assert [(store.sets_of(f"///trips.t{i}#1"), store.sets_of(f"///trips.t{i}#2")) for i in range(60)] == [((), ())] * 60


def test_a_chunked_memory_being_updated_is_never_seen_missing(run_threads):
    """Found by review: ``has``, ``len`` and ``in`` read the store without its lock, and a chunked memory's update
    (its old chunks out, its new ones in, under the lock) showed them a store without it: ``has`` said no for a
    memory stored all along, and ``len`` counted a store that never was."""
    from sam_model.data.chunks import chunk_records
    from sam_model.data.examples import MemoryRecord
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    store = MemoryStore(HashingEncoder(16), StoreConfig(provenance=False, chunking={"size": 40, "overlap": 5}))

    def words(n: int) -> MemoryRecord:
        text = " ".join(f"word{j}" for j in range(n))
        return MemoryRecord("m#0", "m", 0, "user", "", text, text)

    store.add([words(30)])
    store.add([MemoryRecord("w#0", "w", 0, "user", "", "a short one", "a short one")])
    fewest = 1 + min(len(chunk_records([words(n)], store.config.chunker)) for n in range(20, 40))
    done, misses = threading.Event(), []

    def update(i: int) -> None:
        try:
            store.update(words(20 + i % 20))  # 20 to 39 words: 4 to 7 chunks
            store.update(MemoryRecord("w#0", "w", 0, "user", "", f"short {i}", f"short {i}"))
        finally:
            if i == 399:
                done.set()

    def read(i: int) -> None:
        while not done.is_set():
            misses.extend(what for what, ok in (("has", store.has("m#0")), ("in", "w#0" in store),
                                                ("len", len(store) >= fewest)) if not ok)

    assert run_threads((update, 400), (read, 1)) == []
    assert misses == []


def test_threads_loading_one_qdrant_save_each_get_a_collection_of_their_own(tmp_path, monkeypatch, run_threads):
    """Found by review: a load of an embedded Qdrant save looked for a live store holding its collection, then
    attached to it a moment later; threads loading one folder at once all found none and attached to the same
    collection, each rebuilding it under the others: two live stores then wrote one set of points (a delete in one
    took the other's vectors, a search of one returned the other's memories)."""
    pytest.importorskip("qdrant_client", reason="the [serve] extra is not installed (pip install -e '.[serve]')")
    import gc
    import time

    import sam_model.backends.qdrant as qdrant
    from sam_model.data.examples import MemoryRecord
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    enc = HashingEncoder(16)
    store = MemoryStore(enc, StoreConfig(provenance=False, index={"kind": "qdrant", "path": str(tmp_path / "q")}))
    store.add([MemoryRecord(f"e#{i}", "e", i, "user", "", f"note {i}", f"note {i}") for i in range(20)])
    store.save(tmp_path / "saved")
    del store
    gc.collect()  # no live store holds the saved collection: the loads below decide who takes it
    real = qdrant.client_for

    def slow_client_for(url, path):  # between the look for a live holder and the attach: the others run
        time.sleep(0.001)
        return real(url, path)

    monkeypatch.setattr(qdrant, "client_for", slow_client_for)

    def load_four() -> None:  # its stores go when it returns: the next round starts with no live holder again
        loaded: list = []
        assert run_threads(*[(lambda i: loaded.append(MemoryStore.load(tmp_path / "saved", enc)), 1)] * 4) == []
        names = [s.index.collection for s in loaded]
        assert len(set(names)) == 4, names
        loaded[0].delete(["e#3"])
        assert all(len(s.search_vector(enc.embed(["note 3"])[0], 20)) == 20 for s in loaded[1:])

    for _ in range(3):
        load_four()
        gc.collect()


def _consistent(store) -> dict:
    """A store's memories (id -> whole text), checked whole: every chunk's memory is there with its chunks numbered
    0..n-1 once each, the index holds exactly the stored ids, and each scope's listing is that scope's memories."""
    hits = store.get_all()
    ids = [h.id for h in hits]
    assert len(ids) == len(set(ids)) and sorted(map(str, store.index.ids())) == sorted(map(str, ids))
    chunks: dict = {}
    for h in hits:
        if h.parent_id is not None:
            chunks.setdefault(h.parent_id, []).append(h.chunk)
    assert all(sorted(c) == list(range(len(c))) for c in chunks.values()), chunks
    for user in {h.user_id for h in hits}:
        assert sorted(h.id for h in store.get_all(user_id=user)) == sorted(h.id for h in hits if h.user_id == user)
    return {h.memory_id: store.memory(h.memory_id).text for h in hits}


def test_threads_adding_updating_deleting_searching_and_saving_one_store(store_backend, tmp_path, run_threads):
    """Six threads, two to a scope, add, update (a memory re-chunked: 1 to 5 chunks), delete, search, list and
    save one chunked store at once, and one add or update in eight is refused by the index (the update's rollback
    under the others' writes). After: every acknowledged write holds and nothing else, no chunk without its memory
    or twice, no search or listing outside its scope, and every save taken meanwhile loads whole, each memory in a
    version that was written."""
    from sam_model.data.examples import MemoryRecord
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    enc = HashingEncoder(32)
    store = MemoryStore(enc, StoreConfig(chunking={"size": 60, "overlap": 10}))
    real_add, refused = store.index.add, iter(range(10**6))

    def flaky_add(*args, **kwargs):  # an add's or an update's own add; a rollback's re-add goes through
        if sys._getframe(1).f_code.co_name in ("_add", "update") and next(refused) % 8 == 7:
            raise RuntimeError("backend refused")
        return real_add(*args, **kwargs)

    store.index.add = flaky_add
    written: dict = {}  # id -> every text written for it
    acked: list[dict] = [{} for _ in range(6)]  # per thread: id -> its text, as acknowledged
    lock = threading.Lock()

    def work(t: int):
        user, mine = f"u{t % 3}", acked[t]

        def op(i: int) -> None:
            step = i
            kind = (i * 7 + t) % 10
            if kind < 4 or not mine:
                mid, text = f"t{t}#{step}", f"thread {t} note {i} " + "with many more words " * (i % 5)
                with lock:
                    written.setdefault(mid, set()).add(text)
                store.add([MemoryRecord(mid, f"t{t}", step, "user", "plan", text, text)], user_id=user)
                mine[mid] = text
            elif kind < 6:
                mid = sorted(mine)[i % len(mine)]
                text = f"thread {t} update {i} " + "and its words " * (i % 7)
                with lock:
                    written[mid].add(text)
                store.update(MemoryRecord(mid, f"t{t}", int(mid.split("#")[1]), "user", "plan", text, text))
                mine[mid] = text
            elif kind < 7:
                mid = sorted(mine)[i % len(mine)]
                store.delete([mid])
                del mine[mid]
            elif kind < 9:
                hits = store.search(State("plan"), f"note {i}", k=8, user_id=user, fold=True)
                assert all(h.user_id == user for h in hits)
                assert all(h.user_id == user for h in store.get_all(user_id=user))
            else:
                folder = store.save(tmp_path / f"save-{t}")
                saved = _consistent(MemoryStore.load(folder, enc))
                with lock:
                    assert all(text in written[mid] for mid, text in saved.items())

        def guarded(i: int) -> None:
            try:
                op(i)
            except RuntimeError as err:  # refused by the index: nothing changed, the thread goes on
                assert "backend refused" in str(err)

        return guarded

    assert run_threads(*((work(t), 40) for t in range(6))) == []
    held = _consistent(store)
    assert held == {mid: text for mine in acked for mid, text in mine.items()}


def test_a_vector_store_replacement_is_one_step_for_every_save_of_the_store(run_threads):
    """Found by review: SAMVectorStore.add_texts replaces the memory an id names by an add and a delete, holding the
    ScopedMemory's lock but not its store's; a save of the store (MemoryStore.save, or a SAMStore sharing it) taken
    between the two held the old version and the new one both. A ScopedMemory now holds its store's lock."""
    pytest.importorskip("langchain_core", reason="the [langchain] extra is not installed: pip install -e '.[langchain]'")
    from sam_model.integrations.langchain import SAMVectorStore
    from sam_model.memory.scoped import ScopedMemory
    from sam_model.storeconfig import StoreConfig

    memory = ScopedMemory(HashingEncoder(16), StoreConfig(provenance=False))
    pins = SAMVectorStore(memory, user_id="mia")
    pins.add_texts(["pin 1234"], ids=["pin"])
    done, seen = threading.Event(), []

    def replace(i: int) -> None:
        try:
            pins.add_texts([f"pin {i}"], ids=["pin"])
        finally:
            if i == 199:
                done.set()

    def save(i: int) -> None:  # what MemoryStore.save and SAMStore.save copy, under the store's lock
        while not done.is_set():
            seen.append(len(memory.store.snapshot()[0]["entries"]))

    assert run_threads((replace, 200), (save, 1)) == []
    assert seen and set(seen) == {1}
    assert [d.page_content for d in pins.get_by_ids(["pin"])] == ["pin 199"]


def test_a_scoped_read_never_raises_for_a_memory_a_direct_store_write_takes_away(run_threads, monkeypatch):
    """Found by review: ScopedMemory.get (update, delete) asked the store whether it had the memory, then fetched it,
    in two holds of the store's lock: a delete of the store itself (a SAMStore sharing it, a direct call) landing
    between them raised a bare KeyError from get, which answers None for a memory that is not there."""
    from sam_model.data.examples import MemoryRecord
    from sam_model.memory.scoped import ScopedMemory
    from sam_model.storeconfig import StoreConfig

    memory = ScopedMemory(HashingEncoder(16), StoreConfig(provenance=False))
    memory.add("a seat by the window", user_id="mia")
    (rec,) = [MemoryRecord("mia#0", "mia", 0, "user", "", "a seat by the window", "a seat by the window")]
    done, got = threading.Event(), []
    has = memory.store.has
    monkeypatch.setattr(memory.store, "has", lambda i: (has(i), time.sleep(1e-4))[0])  # a thread switch after it

    def churn(i: int) -> None:
        try:
            memory.store.delete(["mia#0"])
            memory.store.add([rec], user_id="mia")
        finally:
            if i == 399:
                done.set()

    def read(i: int) -> None:
        while not done.is_set():
            got.append(memory.get("mia#0") is None)

    assert run_threads((churn, 400), (read, 1)) == []
    assert got and memory.get("mia#0")["memory"] == "a seat by the window"


def test_no_two_threads_parse_numpy_headers_at_once(tmp_path, monkeypatch, run_threads):
    """numpy reads an .npy header with ast.literal_eval, and Python 3.11's AST converter keeps its depth in
    interpreter-wide state: threads loading one Qdrant save at once failed, now and then, with "SystemError: AST
    constructor recursion depth mismatch" (seen in a full run). Every np.load of the package holds one lock
    (sam_model.io.NPY_LOCK): loads of a Qdrant save and of a bank file from eight threads never overlap in numpy."""
    from sam_model.data.examples import MemoryRecord
    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    enc = HashingEncoder(16)
    store = MemoryStore(enc, StoreConfig(provenance=False, index={"kind": "qdrant", "path": str(tmp_path / "q")}))
    store.add([MemoryRecord(f"e#{i}", "e", i, "user", "", f"note {i}", f"note {i}") for i in range(5)])
    store.save(tmp_path / "saved")
    bank = MemoryBank(16, MemoryConfig(capacity=0))
    SAMMemory(enc, bank=bank, episode_id="ep").observe("a flight to Lisbon", State("plan"))
    bank.save(tmp_path / "bank.npz")
    inside, most, real = [0], [0], np.load

    def watched(*a, **k):
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.005)
        try:
            return real(*a, **k)
        finally:
            inside[0] -= 1

    monkeypatch.setattr(np, "load", watched)
    loaded: list = []
    assert run_threads((lambda i: loaded.append(MemoryStore.load(tmp_path / "saved", enc)), 4),
                       (lambda i: loaded.append(MemoryBank.load(tmp_path / "bank.npz")), 4)) == []
    assert len(loaded) == 8 and most[0] == 1
