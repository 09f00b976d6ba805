"""The vector backends under the one store: Qdrant (embedded) ranks exactly as FAISS does through every filter,
rolls its collection back to a save, and names bad configs (its scopes filtered inside its own search, and the
checks it shares with Qdrant Edge: tests/test_point_engines.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("qdrant_client", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from test_point_engines import assert_ranks_as_faiss, records  # noqa: E402

from sam_model.backends import index_from_config  # noqa: E402
from sam_model.backends.qdrant import QdrantIndex  # noqa: E402
from sam_model.io import SAMFileError  # noqa: E402
from sam_model.store import MemoryStore  # noqa: E402
from sam_model.storeconfig import StoreConfig  # noqa: E402

DIM = 16


def test_qdrant_ranks_as_faiss_through_every_scope_and_filter():
    assert isinstance(assert_ranks_as_faiss({"kind": "qdrant"}, tie=True, repeats=5).index, QdrantIndex)


def test_a_load_rolls_the_collection_back_to_the_save(tmp_path):
    store = MemoryStore(None, StoreConfig(provenance=False, index={"kind": "qdrant", "path": str(tmp_path / "q")}), DIM)
    rng = np.random.default_rng(3)
    store.add(records(6, "e"), rng.standard_normal((6, DIM)).astype(np.float32), user_id="ana")
    saved = store.save(tmp_path / "store")
    store.add(records(4, "e", 6), rng.standard_normal((4, DIM)).astype(np.float32), user_id="ana")  # after the save
    assert store.index._count() == 10
    back = MemoryStore.load(saved)
    assert len(back) == 6 and back.index._count() == 6  # the 4 later points are gone from the collection
    q = rng.standard_normal(DIM).astype(np.float32)
    assert {h.id for h in back.search_vector(q, 10, user_id="ana")} == {f"e#{i}" for i in range(6)}
    back.add(records(1, "e", 6), rng.standard_normal((1, DIM)).astype(np.float32), user_id="ana")  # ids reusable


def test_an_embedded_qdrant_is_saved_by_the_store_never_as_qdrants_pickles(tmp_path):
    """Qdrant's own local files are pickles in SQLite (loading one can run code): the embedded engine stays in
    memory, the save writes points.npy / points.json, and a load in a fresh engine rebuilds the same ranking."""
    store = MemoryStore(None, StoreConfig(provenance=False, index={"kind": "qdrant", "path": str(tmp_path / "q")}), DIM)
    rng = np.random.default_rng(5)
    store.add(records(5, "e"), rng.standard_normal((5, DIM)).astype(np.float32), user_id="ana")
    saved = store.save(tmp_path / "s")
    assert not (tmp_path / "q").exists()  # Qdrant wrote nothing of its own
    q = rng.standard_normal(DIM).astype(np.float32)
    want = [(h.id, round(h.score, 5)) for h in store.search_vector(q, 5, user_id="ana")]
    from sam_model.backends.qdrant import close_clients

    close_clients()  # as a new process: the shared in-memory engine is gone
    back = MemoryStore.load(saved)
    assert [(h.id, round(h.score, 5)) for h in back.search_vector(q, 5, user_id="ana")] == want
    assert back.search_vector(q, 5, user_id="bo") == []
    points = next(saved.rglob("points.npy"))
    points.write_bytes(b"\x80\x04not an array")  # a pickle-looking file is refused, not unpickled
    with pytest.raises(SAMFileError, match="points.*missing or damaged"):
        MemoryStore.load(saved)


def test_a_point_whose_payload_names_another_scope_is_not_let_into_its_search(tmp_path):
    """Found by review: Qdrant filters scopes by the points' payloads, and the store took its candidates as they
    came, so a save whose points.json named another user for a memory (edited, damaged) put mia's memory into
    bob's search. The store's own scopes decide, on every engine."""
    store = MemoryStore(None, StoreConfig(provenance=False, index={"kind": "qdrant", "path": str(tmp_path / "q")}), DIM)
    x = np.eye(DIM, dtype=np.float32)
    store.add(records(2, "mia"), x[:2], user_id="mia")
    store.add(records(2, "bob"), x[2:4], user_id="bob")
    saved = store.save(tmp_path / "s")
    points = saved / "index" / "points.json"
    payloads = json.loads(points.read_text())
    payloads[0]["user_id"] = "bob"  # mia#0's point, as bob's
    points.write_text(json.dumps(payloads))
    back = MemoryStore.load(saved)
    q = np.ones(DIM, np.float32)
    assert {h.id for h in back.search_vector(q, 5, user_id="bob")} == {"bob#0", "bob#1"}
    assert {h.id for h in back.search_vector(q, 5, user_id="mia")} <= {"mia#0", "mia#1"}


def test_chunked_memories_fold_update_delete_and_reload_alike_on_every_backend(tmp_path):
    """The agreement above, for chunked memories (StoreConfig.chunking): two scopes with long memories of the same
    episode and step, folded searches and listings per scope, an update that re-chunks, a delete by the memory's
    id, then save and load (scope, parent and offsets kept): the same on FAISS, embedded Qdrant and Qdrant Edge."""
    from test_chunks import LONG, WordEncoder, record

    kinds = [{"kind": "flat"}, {"kind": "qdrant", "path": str(tmp_path / "q")}]
    try:
        import qdrant_edge  # noqa: F401
        kinds.append({"kind": "qdrant-edge", "path": str(tmp_path / "edge"), "exact": True})
    except ImportError:
        pass
    asks = [("src/pkg/module_41.py method_41", {"user_id": "ana"}), ("module_7.py arg_7", {"user_id": "bo"}),
            ("module_3.py", {"agent_id": "a1"}), ("module_50.py", {"user_id": "ana", "agent_id": "a2"})]

    def seen(store: MemoryStore) -> list:
        out = [[(h.id, h.parent_id, h.span, h.user_id, h.agent_id, round(h.score, 6))
                for h in store.search({"phase": "view_file"}, text, k=3, fold=True, **scope)] for text, scope in asks]
        return out + [[(h.id, h.parent_id, h.chunk, h.span) for h in store.get_all(**scope)] for _, scope in asks]

    got = []
    for n, index in enumerate(kinds):
        store = MemoryStore(WordEncoder(), StoreConfig(provenance=False, index=index, chunking={"size": 180, "overlap": 50}))
        store.add([record(LONG, 0), record("module_3.py is short", 1)], user_id="ana", agent_id="a1")
        store.add([record(LONG, 0, ep="bo"), record(LONG[:400], 1, ep="bo")], user_id="bo", agent_id="a1")
        store.add([record(LONG[900:], 2)], user_id="ana", agent_id="a2")
        store.update(record(LONG.replace("module_41.py", "module_41.py module_41.py"), 0))
        store.delete(["bo#1"])
        before = seen(store)
        got.append((before, seen(MemoryStore.load(store.save(tmp_path / f"s{n}"), WordEncoder()))))
    assert got[0][0] == got[0][1] and all(g == got[0] for g in got[1:])
    ana, bo, a1, a2 = got[0][0][:4]
    assert {h[1] or h[0] for h in ana} == {"e#0", "e#1", "e#2"} and {h[3] for h in ana} == {"ana"} and {h[3] for h in bo} == {"bo"}
    assert {h[1] or h[0] for h in a1} <= {"e#0", "e#1", "bo#0"} and {h[1] for h in a2} == {"e#2"}
    assert {h[1] for h in got[0][0][5]} == {"bo#0"}  # bo's listing: the chunks of bo#0 alone (bo#1 deleted)


def test_a_fresh_index_refuses_a_collection_that_holds_points(tmp_path):
    cfg = {"kind": "qdrant", "path": str(tmp_path / "q"), "collection": "mem"}
    index_from_config(DIM, cfg).add(["x"], np.ones((1, DIM), np.float32))
    with pytest.raises(ValueError, match="'mem' already holds 1 points: load the store saved with it"):
        index_from_config(DIM, cfg)
    with pytest.raises(ValueError, match="holds vectors of dim 16, not 8"):
        index_from_config(8, cfg)


@pytest.mark.parametrize("bad, message", [
    ({"kind": "qdrant", "host": "x"}, r"field 'store.index' has unknown key\(s\) \['host'\]"),
    ({"kind": "qdrant", "url": "http://x", "path": "p"}, r"give url \(a Qdrant server\) or path \(embedded\), not both"),
    ({"kind": "qdrant", "collection": "a/b"}, r"field 'store.index.collection' may hold only letters"),
    ({"kind": "qdrant", "hnsw_ef": 0}, r"field 'store.index.hnsw_ef' must be an integer from 1"),
    ({"kind": "qdrant", "exact": "yes"}, r"field 'store.index.exact' must be true or false"),
    ({"kind": "annoy"}, r"field 'store.index.kind' must be one of"),
])
def test_backend_configs_are_checked(bad, message):
    with pytest.raises(ValueError, match=message):
        StoreConfig.from_dict({"index": bad}, "store")


def test_loading_a_save_never_pulls_a_live_stores_embedded_collection(tmp_path):
    """A save of an embedded (path) Qdrant store, loaded in the process that still holds the live store: the load
    rebuilt the shared collection as saved, under the live one (which then missed its later memories and could
    not save). The loaded copy now gets a collection of its own."""
    from test_store import records

    from sam_model.store import MemoryStore
    from sam_model.storeconfig import StoreConfig

    rng = np.random.default_rng(0)
    cfg = StoreConfig(provenance=False, index={"kind": "qdrant", "path": str(tmp_path / "qd")})
    live = MemoryStore(None, cfg, 8)
    recs = records(6)
    live.add(recs[:3], rng.standard_normal((3, 8)).astype(np.float32))
    live.save(tmp_path / "save")
    live.add(recs[3:], rng.standard_normal((3, 8)).astype(np.float32))
    copy = MemoryStore.load(tmp_path / "save", None)
    assert len(copy) == 3 and copy.index.collection != live.index.collection
    assert live.index._count() == 6 and len(live.search_vector(rng.standard_normal(8).astype(np.float32), 6)) == 6
    live.save(tmp_path / "save2")
    assert len(MemoryStore.load(tmp_path / "save2", None)) == 6



@pytest.mark.parametrize("kind", ["flat", "qdrant", "qdrant-edge"])
def test_an_update_the_backend_refuses_keeps_the_old_version_on_every_backend(tmp_path, monkeypatch, kind):
    """A chunked update deleted the old chunks before the backend took the new ones: a backend error there lost the
    memory, and a whole memory's update lost its vector. The old version stays, found in its scope as before."""
    from test_chunks import LONG, WordEncoder, record

    if kind == "qdrant-edge":
        pytest.importorskip("qdrant_edge")
    index = {"kind": kind, **({"path": str(tmp_path / kind)} if kind != "flat" else {})}
    store = MemoryStore(WordEncoder(), StoreConfig(provenance=False, index=index, chunking={"size": 180, "overlap": 50}))
    store.add([record(LONG, 0), record("module_3.py is short", 1)], user_id="ana")

    def seen() -> list:
        return [[(h.id, h.text, h.user_id, round(h.score, 6)) for h in store.search(
            {"phase": "view_file"}, text, k=3, fold=True, user_id="ana")] for text in ("module_41.py", "module_3")]

    before, ids = seen(), store.ids()
    real, calls = store.index.add, []

    def fails_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("backend down")
        return real(*args, **kwargs)

    monkeypatch.setattr(store.index, "add", fails_once)
    for new in (record(LONG.replace("module_41.py", "module_41_fixed.py"), 0), record("module_3.py is shorter", 1)):
        calls.clear()
        with pytest.raises(ConnectionError):
            store.update(new)
        assert seen() == before and sorted(store.ids()) == sorted(ids) and len(store.index) == len(ids)
    store.update(record("module_3.py is shorter", 1))
    assert store.memory("e#1").text.endswith("module_3.py is shorter")


def test_an_embedded_qdrant_save_whose_vectors_were_damaged_is_refused_not_loaded(tmp_path):
    """points.npy with bytes changed inside its vectors kept numpy's header and shape, so the collection was rebuilt
    from them: NaN or other vectors ranked its searches. The save records the file's SHA-256 in meta.json (as a
    FAISS index's), and a file that differs is refused naming it; a save before it loads unchecked."""
    store = MemoryStore(None, StoreConfig(provenance=False, index={"kind": "qdrant", "path": str(tmp_path / "q")}), DIM)
    store.add(records(5, "e"), np.random.default_rng(5).standard_normal((5, DIM)).astype(np.float32), user_id="ana")
    saved = store.save(tmp_path / "s")
    points = next(saved.rglob("points.npy"))
    good = points.read_bytes()
    points.write_bytes(good[:-40] + bytes(b ^ 0xFF for b in good[-40:]))
    with pytest.raises(SAMFileError, match=r"points\.npy: not the file this index saved \(SHA-256 "):
        MemoryStore.load(saved)
    points.write_bytes(good)
    meta = points.parent / "meta.json"
    meta.write_text(json.dumps({k: v for k, v in json.loads(meta.read_text()).items() if k != "points_sha256"}))
    assert MemoryStore.load(saved).get_all(user_id="ana")
